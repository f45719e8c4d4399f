//! [`map_request`]: an async function of extractors and the request that
//! answers the request to hand on, or an answer of its own.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    pin::Pin,
    task::{Context, Poll, ready},
};

use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_service::Service;

use super::{extract, given, take_ready};
use crate::{
    body::Body,
    handler::{HeadArgument, IntoResponse},
};

/// A layer from an async function of extractors and the request that
/// answers the request to hand on ([`IntoMapRequestResult`]: the request,
/// or `Result<Request<Body>, impl IntoResponse>` to answer in its stead),
/// as axum's `middleware::map_request`. Ready-first as [`from_fn`](super::from_fn):
/// a function that completes at once hands the request on in the same
/// poll.
///
/// ```
/// use http::{Request, StatusCode, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, Router, middleware::map_request};
/// use tower::ServiceExt;
///
/// async fn tag(mut request: Request<Body>) -> Request<Body> {
///     request.headers_mut().insert("x-tag", "seen".parse().unwrap());
///     request
/// }
///
/// async fn auth(request: Request<Body>) -> Result<Request<Body>, StatusCode> {
///     match request.headers().contains_key(header::AUTHORIZATION) {
///         true => Ok(request),
///         false => Err(StatusCode::UNAUTHORIZED),
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |headers: http::HeaderMap| headers["x-tag"].to_str().unwrap().to_owned())
///     .layer(map_request(tag))
///     .route_layer(map_request(auth))
///     .compile()
///     .unwrap();
/// let refused = router.clone().oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
/// let request = Request::get("/").header(header::AUTHORIZATION, "x").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "seen");
/// # }
/// ```
pub fn map_request<F, T>(f: F) -> MapRequestLayer<F, T> {
    MapRequestLayer::new(f, None)
}

/// [`map_request`], its [`State`](crate::handler::State) extractors
/// reading `state` (before the router's), as axum's
/// `middleware::map_request_with_state`.
pub fn map_request_with_state<St, F, T>(state: St, f: F) -> MapRequestLayer<F, T, St>
where
    St: Clone + Send + Sync + 'static,
{
    MapRequestLayer::new(f, Some(given(state)))
}

/// What a [`map_request`] function answers: the request to hand on, or
/// an answer in its stead.
#[allow(
    clippy::result_large_err,
    reason = "the answer is a response, as axum's `IntoMapRequestResult` gives it"
)]
pub trait IntoMapRequestResult {
    /// The request to hand on, or the answer.
    fn into_map_request_result(self) -> Result<Request<Body>, Response<Body>>;
}

impl IntoMapRequestResult for Request<Body> {
    fn into_map_request_result(self) -> Result<Request<Body>, Response<Body>> {
        Ok(self)
    }
}

impl<E: IntoResponse> IntoMapRequestResult for Result<Request<Body>, E> {
    fn into_map_request_result(self) -> Result<Request<Body>, Response<Body>> {
        self.map_err(IntoResponse::into_response)
    }
}

function_layer!(
    /// The layer [`map_request`] makes.
    MapRequestLayer,
    /// The service of a [`map_request`] layer around `S`.
    MapRequest
);

pin_project! {
    /// The response future of a [`map_request`] layer: the function's,
    /// then the inner service's with the request it answered.
    pub struct MapRequestFuture<Fut, S: Service<Request<Body>>> {
        #[pin]
        state: State<Fut, S>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<Fut, S: Service<Request<Body>>> {
        Answered { response: Option<Response<Body>> },
        Mapping { #[pin] future: Fut, inner: Option<S> },
        Calling { #[pin] future: S::Future },
    }
}

impl<Fut, S: Service<Request<Body>>> fmt::Debug for MapRequestFuture<Fut, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapRequestFuture").finish_non_exhaustive()
    }
}

impl<Fut, S> Future for MapRequestFuture<Fut, S>
where
    Fut: Future<Output: IntoMapRequestResult>,
    S: Service<Request<Body>, Error = Infallible>,
    S::Response: IntoResponse,
{
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            let request = match state.as_mut().project() {
                StateProj::Answered { response } => {
                    return Poll::Ready(Ok(response.take().expect("polled after completion")));
                }
                StateProj::Mapping { future, inner } => {
                    match ready!(future.poll(cx)).into_map_request_result() {
                        Ok(request) => (inner.take().expect("called once"), request),
                        Err(response) => {
                            return Poll::Ready(Ok(response));
                        }
                    }
                }
                StateProj::Calling { future } => {
                    let Ok(response) = ready!(future.poll(cx));
                    return Poll::Ready(Ok(response.into_response()));
                }
            };
            let (mut inner, request) = request;
            let future = inner.call(request);
            state.set(State::Calling { future });
        }
    }
}

macro_rules! map_request_service {
    ($($ty:ident),*) => {
        #[allow(non_snake_case, reason = "the extractors, named by their types")]
        impl<F, Fut, S, St, $($ty,)*> Service<Request<Body>> for MapRequest<F, S, ($($ty,)*), St>
        where
            F: Fn($($ty,)* Request<Body>) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output: IntoMapRequestResult> + Send + 'static,
            S: Service<Request<Body>, Error = Infallible> + Clone + Send + 'static,
            S::Response: IntoResponse,
            S::Future: Send + 'static,
            $($ty: HeadArgument<St>,)*
        {
            type Response = Response<Body>;
            type Error = Infallible;
            type Future = MapRequestFuture<Fut, S>;

            #[inline]
            fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
                self.inner.poll_ready(cx)
            }

            fn call(&mut self, request: Request<Body>) -> Self::Future {
                $(
                    let $ty = match extract::<$ty, St>(&request, &self.state) {
                        Ok(value) => value,
                        Err(response) => return MapRequestFuture {
                            state: State::Answered { response: Some(response) },
                        },
                    };
                )*
                MapRequestFuture {
                    state: State::Mapping {
                        future: (self.f)($($ty,)* request),
                        inner: Some(take_ready(&mut self.inner)),
                    },
                }
            }
        }
    };
}

map_request_service!();
map_request_service!(T1);
map_request_service!(T1, T2);
map_request_service!(T1, T2, T3);
map_request_service!(T1, T2, T3, T4);
map_request_service!(T1, T2, T3, T4, T5);
map_request_service!(T1, T2, T3, T4, T5, T6);
