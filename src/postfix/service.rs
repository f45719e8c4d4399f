use std::{
    marker::PhantomData,
    task::{Context, Poll},
};

use http::Request;
use tower_service::Service;

use super::{PostfixHook, PostfixLayer, ResponseFuture};
use crate::hook::{FnBare, Keep};

/// Runs a [`PostfixHook`] on the inner service's responses: see the
/// [module docs](crate::postfix).
pub struct Postfix<S, H, M = FnBare> {
    inner: S,
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

crate::hook::hook_service!(Postfix, PostfixLayer, "after");

impl<S, H, M, B> Service<Request<B>> for Postfix<S, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M> + Clone,
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
        // The head is copied only for a hook that reads it: borrowing the
        // request for it also costs a move of the request.
        let head = M::head(&request);
        let hook = self.hook.clone();
        ResponseFuture::new(self.inner.call(request), hook, head)
    }
}
