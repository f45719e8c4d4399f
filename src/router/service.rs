//! The compiled router as a tower `Service`, and the future that runs one
//! request's pipeline.

use std::{
    any::Any,
    convert::Infallible,
    fmt,
    future::Future,
    ops::ControlFlow,
    panic::{AssertUnwindSafe, catch_unwind},
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use tower_service::Service;

use super::{
    Failure, Priority, RouteError,
    builder::{Endpoint, HookSpec, Router},
    hook::{
        Done, ErasedMonitor, ErasedPostfix, ErasedPrefix, PostfixFlow, PrefixFlow, Route,
        RouteExchange,
    },
    params::{Captures, MAX_PATH, Params},
    pattern::{Pattern, Segment, match_parts},
    table::{RouteId, Table, catch_all_end, next_segment},
};
use crate::{
    Body, Exchange, RequestHead, Step,
    handler::{BoxFuture, IntoResponse, RouteContext},
    hook::{log_monitor_panic, panic_message},
    monitor::Clock,
};

/// A hook as compiled: its pattern, scope and the hook itself.
struct Hook<H: ?Sized> {
    pattern: Pattern,
    method: Option<Method>,
    priority: Priority,
    hook: Arc<H>,
}

/// A hook that may apply to a route, in running order.
#[derive(Clone, Copy, Debug)]
struct Applied {
    hook: u32,
    /// Whether the hook's method and pattern must be checked at request
    /// time: it may not apply, or it has parameters to bind.
    check: bool,
}

struct CompiledRoute<B> {
    pattern: Pattern,
    endpoint: Endpoint<B>,
    prefixes: Box<[Applied]>,
    postfixes: Box<[Applied]>,
    monitors: Box<[Applied]>,
}

pub(super) struct Inner<B> {
    table: Table,
    /// WebSocket routes, found like GET routes among themselves.
    websockets: Table,
    routes: Vec<CompiledRoute<B>>,
    prefixes: Vec<Hook<dyn ErasedPrefix<B>>>,
    postfixes: Vec<Hook<dyn ErasedPostfix>>,
    monitors: Vec<Hook<dyn ErasedMonitor>>,
    state: http::Extensions,
    body_limit: usize,
    /// What this table was compiled from, for [`Reloadable`](super::Reloadable).
    pub(super) source: Router<B>,
}

/// A compiled, immutable router: a tower `Service` that is always ready,
/// never fails (`Error = Infallible`) and clones by an `Arc` bump.
///
/// Built by [`Router::compile`]; see the [module docs](crate::router) for
/// the matching rules.
pub struct CompiledRouter<B> {
    pub(super) inner: Arc<Inner<B>>,
}

impl<B> Clone for CompiledRouter<B> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<B> fmt::Debug for CompiledRouter<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<_> = self
            .inner
            .routes
            .iter()
            .map(|r| &*r.pattern.source)
            .collect();
        f.debug_struct("CompiledRouter")
            .field("routes", &routes)
            .field("prefixes", &self.inner.prefixes.len())
            .field("postfixes", &self.inner.postfixes.len())
            .field("monitors", &self.inner.monitors.len())
            .finish()
    }
}

impl<B> CompiledRouter<B> {
    /// The route that answers `method` and `path`, as a request would find
    /// it (HEAD falls back to GET), with its parameters; `None` where the
    /// request would get 404 or 405. For tests, tools and benchmarks: the
    /// service itself does the same lookup.
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::Router;
    ///
    /// let router = Router::<String>::new().get("/users/{id}", || "user").compile().unwrap();
    /// let found = router.at(&Method::GET, "/users/7").unwrap();
    /// assert_eq!(found.pattern(), "/users/{id}");
    /// assert_eq!(found.params().get_raw("id"), Some("7"));
    /// assert!(router.at(&Method::POST, "/users/7").is_none());
    /// ```
    pub fn at<'a>(&'a self, method: &Method, path: &'a str) -> Option<Match<'a>> {
        let mut captures = Captures::new();
        match self.inner.find(method, path, false, &mut captures) {
            Some(Target::Route { id, .. }) => {
                let pattern = &self.inner.routes[id].pattern;
                Some(Match {
                    pattern: &pattern.source,
                    names: &pattern.names,
                    path,
                    captures,
                })
            }
            _ => None,
        }
    }
}

