use std::task::{Context, Poll};

use http::Request;
use tower_service::Service;

use super::{MonitorHook, ResponseFuture};
use crate::RequestHead;
use crate::clock::Clock;

hook_layer! {
    /// Applies a [`MonitorHook`] to the inner service: see the
    /// [module docs](crate::monitor).
    layer MonitorLayer;
    /// Runs a [`MonitorHook`] on the outcome of the inner service: see the
    /// [module docs](crate::monitor).
    service Monitor;
    trait MonitorHook;
}

impl<S, H, M, B> Service<Request<B>> for Monitor<S, H, M>
where
    S: Service<Request<B>>,
    H: MonitorHook<S::Response, S::Error, M> + Clone,
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
        let head = RequestHead::of(&request);
        let clock = Clock::start();
        ResponseFuture::new(self.inner.call(request), self.hook.clone(), head, clock)
    }
}
