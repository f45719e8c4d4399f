//! [`MonitorHook`]: a hook that observes each request's outcome, and its
//! implementations for closures.

use std::future::Future;

use super::Exchange;
use crate::{
    hook::{FnAsync, FnBare, FnStep, FnSync, MonitorOutput},
    step::Never,
    step::Step,
};

/// A hook that observes each request's outcome.
///
/// `R` and `E` are the response and error types of the inner service. `M` is
/// a marker that keeps the closure implementations apart (see
/// [`hook`](crate::hook)); a type that implements this trait itself leaves
/// it at its default.
///
/// Implemented for closures `FnMut(&Exchange<'_, R, E>) -> X` where `X` is a
/// [`MonitorOutput`] (`()` or `Result<(), E: Display>`: synchronous,
/// marker [`FnSync`]), a future of one (asynchronous, [`FnAsync`]), or a
/// [`Step`] of one ([`FnStep`]). An asynchronous closure copies what it
/// needs out of the exchange before returning its future, which cannot
/// borrow the exchange.
///
/// A closure `FnMut(Option<Result<&R, &E>>) -> X` ([`FnBare`]) sees the
/// outcome alone (`None` when the request was cancelled), synchronously:
/// a [`MonitorLayer`](crate::MonitorLayer) then keeps no copy of the
/// request head and reads no clock, which is what a status counter needs.
///
/// # Example
///
/// ```
/// use std::sync::{atomic::{AtomicU64, Ordering}, Arc};
/// use http::Response;
/// use pronghorn::{Exchange, MonitorHook, Step};
/// use pronghorn::step::Never;
///
/// #[derive(Clone, Default)]
/// struct ServerErrors(Arc<AtomicU64>);
///
/// impl<B, E> MonitorHook<Response<B>, E> for ServerErrors {
///     type Output = ();
///     type Future = Never<()>;
///
///     fn call(&mut self, exchange: &Exchange<'_, Response<B>, E>) -> Step<(), Never<()>> {
///         if exchange.status().is_none_or(|status| status.is_server_error()) {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///         Step::now(())
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a monitor hook for a service that answers `{R}` or fails with `{E}`",
    label = "not a monitor hook here",
    note = "a `MonitorLayer` hook is `FnMut(&Exchange<'_, R, E>)` answering `()` or `Result<(), impl Display>`, or a future or a `Step` of one, or `FnMut(Option<Result<&R, &E>>)` answering `()` or a `Result`, where `R` and `E` are the inner service's response and error types, here `{R}` and `{E}`"
)]
pub trait MonitorHook<R, E, M = crate::hook::Custom> {
    /// What the hook answers; a failure is logged.
    type Output: MonitorOutput;
    /// The future of an asynchronous answer.
    type Future: Future<Output = Self::Output>;

    /// Observes one exchange.
    fn call(&mut self, exchange: &Exchange<'_, R, E>) -> Step<Self::Output, Self::Future>;

    /// Observes the outcome alone, for a hook that does not see the
    /// exchange (marker [`FnBare`]).
    #[doc(hidden)]
    #[inline]
    fn call_alone(&mut self, outcome: Option<Result<&R, &E>>) -> Step<Self::Output, Self::Future> {
        let _ = outcome;
        unreachable!("only a hook blind to the exchange is called with the outcome alone")
    }
}

impl<F, O, R, E> MonitorHook<R, E, FnBare> for F
where
    F: FnMut(Option<Result<&R, &E>>) -> O,
    O: MonitorOutput,
{
    type Output = O;
    type Future = Never<O>;

    #[inline]
    fn call(&mut self, exchange: &Exchange<'_, R, E>) -> Step<O, Never<O>> {
        Step::Ready(self(exchange.outcome()))
    }

    #[inline]
    fn call_alone(&mut self, outcome: Option<Result<&R, &E>>) -> Step<O, Never<O>> {
        Step::Ready(self(outcome))
    }
}

impl<F, O, R, E> MonitorHook<R, E, FnSync> for F
where
    F: FnMut(&Exchange<'_, R, E>) -> O,
    O: MonitorOutput,
{
    type Output = O;
    type Future = Never<O>;

    #[inline]
    fn call(&mut self, exchange: &Exchange<'_, R, E>) -> Step<O, Never<O>> {
        Step::Ready(self(exchange))
    }
}

impl<F, Fut, R, E> MonitorHook<R, E, FnAsync> for F
where
    F: FnMut(&Exchange<'_, R, E>) -> Fut,
    Fut: Future,
    Fut::Output: MonitorOutput,
{
    type Output = Fut::Output;
    type Future = Fut;

    #[inline]
    fn call(&mut self, exchange: &Exchange<'_, R, E>) -> Step<Fut::Output, Fut> {
        Step::Pending(self(exchange))
    }
}

impl<F, O, Fut, R, E> MonitorHook<R, E, FnStep> for F
where
    F: FnMut(&Exchange<'_, R, E>) -> Step<O, Fut>,
    O: MonitorOutput,
    Fut: Future<Output = O>,
{
    type Output = O;
    type Future = Fut;

    #[inline]
    fn call(&mut self, exchange: &Exchange<'_, R, E>) -> Step<O, Fut> {
        self(exchange)
    }
}