/// A route found by [`CompiledRouter::at`].
pub struct Match<'a> {
    pattern: &'a str,
    names: &'a [Box<str>],
    path: &'a str,
    captures: Captures,
}

impl Match<'_> {
    /// The pattern of the route, as registered.
    pub fn pattern(&self) -> &str {
        self.pattern
    }

    /// The parameters the path bound.
    pub fn params(&self) -> Params<'_> {
        Params::new(self.path, self.names, &self.captures)
    }
}

impl fmt::Debug for Match<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Match")
            .field("pattern", &self.pattern)
            .field("params", &self.params())
            .finish()
    }
}

/// How a hook pattern relates to a route pattern, for every path the route
/// matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Relation {
    Always,
    Maybe,
    Never,
}

fn relation(hook: &[Segment], route: &[Segment]) -> Relation {
    let mut result = Relation::Always;
    for (index, segment) in hook.iter().enumerate() {
        let Some(theirs) = route.get(index) else {
            return Relation::Never;
        };
        match (segment, theirs) {
            (_, Segment::CatchAll) => return Relation::Maybe,
            (Segment::CatchAll, _) => {
                // A catch-all with nothing after it covers every path with
                // at least one more segment, and the route has one here.
                let tail = hook.len() > index + 1;
                return if tail { Relation::Maybe } else { result };
            }
            (Segment::Static(a), Segment::Static(b)) if a != b => return Relation::Never,
            (Segment::Static(_), Segment::Static(_)) => {}
            (Segment::Dynamic(parts), Segment::Static(text)) => {
                if !match_parts(parts, text, 0, |_, _| {}) {
                    return Relation::Never;
                }
            }
            (Segment::Dynamic(a), Segment::Dynamic(b)) if a == b => {}
            _ => result = Relation::Maybe,
        }
    }
    result
}

/// Matches a hook pattern against the start of `path`, binding its
/// parameters. A hook covers its pattern's subtree, so a path may go on
/// after the pattern ends.
fn match_hook(pattern: &Pattern, path: &str, captures: &mut Captures) -> bool {
    captures.truncate(0);
    if path.len() > MAX_PATH {
        return false;
    }
    let mut from = 0;
    for (index, segment) in pattern.segments.iter().enumerate() {
        let (start, end) = next_segment(path, from);
        if start == path.len() {
            return false;
        }
        let text = &path[start..end];
        match segment {
            Segment::Static(expected) => {
                if text != &**expected {
                    return false;
                }
            }
            Segment::Dynamic(parts) => {
                if !match_parts(parts, text, start, |a, b| captures.push(a, b)) {
                    return false;
                }
            }
            Segment::CatchAll => {
                // The rest of the path, less the static suffix (only static
                // segments follow a catch-all: checked at parse time).
                let suffix = pattern.segments[index + 1..]
                    .iter()
                    .map(|segment| match segment {
                        Segment::Static(text) => &**text,
                        _ => unreachable!("validated: only static segments follow a catch-all"),
                    });
                return match catch_all_end(path, start, suffix) {
                    Some(end) => {
                        captures.push(start, end);
                        true
                    }
                    None => false,
                };
            }
        }
        from = end;
    }
    true
}

fn compile_hooks<H: ?Sized>(specs: Vec<HookSpec<H>>) -> Result<Vec<Hook<H>>, RouteError> {
    specs
        .into_iter()
        .map(|spec| {
            Ok(Hook {
                pattern: Pattern::parse(&spec.scope.pattern)?,
                method: spec.scope.method,
                priority: spec.scope.priority,
                hook: spec.hook,
            })
        })
        .collect()
}

