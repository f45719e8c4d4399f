//! [`from_extractor`]: an extractor as a layer, which answers its
//! rejection in the stead of what it wraps.

use std::{
    convert::Infallible,
    fmt,
    marker::PhantomData,
    task::{Context, Poll},
};

use http::{Request, Response};
use tower_service::Service;

use super::{FromFnFuture, Given, extract, given};
use crate::{
    body::Body,
    handler::{ByType, HeadArgument, IntoResponse},
};

/// A layer that runs the extractor `E` on each request, as axum's
/// `middleware::from_extractor`: the request goes on when it extracts (the
/// value is dropped), and the extractor's rejection answers it when it
/// does not. For a check that several routes share, without an argument
/// in each handler.
///
/// The extractor reads the request's head (a [`FromRequestHead`](crate::handler::FromRequestHead)), so it
/// completes at once: a request it lets through costs no suspension, and
/// one it refuses no call of what the layer wraps.
///
/// ```
/// use http::{Response, StatusCode, header};
/// use pronghorn::{Body, Router, handler::{FromRequestHead, RequestContext}, middleware::from_extractor};
/// use tower::ServiceExt;
///
/// struct RequireAuth;
///
/// impl FromRequestHead for RequireAuth {
///     fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
///         match context.headers().get(header::AUTHORIZATION) {
///             Some(token) if token == "Bearer secret" => Ok(RequireAuth),
///             _ => Err(Response::builder().status(StatusCode::UNAUTHORIZED).body(Body::empty()).unwrap()),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", || "authorized")
///     .route_layer(from_extractor::<RequireAuth>())
///     .compile()
///     .unwrap();
/// let request = http::Request::get("/").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::UNAUTHORIZED);
/// # }
/// ```
pub fn from_extractor<E>() -> FromExtractorLayer<E> {
    FromExtractorLayer::new(None)
}

/// [`from_extractor`], the extractor's [`State`](crate::handler::State)
/// reading `state` first, as axum's `from_extractor_with_state`.
pub fn from_extractor_with_state<E, St>(state: St) -> FromExtractorLayer<E>
where
    St: Clone + Send + Sync + 'static,
{
    FromExtractorLayer::new(Some(given(state)))
}

/// The layer [`from_extractor`] makes.
pub struct FromExtractorLayer<E> {
    state: Given,
    _extractor: PhantomData<fn() -> E>,
}

impl<E> FromExtractorLayer<E> {
    fn new(state: Given) -> Self {
        Self {
            state,
            _extractor: PhantomData,
        }
    }
}

impl<E> Clone for FromExtractorLayer<E> {
    fn clone(&self) -> Self {
        Self::new(self.state.clone())
    }
}

impl<E> fmt::Debug for FromExtractorLayer<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromExtractorLayer")
            .field("extractor", &std::any::type_name::<E>())
            .finish_non_exhaustive()
    }
}

impl<S, E> tower_layer::Layer<S> for FromExtractorLayer<E> {
    type Service = FromExtractor<S, E>;

    fn layer(&self, inner: S) -> FromExtractor<S, E> {
        FromExtractor {
            inner,
            state: self.state.clone(),
            _extractor: PhantomData,
        }
    }
}

/// The service of a [`from_extractor`] layer around `S`.
pub struct FromExtractor<S, E> {
    inner: S,
    state: Given,
    _extractor: PhantomData<fn() -> E>,
}

impl<S: Clone, E> Clone for FromExtractor<S, E> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            state: self.state.clone(),
            _extractor: PhantomData,
        }
    }
}

impl<S, E> fmt::Debug for FromExtractor<S, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromExtractor")
            .field("extractor", &std::any::type_name::<E>())
            .finish_non_exhaustive()
    }
}

impl<S, E> Service<Request<Body>> for FromExtractor<S, E>
where
    S: Service<Request<Body>, Error = Infallible>,
    S::Response: IntoResponse,
    E: HeadArgument<ByType>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = FromFnFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        match extract::<E, ByType>(&request, &self.state) {
            Ok(_) => FromFnFuture::running(self.inner.call(request)),
            Err(response) => FromFnFuture::answered(response),
        }
    }
}
