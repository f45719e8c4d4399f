//! The ready-first primitive: [`Step`], and [`Never`], the future of a step
//! that cannot suspend.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    marker::PhantomData,
    pin::Pin,
    task::{Context, Poll},
};

/// A boxed, sendable future: what an asynchronous step becomes once
/// type-erased.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A response, or the future of one: what a handler's or an error
/// handler's call gives.
pub(crate) type ResponseStep =
    Step<http::Response<crate::body::Body>, BoxFuture<http::Response<crate::body::Body>>>;

/// The answer of a hook or handler: a value now, or a future of it.
///
/// Every step of a pronghorn pipeline answers with a `Step`. A [`Step::Ready`]
/// value is used on the spot, in the same poll of the enclosing response
/// future; only a [`Step::Pending`] future is stored and polled. One hook may
/// answer `Ready` for one request and `Pending` for the next (a cache hit and
/// a cache miss): that per-request choice is what lets a synchronous pipeline
/// finish inside the first poll while an asynchronous step costs exactly one
/// suspension.
///
/// # Example
///
/// A lookup that answers from a cache when it can and from a slower source
/// otherwise:
///
/// ```
/// use std::future::{ready, Ready};
/// use pronghorn::Step;
///
/// fn lookup(key: u32) -> Step<String, Ready<String>> {
///     if key == 0 {
///         Step::Ready("cached".to_owned())
///     } else {
///         Step::Pending(ready(format!("fetched {key}")))
///     }
/// }
///
/// assert!(lookup(0).is_ready());
/// assert!(lookup(1).is_pending());
/// assert_eq!(lookup(0).into_ready(), Some("cached".to_owned()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a `Step` does nothing unless its value is used or its future polled"]
pub enum Step<T, F> {
    /// The value is available now.
    Ready(T),
    /// The value will be the output of this future.
    Pending(F),
}

impl<T, F> Step<T, F> {
    /// Returns `true` for [`Step::Ready`].
    #[inline]
    pub fn is_ready(&self) -> bool {
        matches!(self, Step::Ready(_))
    }

    /// Returns `true` for [`Step::Pending`].
    #[inline]
    pub fn is_pending(&self) -> bool {
        matches!(self, Step::Pending(_))
    }

    /// The ready value, if there is one.
    #[inline]
    pub fn into_ready(self) -> Option<T> {
        match self {
            Step::Ready(value) => Some(value),
            Step::Pending(_) => None,
        }
    }

    /// Changes the type of the future, leaving a ready value as it is.
    ///
    /// ```
    /// use std::future::{ready, Ready};
    /// use pronghorn::Step;
    ///
    /// let step: Step<u8, Ready<u8>> = Step::Pending(ready(1));
    /// let boxed = step.map_pending(Box::pin);
    /// assert!(boxed.is_pending());
    /// ```
    #[inline]
    pub fn map_pending<G>(self, f: impl FnOnce(F) -> G) -> Step<T, G> {
        match self {
            Step::Ready(value) => Step::Ready(value),
            Step::Pending(future) => Step::Pending(f(future)),
        }
    }
}

impl<T> Step<T, Never<T>> {
    /// A step that is always ready, with the uninhabited [`Never`] as its
    /// future type.
    ///
    /// ```
    /// use pronghorn::Step;
    ///
    /// let step = Step::now(7);
    /// assert_eq!(step.into_ready(), Some(7));
    /// ```
    #[inline]
    pub fn now(value: T) -> Self {
        Step::Ready(value)
    }
}

impl<T, F> Step<T, F>
where
    F: Future<Output = T>,
{
    /// Turns the step into a future: ready on its first poll for
    /// [`Step::Ready`], the inner future for [`Step::Pending`].
    ///
    /// Useful where a plain `Future` is needed (tests, or code outside a
    /// pronghorn pipeline).
    ///
    /// ```
    /// use std::future::{ready, Future, Ready};
    /// use std::task::{Context, Poll, Waker};
    /// use pronghorn::Step;
    ///
    /// let step: Step<u8, Ready<u8>> = Step::Ready(1);
    /// let mut future = std::pin::pin!(step.into_future());
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert_eq!(future.as_mut().poll(&mut cx), Poll::Ready(1));
    /// ```
    pub fn into_future(self) -> StepFuture<T, F> {
        StepFuture {
            kind: match self {
                Step::Ready(value) => StepKind::Ready { value: Some(value) },
                Step::Pending(future) => StepKind::Pending { future },
            },
        }
    }
}

impl<T: 'static, F> Step<T, F>
where
    F: Future<Output = T> + Send + 'static,
{
    /// Converts the value with `convert` — now, or when the future
    /// completes — and boxes the future: how type-erased steps are stored.
    /// A ready step allocates nothing.
    #[inline]
    pub(crate) fn erase<U>(self, convert: fn(T) -> U) -> Step<U, BoxFuture<U>>
    where
        U: 'static,
    {
        match self {
            Step::Ready(value) => Step::Ready(convert(value)),
            Step::Pending(future) => Step::Pending(Box::pin(async move { convert(future.await) })),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Step::into_future`].
    pub struct StepFuture<T, F> {
        #[pin]
        kind: StepKind<T, F>,
    }
}

pin_project_lite::pin_project! {
    #[project = StepKindProj]
    enum StepKind<T, F> {
        Ready { value: Option<T> },
        Pending { #[pin] future: F },
    }
}

impl<T, F> Future for StepFuture<T, F>
where
    F: Future<Output = T>,
{
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match self.project().kind.project() {
            StepKindProj::Ready { value } => {
                Poll::Ready(value.take().expect("future polled after completion"))
            }
            StepKindProj::Pending { future } => future.poll(cx),
        }
    }
}

impl<T, F> fmt::Debug for StepFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.kind {
            StepKind::Ready { .. } => "Ready",
            StepKind::Pending { .. } => "Pending",
        };
        f.debug_tuple("StepFuture").field(&state).finish()
    }
}

/// The future type of a step that never suspends.
///
/// `Never<T>` cannot be constructed, so a `Step<T, Never<T>>` is always
/// [`Step::Ready`] and the compiler removes the pending branch of any code
/// that handles it. Synchronous hooks use it as their `Future` type.
pub struct Never<T> {
    never: Infallible,
    _output: PhantomData<fn() -> T>,
}

impl<T> Future for Never<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        match self.never {}
    }
}

impl<T> fmt::Debug for Never<T> {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.never {}
    }
}
