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
use crate::{hook::Keep, step::Step};

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
        M: Keep,
    {
        #[pin]
        inner: S::Future,
        #[pin]
        state: State<H, M::Head, H::Future>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<H, K, F> {
        Inner { hook: H, head: K },
        Hook { #[pin] future: F },
    }
}

impl<S, B, H, M> ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PostfixHook<S::Response, M>,
    M: Keep,
{
    #[inline]
    pub(crate) fn new(inner: S::Future, hook: H, head: M::Head) -> Self {
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
    M: Keep,
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
                let Some(head) = M::kept_head(head) else {
                    // A hook that does not see the head edits in place.
                    let edited = hook.edit_alone(response);
                    debug_assert!(edited, "a hook blind to the head edits in place");
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
    M: Keep,
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
