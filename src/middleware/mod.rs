//! axum's middleware functions as tower layers: [`from_fn`], an async
//! function of extractors, the request and [`Next`];
//! [`map_request`], one of extractors and the request that answers the
//! request to hand on (or an answer); [`map_response`], one of extractors
//! and the response; [`from_extractor`], an extractor that lets the
//! request through or answers its rejection; and their `_with_state`
//! forms, whose
//! [`State`](crate::handler::State) extractor reads the state they are
//! given.
//!
//! The function reads the request's head through pronghorn's extractors
//! (any [`FromRequestHead`](crate::handler::FromRequestHead): `Query`, `Header`, `State`, `MatchedPath`,
//! …), takes the request, and either answers it itself or hands it on
//! with [`Next::run`]. It is a layer as any other: give it to
//! [`Router::layer`](crate::Router::layer),
//! [`route_layer`](crate::Router::route_layer),
//! [`MethodRouter::layer`](crate::router::MethodRouter::layer) or
//! [`Handler::layer`](crate::handler::Handler::layer).
//!
//! It is ready-first, as the rest of the pipeline: its future is not
//! boxed, and when the function and what it hands the request to answer
//! at once, the request is answered in its first poll, with no
//! allocation of the layer's own. A function that only checks the
//! request costs about what a [prefix hook](crate::Router::prefix) doing
//! the same does (see the benchmarks).
//!
//! ```
//! use http::{Request, StatusCode, header};
//! use pronghorn::{Body, Router, handler::IntoResponse, middleware::{Next, from_fn}};
//! use tower::ServiceExt;
//!
//! async fn login_required(request: Request<Body>, next: Next) -> http::Response<Body> {
//!     match request.headers().contains_key(header::COOKIE) {
//!         true => next.run(request).await,
//!         false => (StatusCode::SEE_OTHER, [(header::LOCATION, "/login")]).into_response(),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let router = Router::new()
//!     .get("/admin", || "secret")
//!     .route_layer(from_fn(login_required))
//!     .get("/login", || "log in")
//!     .compile()
//!     .unwrap();
//! let request = Request::get("/admin").body(String::new()).unwrap();
//! assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::SEE_OTHER);
//! # }
//! ```

/// A middleware function's layer and its service, as axum names them:
/// the function, the state a `_with_state` form gives its extractors, the
/// extractors' types `T` and the state's type `St` ([`ByType`](crate::handler::ByType)
/// where none is given); the service wraps `S`.
macro_rules! function_layer {
    ($(#[$layer_doc:meta])* $layer:ident, $(#[$service_doc:meta])* $service:ident) => {
        $(#[$layer_doc])*
        pub struct $layer<F, T, St = $crate::handler::ByType> {
            f: F,
            state: $crate::middleware::Given,
            _marker: ::std::marker::PhantomData<fn() -> (T, St)>,
        }

        impl<F, T, St> $layer<F, T, St> {
            fn new(f: F, state: $crate::middleware::Given) -> Self {
                Self {
                    f,
                    state,
                    _marker: ::std::marker::PhantomData,
                }
            }
        }

        impl<F: Clone, T, St> Clone for $layer<F, T, St> {
            fn clone(&self) -> Self {
                Self::new(self.f.clone(), self.state.clone())
            }
        }

        impl<F, T, St> ::std::fmt::Debug for $layer<F, T, St> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($layer)).finish_non_exhaustive()
            }
        }

        impl<S, F: Clone, T, St> ::tower_layer::Layer<S> for $layer<F, T, St> {
            type Service = $service<F, S, T, St>;

            fn layer(&self, inner: S) -> $service<F, S, T, St> {
                $service {
                    f: self.f.clone(),
                    inner,
                    state: self.state.clone(),
                    _marker: ::std::marker::PhantomData,
                }
            }
        }

        $(#[$service_doc])*
        pub struct $service<F, S, T, St = $crate::handler::ByType> {
            f: F,
            inner: S,
            state: $crate::middleware::Given,
            _marker: ::std::marker::PhantomData<fn() -> (T, St)>,
        }

        impl<F: Clone, S: Clone, T, St> Clone for $service<F, S, T, St> {
            fn clone(&self) -> Self {
                Self {
                    f: self.f.clone(),
                    inner: self.inner.clone(),
                    state: self.state.clone(),
                    _marker: ::std::marker::PhantomData,
                }
            }
        }

        impl<F, S, T, St> ::std::fmt::Debug for $service<F, S, T, St> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($service)).finish_non_exhaustive()
            }
        }
    };
}