/// The hooks of `hooks` that may apply to a route on `method` (`None`: any)
/// and `pattern`, in running order.
fn applied<H: ?Sized>(
    hooks: &[Hook<H>],
    method: Option<&Method>,
    pattern: &Pattern,
) -> Box<[Applied]> {
    let mut applied: Vec<(usize, Applied)> = hooks
        .iter()
        .enumerate()
        .filter(|(_, hook)| match (&hook.method, method) {
            (None, _) | (_, None) => true,
            (Some(theirs), Some(ours)) => {
                theirs == ours || (*ours == Method::GET && *theirs == Method::HEAD)
            }
        })
        .filter_map(|(index, hook)| {
            let check = match relation(&hook.pattern.segments, &pattern.segments) {
                Relation::Never => return None,
                Relation::Maybe => true,
                Relation::Always => !hook.pattern.names.is_empty(),
            };
            // A hook for the route's own method applies to every request
            // the route answers (a GET route also answers HEAD, which a
            // GET hook sees too); any other method is checked per request.
            let check = check || hook.method.is_some() && hook.method.as_ref() != method;
            Some((
                index,
                Applied {
                    hook: index as u32,
                    check,
                },
            ))
        })
        .collect();
    applied.sort_by_key(|&(index, _)| order_key(&hooks[index], index));
    applied.into_iter().map(|(_, applied)| applied).collect()
}

fn order_key<H: ?Sized>(hook: &Hook<H>, index: usize) -> (Priority, bool, usize, usize) {
    (
        hook.priority,
        hook.method.is_none(),
        hook.pattern.segments.len(),
        index,
    )
}

/// Every hook of `hooks` whose scope takes `methods` and `path`, in running
/// order: for answers that no route gives (404, 405, automatic OPTIONS).
fn applied_at<H: ?Sized>(hooks: &[Hook<H>], methods: &[&Method], path: &str) -> Box<[Applied]> {
    let mut captures = Captures::new();
    let mut found: Vec<usize> = (0..hooks.len())
        .filter(|&index| {
            let hook = &hooks[index];
            hook.method.as_ref().is_none_or(|m| methods.contains(&m))
                && match_hook(&hook.pattern, path, &mut captures)
        })
        .collect();
    found.sort_by_key(|&index| order_key(&hooks[index], index));
    found
        .into_iter()
        .map(|index| Applied {
            hook: index as u32,
            check: true,
        })
        .collect()
}

pub(super) fn compile<B>(router: Router<B>) -> Result<CompiledRouter<B>, RouteError> {
    let source = router.clone();
    let prefixes = compile_hooks(router.prefixes)?;
    let postfixes = compile_hooks(router.postfixes)?;
    let monitors = compile_hooks(router.monitors)?;
    let mut table = Table::default();
    #[cfg_attr(not(feature = "ws"), allow(unused_mut))]
    let mut websockets = Table::default();
    let mut routes: Vec<CompiledRoute<B>> = Vec::with_capacity(router.routes.len());
    for spec in router.routes {
        let pattern = Pattern::parse(&spec.pattern)?;
        let id = routes.len();
        let (target, postfixes) = match spec.endpoint {
            Endpoint::Http(_) => (
                &mut table,
                applied(&postfixes, spec.method.as_ref(), &pattern),
            ),
            #[cfg(feature = "ws")]
            Endpoint::WebSocket(_) => (&mut websockets, Box::default()),
        };
        if let Err(first) = target.insert(&pattern, spec.method.as_ref(), id) {
            return Err(RouteError::DuplicateRoute {
                method: spec.method.as_ref().map_or("*", Method::as_str).to_owned(),
                first: routes[first].pattern.source.to_string(),
                second: spec.pattern,
            });
        }
        routes.push(CompiledRoute {
            prefixes: applied(&prefixes, spec.method.as_ref(), &pattern),
            postfixes,
            monitors: applied(&monitors, spec.method.as_ref(), &pattern),
            pattern,
            endpoint: spec.endpoint,
        });
    }
    table.finish();
    websockets.finish();
    Ok(CompiledRouter {
        inner: Arc::new(Inner {
            table,
            websockets,
            routes,
            prefixes,
            postfixes,
            monitors,
            state: router.state,
            body_limit: router.body_limit,
            source,
        }),
    })
}

/// What the lookup decided for a request.
enum Target {
    /// A route answers; `as_get` when a GET route answers a HEAD request.
    Route {
        id: RouteId,
        as_get: bool,
    },
    /// No route for the method: 405, or for OPTIONS an automatic 204; both
    /// with `Allow`.
    Elsewhere {
        allow: HeaderValue,
        options: bool,
    },
    NotFound,
    /// A plain GET to a path only WebSocket routes answer: 426.
    UpgradeRequired,
}

