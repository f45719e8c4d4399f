//! Request time: the compiled router and its tables — the route table,
//! the hooks, and for each route the hooks that may apply to it, in
//! running order — with their one owner: the data here, behind private
//! fields; requests read it through the lookups (`lookup.rs`), setup time
//! changes it a module's part at a time (`change.rs`).

pub(crate) mod change;
pub(crate) mod handle;
pub(crate) mod lookup;

use std::sync::Arc;

use http::Method;

use crate::handler::{Answers, ErasedHandler, Extraction, StateType};

use super::{
    erased::{ErasedMonitor, ErasedPostfix, ErasedPrefix},
    pattern::Pattern,
    slab::Slab,
    table::{Key, RouteId, Table},
};

/// A compiled, immutable router: a tower `Service` that is always ready,
/// never fails (`Error = Infallible`) and clones by an `Arc` bump.
///
/// Built by [`Router::compile`](crate::router::Router::compile); see the
/// [module docs](crate::router) for the matching rules. A request whose
/// steps are all synchronous is answered inside `call`: its response
/// future is ready on its first poll.
///
/// ```
/// use std::{pin::pin, task::{Context, Poll, Waker}};
/// use http::{Request, StatusCode};
/// use pronghorn::Router;
/// use tower::Service;
///
/// let mut router = Router::new()
///     .get("/users/{id}", |id: pronghorn::handler::Path<u32>| format!("user {}", id.0))
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/users/7").body(String::new()).unwrap();
/// let future = pin!(router.call(request));
/// let Poll::Ready(Ok(response)) = future.poll(&mut Context::from_waker(Waker::noop())) else {
///     unreachable!("a synchronous request is answered in `call`");
/// };
/// assert_eq!(response.status(), StatusCode::OK);
///
/// // A path no route takes: 404; a method no route takes there: 405.
/// let request = Request::post("/users/7").body(String::new()).unwrap();
/// let future = pin!(router.call(request));
/// let Poll::Ready(Ok(response)) = future.poll(&mut Context::from_waker(Waker::noop())) else {
///     unreachable!();
/// };
/// assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
/// assert_eq!(response.headers()["allow"], "GET, HEAD");
/// ```
#[derive(Clone)]
pub struct CompiledRouter {
    tables: Arc<Tables>,
}

impl CompiledRouter {
    /// The router that serves `tables`.
    pub(crate) fn new(tables: Arc<Tables>) -> Self {
        Self { tables }
    }

    /// The tables it serves.
    #[inline(always)]
    pub(crate) fn tables(&self) -> &Arc<Tables> {
        &self.tables
    }

    /// The tables it serves, as they are shared.
    pub(crate) fn into_tables(self) -> Arc<Tables> {
        self.tables
    }
}

impl std::fmt::Debug for CompiledRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tables = &self.tables;
        let routes: Vec<_> = (tables.routes.iter())
            .map(|(_, route)| route.pattern.source())
            .collect();
        f.debug_struct("CompiledRouter")
            .field("routes", &routes)
            .field("prefixes", &tables.prefixes.len())
            .field("postfixes", &tables.postfixes.len())
            .field("monitors", &tables.monitors.len())
            .finish()
    }
}

/// When a hook runs among the hooks that apply: lower runs first.
///
/// Equal priorities keep their order of registration, method-specific
/// hooks before any-method ones and shallower patterns before deeper ones
/// (see the [module docs](crate::router)).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use http::{Request, Response};
/// use pronghorn::{Body, Router, router::{Priority, Route, Scope}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let order = Arc::new(Mutex::new(Vec::new()));
/// let hook = |name: &'static str| {
///     let order = order.clone();
///     move |_: &Route<'_>, _: &mut Response<Body>| order.lock().unwrap().push(name)
/// };
/// let router = Router::new()
///     .get("/", || "home")
///     .postfix("/", hook("normal"))
///     .postfix(Scope::new("/").priority(Priority::LOWEST), hook("lowest"))
///     .postfix(Scope::new("/").priority(Priority::HIGHEST), hook("highest"))
///     .compile()
///     .unwrap();
///
/// router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(*order.lock().unwrap(), ["highest", "normal", "lowest"]);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(u8);

