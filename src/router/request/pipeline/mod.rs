//! One request's run through its pipeline, prefixes → handler → postfixes
//! → monitors, as one state machine.
//!
//! `call` builds the state on its stack and runs the machine with a waker
//! that ignores wake-ups: a synchronous request is answered there and
//! never leaves the stack. When a step suspends, the state moves into the
//! response future, whose polls run the very same machine from that step.
//!
//! Here: the state (`Pipeline`, its fields private to this module and the
//! two below it) and the loop that moves it from stage to stage; each
//! step it runs in `steps.rs`; the response future in `future.rs`.

pub(crate) mod future;
mod steps;

use self::{
    future::{ResponseFuture, go_on},
    steps::{expose_matched_path, finish, fixed_answer, panicked},
};

use std::{
    ops::ControlFlow,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
    task::{Context, Poll, Waker, ready},
};

use http::{HeaderMap, Method, Request, Response, header};

use super::{
    compiled::lookup::{COPIED, Target, applied_at, next_hook},
    compiled::{Applied, CompiledRoute, Hook, Hooks, Tables, handle::TablesHandle},
    kept::KeptHeaders,
    route_hooks::{PostfixFlow, PrefixFlow, take_staged},
};
use bytes::Bytes;

use crate::{
    body::Body,
    body::BoxError,
    clock::Clock,
    handler::{Answers, ErrorValue, internal_error},
    head::RequestHead,
    monitor::BodyEnd,
    monitor::route::Failure,
    panic::log_monitor_panic,
    params::Captures,
    step::BoxFuture,
};

/// The hooks a request that no route answers runs (404, 405, automatic
/// OPTIONS, 426), found by matching its path; a route's own were settled
/// when the router was compiled.
struct Found {
    prefixes: Box<[Applied]>,
    /// Only a fallback's answer goes through postfixes.
    postfixes: Box<[Applied]>,
    monitors: Box<[Applied]>,
}

/// Where a request's run stands: the step it runs (with the position of
/// the next hook in its list) or the one it has reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    Prefix(usize),
    Handler,
    Postfix(usize),
    Finish,
    Monitor(usize),
    Done,
}

impl Stage {
    /// The step that runs in this stage, as a panic there is reported:
    /// the stage stays `Handler` until the handler has answered.
    fn step(self) -> &'static str {
        match self {
            Stage::Prefix(_) => "prefix",
            Stage::Handler => "handler",
            _ => "postfix",
        }
    }
}

/// The three kinds of hook.
#[derive(Clone, Copy)]
enum HookKind {
    Prefix,
    Postfix,
    Monitor,
}

/// The future of the step that suspended.
enum Pending {
    None,
    Prefix(BoxFuture<PrefixFlow>),
    Handler(BoxFuture<Response<Body>>),
    Postfix(BoxFuture<PostfixFlow>),
    Monitor(BoxFuture<()>),
}

/// One request's pipeline: its state between steps.
///
/// The router is not part of the state: each run is handed it, borrowed
/// from the service inside `call` (a synchronous request never touches the
/// reference count) or from the response future's `Arc` once a step has
/// suspended. Borrowed apart from the state, it is known not to change
/// while the state does.
pub(crate) struct Pipeline {
    /// Whether the request is a HEAD: its answer goes without its body.
    head_request: bool,
    /// A copy of the request's head, as received, made only for a request
    /// that a hook sees (see [`CompiledRoute::needs_head`]): a prefix may
    /// change the request, or take it, and every later step still sees it
    /// as received.
    head: Option<RequestHead>,
    target: Target,
    found: Option<Found>,
    captures: Captures,
    /// The parameters of the hook being run; reused from hook to hook.
    hook_captures: Captures,
    /// The request: prefixes take and give it back, the handler reads it
    /// in place (and takes its body), postfixes and monitors read its
    /// headers. `None` once a prefix that took it answered.
    request: Option<Request<Body>>,
    response: Option<Response<Body>>,
    failure: Option<Box<Failure>>,
    /// Headers staged by prefixes; allocated only when one stages a header.
    staged: Option<Box<HeaderMap>>,
    /// Where the run stands; also names the step for a panic's report.
    stage: Stage,
    /// The step that suspended, polled first on the next run.
    pending: Pending,
    clock: Option<Clock>,
    /// Whether a monitor that ran asked to be called again when the
    /// response body ends.
    watch_body: bool,
    /// How the response body ended, once it has: only the monitors that
    /// asked run then.
    body_end: Option<Box<BodyEnd>>,
    /// A copy of the request's headers, made for the monitors when a
    /// prefix took the request by value.
    kept_headers: KeptHeaders,
    /// The WebSocket connection a handshake accepted, to spawn once the
    /// 101 is out of the router's hands; the monitors run when it ends.
    #[cfg(feature = "ws")]
    connection: Option<BoxFuture<()>>,
}

