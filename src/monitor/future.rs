use std::{
    fmt,
    future::Future,
    panic::{AssertUnwindSafe, catch_unwind},
    pin::Pin,
    task::{Context, Poll},
};

use http::Request;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::{Exchange, MonitorHook};
use crate::{
    hook::{Keep, MonitorOutput},
    panic::log_monitor_panic,
    step::Step,
};

pin_project! {
    /// Response future of [`Monitor`](super::Monitor).
    ///
    /// Dropped before the inner service answered, it runs the hook with a
    /// cancelled exchange (an asynchronous hook's future is polled once,
    /// then dropped).
    pub struct ResponseFuture<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: MonitorHook<S::Response, S::Error, M>,
        M: Keep,
    {
        #[pin]
        kind: Kind<S, B, H, M>,
        // Whether the hook has run (or is running).
        observed: bool,
    }

    impl<S, B, H, M> PinnedDrop for ResponseFuture<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: MonitorHook<S::Response, S::Error, M>,
        M: Keep,
    {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            // Not while a panic unwinds: a hook's panic would abort.
            if *this.observed || std::thread::panicking() {
                return;
            }
            if let KindProj::Inner { hook, head, clock, .. } = this.kind.project() {
                observe_unawaited(hook, |hook| call_kept(hook, head, clock, None));
            }
        }
    }
}

/// Calls `hook` with what its layer kept of the request: the exchange of
/// `outcome` (`None`: cancelled), or the outcome alone for a hook blind to
/// the request.
#[inline(always)]
fn call_kept<H, R, E, M>(
    hook: &mut H,
    head: &M::Head,
    clock: &M::Clock,
    outcome: Option<Result<&R, &E>>,
) -> Step<H::Output, H::Future>
where
    H: MonitorHook<R, E, M>,
    M: Keep,
{
    match M::kept(head, clock) {
        Some((head, clock)) => hook.call(&Exchange::new(head, outcome, clock.clock())),
        None => hook.call_alone(outcome),
    }
}

/// Calls `hook` through `call` with no one to wait for it (a cancelled
/// request, a body that has ended): an asynchronous hook's future is
/// polled once, then dropped. A failure or a panic is logged.
pub(super) fn observe_unawaited<H, R, E, M>(
    hook: &mut H,
    call: impl FnOnce(&mut H) -> Step<H::Output, H::Future>,
) where
    H: MonitorHook<R, E, M>,
{
    let run = AssertUnwindSafe(|| match call(hook) {
        Step::Ready(output) => output.report(),
        Step::Pending(future) => {
            let future = std::pin::pin!(future);
            let cx = &mut Context::from_waker(std::task::Waker::noop());
            if let Poll::Ready(output) = future.poll(cx) {
                output.report();
            }
        }
    });
    if let Err(panic) = catch_unwind(run) {
        log_monitor_panic(panic.as_ref());
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<S, B, H, M>
    where
        S: Service<Request<B>>,
        H: MonitorHook<S::Response, S::Error, M>,
        M: Keep,
    {
        Inner { #[pin] future: S::Future, hook: H, head: M::Head, clock: M::Clock },
        Hook { #[pin] future: H::Future, outcome: Option<Result<S::Response, S::Error>> },
    }
}

impl<S, B, H, M> ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: MonitorHook<S::Response, S::Error, M>,
    M: Keep,
{
    #[inline]
    pub(crate) fn new(future: S::Future, hook: H, head: M::Head, clock: M::Clock) -> Self {
        Self {
            kind: Kind::Inner {
                future,
                hook,
                head,
                clock,
            },
            observed: false,
        }
    }
}

impl<S, B, H, M> Future for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: MonitorHook<S::Response, S::Error, M>,
    M: Keep,
{
    type Output = Result<S::Response, S::Error>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.as_mut().project();
        let (future, outcome) = match this.kind.project() {
            KindProj::Inner {
                future,
                hook,
                head,
                clock,
            } => {
                // The poll is handed back as it came whenever the hook answers
                // at once, so that the outcome is never moved.
                let poll = future.poll(cx);
                let Poll::Ready(outcome) = &poll else {
                    return Poll::Pending;
                };
                *this.observed = true;
                // The hook, head and clock are used where they lie: moving
                // them out would copy the head. Polled again after it
                // answered, the future polls the inner future again, which
                // the `Future` contract leaves open (async blocks panic).
                // The hook reads the outcome through a shared borrow and is
                // not called again after a panic, so no broken state is
                // observed.
                let step = catch_unwind(AssertUnwindSafe(|| {
                    call_kept(hook, head, clock, Some(outcome.as_ref()))
                }));
                match step {
                    Ok(Step::Pending(future)) => match poll {
                        Poll::Ready(outcome) => (future, outcome),
                        Poll::Pending => unreachable!("the inner future answered"),
                    },
                    Ok(Step::Ready(output)) => {
                        output.report();
                        return poll;
                    }
                    Err(panic) => {
                        log_monitor_panic(panic.as_ref());
                        return poll;
                    }
                }
            }
            KindProj::Hook { future, outcome } => {
                // A future that panicked is never polled again: the outcome
                // is handed back right away.
                match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
                    Ok(Poll::Pending) => return Poll::Pending,
                    Ok(Poll::Ready(output)) => output.report(),
                    Err(panic) => log_monitor_panic(panic.as_ref()),
                }
                return Poll::Ready(outcome.take().expect("future polled after completion"));
            }
        };
        self.as_mut().project().kind.set(Kind::Hook {
            future,
            outcome: Some(outcome),
        });
        self.poll(cx)
    }
}

impl<S, B, H, M> fmt::Debug for ResponseFuture<S, B, H, M>
where
    S: Service<Request<B>>,
    H: MonitorHook<S::Response, S::Error, M>,
    M: Keep,
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