impl Priority {
    /// Runs first.
    pub const HIGHEST: Self = Self(0);
    /// Runs before `NORMAL`.
    pub const HIGH: Self = Self(1);
    /// The default.
    pub const NORMAL: Self = Self(2);
    /// Runs after `NORMAL`.
    pub const LOW: Self = Self(3);
    /// Runs last.
    pub const LOWEST: Self = Self(4);
}

/// A hook as compiled: its pattern, scope and the hook itself.
pub(crate) struct Hook<H: ?Sized> {
    pattern: Pattern,
    /// The methods it applies to; none for any.
    methods: Box<[Method]>,
    priority: Priority,
    hook: Arc<H>,
    /// A monitor called again when the response body ends.
    body_end: bool,
    /// Its place in registration order: its module's, then its own among
    /// the module's hooks of its kind.
    key: Key,
    /// The state of the router it was registered in, when it is not the
    /// compiled router's.
    own_state: Option<Arc<http::Extensions>>,
}

impl<H: ?Sized> Hook<H> {
    /// A hook of `pattern` for `methods` (none for any), at `priority`,
    /// registered `key`-th, reading `own_state` first; a monitor that is
    /// called again at the body's end when `body_end`.
    #[allow(clippy::too_many_arguments, reason = "a record's fields, named")]
    pub(in crate::router) fn new(
        pattern: Pattern,
        methods: Box<[Method]>,
        priority: Priority,
        hook: Arc<H>,
        body_end: bool,
        key: Key,
        own_state: Option<Arc<http::Extensions>>,
    ) -> Self {
        Hook {
            pattern,
            methods,
            priority,
            hook,
            body_end,
            key,
            own_state,
        }
    }

    /// Its pattern.
    #[inline]
    pub(in crate::router) fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// The hook itself.
    #[inline]
    pub(in crate::router) fn hook(&self) -> &Arc<H> {
        &self.hook
    }

    /// Whether a monitor is called again when the response body ends.
    #[inline]
    pub(in crate::router) fn body_end(&self) -> bool {
        self.body_end
    }

    /// The state of the router it was registered in, when not the compiled router's.
    #[inline]
    pub(in crate::router) fn own_state(&self) -> Option<&Arc<http::Extensions>> {
        self.own_state.as_ref()
    }
}

impl<H: ?Sized> Hook<H> {
    /// Its place in running order: priority, a hook for a method before a
    /// hook for any, the shallower scope first, registration order.
    pub(crate) fn order(&self) -> (Priority, bool, usize, Key) {
        (
            self.priority,
            self.methods.is_empty(),
            self.pattern.segments().len(),
            self.key,
        )
    }
}

/// The hooks of one kind, by id.
pub(crate) type Hooks<H> = Slab<Hook<H>>;

/// A hook that may apply to a route, in running order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Applied {
    /// Its id in the router's hooks of its kind.
    hook: u32,
    /// Whether the hook's method and pattern must be checked at request
    /// time: it may not apply, or it has parameters to bind.
    check: bool,
}

/// A route as compiled: its pattern, what answers it, and the hooks of each
/// kind that may apply to it, in running order.
#[derive(Clone)]
pub(crate) struct CompiledRoute {
    pattern: Pattern,
    method: Option<Method>,
    /// Its place in registration order.
    key: Key,
    handling: Handling,
    /// What its extractors hold to: shared by the routes of a module that
    /// hold to the same.
    extraction: Arc<Extraction>,
    /// Whether its responses carry their `MatchedPath`.
    matched_path_in_response: bool,
    /// Whether its handler reads its parameters in the request as it is
    /// handed over (or it has none), not in a copy of the head.
    params_in_request: bool,
    /// Whether a service nested below its pattern answers it: its base and
    /// every path below, with or without a trailing slash.
    nested: bool,
    prefixes: Box<[Applied]>,
    postfixes: Box<[Applied]>,
    monitors: Box<[Applied]>,
}

impl CompiledRoute {
    /// Its pattern.
    #[inline]
    pub(in crate::router) fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// The method it answers; `None` for any.
    #[inline]
    pub(in crate::router) fn method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// What answers it.
    #[inline]
    pub(in crate::router) fn handling(&self) -> &Handling {
        &self.handling
    }

    /// What its extractors hold to.
    #[inline]
    pub(in crate::router) fn extraction(&self) -> &Arc<Extraction> {
        &self.extraction
    }

    /// Whether its responses carry their `MatchedPath`.
    #[inline]
    pub(in crate::router) fn matched_path_in_response(&self) -> bool {
        self.matched_path_in_response
    }

