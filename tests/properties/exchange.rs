//! Whole exchanges through the compiled router, checked against what the
//! lookup says: the property of `tests/properties/main.rs` and the fuzz target
//! `fuzz/fuzz_targets/exchange.rs`, which include this one file.
//!
//! A table of routes (each answering `"{method} {pattern}"`) and of hooks
//! (each noting that it ran; prefixes also stage a header of their own, and
//! some prefixes answer in the handler's stead, some postfixes replace the
//! response) is built from [`Table`], each route and hook synchronous or
//! suspending once (its future is pending on its first poll, after waking
//! its waker); every request goes through the service's
//! `call`, its response future polled as an executor would (again only
//! after a wake-up), and its answer must agree with [`CompiledRouter::at`]
//! on the same method and path:
//!
//! - the response future is pending at most once per step that suspended
//!   (none when no step did: ready on its first poll), never without a
//!   wake-up, and no step's future is polled after it answered;
//! - a request `at` finds gets the answer of the first prefix that answers,
//!   else the first postfix that replaces it, else that of the route `at`
//!   names (HEAD: the same status and `content-length`, no body) — or 500
//!   where one of these steps panics instead; no hook of a kind runs after one that
//!   answered or panicked, no postfix after a prefix's answer or a
//!   handler's panic, a monitor's panic changes nothing, and the headers of
//!   every prefix that ran go out; every monitor sees the status that goes
//!   out, and a failure exactly where a step panicked, naming that step;
//! - one it does not find gets 426 if it is a GET or HEAD to a path a
//!   WebSocket route takes, else 404 when no method reaches the path, else
//!   405 (OPTIONS: 204) with `Allow` listing exactly the methods whose
//!   lookup finds a route there, OPTIONS added for OPTIONS;
//! - a path finds what its normal form (no empty segments) finds;
//! - prefixes run before postfixes before monitors, each kind in order of
//!   priority, method-specific before any-method, shallower before deeper,
//!   then registration; prefixes and postfixes only for a request a route
//!   answers (or an automatic OPTIONS answer: its prefixes), monitors for
//!   every request; a hook on `/` for any method runs wherever its kind
//!   runs.

use std::{cell::RefCell, collections::BTreeSet, ops::ControlFlow};

use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use pronghorn::{
    Body, Router,
    router::{CompiledRouter, Failure, Priority, Reloadable, Route, RouteExchange, Scope, on},
};
use tower_service::Service;

use super::poll::{Suspension, drive};

/// Static text of a pattern segment or a path segment.
const TEXT: &[&str] = &[
    "a",
    "b",
    "ab",
    "a.b",
    "v1.2",
    "x-y.tail",
    "pre7.json",
    ".",
    "%41",
    "é",
];

/// One segment of a pattern.
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub enum Piece {
    /// Static text, from [`TEXT`].
    Text(u8),
    /// A parameter filling the segment.
    Param,
    /// Two parameters, or one with literal text around it.
    Pair(u8),
    /// A catch-all.
    CatchAll,
    /// Anything: the pattern may not compile.
    Raw(String),
}

/// One segment of a request path.
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub enum Step {
    /// Static text, from [`TEXT`].
    Text(u8),
    /// An empty segment (`//`).
    Empty,
    /// A percent sign and what follows it.
    Escape(u8),
    /// `..`, which is not resolved.
    Dots,
    /// Anything: the URI may not parse.
    Raw(String),
}

/// A method of a route, a hook scope or a request (`Other`: PATCH).
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Head,
    Options,
    Other,
}

impl Verb {
    pub const ALL: [Verb; 5] = [
        Verb::Get,
        Verb::Post,
        Verb::Head,
        Verb::Options,
        Verb::Other,
    ];

