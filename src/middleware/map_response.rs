//! [`map_response`]: an async function of extractors and the response
//! below it that answers in the response's stead.

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

use super::{extract, given};
use crate::{
    body::Body,
    handler::{HeadArgument, IntoResponse},
};

/// A layer from an async function of extractors and the response the
/// layers and handler below it answered, whose answer goes out instead,
/// as axum's `middleware::map_response`. The extractors read the request
/// before it is handed on. Ready-first as [`from_fn`](super::from_fn):
/// when the handler and the function complete at once, the request is
/// answered in its first poll.
///
/// ```
/// use http::{Request, Response};
/// use pronghorn::{Body, Router, handler::MatchedPath, middleware::map_response};
/// use tower::ServiceExt;
///
/// async fn route_header(path: MatchedPath, mut response: Response<Body>) -> Response<Body> {
///     response.headers_mut().insert("x-route", path.as_str().parse().unwrap());
///     response
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/users/{id}", || "ada")
///     .layer(map_response(route_header))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/users/7").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.headers()["x-route"], "/users/{id}");
/// # }
/// ```
pub fn map_response<F, T>(f: F) -> MapResponseLayer<F, T> {
    MapResponseLayer::new(f, None)
}

/// [`map_response`], its [`State`](crate::handler::State) extractors
/// reading `state` (before the router's), as axum's
/// `middleware::map_response_with_state`.
pub fn map_response_with_state<St, F, T>(state: St, f: F) -> MapResponseLayer<F, T, St>
where
    St: Clone + Send + Sync + 'static,
{
    MapResponseLayer::new(f, Some(given(state)))
}

/// A function [`map_response`] takes: an async function of the
/// extractors `T` (a tuple of [`FromRequestHead`](crate::handler::FromRequestHead) types) and the
/// response, answering anything [`IntoResponse`]. Every such function is
/// one.
pub trait MapResponseFn<T>: Clone + Send + Sync + 'static {
    /// What the function returns.
    type Future: Future<Output: IntoResponse>;

    /// Calls the function with the values extracted and the response.
    fn call(&self, extracted: T, response: Response<Body>) -> Self::Future;
}

function_layer!(
    /// The layer [`map_response`] makes.
    MapResponseLayer,
    /// The service of a [`map_response`] layer around `S`.
    MapResponse
);

pin_project! {
    /// The response future of a [`map_response`] layer: the inner
    /// service's, then the function's on its response.
    pub struct MapResponseFuture<F: MapResponseFn<T>, T, S: Service<Request<Body>>> {
        #[pin]
        state: State<F, T, S>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F: MapResponseFn<T>, T, S: Service<Request<Body>>> {
        Answered { response: Option<Response<Body>> },
        Calling { #[pin] future: S::Future, then: Option<(F, T)> },
        Mapping { #[pin] future: F::Future },
    }
}

impl<F: MapResponseFn<T>, T, S: Service<Request<Body>>> fmt::Debug for MapResponseFuture<F, T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapResponseFuture").finish_non_exhaustive()
    }
}

impl<F, T, S> Future for MapResponseFuture<F, T, S>
where
    F: MapResponseFn<T>,
    S: Service<Request<Body>, Error = Infallible>,
    S::Response: IntoResponse,
{
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            let future = match state.as_mut().project() {
                StateProj::Answered { response } => {
                    return Poll::Ready(Ok(response.take().expect("polled after completion")));
                }
                StateProj::Calling { future, then } => {
                    let Ok(response) = ready!(future.poll(cx));
                    let (f, extracted) = then.take().expect("polled after completion");
                    f.call(extracted, response.into_response())
                }
                StateProj::Mapping { future } => {
                    return Poll::Ready(Ok(ready!(future.poll(cx)).into_response()));
                }
            };
            state.set(State::Mapping { future });
        }
    }
}

macro_rules! map_response_service {
    ($($ty:ident),*) => {
        impl<F, Fut, $($ty,)*> MapResponseFn<($($ty,)*)> for F
        where
            F: Fn($($ty,)* Response<Body>) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output: IntoResponse>,
        {
            type Future = Fut;

            #[allow(non_snake_case, reason = "the extractors, named by their types")]
            fn call(&self, ($($ty,)*): ($($ty,)*), response: Response<Body>) -> Fut {
                self($($ty,)* response)
            }
        }

        #[allow(non_snake_case, reason = "the extractors, named by their types")]
        impl<F, S, St, $($ty,)*> Service<Request<Body>> for MapResponse<F, S, ($($ty,)*), St>
        where
            F: MapResponseFn<($($ty,)*)>,
            S: Service<Request<Body>, Error = Infallible> + Clone + Send + 'static,
            S::Response: IntoResponse,
            S::Future: Send + 'static,
            $($ty: HeadArgument<St>,)*
        {
            type Response = Response<Body>;
            type Error = Infallible;
            type Future = MapResponseFuture<F, ($($ty,)*), S>;

            #[inline]
            fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
                self.inner.poll_ready(cx)
            }

            fn call(&mut self, request: Request<Body>) -> Self::Future {
                $(
                    let $ty = match extract::<$ty, St>(&request, &self.state) {
                        Ok(value) => value,
                        Err(response) => return MapResponseFuture {
                            state: State::Answered { response: Some(response) },
                        },
                    };
                )*
                let future = self.inner.call(request);
                MapResponseFuture {
                    state: State::Calling {
                        future,
                        then: Some((self.f.clone(), ($($ty,)*))),
                    },
                }
            }
        }
    };
}

map_response_service!();
map_response_service!(T1);
map_response_service!(T1, T2);
map_response_service!(T1, T2, T3);
map_response_service!(T1, T2, T3, T4);
map_response_service!(T1, T2, T3, T4, T5);
map_response_service!(T1, T2, T3, T4, T5, T6);