    /// Its prefixes, in running order.
    #[inline]
    pub(in crate::router) fn prefixes(&self) -> &[Applied] {
        &self.prefixes
    }

    /// Its postfixes, in running order.
    #[inline]
    pub(in crate::router) fn postfixes(&self) -> &[Applied] {
        &self.postfixes
    }

    /// Its monitors, in running order.
    #[inline]
    pub(in crate::router) fn monitors(&self) -> &[Applied] {
        &self.monitors
    }

    /// A route, its hooks not yet found.
    #[allow(clippy::too_many_arguments, reason = "a record's fields, named")]
    pub(in crate::router) fn new(
        pattern: Pattern,
        method: Option<Method>,
        key: Key,
        handling: Handling,
        extraction: Arc<Extraction>,
        matched_path_in_response: bool,
        params_in_request: bool,
        nested: bool,
    ) -> Self {
        Self {
            pattern,
            method,
            key,
            handling,
            extraction,
            matched_path_in_response,
            params_in_request,
            nested,
            prefixes: Box::default(),
            postfixes: Box::default(),
            monitors: Box::default(),
        }
    }

    /// What answers another method on its path, in the layers of its
    /// `route_layer`s: `None` when none wraps it.
    pub(crate) fn refusal(&self) -> Option<&Arc<dyn ErasedHandler>> {
        let info = self.extraction.layered()?;
        info.refusal().map(|refusal| &refusal.0)
    }

    /// Whether a request it answers needs a copy of its head, as received:
    /// for its hooks, which see the request as received whatever a prefix
    /// did to it, or for its parameters when its handler does not read
    /// them first in the request (a WebSocket handshake, a handler of the
    /// user's own). A route with neither pays for no copy.
    #[inline]
    pub(crate) fn needs_head(&self) -> bool {
        !(self.params_in_request
            && self.prefixes.is_empty()
            && self.postfixes.is_empty()
            && self.monitors.is_empty())
    }
}

/// How a compiled route is answered: by an HTTP handler, or by a
/// WebSocket handler after the handshake.
#[derive(Clone)]
pub(crate) enum Handling {
    Http(Arc<dyn ErasedHandler>),
    /// A WebSocket handler, with its settings: boxed, so that the many
    /// HTTP routes do not carry them.
    #[cfg(feature = "ws")]
    WebSocket(Box<WebSocketRoute>),
}

/// A WebSocket route's handler and settings.
#[cfg(feature = "ws")]
#[derive(Clone)]
pub(crate) struct WebSocketRoute {
    handler: Arc<crate::ws::ErasedWebSocket>,
    limits: crate::ws::Limits,
    protocols: Arc<[Box<str>]>,
}

#[cfg(feature = "ws")]
impl WebSocketRoute {
    /// A WebSocket route's handler, its connections' limits and the
    /// subprotocols it speaks.
    pub(in crate::router) fn new(
        handler: Arc<crate::ws::ErasedWebSocket>,
        limits: crate::ws::Limits,
        protocols: Arc<[Box<str>]>,
    ) -> Self {
        WebSocketRoute {
            handler,
            limits,
            protocols,
        }
    }

    /// Its handler.
    #[inline]
    pub(in crate::router) fn handler(&self) -> &Arc<crate::ws::ErasedWebSocket> {
        &self.handler
    }

    /// Its connections' limits.
    #[inline]
    pub(in crate::router) fn limits(&self) -> &crate::ws::Limits {
        &self.limits
    }

    /// The subprotocols it speaks.
    #[inline]
    pub(in crate::router) fn protocols(&self) -> &Arc<[Box<str>]> {
        &self.protocols
    }
}