    fn method(self) -> Method {
        match self {
            Verb::Get => Method::GET,
            Verb::Post => Method::POST,
            Verb::Head => Method::HEAD,
            Verb::Options => Method::OPTIONS,
            Verb::Other => Method::PATCH,
        }
    }
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub struct RouteSpec {
    /// `None`: any method.
    pub verb: Option<Verb>,
    pub pattern: Vec<Piece>,
    /// Whether the handler answers a future that suspends once.
    pub suspends: bool,
    /// Whether the handler panics.
    pub panics: bool,
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Prefix,
    Postfix,
    Monitor,
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub struct HookSpec {
    pub kind: Kind,
    pub verb: Option<Verb>,
    pub pattern: Vec<Piece>,
    pub priority: u8,
    /// Whether the hook answers a future that suspends once.
    pub suspends: bool,
    /// Whether a prefix answers instead of the handler, a postfix replaces
    /// the response (a monitor cannot).
    pub answers: bool,
    /// Whether the hook panics, when called or in its future.
    pub panics: bool,
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub struct RequestSpec {
    pub verb: Verb,
    pub path: Vec<Step>,
    pub trailing_slash: bool,
    pub query: bool,
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub struct Table {
    pub routes: Vec<RouteSpec>,
    /// Patterns of WebSocket routes (with the `ws` feature).
    pub websockets: Vec<Vec<Piece>>,
    pub hooks: Vec<HookSpec>,
    pub requests: Vec<RequestSpec>,
}

fn text(n: u8) -> &'static str {
    TEXT[usize::from(n) % TEXT.len()]
}

/// The pattern of `pieces`; parameter names are unique by segment.
fn pattern(pieces: &[Piece]) -> String {
    if pieces.is_empty() {
        return "/".to_owned();
    }
    let mut pattern = String::new();
    for (depth, piece) in pieces.iter().enumerate() {
        pattern.push('/');
        match piece {
            Piece::Text(n) => pattern.push_str(text(*n)),
            Piece::Param => pattern.push_str(&format!("{{p{depth}}}")),
            Piece::Pair(n) => pattern.push_str(&match n % 4 {
                0 => format!("{{p{depth}}}.{{q{depth}}}"),
                1 => format!("v{{p{depth}}}.{{q{depth}}}"),
                2 => format!("pre{{p{depth}}}.json"),
                _ => format!("{{p{depth}}}-{{q{depth}}}.tail"),
            }),
            Piece::CatchAll => pattern.push_str(&format!("{{*r{depth}}}")),
            Piece::Raw(raw) => pattern.push_str(raw),
        }
    }
    pattern
}

/// The segments a pattern of `pieces` has, where that is known without
/// parsing it: the depth that orders hooks.
fn depth(pieces: &[Piece]) -> Option<usize> {
    let raw = pieces.iter().any(|piece| matches!(piece, Piece::Raw(_)));
    (!raw).then_some(pieces.len())
}

fn uri(request: &RequestSpec) -> String {
    let mut uri = String::new();
    for step in &request.path {
        uri.push('/');
        match step {
            Step::Text(n) => uri.push_str(text(*n)),
            Step::Empty => {}
            Step::Escape(n) => {
                uri.push_str(["%", "%4", "%41", "%ZZ", "%C3%A9", "%FF"][usize::from(n % 6)])
            }
            Step::Dots => uri.push_str(".."),
            Step::Raw(raw) => uri.push_str(raw),
        }
    }
    if uri.is_empty() || request.trailing_slash {
        uri.push('/');
    }
    if request.query {
        uri.push_str("?q=/a/b");
    }
    uri
}

/// A path that the pattern of `pieces` matches: its parameters filled in.
fn filled(pieces: &[Piece]) -> String {
    let mut path = String::new();
    for piece in pieces {
        path.push('/');
        match piece {
            Piece::Text(n) => path.push_str(text(*n)),
            Piece::Param => path.push('a'),
            Piece::Pair(n) => {
                path.push_str(["a.b", "v1.2", "pre7.json", "x-y.tail"][usize::from(n % 4)])
            }
            Piece::CatchAll => path.push_str("a/b"),
            Piece::Raw(raw) => path.push_str(&raw.replace(['{', '}', '*'], "")),
        }
    }
    if path.is_empty() {
        path.push('/');
    }
    path
}

/// `path` without empty segments.
pub fn normal(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", segments.join("/"))
}

thread_local! {
    /// The hooks that ran for the request being checked, by index.
    static RAN: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// What each monitor saw of that request: the status, and the step
    /// that failed.
    static SEEN: RefCell<Vec<(Option<StatusCode>, Option<&'static str>)>> = const { RefCell::new(Vec::new()) };
}

/// Notes that monitor `index` ran and what it saw.
fn seen(index: usize, exchange: &RouteExchange<'_>) {
    ran(index);
    let failed = exchange.error().map(|failure| match failure {
        Failure::Panic { step, .. } => *step,
        Failure::Error { step: "prefix", .. } => "prefix error",
        Failure::Error {
            step: "postfix", ..
        } => "postfix error",
        _ => "another failure",
    });
    let seen = (exchange.status(), failed);
    SEEN.with(|log| log.borrow_mut().push(seen));
}

fn ran(index: usize) {
    RAN.with(|ran| ran.borrow_mut().push(index));
}

/// The header a prefix stages: it goes out on whatever answer is sent.
fn staged(index: usize) -> String {
    format!("x-prefix-{index}")
}

fn ran_prefix(index: usize, route: &mut Route<'_>) {
    ran(index);
    let name = HeaderName::try_from(staged(index)).expect("a header name");
    route.stage_header(name, HeaderValue::from_static("ran"));
}

/// The message of the panics the tables plan; they are not reported.
const PLANNED: &str = "a planned panic";

/// Panics if the step plans to.
fn fail(planned: bool) {
    if planned {
        std::panic::panic_any(PLANNED);
    }
}

/// Keeps the planned panics out of the test's output, and away from the
/// fuzzer's panic hook, which takes any other panic for a crash — one the
/// router catches too: a panic of its own would otherwise pass for a
/// step's.
fn quiet_planned_panics() {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&PLANNED) {
                report(info);
            }
        }));
    });
}

