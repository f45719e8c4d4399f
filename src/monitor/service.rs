use std::{
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

crate::hook::hook_service!(Monitor, MonitorLayer, "around");

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
