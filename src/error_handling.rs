//! The errors of tower layers made answers: [`HandleErrorLayer`].
//!
//! A route's layers must answer every request, as its handler does: their
//! service's error is `Infallible`. A layer that fails, as tower's
//! `TimeoutLayer` and `LoadShedLayer` do with a `BoxError`, goes inside a
//! [`HandleErrorLayer`], whose function turns the error into the answer:
//!
//! ```
//! use std::time::Duration;
//! use http::{Request, StatusCode};
//! use pronghorn::{BoxError, HandleErrorLayer, Router};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let router = Router::new()
//!     .get("/slow", || async {
//!         tokio::time::sleep(Duration::from_secs(60)).await;
//!         "late"
//!     })
//!     .layer(
//!         ServiceBuilder::new()
//!             .layer(HandleErrorLayer::new(|error: BoxError| async move {
//!                 if error.is::<tower::timeout::error::Elapsed>() {
//!                     Ok(StatusCode::REQUEST_TIMEOUT)
//!                 } else {
//!                     Err((StatusCode::INTERNAL_SERVER_ERROR, format!("Unhandled internal error: {error}")))
//!                 }
//!             }))
//!             .timeout(Duration::from_millis(10)),
//!     )
//!     .compile()
//!     .unwrap();
//! let response = router.oneshot(Request::get("/slow").body(String::new()).unwrap()).await.unwrap();
//! assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
//! # }
//! ```

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    marker::PhantomData,
    pin::Pin,
    sync::{Mutex, PoisonError},
    task::{Context, Poll, ready},
};

use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::{
    body::Body,
    handler::IntoResponse,
    hook::{FnAsync, FnSync},
    step::{BoxFuture, ResponseStep, Step},
};

/// A function that turns an error `E` into an answer: a closure taking the
/// error and returning anything [`IntoResponse`] (the marker [`FnSync`]:
/// answered at once) or a future of it ([`FnAsync`]). `M` is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not turn the inner service's error `{E}` into an answer",
    label = "not an error handler for `{E}`",
    note = "an error handler is a `Fn(E)` closure that returns an `IntoResponse`, or a future of one; tower's timeout and load-shed layers fail with `BoxError` (`|error: BoxError| ...`)"
)]
pub trait ErrorHandler<E, M>: Clone {
    /// The answer to `error`.
    fn answer(&self, error: E) -> Step<Response<Body>, BoxFuture<Response<Body>>>;
}

impl<F, E, R> ErrorHandler<E, FnSync> for F
where
    F: Fn(E) -> R + Clone,
    R: IntoResponse,
{
    fn answer(&self, error: E) -> ResponseStep {
        Step::Ready(self(error).into_response())
    }
}

impl<F, E, Fut> ErrorHandler<E, FnAsync> for F
where
    F: Fn(E) -> Fut + Clone,
    Fut: Future + Send + 'static,
    Fut::Output: IntoResponse,
{
    fn answer(&self, error: E) -> ResponseStep {
        let future = self(error);
        Step::Pending(Box::pin(async move { future.await.into_response() }))
    }
}

/// Turns the errors of the service it wraps into answers, with a function
/// of the error: see the [module docs](self). The wrapped service never
/// fails; its answers and the function's go out as pronghorn's
/// `Response<Body>`. The marker `M` tells synchronous functions from
/// asynchronous ones and is inferred.
pub struct HandleErrorLayer<F, M = FnAsync> {
    handler: F,
    _marker: PhantomData<fn() -> M>,
}

impl<F, M> HandleErrorLayer<F, M> {
    /// A layer answering the wrapped service's errors with `handler`.
    pub fn new(handler: F) -> Self {
        Self {
            handler,
            _marker: PhantomData,
        }
    }
}

impl<F: Clone, M> Clone for HandleErrorLayer<F, M> {
    fn clone(&self) -> Self {
        Self::new(self.handler.clone())
    }
}