mod from_extractor;
mod map_request;
mod map_response;

pub use self::{
    from_extractor::{
        FromExtractor, FromExtractorLayer, from_extractor, from_extractor_with_state,
    },
    map_request::{
        IntoMapRequestResult, MapRequest, MapRequestFuture, MapRequestLayer, map_request,
        map_request_with_state,
    },
    map_response::{
        MapResponse, MapResponseFn, MapResponseFuture, MapResponseLayer, map_response,
        map_response_with_state,
    },
};

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_service::Service;

use crate::{
    body::Body,
    handler::{Endpoint, HeadArgument, IntoResponse, RouteMatch, internal_error},
    step::BoxFuture,
};

/// A layer from an async function of extractors, the request and
/// [`Next`], as axum's `middleware::from_fn`: see the [module](self).
pub fn from_fn<F, T>(f: F) -> FromFnLayer<F, T> {
    FromFnLayer::new(f, None)
}

/// [`from_fn`], its [`State`](crate::handler::State) extractors reading
/// `state` (before the router's), as axum's
/// `middleware::from_fn_with_state`.
///
/// ```
/// use http::{Request, StatusCode};
/// use pronghorn::{Body, Router, handler::{IntoResponse, State}, middleware::{Next, from_fn_with_state}};
/// use tower::ServiceExt;
///
/// #[derive(Clone)]
/// struct Keys(&'static str);
///
/// async fn check(State(keys): State<Keys>, request: Request<Body>, next: Next) -> http::Response<Body> {
///     match request.headers().get("x-key").is_some_and(|key| key == keys.0) {
///         true => next.run(request).await,
///         false => StatusCode::FORBIDDEN.into_response(),
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", || "in")
///     .layer(from_fn_with_state(Keys("open sesame"), check))
///     .compile()
///     .unwrap();
/// let request = Request::get("/").header("x-key", "open sesame").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::OK);
/// # }
/// ```
pub fn from_fn_with_state<St, F, T>(state: St, f: F) -> FromFnLayer<F, T, St>
where
    St: Clone + Send + Sync + 'static,
{
    FromFnLayer::new(f, Some(given(state)))
}

function_layer!(
    /// The layer [`from_fn`] makes.
    FromFnLayer,
    /// The service of a [`from_fn`] layer around `S`.
    FromFn
);

/// The rest of the stack below a [`from_fn`] function: the layers under
/// it and the handler. [`run`](Next::run) hands it the request.
pub struct Next {
    inner: Inner,
}

/// What a [`Next`] runs: the handler itself (the common case, the
/// function the innermost layer; no allocation), or other layers, boxed.
enum Inner {
    Endpoint(Endpoint),
    Boxed(Box<dyn FnOnce(Request<Body>) -> BoxFuture<Response<Body>> + Send>),
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

impl Next {
    /// `inner`, ready, as the rest of the stack.
    fn new<S>(inner: S) -> Self
    where
        S: Service<Request<Body>, Error = Infallible> + Send + 'static,
        S::Response: IntoResponse,
        S::Future: Send + 'static,
    {
        let inner = match crate::body::downcast::<Endpoint, S>(inner) {
            Ok(endpoint) => Inner::Endpoint(endpoint),
            Err(mut inner) => Inner::Boxed(Box::new(move |request| {
                Box::pin(async move {
                    let Ok(response) = inner.call(request).await;
                    response.into_response()
                })
            })),
        };
        Self { inner }
    }