impl Pipeline {
    /// Looks `request` up and runs its steps inside `call`, as far as they
    /// answer at once, with a waker that ignores wake-ups.
    ///
    /// A request whose steps are all synchronous is answered here: its
    /// state stays on the stack and only its response moves into the
    /// future. The first step that suspends has been polled once; the
    /// state then moves into the future, which polls that step again with
    /// the caller's waker on its first poll and goes on from there.
    #[inline]
    pub(crate) fn start<B>(router: &Arc<Tables>, request: Request<B>) -> ResponseFuture
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        // Built field by field where it stays: a synchronous request's
        // state is never moved. The body becomes a `Body` where the
        // request is stored.
        let mut pipeline = Self {
            head_request: request.method() == Method::HEAD,
            head: None,
            target: Target::NotFound,
            found: None,
            captures: Captures::new(),
            hook_captures: Captures::new(),
            request: Some(request.map(Body::new)),
            response: None,
            failure: None,
            staged: None,
            stage: Stage::Prefix(0),
            pending: Pending::None,
            clock: None,
            watch_body: false,
            body_end: None,
            kept_headers: KeptHeaders::default(),
            #[cfg(feature = "ws")]
            connection: None,
        };
        pipeline.look_up(router);
        let cx = &mut Context::from_waker(Waker::noop());
        match pipeline.run(router, cx) {
            Poll::Ready(()) if pipeline.goes_on() => ResponseFuture::ready(Some(go_on(
                &TablesHandle::on_this_thread(router),
                Box::new(pipeline),
            ))),
            Poll::Ready(()) => ResponseFuture::ready(pipeline.response),
            Poll::Pending => ResponseFuture::running(router, pipeline),
        }
    }

    /// The request's method and path, as received, for its `Debug`.
    fn method_and_path(&self) -> Option<(&Method, &str)> {
        match (&self.head, &self.request) {
            (Some(head), _) => Some((head.method(), head.path())),
            // Without a copy of its head, a request runs no prefix, the
            // only step that may change it or take it.
            (None, request) => (request.as_ref()).map(|r| (r.method(), r.uri().path())),
        }
    }

    /// Finds the request's target and the hooks it runs, copies its head if
    /// they need it, and starts its clock if monitors are among them. A
    /// route's hooks were settled at compile time; for an answer no route
    /// gives they are found by matching the path.
    #[inline(always)]
    fn look_up(&mut self, router: &Tables) {
        let request = (self.request.as_ref()).expect("the request is present until a step runs");
        // The upgrade headers are read only when some route takes them.
        #[cfg(feature = "ws")]
        let upgrade = router.has_websockets() && crate::ws::is_upgrade(request);
        #[cfg(not(feature = "ws"))]
        let upgrade = false;
        let path = request.uri().path();
        self.target = router.lookup(request.method(), path, upgrade, &mut self.captures);
        let route = match self.target {
            Target::Route { id, .. } => Some(router.route(id)),
            _ => None,
        };
        if route.is_none_or(CompiledRoute::needs_head) {
            // The head is still `None` here; filled in place, it is not
            // built aside and moved in (measured: about 20 instructions a
            // request fewer than assigning `Some`).
            self.head.get_or_insert_with(|| RequestHead::of(request));
        }
        let monitored = match route {
            Some(route) => !route.monitors().is_empty(),
            None => self.find_hooks(router),
        };
        if monitored {
            self.clock = Some(Clock::start());
        }
    }

    /// The hooks of a request no route answers, found by matching its path;
    /// whether it has monitors. A fixed answer (404, 405, 426) is given here.
    // Out of line: a routed request's hooks were settled at compile time.
    #[inline(never)]
    fn find_hooks(&mut self, router: &Tables) -> bool {
        let head = self.head.as_ref().expect(COPIED);
        let target = &self.target;
        let methods = [head.method()];
        let monitors = applied_at(router.monitors(), &methods, head.path());
        let monitored = !monitors.is_empty();
        let (prefixes, postfixes) = match target {
            Target::Fallback { .. } => (
                applied_at(router.prefixes(), &methods, head.path()),
                applied_at(router.postfixes(), &methods, head.path()),
            ),
            // A 405 that a handler answers, as a fallback, with the
            // router's `Allow` (axum's handler of 405s answers without),
            // or that goes through the route's `route_layer`s.
            Target::MethodNotAllowed {
                options: false,
                allow,
                route,
            } if router.method_not_allowed().is_some()
                || router.route(*route).refusal().is_some() =>
            {
                // The router's own 405 carries `Allow`: staged for it, or
                // handed to it below a route's layers; a handler of the
                // user's has it staged with pronghorn's answers only.
                let custom = router
                    .method_not_allowed()
                    .is_some_and(|answer| !answer.own());
                let stage = match custom {
                    true => router.answers() == Answers::Pronghorn,
                    false => router.route(*route).refusal().is_none(),
                };
                if stage {
                    let staged = self.staged.get_or_insert_with(Box::default);
                    staged.insert(header::ALLOW, allow.clone());
                }
                (
                    applied_at(router.prefixes(), &methods, head.path()),
                    applied_at(router.postfixes(), &methods, head.path()),
                )
            }
            // OPTIONS runs the prefixes over its path, routed or
            // not: one may answer a preflight.
            Target::MethodNotAllowed { options: true, .. } | Target::NotFound
                if *head.method() == Method::OPTIONS =>
            {
                let prefixes = applied_at(router.prefixes(), &methods, head.path());
                (prefixes, Box::default())
            }
            fixed => {
                // A fixed answer goes straight to the monitors.
                self.response = Some(fixed_answer(fixed, router.answers()));
                self.stage = Stage::Finish;
                (Box::default(), Box::default())
            }
        };
        self.found = Some(Found {
            prefixes,
            postfixes,
            monitors,
        });
        monitored
    }
}

