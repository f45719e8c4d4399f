//! axum's answers and head extractors in pronghorn's handlers (feature
//! `axum`).

use std::{
    future::Future,
    pin::pin,
    task::{Context, Poll, Waker},
};

use axum_core::{extract::FromRequestParts, response::IntoResponse as AxumResponse};
use http::Response;

use super::{
    FromRequestHead, RequestContext,
    response::{IntoResponse, internal_error},
};
use crate::body::Body;

/// An axum type in a pronghorn handler (feature `axum`).
///
/// - As an answer, anything that is axum's `IntoResponse`:
///   `Axum(axum::Json(value))`, `Axum(axum::response::Redirect::to("/"))`.
/// - As an argument, anything that is axum's `FromRequestParts<()>`, so
///   that axum-extra's `TypedHeader` or `CookieJar` work as they are:
///   `Axum(jar): Axum<CookieJar>`. It reads a copy of the request head
///   (axum's extractors take it mutably), and answers with its own
///   rejection. pronghorn's extractors run synchronously: one whose
///   future does not complete on its first poll is a mistake of the
///   server's, answered 500 and logged.
/// - Optional: `Option<Axum<T>>` is `None` whenever `T` refuses the
///   request. For axum's own rule — `None` when the value is absent, the
///   rejection when it is malformed — write `Axum<Option<T>>`, with a `T`
///   that is axum's `OptionalFromRequestParts` (as axum-extra's
///   `TypedHeader` is).
///
/// ```
/// use axum_core::extract::FromRequestParts;
/// use http::{Request, StatusCode, request::Parts};
/// use http_body_util::BodyExt;
/// use pronghorn::{IntoResponse, Router, handler::Axum};
/// use tower::ServiceExt;
///
/// /// An axum extractor, as axum-extra's `TypedHeader` is one.
/// struct UserAgent(String);
///
/// impl<S: Send + Sync> FromRequestParts<S> for UserAgent {
///     type Rejection = (StatusCode, &'static str);
///
///     async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
///         match parts.headers.get("user-agent").and_then(|v| v.to_str().ok()) {
///             Some(agent) => Ok(UserAgent(agent.to_owned())),
///             None => Err((StatusCode::BAD_REQUEST, "who are you?")),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |Axum(UserAgent(agent)): Axum<UserAgent>| {
///         Axum((StatusCode::CREATED, format!("hello {agent}")))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/").header("user-agent", "curl").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::CREATED);
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello curl");
///
/// let request = Request::get("/").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::BAD_REQUEST);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Axum<T>(pub T);

impl<T: AxumResponse> IntoResponse for Axum<T> {
    fn into_response(self) -> Response<Body> {
        IntoResponse::into_response(AxumResponse::into_response(self.0))
    }
}

impl<T: FromRequestParts<()>> FromRequestHead for Axum<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        let mut parts = context.head();
        let extract = pin!(T::from_request_parts(&mut parts, &()));
        match extract.poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(value)) => Ok(Axum(value)),
            Poll::Ready(Err(rejection)) => Err(Axum(rejection).into_response()),
            Poll::Pending => {
                error_limited!(
                    extractor = std::any::type_name::<T>(),
                    "pronghorn: an axum extractor did not complete on its first poll; only those that do can be a handler's argument"
                );
                Err(internal_error())
            }
        }
    }
}

/// The marker of axum's own middleware layers given to the router's
/// layers (feature `axum`): see [`RouteLayer`](super::RouteLayer).
#[derive(Debug)]
pub enum OfAxum {}

/// An axum middleware layer around a route: its service takes axum's
/// request body, made from pronghorn's at the boundary.
#[derive(Clone, Debug)]
pub struct AxumBodyLayer<L>(L);

impl<L> tower_layer::Layer<super::Endpoint> for AxumBodyLayer<L>
where
    L: tower_layer::Layer<super::Endpoint>,
{
    type Service = AxumBodyService<L::Service>;

    fn layer(&self, inner: super::Endpoint) -> Self::Service {
        AxumBodyService(self.0.layer(inner))
    }
}

/// The service of an [`AxumBodyLayer`]: the request's body made axum's.
#[derive(Clone, Debug)]
pub struct AxumBodyService<S>(S);

impl<S> tower_service::Service<http::Request<Body>> for AxumBodyService<S>
where
    S: tower_service::Service<http::Request<axum::body::Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> S::Future {
        self.0.call(request.map(axum::body::Body::new))
    }
}

/// axum's `from_fn` layer, whose service takes axum's request only.
/// (Its `map_request` and `map_response` take a request of any body, as
/// tower-http's layers do: they are route layers as they are.)
impl<F, S, T> super::RouteLayer<OfAxum> for axum::middleware::FromFnLayer<F, S, T>
where
    Self: tower_layer::Layer<super::Endpoint> + Send + Sync + 'static,
    AxumBodyService<<Self as tower_layer::Layer<super::Endpoint>>::Service>: super::RouteService,
{
    type Layer = AxumBodyLayer<Self>;

    fn into_route_layer(self) -> AxumBodyLayer<Self> {
        AxumBodyLayer(self)
    }
}