/// The answer of a step that panicked.
fn internal_error() -> (StatusCode, String) {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error".to_owned(),
    )
}

/// The answer of a prefix or postfix that answers in the handler's stead
/// or replaces its response.
fn early(kind: Kind, index: usize) -> (StatusCode, String) {
    match kind {
        Kind::Prefix => (StatusCode::ACCEPTED, format!("prefix {index}")),
        _ => (
            StatusCode::NON_AUTHORITATIVE_INFORMATION,
            format!("postfix {index}"),
        ),
    }
}

fn priority(n: u8) -> Priority {
    [
        Priority::HIGHEST,
        Priority::HIGH,
        Priority::NORMAL,
        Priority::LOW,
        Priority::LOWEST,
    ][usize::from(n % 5)]
}

/// Adds a WebSocket route for each of `patterns` to `router` where it
/// compiles, and a GET route for it to `reference` (feature `ws`; without
/// it, none).
#[cfg_attr(not(feature = "ws"), allow(unused_variables))]
fn websocket_routes(router: &mut Router, reference: &mut Router, patterns: &[Vec<Piece>]) {
    #[cfg(feature = "ws")]
    for pattern in patterns.iter().map(|pieces| pattern(pieces)) {
        let with = router
            .clone()
            .websocket(&pattern, |_: pronghorn::ws::WebSocket| async {});
        if with.clone().compile().is_ok() {
            *router = with;
            *reference = std::mem::take(reference).get(&pattern, || "");
        }
    }
}

/// Keeps `with` as the router where it compiles; answers whether it did.
fn keep(router: &mut Router, with: Router) -> bool {
    let compiles = with.clone().compile().is_ok();
    if compiles {
        *router = with;
    }
    compiles
}

/// A route of the router, as the checks need to know it.
struct Handler {
    method: Option<Method>,
    pattern: String,
    panics: bool,
}

/// What [`router`] built.
struct Built {
    router: CompiledRouter,
    /// A GET route for each WebSocket route: it finds what they find.
    websockets: CompiledRouter,
    handlers: Vec<Handler>,
}

impl Built {
    /// Whether the handler of the route with `pattern` that `method` finds
    /// panics: the method's own route, else an any-method one, else for
    /// HEAD the GET route.
    fn panics(&self, method: &Method, pattern: &str) -> bool {
        let route = |wanted: Option<&Method>| {
            (self.handlers.iter())
                .find(|handler| handler.pattern == pattern && handler.method.as_ref() == wanted)
        };
        let head = || {
            (*method == Method::HEAD)
                .then(|| route(Some(&Method::GET)))
                .flatten()
        };
        let handler = route(Some(method)).or_else(|| route(None)).or_else(head);
        handler
            .expect("the route found is one of the table's")
            .panics
    }
}

