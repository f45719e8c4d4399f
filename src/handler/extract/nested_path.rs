//! Where a nested router is mounted: [`NestedPath`].

use std::sync::Arc;

use http::{Response, StatusCode};

use super::{
    FromRequestHead, Rejection, RequestContext,
    rejection::{rejection_variants, set_up_wrong},
};
use crate::body::Body;

/// The pattern of the bases a route was [nested](crate::Router::nest)
/// under, as axum's `NestedPath`: `/api` for a route of a router nested at
/// `/api`, `/api/v2` for one nested at `/v2` in a router nested at `/api`,
/// `/{version}/api` with a parameter in the base, the same in its
/// router's fallback and in the extractors of its middleware functions.
///
/// A route that was not nested answers 500 (logged); `Option<NestedPath>`
/// is `None` there.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::NestedPath};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let users = Router::new().get("/users", |base: NestedPath| base.as_str().to_owned());
/// let router = Router::new().nest("/api", Router::new().nest("/v2", users)).compile().unwrap();
///
/// let request = Request::get("/api/v2/users").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/api/v2");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestedPath(Arc<str>);

impl NestedPath {
    /// The bases' pattern.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl NestedPath {
    /// The nested path a service mounted below `path` is handed, in its
    /// request's extensions, for the routes of its own to read.
    pub(in crate::handler) fn insert(extensions: &mut http::Extensions, path: &Arc<str>) {
        extensions.insert(NestedPath(Arc::clone(path)));
    }

    /// The nested path of the route `context` is for: its own bases below
    /// those of the route its app was mounted at.
    fn of(context: &RequestContext<'_>) -> Option<Self> {
        let outer = context.extensions().get::<NestedPath>();
        Some(match (outer, context.nesting.path()) {
            (None, None) => return None,
            (Some(outer), None) => outer.clone(),
            (None, Some(own)) => NestedPath(Arc::clone(own)),
            (Some(outer), Some(own)) => {
                NestedPath(format!("{}{own}", outer.0.trim_end_matches('/')).into())
            }
        })
    }
}

// Niche: not among the extractors the compiler suggests.
#[diagnostic::do_not_recommend]
impl FromRequestHead for NestedPath {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::of(context).ok_or_else(|| set_up_wrong(context.answers, not_nested_rejection()))
    }

    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        Ok(Self::of(context))
    }
}

/// The nested path, or why there is none, for the handler to answer
/// itself.
#[diagnostic::do_not_recommend]
impl FromRequestHead for Result<NestedPath, NestedPathRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(NestedPath::of(context)
            .ok_or_else(|| NestedPathRejection(not_nested_rejection().worded(context.answers))))
    }
}

/// The rejection of a `NestedPath` on a route not nested (logged: the
/// handler is set up wrong).
#[cold]
fn not_nested_rejection() -> Rejection {
    error_limited!("pronghorn: a handler asked for the `NestedPath` of a route not nested");
    Rejection::new(
        "NestedPath",
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error",
    )
    .or_as_axum("The matched route is not nested")
}

rejection_variants! {
    /// Why `NestedPath` refused a request, as axum's `NestedPathRejection`:
    /// its route is not nested (500).
    NestedPathRejection;
}