impl<B> Inner<B> {
    /// Finds the target of a request; `upgrade` when it asks for a
    /// WebSocket upgrade.
    fn lookup(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Target {
        self.find(method, path, upgrade, captures)
            .unwrap_or_else(|| self.elsewhere(method, path))
    }

    /// The route for the request, or the upgrade it lacks; `None` when no
    /// route takes its method.
    fn find(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Option<Target> {
        let websocket = |captures: &mut Captures| {
            self.websockets
                .find(path, captures, |methods| methods.get(&Method::GET))
        };
        let route = |id| Some(Target::Route { id, as_get: false });
        if upgrade && *method == Method::GET {
            if let Some(id) = websocket(captures) {
                return route(id);
            }
        }
        let table = &self.table;
        if let Some(id) = table.find(path, captures, |methods| methods.get(method)) {
            return route(id);
        }
        if table.any_method() {
            if let Some(id) = table.find(path, captures, |methods| methods.any()) {
                return route(id);
            }
        }
        if *method == Method::HEAD {
            if let Some(id) = table.find(path, captures, |methods| methods.get(&Method::GET)) {
                return Some(Target::Route { id, as_get: true });
            }
        }
        if (*method == Method::GET || *method == Method::HEAD) && websocket(captures).is_some() {
            return Some(Target::UpgradeRequired);
        }
        None
    }

    /// The `Allow` answer for a path that other methods reach, or 404.
    fn elsewhere(&self, method: &Method, path: &str) -> Target {
        let mut allowed: Vec<Method> = Vec::new();
        self.table.visit_all(path, |methods| {
            for m in methods.methods() {
                if !allowed.contains(m) {
                    allowed.push(m.clone());
                }
            }
        });
        if allowed.is_empty() {
            return Target::NotFound;
        }
        if allowed.contains(&Method::GET) && !allowed.contains(&Method::HEAD) {
            allowed.push(Method::HEAD);
        }
        let options = *method == Method::OPTIONS;
        if options && !allowed.contains(&Method::OPTIONS) {
            allowed.push(Method::OPTIONS);
        }
        let allow = allowed
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let allow = HeaderValue::from_str(&allow).expect("method names are valid header text");
        Target::Elsewhere { allow, options }
    }
}

impl<B> Service<Request<B>> for CompiledRouter<B>
where
    B: 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture<B>;

    #[inline]
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture<B> {
        ResponseFuture::new(&self.inner, request)
    }
}

/// Which hook lists a request runs.
enum Lists {
    Route,
    /// Hooks found by matching the path (404, 405, automatic OPTIONS).
    Found {
        prefixes: Box<[Applied]>,
        monitors: Box<[Applied]>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
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
struct Pipeline<B> {
    head: RequestHead,
    target: Target,
    lists: Lists,
    captures: Captures,
    /// The parameters of the hook being run; reused from hook to hook.
    hook_captures: Captures,
    request: Option<Request<B>>,
    response: Option<Response<Body>>,
    failure: Option<Box<Failure>>,
    /// Headers staged by prefixes; allocated only when one stages a header.
    staged: Option<Box<HeaderMap>>,
    /// Where the run stands; also names the step for a panic's report.
    stage: Stage,
    /// The step that suspended, polled first on the next run.
    pending: Pending<B>,
    clock: Option<Clock>,
}

/// Response future of [`CompiledRouter`].
///
/// The router runs a request's pipeline in `call`, as far as its steps
/// answer synchronously: a fully synchronous request is already answered,
/// and the future is ready on its first poll without having held anything
/// but the response. Only when a step returns a future is the pipeline's
/// state moved into the future (one box, beside the step's own boxed
/// future), and polling continues from that step.
pub struct ResponseFuture<B> {
    kind: Kind<B>,
}

enum Kind<B> {
    Ready(Option<Response<Body>>),
    Running(Arc<Inner<B>>, Box<Pipeline<B>>),
}

impl<B: 'static> ResponseFuture<B> {
    #[inline]
    pub(super) fn new(router: &Arc<Inner<B>>, request: Request<B>) -> Self {
        Pipeline::start(router, request)
    }

    /// The future of a request whose state machine takes over from
    /// `pipeline`, run here at once: a hook's future that suspended the
    /// first run is polled here for the first time, and the run goes on if
    /// it answered; a step still pending is polled with the caller's waker
    /// on the first poll of the future.
    // Out of line: only a suspension or a request no handler answers comes
    // here, and the first run stays small without it.
    #[inline(never)]
    fn from_machine(router: &Arc<Inner<B>>, mut pipeline: Pipeline<B>) -> Self {
        match pipeline.run(router, &mut Context::from_waker(std::task::Waker::noop())) {
            // Taken straight into the future: the response moves once.
            Poll::Ready(()) => Self {
                kind: Kind::Ready(pipeline.response.take()),
            },
            Poll::Pending => Self::waiting(router, pipeline),
        }
    }

    /// The future of a request whose pending step has just been polled (a
    /// handler's future comes back from the erased handler polled once):
    /// that step is polled next on the first poll of the future, with the
    /// caller's waker.
    #[inline(never)]
    fn waiting(router: &Arc<Inner<B>>, pipeline: Pipeline<B>) -> Self {
        Self {
            kind: Kind::Running(Arc::clone(router), Box::new(pipeline)),
        }
    }
}

impl<B: 'static> Future for ResponseFuture<B> {
    type Output = Result<Response<Body>, Infallible>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.kind {
            Kind::Ready(response) => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            Kind::Running(router, pipeline) => pipeline.run(router, cx).map(|()| {
                Ok(pipeline
                    .response
                    .take()
                    .expect("future polled after completion"))
            }),
        }
    }
}

