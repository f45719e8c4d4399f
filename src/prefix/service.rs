use std::{
    marker::PhantomData,
    mem,
    ops::ControlFlow,
    task::{Context, Poll},
};

use http::Request;
use tower_service::Service;

use super::{PrefixHook, PrefixLayer, ResponseFuture};
use crate::{
    hook::{Custom, FnAsync, FnEdit, FnStep, FnSync},
    step::Never,
    step::Step,
};

/// Runs a [`PrefixHook`] before the inner service: see the
/// [module docs](crate::prefix).
pub struct Prefix<S, H, M = FnEdit> {
    inner: S,
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

crate::hook::hook_service!(Prefix, PrefixLayer, "before");

impl<S, H, M> Prefix<S, H, M> {
    /// Runs the hook on `request`, then the inner service if it lets the
    /// request through. A hook that suspends takes the ready inner service
    /// with it, `suspend` leaving another in its place.
    #[inline(always)]
    fn run<B>(
        &mut self,
        mut request: Request<B>,
        suspend: impl FnOnce(&mut S) -> S,
    ) -> ResponseFuture<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: PrefixHook<B, S::Response, M>,
    {
        match self.hook.inspect(&mut request) {
            Some(ControlFlow::Continue(())) => {
                return ResponseFuture::inner(self.inner.call(request));
            }
            Some(ControlFlow::Break(response)) => return ResponseFuture::answered(response),
            None => {}
        }
        match self.hook.call(request) {
            Step::Ready(ControlFlow::Continue(request)) => {
                ResponseFuture::inner(self.inner.call(request))
            }
            Step::Ready(ControlFlow::Break(response)) => ResponseFuture::answered(response),
            Step::Pending(hook) => ResponseFuture::hook(hook, suspend(&mut self.inner)),
        }
    }
}

impl<S, H, M, B> Service<Request<B>> for Prefix<S, H, M>
where
    S: Service<Request<B>>,
    H: PrefixHook<B, S::Response, M>,
    (M, H::Future): Suspend<S>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S, B, H, M>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.run(request, <(M, H::Future)>::take)
    }
}

/// What a hook that suspends takes of the inner service, by the hook's
/// marker and future: a synchronous hook (its future is [`Never`])
/// suspends with nothing, so the inner service need not be `Clone`; one
/// that may suspend takes the ready service and leaves a clone, driven to
/// readiness by the next `poll_ready`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a prefix hook that may suspend needs a clone of the inner service, and `{S}` is not `Clone`",
    label = "the inner service must be `Clone` for this hook",
    note = "a hook that may suspend takes the ready inner service with it and leaves a clone: make the inner service `Clone` (tower's `Buffer` makes any service so), or make the hook synchronous, which needs no clone"
)]
pub trait Suspend<S> {
    /// Takes the ready service, leaving another in its place.
    fn take(inner: &mut S) -> S;
}

macro_rules! never_suspends {
    ($($marker:ty),*) => {$(
        impl<S, T> Suspend<S> for ($marker, Never<T>) {
            fn take(_: &mut S) -> S {
                unreachable!("a `Never` cannot be made: the hook cannot suspend")
            }
        }
    )*};
}

macro_rules! may_suspend {
    ($($marker:ty),*) => {$(
        impl<S: Clone, F> Suspend<S> for ($marker, F) {
            fn take(inner: &mut S) -> S {
                let clone = inner.clone();
                mem::replace(inner, clone)
            }
        }
    )*};
}

never_suspends!(FnSync, FnEdit);
may_suspend!(FnAsync, FnStep, Custom);