impl Pipeline {
    /// Runs the pipeline from where it stands until it answers or a step
    /// suspends: the response is then in `self.response`.
    ///
    /// One `catch_unwind` guards the whole run rather than one per step, so
    /// that requests and responses are not copied in and out of a closure at
    /// every step: a panic in a prefix, the handler or a postfix (or their
    /// futures) lands here, becomes a 500, and the run goes on with the
    /// staged headers and the monitors. Monitors are guarded one by one.
    pub(crate) fn run(&mut self, router: &Tables, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match catch_unwind(AssertUnwindSafe(|| self.steps(router, cx))) {
                Ok(poll) => return poll,
                Err(panic) => {
                    // The step that panicked has dropped what it held;
                    // whatever future it left is abandoned with it.
                    self.pending = Pending::None;
                    self.failure = Some(panicked(self.stage.step(), panic.as_ref()));
                    self.response = Some(internal_error());
                    self.stage = Stage::Finish;
                }
            }
        }
    }

    /// The state machine. Each turn polls the step left pending, if any,
    /// then runs the stages from the one the run stands at, in their order:
    /// a hook stage runs its hooks for as long as they let the request or
    /// the response through at once. A step that suspends leaves its future
    /// in `self.pending` and ends the turn; an early answer moves the run
    /// to the finish.
    fn steps(&mut self, router: &Tables, cx: &mut Context<'_>) -> Poll<()> {
        let (route, pattern) = match self.target {
            Target::Route { id, .. } => {
                let route = router.route(id);
                (Some(route), Some(&**route.pattern().source()))
            }
            _ => (None, self.target.pattern(router)),
        };
        'turn: loop {
            if !matches!(self.pending, Pending::None) {
                ready!(self.poll_pending(cx));
            }
            // The stages in their order: each runs when the run stands
            // there, and a stage that ends moves the run on to the next.
            if let Stage::Prefix(from) = self.stage {
                let through = self.hooks(
                    router.prefixes(),
                    route,
                    HookKind::Prefix,
                    from,
                    pattern,
                    |this, hook, pattern| this.prefix(hook, pattern, router, route),
                );
                if !through {
                    continue 'turn;
                }
                self.stage = Stage::Handler;
            }
            if self.stage == Stage::Handler && self.handler(router, route, cx).is_pending() {
                // The handler's future has just been polled with `cx`.
                return Poll::Pending;
            }
            if let Stage::Postfix(from) = self.stage {
                let through = self.hooks(
                    router.postfixes(),
                    route,
                    HookKind::Postfix,
                    from,
                    pattern,
                    |this, hook, pattern| this.postfix(hook, pattern, router),
                );
                if !through {
                    continue 'turn;
                }
                self.stage = Stage::Finish;
            }
            if self.stage == Stage::Finish {
                self.stage = Stage::Monitor(0);
                let response = self.response.as_mut().expect("a step answered");
                finish(response, self.staged.take(), self.head_request);
                if route.is_some_and(|route| route.matched_path_in_response()) {
                    expose_matched_path(response, self.request.as_ref(), pattern);
                }
                #[cfg(feature = "ws")]
                if self.connection.is_some() {
                    // The monitors run when the connection ends.
                    self.stage = Stage::Done;
                    return Poll::Ready(());
                }
            }
            if let Stage::Monitor(from) = self.stage {
                let through = self.hooks(
                    router.monitors(),
                    route,
                    HookKind::Monitor,
                    from,
                    pattern,
                    Self::monitor,
                );
                if !through {
                    continue 'turn;
                }
                self.stage = Stage::Done;
            }
            return Poll::Ready(());
        }
    }

    /// Runs the request's hooks of `kind` from the `from`th of its list
    /// with `run`, while they let the request or the response through:
    /// `false` when one did not (it answered, or suspended).
    #[inline(always)]
    fn hooks<H: ?Sized>(
        &mut self,
        hooks: &Hooks<H>,
        route: Option<&CompiledRoute>,
        kind: HookKind,
        mut from: usize,
        pattern: Option<&str>,
        mut run: impl FnMut(&mut Self, &Hook<H>, Option<&str>) -> bool,
    ) -> bool {
        while let Some((index, hook)) = self.next(hooks, route, kind, from) {
            from = index + 1;
            if !run(self, hook, pattern) {
                return false;
            }
        }
        true
    }

    /// The next hook of the request's list of `kind`, from its `from`th,
    /// that applies to the request, with its position in the list; the
    /// stage moves past it, and its parameters are bound in
    /// `self.hook_captures`.
    #[inline(always)]
    fn next<'r, H: ?Sized>(
        &mut self,
        hooks: &'r Hooks<H>,
        route: Option<&CompiledRoute>,
        kind: HookKind,
        from: usize,
    ) -> Option<(usize, &'r Hook<H>)> {
        let list: &[Applied] = match (route, &self.found, kind) {
            (Some(route), _, HookKind::Prefix) => route.prefixes(),
            (Some(route), _, HookKind::Postfix) => route.postfixes(),
            (Some(route), _, HookKind::Monitor) => route.monitors(),
            (None, Some(found), HookKind::Prefix) => &found.prefixes,
            (None, Some(found), HookKind::Postfix) => &found.postfixes,
            (None, Some(found), HookKind::Monitor) => &found.monitors,
            _ => &[],
        };
        let (index, hook) = next_hook(
            hooks,
            list,
            from,
            self.head.as_ref(),
            &self.target,
            &mut self.hook_captures,
        )?;
        self.stage = match kind {
            HookKind::Prefix => Stage::Prefix(index + 1),
            HookKind::Postfix => Stage::Postfix(index + 1),
            HookKind::Monitor => Stage::Monitor(index + 1),
        };
        Some((index, hook))
    }

    /// Polls the pending step; once it answers, applies its answer.
    // Out of line: a synchronous request never comes here.
    #[inline(never)]
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.pending {
            Pending::None => {}
            Pending::Prefix(future) => {
                let flow = ready!(future.as_mut().poll(cx));
                match flow {
                    ControlFlow::Continue(mut request) => {
                        if !request.extensions().is_empty() {
                            take_staged(&mut request, &mut self.staged);
                        }
                        self.request = Some(request);
                    }
                    ControlFlow::Break(response) => self.answered(response, "prefix"),
                }
            }
            Pending::Handler(future) => {
                let response = ready!(future.as_mut().poll(cx));
                self.response = Some(response);
                self.stage = Stage::Postfix(0);
                self.note_error("handler");
            }
            Pending::Postfix(future) => match ready!(future.as_mut().poll(cx)) {
                ControlFlow::Continue(response) => self.response = Some(response),
                ControlFlow::Break(response) => self.answered(response, "postfix"),
            },
            Pending::Monitor(future) => {
                match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(Poll::Pending) => return Poll::Pending,
                    Ok(Poll::Ready(())) => {}
                    Err(panic) => log_monitor_panic(panic.as_ref()),
                }
            }
        }
        self.pending = Pending::None;
        Poll::Ready(())
    }

    /// A prefix or postfix answered: the response is final, but for the
    /// staged headers.
    fn answered(&mut self, response: Response<Body>, step: &'static str) {
        self.response = Some(response);
        self.stage = Stage::Finish;
        self.note_error(step);
    }

    /// Tells the monitors, if there are any, of the error value `step`
    /// has just answered, if it did.
    #[inline(always)]
    fn note_error(&mut self, step: &'static str) {
        // An error value's response carries a mark in its extensions;
        // most responses have none.
        let marked = (self.response.as_ref()).is_some_and(|r| !r.extensions().is_empty());
        if marked && self.clock.is_some() {
            self.take_error(step);
        }
    }

    #[cold]
    fn take_error(&mut self, step: &'static str) {
        let marked = (self.response.as_mut())
            .and_then(|response| response.extensions_mut().remove::<ErrorValue>());
        if let Some(ErrorValue { type_name, message }) = marked {
            self.failure.get_or_insert_with(|| {
                Box::new(Failure::Error {
                    step,
                    type_name,
                    message,
                })
            });
        }
    }

    /// The response future was dropped before the request was answered,
    /// or while its monitors ran: the monitors that have not run run now,
    /// once — before an answer, with the cancelled failure and no
    /// response. Nothing waits for them any more, so an asynchronous
    /// monitor's future is polled once, then dropped.
    #[cold]
    fn cancel(&mut self, router: &Tables) {
        if self.clock.is_none() || self.stage == Stage::Done {
            return;
        }
        self.pending = Pending::None;
        if !matches!(self.stage, Stage::Monitor(_)) {
            self.response = None;
            self.failure = Some(Box::new(Failure::Cancelled));
            self.stage = Stage::Monitor(0);
        }
        self.run_unawaited(router);
    }

    /// Whether the run goes on after the response is handed out: a
    /// WebSocket connection to spawn, or a body to watch.
    #[inline]
    fn goes_on(&self) -> bool {
        #[cfg(feature = "ws")]
        if self.connection.is_some() {
            return true;
        }
        self.watch_body
    }

    /// The WebSocket connection has ended, its handler having failed or
    /// not: the monitors run now.
    #[cfg(feature = "ws")]
    fn connection_ended(&mut self, router: &Tables, failure: Option<Failure>) {
        self.failure = failure.map(Box::new);
        self.stage = Stage::Monitor(0);
        self.run_unawaited(router);
    }

    /// The response body has ended: the monitors that asked hear how.
    fn body_ended(&mut self, router: &Tables, end: BodyEnd) {
        self.body_end = Some(Box::new(end));
        self.stage = Stage::Monitor(0);
        self.run_unawaited(router);
    }

    /// Runs the monitors from where the run stands to the end, with no one
    /// to wait for them: an asynchronous one's future is polled once, then
    /// dropped.
    fn run_unawaited(&mut self, router: &Tables) {
        let cx = &mut Context::from_waker(Waker::noop());
        while self.run(router, cx).is_pending() {
            self.pending = Pending::None;
        }
    }
}