impl<B> fmt::Debug for ResponseFuture<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ResponseFuture");
        match &self.kind {
            Kind::Ready(_) => debug.field("state", &"Ready"),
            Kind::Running(_, pipeline) => debug
                .field("method", pipeline.head.method())
                .field("path", &pipeline.head.path())
                .field("stage", &pipeline.stage),
        };
        debug.finish()
    }
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
    fn start(router: &Arc<Inner<B>>, request: Request<B>) -> ResponseFuture<B> {
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
        ResponseFuture {
            kind: Kind::Ready(response),
        }
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
    tracing::error!(step, panic = %message, "pronghorn: a {step} panicked; answering 500");
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

/// The parameters `names` bind in the request's path; the path is worked
/// out from the URI only when there are any (most hooks have none).
#[inline]
pub(super) fn params_of<'a>(
    head: &'a RequestHead,
    names: &'a [Box<str>],
    captures: &'a Captures,
) -> Params<'a> {
    let path = if names.is_empty() { "" } else { head.path() };
    Params::new(path, names, captures)
}

/// Whether a hook with method filter `method` runs for the request of
/// `head` that found `target`: HEAD served by a GET route runs GET hooks.
fn method_applies(head: &RequestHead, target: &Target, method: Option<&Method>) -> bool {
    let Some(method) = method else { return true };
    method == head.method()
        || matches!(target, Target::Route { as_get: true, .. }) && *method == Method::GET
}

/// The next hook of `list` from `from` that applies to the request of
/// `head`, with its position in the list and its parameters bound in
/// `captures`.
fn next_hook<'r, H: ?Sized>(
    hooks: &'r [Hook<H>],
    list: &[Applied],
    from: usize,
    head: &RequestHead,
    target: &Target,
    captures: &mut Captures,
) -> Option<(usize, &'r Hook<H>)> {
    let mut index = from;
    while let Some(applied) = list.get(index) {
        let hook = &hooks[applied.hook as usize];
        if applies(applied, hook, head, target, captures) {
            return Some((index, hook));
        }
        index += 1;
    }
    None
}

/// Whether `hook`, `applied` to the route, runs for the request of
/// `head`; binds its parameters in `captures` when it is checked.
#[inline]
fn applies<H: ?Sized>(
    applied: &Applied,
    hook: &Hook<H>,
    head: &RequestHead,
    target: &Target,
    captures: &mut Captures,
) -> bool {
    !applied.check
        || method_applies(head, target, hook.method.as_ref())
            && match_hook(&hook.pattern, head.path(), captures)
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
    fn run(&mut self, router: &Inner<B>, cx: &mut Context<'_>) -> Poll<()> {
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
                self.response = Some(crate::ws::handshake(request, params, handler.clone()));
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
