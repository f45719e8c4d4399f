use std::{
    fmt,
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

impl<S, H, M> Postfix<S, H, M> {
    /// Wraps `inner` so that `hook` runs after it.
    pub fn new(inner: S, hook: H) -> Self {
        Self {
            inner,
            hook,
            _marker: PhantomData,
        }
    }

    /// A [`PostfixLayer`] running `hook`, for `ServiceBuilder::layer`.
    pub fn layer(hook: H) -> PostfixLayer<H, M> {
        PostfixLayer::new(hook)
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

impl<S: Clone, H: Clone, M> Clone for Postfix<S, H, M> {
    fn clone(&self) -> Self {
        Self::new(self.inner.clone(), self.hook.clone())
    }
}

impl<S: fmt::Debug, H, M> fmt::Debug for Postfix<S, H, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Postfix")
            .field("inner", &self.inner)
            .field("hook", &std::any::type_name::<H>())
            .finish()
    }
}

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