/// `router` with `route` added: it answers `"{method} {pattern}"`.
fn add_route(router: Router, route: &RouteSpec) -> Router {
    let pattern = pattern(&route.pattern);
    let answer = match route.verb {
        Some(verb) => format!("{} {pattern}", verb.method()),
        None => format!("* {pattern}"),
    };
    let planned = route.panics;
    match (route.verb, route.suspends) {
        (Some(verb), false) => router.route(
            &pattern,
            on(verb.method(), move || {
                fail(planned);
                answer.clone()
            }),
        ),
        (None, false) => router.any(&pattern, move || {
            fail(planned);
            answer.clone()
        }),
        (verb, true) => {
            let handler = move || {
                let answer = answer.clone();
                async move {
                    Suspension::default().await;
                    fail(planned);
                    answer
                }
            };
            match verb {
                Some(verb) => router.route(&pattern, on(verb.method(), handler)),
                None => router.any(&pattern, handler),
            }
        }
    }
}

/// `router` with `hook`, the `index`th of its table, added: it notes that
/// it ran.
fn add_hook(router: Router, index: usize, hook: &HookSpec) -> Router {
    let mut scope = Scope::new(pattern(&hook.pattern)).priority(priority(hook.priority));
    if let Some(verb) = hook.verb {
        scope = scope.method(verb.method());
    }
    let with = router;
    let answers = hook.answers;
    let planned = hook.panics;
    match (hook.kind, hook.suspends) {
        (Kind::Prefix, false) => with.prefix(
            scope,
            move |_: &mut Request<Body>, route: &mut Route<'_>| {
                ran_prefix(index, route);
                fail(planned);
                match answers {
                    true => ControlFlow::Break(early(Kind::Prefix, index)),
                    false => ControlFlow::Continue(()),
                }
            },
        ),
        (Kind::Prefix, true) => with.prefix(
            scope,
            move |request: Request<Body>, route: &mut Route<'_>| {
                ran_prefix(index, route);
                async move {
                    Suspension::default().await;
                    fail(planned);
                    if answers {
                        Err(early(Kind::Prefix, index))
                    } else {
                        Ok(request)
                    }
                }
            },
        ),
        (Kind::Postfix, false) if !answers => {
            with.postfix(scope, move |_: &Route<'_>, _: &mut Response<Body>| {
                ran(index);
                fail(planned);
            })
        }
        (Kind::Postfix, false) => with.postfix(scope, move |_: &Route<'_>, _: Response<Body>| {
            ran(index);
            fail(planned);
            Err::<Response<Body>, _>(early(Kind::Postfix, index))
        }),
        (Kind::Postfix, true) => {
            with.postfix(scope, move |_: &Route<'_>, response: Response<Body>| {
                ran(index);
                async move {
                    Suspension::default().await;
                    fail(planned);
                    if answers {
                        Err(early(Kind::Postfix, index))
                    } else {
                        Ok(response)
                    }
                }
            })
        }
        (Kind::Monitor, false) => with.monitor(scope, move |exchange: &RouteExchange<'_>| {
            seen(index, exchange);
            fail(planned);
        }),
        (Kind::Monitor, true) => with.monitor(scope, move |exchange: &RouteExchange<'_>| {
            seen(index, exchange);
            async move {
                Suspension::default().await;
                fail(planned);
            }
        }),
    }
}

/// The router of `table`, less the routes and hooks it refuses (a bad
/// pattern, a route registered twice), each tried in turn.
fn router(table: &Table) -> Built {
    let mut router = Router::new();
    let mut websockets = Router::new();
    websocket_routes(&mut router, &mut websockets, &table.websockets);
    let mut handlers = Vec::new();
    for route in &table.routes {
        let with = add_route(router.clone(), route);
        if keep(&mut router, with) {
            handlers.push(Handler {
                method: route.verb.map(Verb::method),
                pattern: pattern(&route.pattern),
                panics: route.panics,
            });
        }
    }
    for (index, hook) in table.hooks.iter().enumerate() {
        let with = add_hook(router.clone(), index, hook);
        keep(&mut router, with);
    }
    Built {
        router: router.compile().expect("every part compiled"),
        websockets: websockets.compile().expect("the WebSocket routes compiled"),
        handlers,
    }
}