/// The compiled router's tables, shared by its clones and by the requests
/// in flight on them.
///
/// Every part is persistent (see [`Table`] and [`Slab`]): a clone shares
/// all of it, and a change to the clone copies only what it changes. A
/// [`Reloadable`](crate::router::Reloadable) changes a clone of the live tables and
/// makes it live.
#[derive(Clone, Default)]
pub(crate) struct Tables {
    table: Table,
    /// WebSocket routes, found like GET routes among themselves.
    websockets: Table,
    /// With axum's answers, the routes whose pattern ends with a slash
    /// (`/foo/`), apart from those without (`/foo`): axum's are two routes.
    slashed: Table,
    routes: Slab<CompiledRoute>,
    prefixes: Hooks<dyn ErasedPrefix>,
    postfixes: Hooks<dyn ErasedPostfix>,
    monitors: Hooks<dyn ErasedMonitor>,
    /// The state of every module, in one map.
    state: Arc<http::Extensions>,
    /// What answers a path no route matches, in 404's stead: the fallback
    /// of the deepest base that covers the path, the first registered among
    /// bases of one depth.
    fallbacks: Vec<Arc<Fallback>>,
    /// What answers in 405's stead, if a module said, and the module's
    /// place.
    method_not_allowed: Option<(u32, Arc<Fallback>)>,
    /// The state each module gave, by module place: what `state` is made
    /// of again when a module goes.
    states: Vec<(u32, Arc<ModuleState>)>,
    /// The conventions of the answers no route gives, and of paths.
    answers: Answers,
}

impl Tables {
    /// Empty tables, whose router answers by `answers`' conventions.
    pub(crate) fn new(answers: Answers) -> Self {
        let table = || match answers {
            Answers::Axum => Table::literal_first(),
            Answers::Pronghorn => Table::default(),
        };
        Self {
            answers,
            table: table(),
            websockets: table(),
            slashed: table(),
            ..Self::default()
        }
    }

    /// The route of `id`.
    #[inline(always)]
    pub(crate) fn route(&self, id: RouteId) -> &CompiledRoute {
        &self.routes[id]
    }

    /// The hooks of each kind, by id.
    #[inline(always)]
    pub(crate) fn prefixes(&self) -> &Hooks<dyn ErasedPrefix> {
        &self.prefixes
    }

    #[inline(always)]
    pub(crate) fn postfixes(&self) -> &Hooks<dyn ErasedPostfix> {
        &self.postfixes
    }

    #[inline(always)]
    pub(crate) fn monitors(&self) -> &Hooks<dyn ErasedMonitor> {
        &self.monitors
    }

    /// The state of every module.
    #[inline(always)]
    pub(crate) fn state(&self) -> &Arc<http::Extensions> {
        &self.state
    }

    /// The fallback at `index`, deepest base first.
    pub(crate) fn fallback(&self, index: usize) -> &Fallback {
        &self.fallbacks[index]
    }

    /// What answers in 405's stead, if a module said.
    pub(crate) fn method_not_allowed(&self) -> Option<&Fallback> {
        self.method_not_allowed
            .as_ref()
            .map(|(_, handler)| &**handler)
    }

    /// The conventions of the answers no route gives, and of paths.
    #[inline(always)]
    pub(crate) fn answers(&self) -> Answers {
        self.answers
    }

    /// Whether any route is a WebSocket route.
    #[cfg(feature = "ws")]
    #[inline(always)]
    pub(crate) fn has_websockets(&self) -> bool {
        !self.websockets.is_empty()
    }
}

/// The state one module gave.
pub(crate) struct ModuleState {
    types: Vec<StateType>,
    values: http::Extensions,
}

/// A fallback as compiled: the base it answers below, and its handler.
pub(crate) struct Fallback {
    base: Pattern,
    handler: Arc<dyn ErasedHandler>,
    extraction: Extraction,
    key: Key,
    /// Whether it is the router's own answer in the layers of its
    /// `layer`s, not a handler of the user's.
    own: bool,
}

impl Fallback {
    /// A handler answering below `base`, registered `key`-th; `own` when
    /// it is the router's own answer.
    pub(in crate::router) fn new(
        base: Pattern,
        handler: Arc<dyn ErasedHandler>,
        extraction: Extraction,
        key: Key,
        own: bool,
    ) -> Self {
        Fallback {
            base,
            handler,
            extraction,
            key,
            own,
        }
    }

    /// The base it answers below.
    #[inline]
    pub(in crate::router) fn base(&self) -> &Pattern {
        &self.base
    }

    /// Its handler.
    #[inline]
    pub(in crate::router) fn handler(&self) -> &Arc<dyn ErasedHandler> {
        &self.handler
    }

    /// What its extractors hold to.
    #[inline]
    pub(in crate::router) fn extraction(&self) -> &Extraction {
        &self.extraction
    }

    /// Whether it is the router's own answer, not a handler of the user's.
    #[inline]
    pub(in crate::router) fn own(&self) -> bool {
        self.own
    }
}
