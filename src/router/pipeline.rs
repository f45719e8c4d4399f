//! One request's run through its pipeline: the first run, inside `call`,
//! which a synchronous request never leaves; and the state machine that
//! takes over from the first step that suspends.

use std::{
    any::Any,
    ops::ControlFlow,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
    task::{Context, Poll, ready},
};

use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};

use super::{
    Failure, ResponseFuture,
    builder::Endpoint,
    compiled::{
        Applied, CompiledRoute, Hook, Inner, Target, applied_at, applies, next_hook, params_of,
    },
    hook::{Done, ErasedMonitor, PostfixFlow, PrefixFlow, Route, RouteExchange},
    params::Captures,
};
use crate::{
    Body, Exchange, RequestHead, Step,
    handler::{BoxFuture, IntoResponse, RouteContext},
    hook::{log_monitor_panic, panic_message},
    monitor::Clock,
};

/// Which hook lists a request runs.
enum Lists {
    Route,
    /// Hooks found by matching the path (404, 405, automatic OPTIONS).
    Found {
        prefixes: Box<[Applied]>,
        monitors: Box<[Applied]>,
    },
}

/// Where a request's run stands: the step it runs (with the position of
/// the next hook in its list) or the one it has reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
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

/// The future of the step that suspended.
enum Pending<B> {
    None,
    Prefix(BoxFuture<PrefixFlow<B>>),
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
pub(super) struct Pipeline<B> {
    pub(super) head: RequestHead,
    target: Target,
    lists: Lists,
    captures: Captures,
    /// The parameters of the hook being run; reused from hook to hook.
    hook_captures: Captures,
    request: Option<Request<B>>,
    pub(super) response: Option<Response<Body>>,
    failure: Option<Box<Failure>>,
    /// Headers staged by prefixes; allocated only when one stages a header.
    staged: Option<Box<HeaderMap>>,
    /// Where the run stands; also names the step for a panic's report.
    pub(super) stage: Stage,
    /// The step that suspended, polled first on the next run.
    pending: Pending<B>,
    clock: Option<Clock>,
}

fn internal_error() -> Response<Body> {
    (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response()
}

impl<B: 'static> Pipeline<B> {
    /// The first run of a request, in `call`.
    ///
    /// A request for a route's handler runs its steps here, one after the
    /// other, with its state in local variables: a synchronous request
    /// never builds the state machine's state nor steps through its
    /// stages. The first step that suspends hands the state over to the
    /// machine ([`Pipeline::run`]): a hook's future is polled there at
    /// once, and the run goes on from there if it answered; a handler's
    /// future, polled once already, waits for the response future's first
    /// poll. Requests that no handler answers
    /// (404, 405, OPTIONS, WebSocket routes) go to the machine from their
    /// start.
    ///
    /// The answer goes straight into the response future that `call`
    /// returns: a synchronous request moves its response once on its way
    /// out.
    pub(super) fn start(router: &Arc<Inner<B>>, request: Request<B>) -> ResponseFuture<B> {
        let machine = ResponseFuture::from_machine;
        let head = RequestHead::of(&request);
        let mut captures = Captures::new();
        // The upgrade headers are read only when some route takes them.
        #[cfg(feature = "ws")]
        let upgrade = !router.websockets.is_empty() && crate::ws::is_upgrade(request.headers());
        #[cfg(not(feature = "ws"))]
        let upgrade = false;
        let target = router.lookup(head.method(), head.path(), upgrade, &mut captures);
        let route = match &target {
            Target::Route { id, .. } => &router.routes[*id],
            _ => {
                return machine(
                    router,
                    Self::at_start(router, head, target, captures, request),
                );
            }
        };
        // Without the `ws` feature the match has one arm.
        #[cfg_attr(not(feature = "ws"), allow(clippy::infallible_destructuring_match))]
        let handler = match &route.endpoint {
            Endpoint::Http(handler) => handler,
            #[cfg(feature = "ws")]
            Endpoint::WebSocket(_) => {
                return machine(
                    router,
                    Self::at_start(router, head, target, captures, request),
                );
            }
        };
        let pattern = Some(&*route.pattern.source);
        let clock = (!route.monitors.is_empty()).then(Clock::start);
        let mut hook_captures = Captures::new();
        let mut request = Some(request);
        let mut response = None;
        let mut staged = None;
        let mut failure = None;
        // The phase of the run, which names the step of a panic.
        let mut phase = Stage::Prefix(0);
        // The state handed to `$to` (the machine, or the response future
        // for a handler's future) when a step suspends, with the stage it
        // stands at and the step's future.
        macro_rules! suspended {
            ($to:expr, $stage:expr, $pending:expr) => {
                $to(
                    router,
                    Self {
                        head,
                        target,
                        lists: Lists::Route,
                        captures,
                        hook_captures,
                        request,
                        response,
                        failure,
                        staged,
                        stage: $stage,
                        pending: $pending,
                        clock,
                    },
                )
            };
        }
        // One `catch_unwind` for the prefixes, the handler and the
        // postfixes, as in `Pipeline::run`; a step that suspends ends it
        // with the stage the machine takes over at.
        let run = catch_unwind(AssertUnwindSafe(|| {
            for (index, applied) in route.prefixes.iter().enumerate() {
                let hook = &router.prefixes[applied.hook as usize];
                if !applies(applied, hook, &head, &target, &mut hook_captures) {
                    continue;
                }
                let mut view = Route {
                    head: &head,
                    pattern,
                    names: &hook.pattern.names,
                    captures: &hook_captures,
                    staged: Some(&mut staged),
                };
                if let Some(future) = hook.hook.call(&mut request, &mut response, &mut view) {
                    return Some((Stage::Prefix(index + 1), Pending::Prefix(future)));
                }
                if response.is_some() {
                    // The prefix answered.
                    return None;
                }
            }
            phase = Stage::Handler;
            let context = RouteContext {
                params: params_of(&head, &route.pattern.names, &captures),
                state: &router.state,
                body_limit: router.body_limit,
                body_timeout: router.body_timeout,
            };
            let waker = &mut Context::from_waker(std::task::Waker::noop());
            if let Some(future) = handler.call(&mut request, context, waker, &mut response) {
                return Some((Stage::Handler, Pending::Handler(future)));
            }
            phase = Stage::Postfix(0);
            for (index, applied) in route.postfixes.iter().enumerate() {
                let hook = &router.postfixes[applied.hook as usize];
                if !applies(applied, hook, &head, &target, &mut hook_captures) {
                    continue;
                }
                let view = Route {
                    head: &head,
                    pattern,
                    names: &hook.pattern.names,
                    captures: &hook_captures,
                    staged: None,
                };
                match hook.hook.call(&view, &mut response) {
                    Step::Ready(Done::Continue) => {}
                    Step::Ready(Done::Answered) => break,
                    Step::Pending(future) => {
                        return Some((Stage::Postfix(index + 1), Pending::Postfix(future)));
                    }
                }
            }
            None
        }));
        match run {
            Ok(None) => {}
            Ok(Some((Stage::Handler, pending))) => {
                return suspended!(ResponseFuture::waiting, Stage::Handler, pending);
            }
            Ok(Some((stage, pending))) => return suspended!(machine, stage, pending),
            Err(panic) => {
                failure = Some(panicked(phase.step(), panic.as_ref()));
                response = Some(internal_error());
            }
        }
        let answer = response.as_mut().expect("a step answered");
        finish(answer, staged.take(), head.method());
        // A request has a clock when its route has monitors.
        if let Some(started) = &clock {
            let answer = &*answer;
            for (index, applied) in route.monitors.iter().enumerate() {
                let hook = &router.monitors[applied.hook as usize];
                if !applies(applied, hook, &head, &target, &mut hook_captures) {
                    continue;
                }
                let exchange =
                    Exchange::routed(&head, answer, failure.as_deref(), pattern, started);
                if let Some(future) = monitor(hook, &exchange) {
                    return suspended!(
                        machine,
                        Stage::Monitor(index + 1),
                        Pending::Monitor(future)
                    );
                }
            }
        }
        ResponseFuture::ready(response)
    }

    /// The state of a request that the machine runs from its start: the
    /// hooks that a request no route answers runs are found by matching
    /// its path, and a fixed answer (404, 405, 426) goes straight to the
    /// monitors.
    fn at_start(
        router: &Inner<B>,
        head: RequestHead,
        target: Target,
        captures: Captures,
        request: Request<B>,
    ) -> Self {
        let mut pipeline = Self {
            head,
            target,
            lists: Lists::Route,
            captures,
            hook_captures: Captures::new(),
            request: Some(request),
            response: None,
            failure: None,
            staged: None,
            stage: Stage::Prefix(0),
            pending: Pending::None,
            clock: None,
        };
        let head = &pipeline.head;
        let monitored = match &pipeline.target {
            Target::Route { id, .. } => !router.routes[*id].monitors.is_empty(),
            Target::Elsewhere { options: true, .. } => {
                let methods = [head.method()];
                let monitors = applied_at(&router.monitors, &methods, head.path());
                let monitored = !monitors.is_empty();
                pipeline.lists = Lists::Found {
                    prefixes: applied_at(&router.prefixes, &methods, head.path()),
                    monitors,
                };
                monitored
            }
            fixed => {
                let response = match fixed {
                    Target::Elsewhere { allow, .. } => {
                        let mut response =
                            (StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed").into_response();
                        response.headers_mut().insert(header::ALLOW, allow.clone());
                        response
                    }
                    Target::UpgradeRequired => {
                        let mut response =
                            (StatusCode::UPGRADE_REQUIRED, "Upgrade Required").into_response();
                        response
                            .headers_mut()
                            .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
                        response
                    }
                    _ => (StatusCode::NOT_FOUND, "Not Found").into_response(),
                };
                let monitors = applied_at(&router.monitors, &[head.method()], head.path());
                let monitored = !monitors.is_empty();
                pipeline.lists = Lists::Found {
                    prefixes: Box::new([]),
                    monitors,
                };
                pipeline.response = Some(response);
                pipeline.stage = Stage::Finish;
                monitored
            }
        };
        if monitored {
            pipeline.clock = Some(Clock::start());
        }
        pipeline
    }

    /// Records a panic of `step` as the failure and answers 500.
    fn fail(&mut self, step: &'static str, panic: &(dyn Any + Send)) {
        self.failure = Some(panicked(step, panic));
        self.response = Some(internal_error());
        self.stage = Stage::Finish;
    }
}

/// Logs a panic of `step` and makes it the request's failure.
fn panicked(step: &'static str, panic: &(dyn Any + Send)) -> Box<Failure> {
    let message = panic_message(panic).to_owned();
    error_limited!(step, panic = %message, "pronghorn: a {step} panicked; answering 500");
    Box::new(Failure::Panic { step, message })
}

/// Runs one monitor, isolated: a panic is logged and changes nothing.
/// Returns the monitor's future if it suspends.
#[inline(always)]
fn monitor(hook: &Hook<dyn ErasedMonitor>, exchange: &RouteExchange<'_>) -> Option<BoxFuture<()>> {
    match catch_unwind(AssertUnwindSafe(|| hook.hook.call(exchange))) {
        Ok(Step::Ready(())) => None,
        Ok(Step::Pending(future)) => Some(future),
        Err(panic) => {
            log_monitor_panic(panic.as_ref());
            None
        }
    }
}

/// Applies staged headers and HEAD's empty body: the response is final.
// Inlined, the check alone: most responses have nothing to apply.
#[inline(always)]
fn finish(response: &mut Response<Body>, staged: Option<Box<HeaderMap>>, method: &Method) {
    if staged.is_some() || *method == Method::HEAD {
        apply(response, staged, method);
    }
}

#[inline(never)]
fn apply(response: &mut Response<Body>, staged: Option<Box<HeaderMap>>, method: &Method) {
    if let Some(staged) = staged {
        for (name, value) in *staged {
            if let Some(name) = name {
                response.headers_mut().insert(name, value);
            }
        }
    }
    if *method == Method::HEAD {
        let size = http_body::Body::size_hint(response.body()).exact();
        if let Some(size) = size {
            if !response.headers().contains_key(header::CONTENT_LENGTH) {
                response
                    .headers_mut()
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(size));
            }
        }
        *response.body_mut() = Body::empty();
    }
}

/// The prefix and monitor lists of a request: its route's, or those found
/// for an answer no route gives.
fn hook_lists<'r, B>(
    route: Option<&'r CompiledRoute<B>>,
    lists: &'r Lists,
) -> (&'r [Applied], &'r [Applied]) {
    match (lists, route) {
        (Lists::Route, Some(route)) => (&route.prefixes, &route.monitors),
        (Lists::Found { prefixes, monitors }, _) => (prefixes, monitors),
        (Lists::Route, None) => (&[], &[]),
    }
}

