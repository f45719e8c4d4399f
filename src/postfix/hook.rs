use std::future::Future;

use crate::{
    head::RequestHead,
    hook::{FnAsync, FnBare, FnEdit, FnStep, FnSync},
    step::Never,
    step::Step,
};

/// A hook that runs after the inner service: modify or replace the response.
///
/// `R` is the response type of the inner service. `M` is a marker that keeps
/// the closure implementations apart (see [`hook`](crate::hook)); a type that
/// implements this trait itself leaves it at its default.
///
/// Implemented for closures
///
/// - `FnMut(&mut R)`: edits the response in place and sees nothing of the
///   request, so no request head is kept for it (marker [`FnBare`]);
/// - `FnMut(&RequestHead, &mut R)`: the same, reading the request head
///   ([`FnEdit`]);
/// - `FnMut(&RequestHead, R) -> X` where `X` is `R` (synchronous,
///   [`FnSync`]), a future of `R` (asynchronous, [`FnAsync`]), or a [`Step`]
///   of `R` (decided per response, [`FnStep`]).
///
/// The in-place forms are synchronous and do not move the response in and
/// out of the closure. An asynchronous closure reads what it needs from the
/// head before returning its future, which cannot borrow the head.
///
/// # Example
///
/// ```
/// use http::{HeaderValue, Response};
/// use pronghorn::{PostfixHook, RequestHead, Step};
/// use pronghorn::step::Never;
///
/// #[derive(Clone)]
/// struct NoStore;
///
/// impl<B> PostfixHook<Response<B>> for NoStore {
///     type Future = Never<Response<B>>;
///
///     fn call(&mut self, _: &RequestHead, mut response: Response<B>) -> Step<Response<B>, Self::Future> {
///         response.headers_mut().insert("cache-control", HeaderValue::from_static("no-store"));
///         Step::now(response)
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a postfix hook for a service that answers `{R}`",
    label = "not a postfix hook here",
    note = "a `PostfixLayer` hook is `FnMut(&mut R)`, `FnMut(&RequestHead, &mut R)` or `FnMut(&RequestHead, R) -> R`, or a future or a `Step` of the last, where `R` is the inner service's response type, here `{R}`"
)]
pub trait PostfixHook<R, M = crate::hook::Custom> {
    /// The future of an asynchronous answer.
    type Future: Future<Output = R>;

    /// Answers the response to send on.
    fn call(&mut self, head: &RequestHead, response: R) -> Step<R, Self::Future>;

    /// Edits `response` where it lies and answers `true`, for a hook that
    /// works in place; any other answers `false` and is `call`ed with the
    /// response.
    #[doc(hidden)]
    #[inline]
    fn edit(&mut self, head: &RequestHead, response: &mut R) -> bool {
        let _ = (head, response);
        false
    }

    /// Edits the response where it lies, for a hook that does not see the
    /// request head (marker [`FnBare`]); such a hook answers `true`.
    #[doc(hidden)]
    #[inline]
    fn edit_alone(&mut self, response: &mut R) -> bool {
        let _ = response;
        false
    }
}

impl<F, R> PostfixHook<R, FnBare> for F
where
    F: FnMut(&mut R),
{
    type Future = Never<R>;

    #[inline]
    fn call(&mut self, _: &RequestHead, mut response: R) -> Step<R, Never<R>> {
        self(&mut response);
        Step::Ready(response)
    }

    #[inline]
    fn edit(&mut self, _: &RequestHead, response: &mut R) -> bool {
        self(response);
        true
    }

    #[inline]
    fn edit_alone(&mut self, response: &mut R) -> bool {
        self(response);
        true
    }
}

impl<F, R> PostfixHook<R, FnSync> for F
where
    F: FnMut(&RequestHead, R) -> R,
{
    type Future = Never<R>;

    #[inline]
    fn call(&mut self, head: &RequestHead, response: R) -> Step<R, Never<R>> {
        Step::Ready(self(head, response))
    }
}

impl<F, R> PostfixHook<R, FnEdit> for F
where
    F: FnMut(&RequestHead, &mut R),
{
    type Future = Never<R>;

    #[inline]
    fn call(&mut self, head: &RequestHead, mut response: R) -> Step<R, Never<R>> {
        self(head, &mut response);
        Step::Ready(response)
    }

    #[inline]
    fn edit(&mut self, head: &RequestHead, response: &mut R) -> bool {
        self(head, response);
        true
    }
}

impl<F, Fut, R> PostfixHook<R, FnAsync> for F
where
    F: FnMut(&RequestHead, R) -> Fut,
    Fut: Future<Output = R>,
{
    type Future = Fut;

    #[inline]
    fn call(&mut self, head: &RequestHead, response: R) -> Step<R, Fut> {
        Step::Pending(self(head, response))
    }
}

impl<F, Fut, R> PostfixHook<R, FnStep> for F
where
    F: FnMut(&RequestHead, R) -> Step<R, Fut>,
    Fut: Future<Output = R>,
{
    type Future = Fut;

    #[inline]
    fn call(&mut self, head: &RequestHead, response: R) -> Step<R, Fut> {
        self(head, response)
    }
}
