use std::{
    fmt,
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use http::Request;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::PostfixHook;
use crate::{RequestHead, Step};

pin_project! {
    /// Response future of [`Postfix`](super::Postfix).
    ///
    /// The inner future sits in a field of its own rather than in a state
    /// variant, so that it is built in place and never moved: a synchronous
    /// stack then copies its response no more often than it must.
    pub struct ResponseFuture<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: PostfixHook<S::Response, M>,
    {
        #[pin]
        inner: S::Future,
        #[pin]
        state: State<H, H::Future>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<H, F> {
        Inner { hook: H, head: RequestHead },
        Hook { #[pin] future: F },
    }
}

impl<S, B, H, M> ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M>,
{
    #[inline]
    pub(crate) fn new(inner: S::Future, hook: H, head: RequestHead) -> Self {
        Self {
            inner,
            state: State::Inner { hook, head },
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
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let future = match this.state.as_mut().project() {
            StateProj::Inner { hook, head } => {
                // The hook and head are used where they lie, as the
                // monitor's are, and a hook that works in place edits the
                // response inside the inner poll, handed back as it came.
                let mut poll = this.inner.poll(cx);
                let Poll::Ready(Ok(response)) = &mut poll else {
                    return poll;
                };
                if hook.edit(head, response) {
                    return poll;
                }
                let Poll::Ready(Ok(response)) = poll else {
                    unreachable!("the inner future answered");
                };
                match hook.call(head, response) {
                    Step::Ready(response) => return Poll::Ready(Ok(response)),
                    Step::Pending(future) => future,
                }
            }
            StateProj::Hook { future } => return future.poll(cx).map(Ok),
        };
        this.state.set(State::Hook { future });
        match this.state.project() {
            StateProj::Hook { future } => future.poll(cx).map(Ok),
            StateProj::Inner { .. } => unreachable!("the hook's future was just stored"),
        }
    }
}

impl<S, B, H, M> fmt::Debug for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Inner { .. } => "Inner",
            State::Hook { .. } => "Hook",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