impl<B: 'static> Pipeline<B> {
    /// Runs the pipeline from where it stands until it answers or a step
    /// suspends.
    ///
    /// One `catch_unwind` guards the whole run rather than one per step, so
    /// that requests and responses are not copied in and out of a closure at
    /// every step: a panic in a prefix, the handler or a postfix (or their
    /// futures) lands here, becomes a 500, and the run goes on with the
    /// staged headers and the monitors. Monitors are guarded one by one.
    pub(super) fn run(&mut self, router: &Inner<B>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match catch_unwind(AssertUnwindSafe(|| self.run_steps(router, cx))) {
                Ok(poll) => return poll,
                Err(panic) => {
                    // The step that panicked has dropped what it held;
                    // whatever future it left is abandoned with it.
                    self.pending = Pending::None;
                    self.fail(self.stage.step(), panic.as_ref());
                }
            }
        }
    }

    fn run_steps(&mut self, router: &Inner<B>, cx: &mut Context<'_>) -> Poll<()> {
        let route = match self.target {
            Target::Route { id, .. } => Some(&router.routes[id]),
            _ => None,
        };
        loop {
            // A pending step first: it is polled to completion exactly once.
            if self.suspended() {
                ready!(self.poll_pending(cx));
            }
            // The stages in their order, each running its hooks for as long
            // as they answer at once; a step left pending sends the run
            // back to the top.
            if let Stage::Prefix(from) = self.stage {
                self.run_prefixes(router, route, from);
                if self.suspended() {
                    continue;
                }
            }
            if self.stage == Stage::Handler {
                self.run_handler(router, route, cx);
                if self.suspended() {
                    // The handler's future has just been polled with `cx`.
                    return Poll::Pending;
                }
            }
            if let Stage::Postfix(from) = self.stage {
                self.run_postfixes(router, route, from);
                if self.suspended() {
                    continue;
                }
            }
            if self.stage == Stage::Finish {
                self.finish();
            }
            if let Stage::Monitor(from) = self.stage {
                self.run_monitors(router, route, from);
                if self.suspended() {
                    continue;
                }
            }
            // Done: the response stays in `self.response` for the caller.
            return Poll::Ready(());
        }
    }

    #[inline]
    fn suspended(&self) -> bool {
        !matches!(self.pending, Pending::None)
    }

    /// Polls the pending step; once it answers, applies its answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.pending {
            Pending::None => {}
            Pending::Prefix(future) => {
                let flow = ready!(future.as_mut().poll(cx));
                self.pending = Pending::None;
                self.prefix_done(flow);
            }
            Pending::Handler(future) => {
                let response = ready!(future.as_mut().poll(cx));
                self.pending = Pending::None;
                self.response = Some(response);
                self.stage = Stage::Postfix(0);
            }
            Pending::Postfix(future) => {
                let flow = ready!(future.as_mut().poll(cx));
                self.pending = Pending::None;
                self.postfix_done(flow);
            }
            Pending::Monitor(future) => {
                match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(Poll::Pending) => return Poll::Pending,
                    Ok(Poll::Ready(())) => {}
                    Err(panic) => log_monitor_panic(panic.as_ref()),
                }
                self.pending = Pending::None;
            }
        }
        Poll::Ready(())
    }
}

