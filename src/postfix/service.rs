use std::task::{Context, Poll};

use http::Request;
use tower_service::Service;

use super::{PostfixHook, ResponseFuture};
use crate::RequestHead;

hook_layer! {
    /// Applies a [`PostfixHook`] to the inner service: see the
    /// [module docs](crate::postfix).
    layer PostfixLayer;
    /// Runs a [`PostfixHook`] on the inner service's responses: see the
    /// [module docs](crate::postfix).
    service Postfix;
    trait PostfixHook;
}

impl<S, H, M, B> Service<Request<B>> for Postfix<S, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M> + Clone,
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
        let hook = self.hook.clone();
        ResponseFuture::new(self.inner.call(request), hook, head)
    }
}
