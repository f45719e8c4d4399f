//! The object-safe forms the router stores its hooks as, and what a
//! synchronous hook did with the message it was lent.

use std::{marker::PhantomData, ops::ControlFlow};

use http::{Request, Response};

use super::route::Route;
use crate::monitor::route::{RouteExchange, RouteMonitor};
use crate::{body::Body, step::BoxFuture, step::Step};

use super::route_hooks::{PostfixFlow, PrefixFlow, RoutePostfix, RoutePrefix, take_staged};

/// What a synchronous prefix or postfix did with the message it was lent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Done {
    /// Passed it on, in its slot.
    Continue,
    /// Replaced the response: the answer is in the response slot and later
    /// postfixes are skipped.
    Answered,
}

/// Object-safe forms, as the router stores hooks.
///
/// The request and the response stay in the pipeline's slots: a hook takes
/// its message out of the slot and puts its answer back, so that neither
/// is copied once more on its way in and out of the `dyn` call.
pub(crate) trait ErasedPrefix: Send + Sync + 'static {
    /// Runs the prefix on the request in its slot: `None` when it is done,
    /// having answered into `response` or passed the request on; or the
    /// future of a prefix that suspended. (An `Option` of the future is
    /// returned in two registers, a three-way answer through memory.)
    fn call(
        &self,
        request: &mut Option<Request<Body>>,
        response: &mut Option<Response<Body>>,
        route: &mut Route<'_>,
    ) -> Option<BoxFuture<PrefixFlow>>;
}

pub(crate) trait ErasedPostfix: Send + Sync + 'static {
    fn call(
        &self,
        route: &Route<'_>,
        response: &mut Option<Response<Body>>,
    ) -> Step<Done, BoxFuture<PostfixFlow>>;
}

pub(crate) trait ErasedMonitor: Send + Sync + 'static {
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>>;
}

/// A hook with its marker type, behind `dyn ErasedPrefix`, `dyn
/// ErasedPostfix` or `dyn ErasedMonitor`.
pub(crate) struct TypedHook<H, M> {
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

impl<H, M> TypedHook<H, M> {
    pub(crate) fn new(hook: H) -> Self {
        Self {
            hook,
            _marker: PhantomData,
        }
    }
}

impl<H: RoutePrefix<M>, M: 'static> ErasedPrefix for TypedHook<H, M> {
    #[inline]
    fn call(
        &self,
        request: &mut Option<Request<Body>>,
        response: &mut Option<Response<Body>>,
        route: &mut Route<'_>,
    ) -> Option<BoxFuture<PrefixFlow>> {
        let present = request
            .as_mut()
            .expect("the request is present until the handler runs");
        // A hook that works in place leaves the request in its slot; any
        // other takes it and, letting it through, hands it back.
        let flow = match self.hook.inspect(present, route) {
            Some(flow) => flow,
            None => {
                // The monitors see the headers of a request the prefix
                // may answer early on or never give back.
                if let Some(kept) = route.kept() {
                    kept.keep(present.headers());
                }
                let taken = request
                    .take()
                    .expect("the request is present until the handler runs");
                match self.hook.call(taken, route) {
                    Step::Ready(ControlFlow::Continue(passed)) => {
                        let passed = request.insert(passed);
                        // Headers a prefix staged in a `Staged` answer ride
                        // in the request it let through (a prefix that
                        // works in place answers none).
                        if !passed.extensions().is_empty() {
                            if let Some(staged) = route.staged() {
                                take_staged(passed, staged);
                            }
                        }
                        ControlFlow::Continue(())
                    }
                    Step::Ready(ControlFlow::Break(answer)) => ControlFlow::Break(answer),
                    Step::Pending(future) => return Some(future),
                }
            }
        };
        if let ControlFlow::Break(answer) = flow {
            *response = Some(answer);
        }
        None
    }
}

impl<H: RoutePostfix<M>, M: 'static> ErasedPostfix for TypedHook<H, M> {
    #[inline]
    fn call(
        &self,
        route: &Route<'_>,
        response: &mut Option<Response<Body>>,
    ) -> Step<Done, BoxFuture<PostfixFlow>> {
        if self
            .hook
            .edit(route, response.as_mut().expect("the handler answered"))
        {
            return Step::Ready(Done::Continue);
        }
        let taken = response.take().expect("the handler answered");
        let (done, answer) = match self.hook.call(route, taken) {
            Step::Ready(ControlFlow::Continue(answer)) => (Done::Continue, answer),
            Step::Ready(ControlFlow::Break(answer)) => (Done::Answered, answer),
            Step::Pending(future) => return Step::Pending(future),
        };
        *response = Some(answer);
        Step::Ready(done)
    }
}

impl<H: RouteMonitor<M>, M: 'static> ErasedMonitor for TypedHook<H, M> {
    #[inline]
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>> {
        self.hook.call(exchange)
    }
}
