use std::{
    fmt,
    marker::PhantomData,
    task::{Context, Poll},
};

use http::Request;
use tower_service::Service;

use super::{MonitorHook, MonitorLayer, ResponseFuture};
use crate::hook::{FnSync, Keep};

/// Runs a [`MonitorHook`] on the outcome of the inner service: see the
/// [module docs](crate::monitor).
pub struct Monitor<S, H, M = FnSync> {
    inner: S,
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

impl<S, H, M> Monitor<S, H, M> {
    /// Wraps `inner` so that `hook` runs around it.
    pub fn new(inner: S, hook: H) -> Self {
        Self {
            inner,
            hook,
            _marker: PhantomData,
        }
    }

    /// A [`MonitorLayer`] running `hook`, for `ServiceBuilder::layer`.
    pub fn layer(hook: H) -> MonitorLayer<H, M> {
        MonitorLayer::new(hook)
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

impl<S: Clone, H: Clone, M> Clone for Monitor<S, H, M> {
    fn clone(&self) -> Self {
        Self::new(self.inner.clone(), self.hook.clone())
    }
}

impl<S: fmt::Debug, H, M> fmt::Debug for Monitor<S, H, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Monitor")
            .field("inner", &self.inner)
            .field("hook", &std::any::type_name::<H>())
            .finish()
    }
}

impl<S, H, M, B> Service<Request<B>> for Monitor<S, H, M>
where
    S: Service<Request<B>>,
    H: MonitorHook<S::Response, S::Error, M> + Clone,
    M: Keep,
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
        // The head and the clock are kept only for a hook that reads them.
        let head = M::head(&request);
        let clock = M::clock();
        ResponseFuture::new(self.inner.call(request), self.hook.clone(), head, clock)
    }
}