    /// Hands `request` to the rest of the stack: its answer.
    pub async fn run(self, request: Request<Body>) -> Response<Body> {
        match self.inner {
            Inner::Endpoint(mut endpoint) => {
                let Ok(response) = endpoint.call(request).await;
                response
            }
            Inner::Boxed(call) => call(request).await,
        }
    }
}

pin_project! {
    /// The response future of a [`from_fn`] or [`from_extractor`] layer:
    /// the function's (or the wrapped service's) answer, or an extractor's
    /// rejection.
    pub struct FromFnFuture<Fut> {
        #[pin]
        state: FutureState<Fut>,
    }
}

pin_project! {
    #[project = FutureStateProj]
    enum FutureState<Fut> {
        Answered { response: Option<Response<Body>> },
        Running { #[pin] future: Fut },
    }
}

impl<Fut> FromFnFuture<Fut> {
    fn answered(response: Response<Body>) -> Self {
        Self {
            state: FutureState::Answered {
                response: Some(response),
            },
        }
    }

    fn running(future: Fut) -> Self {
        Self {
            state: FutureState::Running { future },
        }
    }
}

impl<Fut> fmt::Debug for FromFnFuture<Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFnFuture").finish_non_exhaustive()
    }
}

impl<Fut> Future for FromFnFuture<Fut>
where
    Fut: Future<Output: IntoResponse>,
{
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            FutureStateProj::Answered { response } => {
                Poll::Ready(Ok(response.take().expect("polled after completion")))
            }
            FutureStateProj::Running { future } => {
                Poll::Ready(Ok(ready!(future.poll(cx)).into_response()))
            }
        }
    }
}

macro_rules! from_fn_service {
    ($($ty:ident),*) => {
        #[allow(non_snake_case, reason = "the extractors, named by their types")]
        impl<F, Fut, S, St, $($ty,)*> Service<Request<Body>> for FromFn<F, S, ($($ty,)*), St>
        where
            F: Fn($($ty,)* Request<Body>, Next) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output: IntoResponse> + Send + 'static,
            S: Service<Request<Body>, Error = Infallible> + Clone + Send + 'static,
            S::Response: IntoResponse,
            S::Future: Send + 'static,
            $($ty: HeadArgument<St>,)*
        {
            type Response = Response<Body>;
            type Error = Infallible;
            type Future = FromFnFuture<Fut>;

            #[inline]
            fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
                self.inner.poll_ready(cx)
            }

            fn call(&mut self, request: Request<Body>) -> FromFnFuture<Fut> {
                $(
                    let $ty = match extract::<$ty, St>(&request, &self.state) {
                        Ok(value) => value,
                        Err(response) => return FromFnFuture::answered(response),
                    };
                )*
                let ready = take_ready(&mut self.inner);
                FromFnFuture::running((self.f)($($ty,)* request, Next::new(ready)))
            }
        }
    };
}

from_fn_service!();
from_fn_service!(T1);
from_fn_service!(T1, T2);
from_fn_service!(T1, T2, T3);
from_fn_service!(T1, T2, T3, T4);
from_fn_service!(T1, T2, T3, T4, T5);
from_fn_service!(T1, T2, T3, T4, T5, T6);

/// The state given to a `_with_state` function, as its `State`
/// extractors read it.
type Given = Option<Arc<http::Extensions>>;

/// `state`, as a `_with_state` function's extractors read it.
fn given<St: Clone + Send + Sync + 'static>(state: St) -> Arc<http::Extensions> {
    let mut extensions = http::Extensions::new();
    extensions.insert(state);
    Arc::new(extensions)
}

/// The service `inner` made ready, for `Next` or the future to call; a
/// clone stays in its place, as tower's services are used.
fn take_ready<S: Clone>(inner: &mut S) -> S {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

/// Runs the extractor `T` on `request`, which a router handed its layers
/// (its route is in its extensions), its `State` reading `state` first;
/// a request no router handed is a 500.
#[allow(
    clippy::result_large_err,
    reason = "the rejection is the answer, as `FromRequestHead::from_head`'s"
)]
fn extract<T: HeadArgument<St>, St>(
    request: &Request<Body>,
    state: &Given,
) -> Result<T, Response<Body>> {
    let Some(matched) = request.extensions().get::<RouteMatch>() else {
        error_limited!(
            "pronghorn: a middleware function with extractors ran on a request no router handed it; answering 500"
        );
        return Err(internal_error());
    };
    let route = matched.context();
    let mut context = route.with_request(request);
    if let Some(state) = state {
        context.read_state_first(state);
    }
    T::from_head(&context)
}