impl<F, M> fmt::Debug for HandleErrorLayer<F, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandleErrorLayer").finish_non_exhaustive()
    }
}

impl<S, F: Clone, M> Layer<S> for HandleErrorLayer<F, M> {
    type Service = HandleError<S, F, M>;

    fn layer(&self, inner: S) -> Self::Service {
        HandleError {
            inner,
            handler: self.handler.clone(),
            refused: Mutex::new(None),
            _marker: PhantomData,
        }
    }
}

/// The service of a [`HandleErrorLayer`].
pub struct HandleError<S, F, M = FnAsync> {
    inner: S,
    handler: F,
    /// The answer to the error the inner service's readiness failed with,
    /// for the next call. Only ever reached through `&mut self`, so never
    /// locked: the mutex makes the service `Sync`, as a router's layers
    /// must be, around an answer that is only `Send`.
    refused: Mutex<Option<ResponseStep>>,
    _marker: PhantomData<fn() -> M>,
}

impl<S: Clone, F: Clone, M> Clone for HandleError<S, F, M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            handler: self.handler.clone(),
            refused: Mutex::new(None),
            _marker: PhantomData,
        }
    }
}

impl<S: fmt::Debug, F, M> fmt::Debug for HandleError<S, F, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandleError")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, F, M> HandleError<S, F, M> {
    fn refused(&mut self) -> &mut Option<ResponseStep> {
        self.refused
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S, F, M, B> Service<Request<B>> for HandleError<S, F, M>
where
    S: Service<Request<B>>,
    S::Response: IntoResponse,
    F: ErrorHandler<S::Error, M>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future, F, M>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if self.refused().is_some() {
            return Poll::Ready(Ok(()));
        }
        // A readiness that fails is answered at the next call.
        if let Err(error) = ready!(self.inner.poll_ready(cx)) {
            let answer = self.handler.answer(error);
            *self.refused() = Some(answer);
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let state = match self.refused().take() {
            Some(answer) => State::Answer {
                answer: Some(answer),
            },
            None => State::Inner {
                future: self.inner.call(request),
                handler: Some(self.handler.clone()),
            },
        };
        ResponseFuture {
            state,
            _marker: PhantomData,
        }
    }
}

pin_project! {
    /// The response future of [`HandleError`]: ready on its first poll
    /// when the inner service's future is and the error, if any, is
    /// answered synchronously.
    pub struct ResponseFuture<Fut, F, M> {
        #[pin]
        state: State<Fut, F>,
        _marker: PhantomData<fn() -> M>,
    }
}

pin_project! {
    #[project = StateProjection]
    enum State<Fut, F> {
        Inner {
            #[pin]
            future: Fut,
            handler: Option<F>,
        },
        Answer {
            answer: Option<ResponseStep>,
        },
    }
}

impl<Fut, F, M> fmt::Debug for ResponseFuture<Fut, F, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<Fut, R, E, F, M> Future for ResponseFuture<Fut, F, M>
where
    Fut: Future<Output = Result<R, E>>,
    R: IntoResponse,
    F: ErrorHandler<E, M>,
{
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProjection::Inner { future, handler } => match ready!(future.poll(cx)) {
                    Ok(response) => return Poll::Ready(Ok(response.into_response())),
                    Err(error) => {
                        let handler = handler.take().expect("future polled after completion");
                        let answer = Some(handler.answer(error));
                        state.set(State::Answer { answer });
                    }
                },
                StateProjection::Answer { answer } => {
                    return match answer {
                        Some(Step::Pending(future)) => future.as_mut().poll(cx).map(Ok),
                        Some(Step::Ready(_)) => match answer.take() {
                            Some(Step::Ready(response)) => Poll::Ready(Ok(response)),
                            _ => unreachable!("matched as ready above"),
                        },
                        None => panic!("future polled after completion"),
                    };
                }
            }
        }
    }
}
