use std::{
    fmt,
    future::Future,
    ops::ControlFlow,
    pin::Pin,
    task::{Context, Poll, ready},
};

use http::Request;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::PrefixHook;

pin_project! {
    /// Response future of [`Prefix`](super::Prefix).
    pub struct ResponseFuture<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: PrefixHook<B, S::Response, M>,
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
        H: PrefixHook<B, S::Response, M>,
    {
        Inner { #[pin] future: S::Future },
        Answered { response: Option<S::Response> },
        Hook { #[pin] future: H::Future, service: Option<S> },
    }
}

impl<S, B, H, M> ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PrefixHook<B, S::Response, M>,
{
    #[inline]
    pub(crate) fn inner(future: S::Future) -> Self {
        Self {
            kind: Kind::Inner { future },
        }
    }

    #[inline]
    pub(crate) fn answered(response: S::Response) -> Self {
        Self {
            kind: Kind::Answered {
                response: Some(response),
            },
        }
    }

    #[inline]
    pub(crate) fn hook(future: H::Future, service: S) -> Self {
        Self {
            kind: Kind::Hook {
                future,
                service: Some(service),
            },
        }
    }
}

impl<S, B, H, M> Future for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PrefixHook<B, S::Response, M>,
{
    type Output = Result<S::Response, S::Error>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let next = match self.as_mut().project().kind.project() {
                KindProj::Inner { future } => return future.poll(cx),
                KindProj::Answered { response } => {
                    return Poll::Ready(Ok(response
                        .take()
                        .expect("future polled after completion")));
                }
                KindProj::Hook { future, service } => match ready!(future.poll(cx)) {
                    ControlFlow::Continue(request) => {
                        let mut service = service.take().expect("future polled after completion");
                        service.call(request)
                    }
                    ControlFlow::Break(response) => return Poll::Ready(Ok(response)),
                },
            };
            self.set(Self::inner(next));
        }
    }
}

impl<S, B, H, M> fmt::Debug for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: PrefixHook<B, S::Response, M>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.kind {
            Kind::Inner { .. } => "Inner",
            Kind::Answered { .. } => "Answered",
            Kind::Hook { .. } => "Hook",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
