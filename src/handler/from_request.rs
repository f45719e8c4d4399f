//! Extractors over the whole request: [`FromRequest`], written as an
//! `async fn` as axum's is, and [`RequestExt`], which runs pronghorn's own
//! extractors on a request — inside a `FromRequest`, a layer, or outside
//! any router.

use std::{future::Future, sync::Arc, sync::LazyLock};

use http::{Request, Response};

use super::{
    Answers, ByType, MatchedPath,
    extract::{
        DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, Extraction, FromRequestBody, HeadArgument,
        RequestContext, RouteContext, streamed,
    },
    layered::{RouteMatch, carry_route, route_info},
    nested::Nesting,
};
use crate::{body::Body, params::Captures};

/// An extractor of the whole request written as an `async fn`, as axum's
/// `FromRequest` is written: it takes the request by value (its head a
/// copy, its body limited to [`Router::body_limit`](crate::Router::body_limit)
/// and the body timeout as it is read) and answers the value or its
/// rejection. It is a handler's last argument, as any
/// [`FromRequestBody`] is (every `FromRequest` is one).
///
/// Its future is boxed when the handler is called: one allocation a
/// request. The body extractors of pronghorn's own, written with a named
/// future ([`BodyFuture`](super::BodyFuture)), cost none.
///
/// ```
/// use bytes::Bytes;
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, IntoResponse, Router, handler::FromRequest};
/// use tower::ServiceExt;
///
/// /// A body's non-empty lines.
/// struct Lines(Vec<String>);
///
/// impl FromRequest for Lines {
///     type Rejection = (StatusCode, &'static str);
///
///     async fn from_request(request: Request<Body>) -> Result<Self, Self::Rejection> {
///         let Ok(body) = request.into_body().collect().await else {
///             return Err((StatusCode::PAYLOAD_TOO_LARGE, "too long"));
///         };
///         let text = String::from_utf8(body.to_bytes().to_vec())
///             .map_err(|_| (StatusCode::BAD_REQUEST, "not UTF-8"))?;
///         Ok(Lines(text.lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/lines", |Lines(lines): Lines| format!("{} lines", lines.len()))
///     .body_limit(64)
///     .compile()
///     .unwrap();
/// let request = Request::post("/lines").body("one\n\ntwo\n".to_owned()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "2 lines");
///
/// let request = Request::post("/lines").body("x".repeat(65)).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
/// # }
/// ```
pub trait FromRequest: Sized + Send + 'static {
    /// What answers the request when the extractor refuses it.
    type Rejection: super::IntoResponse;

    /// The value, from `request`.
    fn from_request(
        request: Request<Body>,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send + 'static;
}

impl<T: FromRequest> FromRequestBody for T {
    type Future = crate::step::BoxFuture<Result<Self, Response<Body>>>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        match streamed(body, context.body_limit(), context.body_timeout()) {
            Ok(body) => {
                let mut request = Request::from_parts(context.head(), body);
                MatchedPath::insert(&mut request, context.pattern(), false);
                // The route goes with the request, for the extractors the
                // `FromRequest` runs on it (`RequestExt`).
                if let Some(route) = context.route() {
                    let captured_in = route.head().map(crate::head::RequestHead::uri);
                    let captured_in = captured_in.unwrap_or_else(|| context.request().uri());
                    carry_route(&mut request, route, route_info(route), Some(captured_in));
                }
                let future = T::from_request(request);
                Box::pin(async move { (future.await).map_err(super::IntoResponse::into_response) })
            }
            Err(rejection) => {
                let response = context.reject(rejection);
                Box::pin(std::future::ready(Err(response)))
            }
        }
    }
}