/// A change of a [`Reloadable`]'s modules.
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug)]
pub enum Change {
    Register(u8),
    Unregister(u8),
    /// The module of the first id replaced by the second module.
    Replace(u8, u8),
}

/// How many modules the table's routes and hooks are dealt to.
const MODULES: usize = 3;

/// Checks that a [`Reloadable`] changed module by module, `changes` in
/// turn, serves every request as the router compiled at once from its
/// modules in registration order does, and refuses the changes that
/// router would not compile. The table's routes, WebSocket routes and
/// hooks are dealt to modules in turn from `deal`.
pub fn check_reload(table: &Table, changes: &[Change], deal: u8) {
    quiet_planned_panics();
    let mut modules = vec![Router::new(); MODULES];
    let mut dealt = usize::from(deal);
    let mut next = || {
        dealt += 1;
        dealt % MODULES
    };
    for route in &table.routes {
        if add_route(Router::new(), route).compile().is_ok() {
            let module = next();
            modules[module] = add_route(std::mem::take(&mut modules[module]), route);
        }
    }
    #[cfg(feature = "ws")]
    for pattern in table.websockets.iter().map(|pieces| pattern(pieces)) {
        let alone = Router::new().websocket(&pattern, |_: pronghorn::ws::WebSocket| async {});
        if alone.compile().is_ok() {
            let module = next();
            modules[module] = std::mem::take(&mut modules[module])
                .websocket(&pattern, |_: pronghorn::ws::WebSocket| async {});
        }
    }
    for (index, hook) in table.hooks.iter().enumerate() {
        if add_hook(Router::new(), index, hook).compile().is_ok() {
            let module = next();
            modules[module] = add_hook(std::mem::take(&mut modules[module]), index, hook);
        }
    }
    let app = Reloadable::new(Router::new()).expect("an empty base compiles");
    // The modules live, in registration order, as the reference sees them.
    let mut live: Vec<(String, usize)> = Vec::new();
    for &change in changes {
        let id = |n: u8| format!("m{}", usize::from(n) % MODULES);
        let module = |n: u8| usize::from(n) % MODULES;
        let mut staged = live.clone();
        let done = match change {
            Change::Register(n) => {
                staged.push((id(n), module(n)));
                app.register(id(n), modules[module(n)].clone()).map(|_| ())
            }
            Change::Unregister(n) => {
                staged.retain(|(known, _)| *known != id(n));
                app.unregister(&id(n)).map(|_| ())
            }
            Change::Replace(n, with) => {
                match staged.iter().position(|(known, _)| *known == id(n)) {
                    Some(at) => {
                        staged[at].1 = module(with);
                        let mut first = true;
                        staged.retain(|(known, _)| *known != id(n) || std::mem::take(&mut first));
                    }
                    None => staged.push((id(n), module(with))),
                }
                app.replace(id(n), modules[module(with)].clone())
                    .map(|_| ())
            }
        };
        let merged = (staged.iter()).fold(Router::new(), |router, &(_, m)| {
            router.merge(modules[m].clone())
        });
        let reference = merged.compile();
        assert_eq!(
            done.is_ok(),
            reference.is_ok(),
            "{change:?} after {live:?}: {done:?} where a compile says {:?}",
            reference.as_ref().err()
        );
        let Ok(mut reference) = reference else {
            continue;
        };
        live = staged;
        let ids: Vec<String> =
            live.iter()
                .map(|(id, _)| id.clone())
                .fold(Vec::new(), |mut ids, id| {
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                    ids
                });
        assert_eq!(app.modules(), ids);
        let mut current = app.current();
        let requests = table.requests.iter().map(|spec| (spec.verb, uri(spec)));
        let own = (table.routes.iter())
            .flat_map(|route| Verb::ALL.iter().map(|&verb| (verb, filled(&route.pattern))));
        for (verb, uri) in requests.chain(own) {
            let request = |uri: &str| {
                Request::builder()
                    .method(verb.method())
                    .uri(uri)
                    .body(Body::empty())
                    .ok()
            };
            let (Some(ours), Some(theirs)) = (request(&uri), request(&uri)) else {
                continue;
            };
            let ours = exchange(&mut current, ours);
            let theirs = exchange(&mut reference, theirs);
            assert_eq!(
                ours,
                theirs,
                "{} {uri} after {change:?}, modules {live:?}, hooks {:?}",
                verb.method(),
                table.hooks
            );
        }
    }
}

