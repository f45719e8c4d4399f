use std::{
    fmt,
    marker::PhantomData,
    mem,
    ops::ControlFlow,
    task::{Context, Poll},
};

use http::Request;
use tower_service::Service;

use super::{PrefixHook, PrefixLayer, ResponseFuture};
use crate::Step;
use crate::hook::Custom;

/// Runs a [`PrefixHook`] before the inner service: see the
/// [module docs](crate::prefix).
pub struct Prefix<S, H, M = Custom> {
    inner: S,
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

impl<S, H, M> Prefix<S, H, M> {
    /// Wraps `inner` so that `hook` runs before it.
    pub fn new(inner: S, hook: H) -> Self {
        Self {
            inner,
            hook,
            _marker: PhantomData,
        }
    }

    /// A [`PrefixLayer`] running `hook`, for `ServiceBuilder::layer`.
    pub fn layer(hook: H) -> PrefixLayer<H, M> {
        PrefixLayer::new(hook)
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Consumes `self`, returning the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: Clone, H: Clone, M> Clone for Prefix<S, H, M> {
    fn clone(&self) -> Self {
        Self::new(self.inner.clone(), self.hook.clone())
    }
}

impl<S: fmt::Debug, H, M> fmt::Debug for Prefix<S, H, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prefix")
            .field("inner", &self.inner)
            .field("hook", &std::any::type_name::<H>())
            .finish()
    }
}

impl<S, H, M, B> Service<Request<B>> for Prefix<S, H, M>
where
    S: Service<Request<B>> + Clone,
    H: PrefixHook<B, S::Response, M>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S, B, H, M>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, mut request: Request<B>) -> Self::Future {
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
            Step::Pending(hook) => {
                // The ready service goes with the request; its clone will be
                // driven to readiness by the next `poll_ready`.
                let clone = self.inner.clone();
                ResponseFuture::hook(hook, mem::replace(&mut self.inner, clone))
            }
        }
    }
}