/// Runs pronghorn's extractors on a request, as axum's `RequestExt` does:
/// in a [`FromRequest`] that delegates to `Json` or `Form`, in a tower
/// layer below a router, or on a request no router handed (a test's).
///
/// A request a router handed — to a `FromRequest`, or to the tower layers
/// of a route — carries its route: the extractors read its parameters,
/// its state, its body limit, and answer its rejections as its router
/// does. Any other request is read with the defaults: no parameters or
/// state, a body of at most 2 MiB within 30 s, pronghorn's wording.
///
/// A rejection is the response that answers it; to take one into your
/// own hands, extract `Result<E, E::Rejection>`.
///
/// ```
/// use http::{Request, StatusCode, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, Router, handler::{FromRequest, Json, RequestExt, rejection::JsonRejection}};
/// use tower::ServiceExt;
///
/// /// axum's `validator` example's extractor: `Json`, its rejection
/// /// answered as the app's own.
/// struct Valid<T>(T);
///
/// impl<T: serde::de::DeserializeOwned + Send + 'static> FromRequest for Valid<T> {
///     type Rejection = (StatusCode, String);
///
///     async fn from_request(request: Request<Body>) -> Result<Self, Self::Rejection> {
///         match request.extract::<Result<Json<T>, JsonRejection>>().await {
///             Ok(Ok(Json(value))) => Ok(Valid(value)),
///             Ok(Err(rejection)) => Err((StatusCode::BAD_REQUEST, format!("[bad input]: {}", rejection.body_text()))),
///             Err(response) => Err((response.status(), String::new())),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new().post("/", |Valid(n): Valid<u32>| n.to_string()).compile().unwrap();
/// let post = |body: &str| {
///     Request::post("/").header(header::CONTENT_TYPE, "application/json").body(body.to_owned()).unwrap()
/// };
/// let response = router.clone().oneshot(post("7")).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "7");
/// let response = router.oneshot(post("\"seven\"")).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// let text = response.into_body().collect().await.unwrap().to_bytes();
/// assert!(text.starts_with(b"[bad input]: invalid JSON body"));
/// # }
/// ```
pub trait RequestExt: Sized {
    /// Runs the body extractor `E` on the request, taking it.
    fn extract<E: FromRequestBody>(self) -> E::Future;

    /// Runs the head extractor `E` on the request.
    ///
    /// # Errors
    ///
    /// The response that answers `E`'s rejection.
    #[allow(
        clippy::result_large_err,
        reason = "the rejection is the answer, as `FromRequestHead::from_head`'s"
    )]
    fn extract_parts<E: HeadArgument<ByType>>(&self) -> Result<E, Response<Body>>;
}

impl RequestExt for Request<Body> {
    fn extract<E: FromRequestBody>(self) -> E::Future {
        let (head, body) = self.into_parts();
        let head = Request::from_parts(head, Body::empty());
        with_context(&head, |context| E::from_body(body, context))
    }

    fn extract_parts<E: HeadArgument<ByType>>(&self) -> Result<E, Response<Body>> {
        with_context(self, E::from_head)
    }
}

/// The context of the route `request` carries, or the defaults of a
/// request outside any router, handed to `run`.
pub(crate) fn with_context<R>(
    request: &Request<Body>,
    run: impl FnOnce(&RequestContext<'_>) -> R,
) -> R {
    match request.extensions().get::<RouteMatch>() {
        Some(matched) => {
            let route = matched.context();
            run(&route.with_request(request))
        }
        None => {
            let defaults = &*OUTSIDE;
            let route = RouteContext::new(
                "",
                crate::params::Params::new("", &[], &defaults.captures),
                false,
                &defaults.state,
                &defaults.extraction,
                None,
            );
            run(&route.with_request(request))
        }
    }
}

/// What a request outside any router is read with.
struct Outside {
    state: Arc<http::Extensions>,
    extraction: Extraction,
    captures: Captures,
}

static OUTSIDE: LazyLock<Outside> = LazyLock::new(|| Outside {
    state: Arc::default(),
    extraction: Extraction::new(
        DEFAULT_BODY_LIMIT,
        DEFAULT_BODY_TIMEOUT,
        None,
        Answers::Pronghorn,
        None,
        Nesting::default(),
    ),
    captures: Captures::NONE,
});