impl<B: 'static> Pipeline<B> {
    fn prefix_done(&mut self, flow: PrefixFlow<B>) {
        match flow {
            ControlFlow::Continue(request) => self.request = Some(request),
            ControlFlow::Break(response) => {
                self.response = Some(response);
                self.stage = Stage::Finish;
            }
        }
    }

    fn postfix_done(&mut self, flow: PostfixFlow) {
        match flow {
            ControlFlow::Continue(response) => self.response = Some(response),
            ControlFlow::Break(response) => {
                self.response = Some(response);
                self.stage = Stage::Finish;
            }
        }
    }

    /// Runs the prefixes from the `from`th of the list, while they let
    /// the request through at once.
    fn run_prefixes(
        &mut self,
        router: &Inner<B>,
        route: Option<&CompiledRoute<B>>,
        mut from: usize,
    ) {
        let (list, _) = hook_lists(route, &self.lists);
        let pattern = route.map(|route| &*route.pattern.source);
        loop {
            let found = next_hook(
                &router.prefixes,
                list,
                from,
                &self.head,
                &self.target,
                &mut self.hook_captures,
            );
            let Some((index, hook)) = found else {
                self.stage = Stage::Handler;
                return;
            };
            from = index + 1;
            self.stage = Stage::Prefix(from);
            let mut route = Route {
                head: &self.head,
                pattern,
                names: &hook.pattern.names,
                captures: &self.hook_captures,
                staged: Some(&mut self.staged),
            };
            let suspended = hook
                .hook
                .call(&mut self.request, &mut self.response, &mut route);
            if let Some(future) = suspended {
                self.pending = Pending::Prefix(future);
                return;
            }
            if self.response.is_some() {
                // The prefix answered.
                self.stage = Stage::Finish;
                return;
            }
        }
    }

    fn run_handler(
        &mut self,
        router: &Inner<B>,
        route: Option<&CompiledRoute<B>>,
        cx: &mut Context<'_>,
    ) {
        let Some(route) = route else {
            // An automatic OPTIONS answer: no prefix answered it.
            if let Target::Elsewhere { allow, .. } = &self.target {
                let mut response = StatusCode::NO_CONTENT.into_response();
                response.headers_mut().insert(header::ALLOW, allow.clone());
                self.response = Some(response);
            }
            self.stage = Stage::Finish;
            return;
        };
        let context = RouteContext {
            params: params_of(&self.head, &route.pattern.names, &self.captures),
            state: &router.state,
            body_limit: router.body_limit,
            body_timeout: router.body_timeout,
        };
        // Without the `ws` feature the match has one arm.
        #[cfg_attr(not(feature = "ws"), allow(clippy::infallible_destructuring_match))]
        let handler = match &route.endpoint {
            Endpoint::Http(handler) => handler,
            #[cfg(feature = "ws")]
            Endpoint::WebSocket(handler) => {
                let params = crate::handler::RouteParams::from_params(context.params);
                let request = self
                    .request
                    .take()
                    .expect("the request is present until the handler runs");
                self.response = Some(crate::ws::handshake(
                    request,
                    params,
                    handler.clone(),
                    router.websocket_limits,
                ));
                self.stage = Stage::Finish;
                return;
            }
        };
        match handler.call(&mut self.request, context, cx, &mut self.response) {
            None => self.stage = Stage::Postfix(0),
            // The stage moves on when the future answers.
            Some(future) => self.pending = Pending::Handler(future),
        }
    }

    /// Runs the postfixes from the `from`th of the route's list, while they
    /// answer at once.
    fn run_postfixes(
        &mut self,
        router: &Inner<B>,
        route: Option<&CompiledRoute<B>>,
        mut from: usize,
    ) {
        let Some(route) = route else {
            self.stage = Stage::Finish;
            return;
        };
        loop {
            let found = next_hook(
                &router.postfixes,
                &route.postfixes,
                from,
                &self.head,
                &self.target,
                &mut self.hook_captures,
            );
            let Some((index, hook)) = found else {
                self.stage = Stage::Finish;
                return;
            };
            from = index + 1;
            self.stage = Stage::Postfix(from);
            let context = Route {
                head: &self.head,
                pattern: Some(&route.pattern.source),
                names: &hook.pattern.names,
                captures: &self.hook_captures,
                staged: None,
            };
            match hook.hook.call(&context, &mut self.response) {
                Step::Ready(Done::Continue) => {}
                Step::Ready(Done::Answered) => {
                    self.stage = Stage::Finish;
                    return;
                }
                Step::Pending(future) => {
                    self.pending = Pending::Postfix(future);
                    return;
                }
            }
        }
    }

    /// Applies staged headers and HEAD's empty body: the response is final.
    fn finish(&mut self) {
        self.stage = Stage::Monitor(0);
        let response = self.response.as_mut().expect("a step answered");
        finish(response, self.staged.take(), self.head.method());
    }

    /// Runs the monitors from the `from`th of the list, while they answer
    /// at once.
    fn run_monitors(
        &mut self,
        router: &Inner<B>,
        route: Option<&CompiledRoute<B>>,
        mut from: usize,
    ) {
        let (_, list) = hook_lists(route, &self.lists);
        let pattern = route.map(|route| &*route.pattern.source);
        loop {
            let found = next_hook(
                &router.monitors,
                list,
                from,
                &self.head,
                &self.target,
                &mut self.hook_captures,
            );
            let Some((index, hook)) = found else {
                self.stage = Stage::Done;
                return;
            };
            from = index + 1;
            self.stage = Stage::Monitor(from);
            let exchange = Exchange::routed(
                &self.head,
                self.response.as_ref().expect("a step answered"),
                self.failure.as_deref(),
                pattern,
                self.clock
                    .as_ref()
                    .expect("a request with monitors has a clock"),
            );
            if let Some(future) = monitor(hook, &exchange) {
                self.pending = Pending::Monitor(future);
                return;
            }
        }
    }
}
