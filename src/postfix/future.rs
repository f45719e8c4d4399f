use std::{
    fmt,
    future::Future,
    pin::Pin,
    task::{Context, Poll, ready},
};

use http::Request;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::PostfixHook;
use crate::{RequestHead, Step};

pin_project! {
    /// Response future of [`Postfix`](super::Postfix).
    pub struct ResponseFuture<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: PostfixHook<S::Response, M>,
    {
        #[pin]
        kind: Kind<S, B, H, M>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: PostfixHook<S::Response, M>,
    {
        Inner { #[pin] future: S::Future, hook: Option<(H, RequestHead)> },
        Hook { #[pin] future: H::Future },
    }
}

impl<S, B, H, M> ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M>,
{
    #[inline]
    pub(crate) fn new(future: S::Future, hook: H, head: RequestHead) -> Self {
        Self {
            kind: Kind::Inner {
                future,
                hook: Some((hook, head)),
            },
        }
    }
}

impl<S, B, H, M> Future for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M>,
{
    type Output = Result<S::Response, S::Error>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = match self.as_mut().project().kind.project() {
            KindProj::Inner { future, hook } => {
                let response = ready!(future.poll(cx))?;
                let (mut hook, head) = hook.take().expect("future polled after completion");
                match hook.call(&head, response) {
                    Step::Ready(response) => return Poll::Ready(Ok(response)),
                    Step::Pending(future) => future,
                }
            }
            KindProj::Hook { future } => return future.poll(cx).map(Ok),
        };
        self.as_mut().project().kind.set(Kind::Hook { future });
        self.poll(cx)
    }
}

impl<S, B, H, M> fmt::Debug for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.kind {
            Kind::Inner { .. } => "Inner",
            Kind::Hook { .. } => "Hook",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
