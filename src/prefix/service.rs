use std::{
    mem,
    ops::ControlFlow,
    task::{Context, Poll},
};

use http::Request;
use tower_service::Service;

use super::{PrefixHook, ResponseFuture};
use crate::Step;

hook_layer! {
    /// Applies a [`PrefixHook`] to the inner service: see the
    /// [module docs](crate::prefix).
    layer PrefixLayer;
    /// Runs a [`PrefixHook`] before the inner service: see the
    /// [module docs](crate::prefix).
    service Prefix;
    trait PrefixHook;
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
