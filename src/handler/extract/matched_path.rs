//! The route a request matched: [`MatchedPath`], as the world outside a
//! nested service sees it.

use std::sync::Arc;

use http::{Request, Response, StatusCode};

use super::{
    FromRequestHead, Needs, Rejection, RequestContext,
    rejection::{rejection_enum, rejection_variants},
};
use crate::{body::Body, handler::mounted::NESTED_PATTERN_END};

/// The pattern of the route the request matched, as registered, with the
/// bases of the routers it was nested in: `/api/users/{id}` for
/// `/api/users/7`. A router mounted as a service with
/// [`Router::nest_service`](crate::Router::nest_service) counts its base
/// too.
///
/// A [fallback](crate::Router::fallback) answers paths no route matches:
/// there it takes `Option<MatchedPath>`, which is `None`, and
/// [`compile`](crate::Router::compile) refuses a fallback that takes
/// `MatchedPath`.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::MatchedPath};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let users = Router::new().get("/users/{id}", |path: MatchedPath| path.as_str().to_owned());
/// let api = Router::new().nest("/api", users).compile().unwrap();
/// let router = Router::new().nest_service("/v1", api).compile().unwrap();
///
/// let request = Request::get("/v1/api/users/7").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/v1/api/users/{id}");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedPath(Arc<str>);

impl MatchedPath {
    /// The pattern.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromRequestHead for MatchedPath {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(MatchedPath::below(context.extensions(), context.pattern()))
    }

    /// `None` in a [fallback](crate::Router::fallback), which answers
    /// paths no route matches.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        let pattern = context.pattern();
        Ok((!pattern.is_empty()).then(|| MatchedPath::below(context.extensions(), pattern)))
    }

    /// A fallback's handler that takes it is refused by `compile`.
    fn needs(needs: &mut Needs) {
        needs.matched_path = true;
    }
}

/// The matched path, or why there is none (a fallback's request matched
/// no route), for the handler to answer itself; a fallback may take it.
#[diagnostic::do_not_recommend]
impl FromRequestHead for Result<MatchedPath, MatchedPathRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(MatchedPath::from_head_optional(context)?.ok_or_else(|| {
            let rejection = Rejection::new(
                "MatchedPath",
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error",
            )
            .or_as_axum("No matched path found")
            .worded(context.answers);
            MatchedPathRejection::MatchedPathMissing(MatchedPathMissing(rejection))
        }))
    }
}

rejection_variants! {
    /// A request that matched no route: a fallback's (500).
    MatchedPathMissing;
}

rejection_enum! {
    /// Why `MatchedPath` refused a request, as axum's
    /// `MatchedPathRejection`, for a handler that takes
    /// `Result<MatchedPath, MatchedPathRejection>` to answer it itself.
    MatchedPathRejection ("`MatchedPath`") {
        /// The request matched no route.
        MatchedPathMissing(MatchedPathMissing),
    }
}

/// The matched path of the service a request went to with
/// [`Router::nest_service`](crate::Router::nest_service): the base the
/// router it reaches is mounted at, as its own matched paths start.
#[derive(Clone, Debug)]
pub(crate) struct NestedAt(MatchedPath);

impl MatchedPath {
    /// `pattern`, below the base its router was mounted at as a service,
    /// if a request with `extensions` went through one.
    fn below(extensions: &http::Extensions, pattern: &str) -> Self {
        MatchedPath::below_shared(extensions, pattern, || Arc::from(pattern))
    }

    /// [`below`](Self::below), with the pattern as `shared` makes it: a
    /// route that keeps its pattern shared puts it in a request without
    /// copying it.
    pub(crate) fn below_shared(
        extensions: &http::Extensions,
        pattern: &str,
        shared: impl FnOnce() -> Arc<str>,
    ) -> Self {
        match extensions.get::<NestedAt>() {
            Some(NestedAt(MatchedPath(base))) if !pattern.is_empty() => match (&**base, pattern) {
                ("/", _) => MatchedPath(shared()),
                (_, "/") => MatchedPath(base.clone()),
                _ => MatchedPath(format!("{base}{pattern}").into()),
            },
            _ => MatchedPath(shared()),
        }
    }

    /// The matched path of the route of `pattern`, as the world outside
    /// the route sees it: the base alone for a service nested below it;
    /// `None` for a request no route matched.
    pub(crate) fn of(extensions: &http::Extensions, pattern: &str) -> Option<Self> {
        let pattern = pattern
            .strip_suffix(NESTED_PATTERN_END)
            .map_or(pattern, |base| if base.is_empty() { "/" } else { base });
        (!pattern.is_empty()).then(|| MatchedPath::below(extensions, pattern))
    }

    /// [`of`](Self::of), for a route that keeps its pattern shared: no
    /// copy of it is made unless the request went through a nested
    /// service.
    pub(crate) fn of_shared(extensions: &http::Extensions, pattern: &Arc<str>) -> Option<Self> {
        if pattern.is_empty() || pattern.ends_with(NESTED_PATTERN_END) {
            return MatchedPath::of(extensions, pattern);
        }
        Some(MatchedPath::below_shared(extensions, pattern, || {
            Arc::clone(pattern)
        }))
    }

    /// Puts the pattern of the route `request` matched in its extensions,
    /// for the service or handler it goes on to; for a service `nested`
    /// below it, also the base the service's own routes start from.
    pub(crate) fn insert(request: &mut Request<Body>, pattern: &str, nested: bool) {
        if let Some(matched) = MatchedPath::of(request.extensions(), pattern) {
            if nested {
                request.extensions_mut().insert(NestedAt(matched.clone()));
            }
            request.extensions_mut().insert(matched);
        }
    }
}