/// What came back for one request.
#[derive(Debug, PartialEq)]
struct Outcome {
    status: StatusCode,
    allow: Option<BTreeSet<String>>,
    /// The headers staged by prefixes.
    staged: BTreeSet<String>,
    upgrade: Option<String>,
    length: Option<usize>,
    body: String,
    /// The hooks that ran, in order.
    ran: Vec<usize>,
    /// What the monitors that ran saw, in order.
    seen: Vec<(Option<StatusCode>, Option<&'static str>)>,
    /// How often the response future was pending.
    pending: usize,
    /// How many steps suspended.
    suspended: usize,
}

fn exchange(router: &mut CompiledRouter, request: Request<Body>) -> Outcome {
    RAN.with(|ran| ran.borrow_mut().clear());
    SEEN.with(|seen| seen.borrow_mut().clear());
    Suspension::reset();
    let (response, pending) = drive(router.call(request));
    let response = response.unwrap_or_else(|never| match never {});
    let ran = RAN.with(|ran| ran.take());
    let seen = SEEN.with(|seen| seen.take());
    let header = |name| {
        let value = response.headers().get(name)?;
        Some(value.to_str().expect("ASCII").to_owned())
    };
    let allow = header(header::ALLOW).map(|allow| allow.split(", ").map(str::to_owned).collect());
    let upgrade = header(header::UPGRADE);
    let staged = (response.headers().keys())
        .filter(|name| name.as_str().starts_with("x-prefix-"))
        .map(|name| name.as_str().to_owned())
        .collect();
    let length = header(header::CONTENT_LENGTH).map(|length| length.parse().expect("a number"));
    let status = response.status();
    let (body, _) = drive(response.into_body().collect());
    let body = body.expect("a full body").to_bytes();
    Outcome {
        status,
        allow,
        staged,
        upgrade,
        length,
        body: String::from_utf8(body.to_vec()).expect("UTF-8"),
        ran,
        seen,
        pending,
        suspended: Suspension::count(),
    }
}

/// Checks every request of `table`, and one for each of its routes on a
/// path the route matches, asked with each method in turn (see the module
/// docs); panics with the request and the table at the first disagreement.
pub fn check(table: &Table) {
    quiet_planned_panics();
    let built = router(table);
    let mut service = built.router.clone();
    let routes: Vec<(Option<Verb>, String)> = table
        .routes
        .iter()
        .map(|route| (route.verb, pattern(&route.pattern)))
        .collect();
    let verbs = Verb::ALL;
    let requests = table.requests.iter().map(|spec| (spec.verb, uri(spec)));
    let own = (table.routes.iter().enumerate())
        .map(|(index, route)| (verbs[index % verbs.len()], filled(&route.pattern)));
    for (verb, uri) in requests.chain(own) {
        let method = verb.method();
        let Ok(request) = Request::builder()
            .method(method.clone())
            .uri(uri)
            .body(Body::empty())
        else {
            continue;
        };
        let path = request.uri().path().to_owned();
        let context = format!(
            "{method} {} in {routes:?}, hooks {:?}",
            request.uri(),
            table.hooks
        );
        let at = |method: &Method, path: &str| {
            (built.router.at(method, path)).map(|found| found.pattern().to_owned())
        };
        let found = at(&method, &path);
        let as_normal = at(&method, &normal(&path));
        assert_eq!(
            found, as_normal,
            "the normal form of the path finds another route: {context}"
        );
        // The methods whose lookup finds a route on the path; a WebSocket
        // route takes GET (and so HEAD).
        let mut reaching: BTreeSet<String> = verbs
            .iter()
            .map(|verb| verb.method())
            .filter(|other| at(other, &path).is_some())
            .map(|other| other.to_string())
            .collect();
        if built.websockets.at(&Method::GET, &path).is_some() {
            reaching.extend(["GET".to_owned(), "HEAD".to_owned()]);
        }
        let outcome = exchange(&mut service, request);
        assert!(
            outcome.pending <= outcome.suspended,
            "pending {} times for {} suspended steps: {context}",
            outcome.pending,
            outcome.suspended
        );
        // The prefix or postfix that ended its chain, if one did: the last
        // of its kind to run, and the only one of them that answered or
        // panicked.
        let ended = |kind| {
            let of_kind: Vec<usize> = (outcome.ran.iter().copied())
                .filter(|&index| table.hooks[index].kind == kind)
                .collect();
            let ends = |index: &usize| table.hooks[*index].answers || table.hooks[*index].panics;
            let (last, before) = of_kind.split_last()?;
            assert!(
                !before.iter().any(ends),
                "a {kind:?} ran after one ended: {context}"
            );
            ends(last).then_some(*last)
        };
        let by_prefix = ended(Kind::Prefix);
        let handler_panicked = by_prefix.is_none()
            && found
                .as_deref()
                .is_some_and(|pattern| built.panics(&method, pattern));
        let by_postfix = if handler_panicked {
            None
        } else {
            ended(Kind::Postfix)
        };
        let answer = |kind, index: usize| match table.hooks[index].panics {
            true => internal_error(),
            false => early(kind, index),
        };
        let early = match (by_prefix, by_postfix) {
            (Some(index), _) => Some(answer(Kind::Prefix, index)),
            _ if handler_panicked => Some(internal_error()),
            (None, Some(index)) => Some(answer(Kind::Postfix, index)),
            (None, None) => None,
        };
        match early {
            Some(early) => check_early(&method, early, &outcome, &context),
            // A plain GET (or HEAD) that no route answers, to a path a
            // WebSocket route takes: 426, whatever other methods reach.
            None if found.is_none()
                && (method == Method::GET || method == Method::HEAD)
                && built.websockets.at(&Method::GET, &path).is_some() =>
            {
                assert_eq!(outcome.status, StatusCode::UPGRADE_REQUIRED, "{context}");
                assert_eq!(outcome.upgrade.as_deref(), Some("websocket"), "{context}");
            }
            None => check_answer(&method, found.as_deref(), &reaching, &outcome, &context),
        }
        let prefixes: BTreeSet<String> = (outcome.ran.iter())
            .filter(|&&index| table.hooks[index].kind == Kind::Prefix)
            .map(|&index| staged(index))
            .collect();
        assert_eq!(outcome.staged, prefixes, "staged headers: {context}");
        let routed = found.is_some();
        let runs = |kind| match kind {
            Kind::Prefix => routed || method == Method::OPTIONS,
            Kind::Postfix => routed && by_prefix.is_none() && !handler_panicked,
            Kind::Monitor => true,
        };
        // Whether every hook of the kind that applies runs: none after one
        // that ended its chain. A monitor's panic ends nothing.
        let all_run = |kind| match kind {
            Kind::Prefix => by_prefix.is_none(),
            Kind::Postfix => by_postfix.is_none(),
            Kind::Monitor => true,
        };
        check_hooks(&table.hooks, &outcome.ran, runs, all_run, &context);
        // Every monitor sees the status that goes out, and a failure where
        // a prefix, the handler or a postfix panicked, naming the step, or
        // answered an error value (a postfix always answers `Err`, an
        // asynchronous prefix too).
        let panicked = |by: Option<usize>| by.is_some_and(|index| table.hooks[index].panics);
        let erred = |by: Option<usize>, kind| {
            by.is_some_and(|index| kind == Kind::Postfix || table.hooks[index].suspends)
        };
        let failed = if panicked(by_prefix) {
            Some("prefix")
        } else if erred(by_prefix, Kind::Prefix) {
            Some("prefix error")
        } else if handler_panicked {
            Some("handler")
        } else if panicked(by_postfix) {
            Some("postfix")
        } else if erred(by_postfix, Kind::Postfix) {
            Some("postfix error")
        } else {
            None
        };
        for &seen in &outcome.seen {
            assert_eq!(
                seen,
                (Some(outcome.status), failed),
                "what a monitor saw: {context}"
            );
        }
    }
}

/// The answer of a prefix or postfix that answered: `expected`, with no
/// body for HEAD.
fn check_early(method: &Method, expected: (StatusCode, String), outcome: &Outcome, context: &str) {
    let (status, text) = expected;
    assert_eq!(outcome.status, status, "{context}");
    if *method == Method::HEAD {
        assert!(
            outcome.body.is_empty(),
            "a HEAD answer with a body: {context}"
        );
        assert_eq!(
            outcome.length,
            Some(text.len()),
            "HEAD's content-length: {context}"
        );
    } else {
        assert_eq!(outcome.body, text, "{context}");
    }
}

/// The answer to a request for which the lookup found the route of
/// `found`, with `reaching` the methods that find a route on its path.
fn check_answer(
    method: &Method,
    found: Option<&str>,
    reaching: &BTreeSet<String>,
    outcome: &Outcome,
    context: &str,
) {
    let Some(pattern) = found else {
        if reaching.is_empty() {
            assert_eq!(outcome.status, StatusCode::NOT_FOUND, "{context}");
            assert_eq!(outcome.allow, None, "{context}");
            return;
        }
        let mut allow = reaching.clone();
        let status = if *method == Method::OPTIONS {
            allow.insert("OPTIONS".to_owned());
            StatusCode::NO_CONTENT
        } else {
            StatusCode::METHOD_NOT_ALLOWED
        };
        assert_eq!(outcome.status, status, "{context}");
        assert_eq!(outcome.allow.as_ref(), Some(&allow), "Allow: {context}");
        return;
    };
    assert_eq!(outcome.status, StatusCode::OK, "{context}");
    if *method == Method::HEAD {
        // The route's answer is its method (or `*`), a space and its
        // pattern: HEAD keeps that length and sends none of it.
        assert!(
            outcome.body.is_empty(),
            "a HEAD answer with a body: {context}"
        );
        let length = outcome.length.expect("HEAD keeps the content length");
        let answers = ["GET", "HEAD", "*"].map(|by| by.len() + 1 + pattern.len());
        assert!(
            answers.contains(&length),
            "HEAD's content-length {length}: {context}"
        );
        return;
    }
    let (by, answered) = outcome.body.split_once(' ').expect("a route's answer");
    assert_eq!(answered, pattern, "another route answered: {context}");
    assert!(
        by == "*" || by == method.as_str(),
        "a {by} route answered: {context}"
    );
}

/// The hooks that ran: by kind, each kind in running order; none of a
/// kind that does not `run` for the request, and every hook on `/` for
/// any method of a kind that does.
fn check_hooks(
    hooks: &[HookSpec],
    ran: &[usize],
    runs: impl Fn(Kind) -> bool,
    all_run: impl Fn(Kind) -> bool,
    context: &str,
) {
    let key = |index: usize| {
        let hook = &hooks[index];
        (
            hook.kind,
            hook.priority % 5,
            hook.verb.is_none(),
            depth(&hook.pattern),
            index,
        )
    };
    for pair in ran.windows(2) {
        let (a, b) = (key(pair[0]), key(pair[1]));
        assert!(
            a.0 <= b.0,
            "a {:?} ran before a {:?}: {ran:?}, {context}",
            a.0,
            b.0
        );
        // The depth of a pattern with raw text is not known here.
        if a.0 == b.0 && a.3.is_some() && b.3.is_some() {
            assert!(
                a < b,
                "hooks {} and {} out of order: {ran:?}, {context}",
                pair[0],
                pair[1]
            );
        }
    }
    for (index, hook) in hooks.iter().enumerate() {
        if !runs(hook.kind) {
            assert!(
                !ran.contains(&index),
                "hook {index} ran: {ran:?}, {context}"
            );
        } else if hook.pattern.is_empty() && hook.verb.is_none() && all_run(hook.kind) {
            assert!(
                ran.contains(&index),
                "hook {index} on / did not run: {ran:?}, {context}"
            );
        }
    }
}
