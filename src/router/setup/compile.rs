//! Setup time: what [`Router::compile`] makes of a [`Router`] — the
//! compiled tables, one module added or taken away at a time.

use std::sync::Arc;

use http::Method;

use crate::handler::{Extraction, NESTED_PATTERN_END, RouteInfo, StateType};

use super::{
    builder::{
        DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, HookSpec, OwnState, Responder, RouteSettings,
        RouteSpec, Router,
    },
    error::RouteError,
};
#[cfg(feature = "ws")]
use crate::router::request::compiled::WebSocketRoute;
use crate::router::request::{
    compiled::{
        Applied, CompiledRoute, CompiledRouter, Fallback, Handling, Hook, Hooks, ModuleState,
        Tables,
    },
    erased::{ErasedMonitor, ErasedPostfix, ErasedPrefix},
    pattern::{Pattern, Segment, match_parts},
    service::{RouterIntoService, serves_requests},
    table::{FxHasher, Key, RouteId},
};

/// What one module added to the tables: what removing it takes away.
#[derive(Debug)]
pub(crate) struct Added {
    place: u32,
    /// Its routes, HTTP and WebSocket.
    routes: Vec<RouteId>,
    /// Whether it added hooks, state or fallbacks.
    hooks: bool,
    state: bool,
    fallbacks: bool,
    /// The state its handlers read, with the pattern of one that does.
    needs: Vec<(Arc<str>, StateType)>,
}

impl CompiledRoute {
    /// Whether a WebSocket handler answers it.
    fn is_websocket(&self) -> bool {
        !matches!(self.handling, Handling::Http(_))
    }
}

/// A pattern's parameter names, shared.
type Names = Arc<[Box<str>]>;

impl Extraction {
    /// What the extractors of a route with `settings` hold to; for a
    /// handler in tower layers, also what they hand it of its route: its
    /// pattern and its parameters' names, `layered`.
    fn of(
        settings: &RouteSettings,
        own_state: Option<&OwnState>,
        layered: Option<(Arc<str>, Names)>,
    ) -> Self {
        let own_state = own_state.map(|own| Arc::clone(&own.values));
        let limit = settings.body_limit.unwrap_or(DEFAULT_BODY_LIMIT);
        let timeout = settings.body_timeout.unwrap_or(DEFAULT_BODY_TIMEOUT);
        let rejection = settings.rejection.clone();
        let answers = settings.answers.unwrap_or_default();
        let layered = layered.map(|(pattern, names)| {
            let extraction = Extraction {
                limit,
                timeout,
                rejection: rejection.clone(),
                layered: None,
                answers,
                own_state: own_state.clone(),
            };
            Arc::new(RouteInfo {
                pattern,
                names,
                extraction,
            })
        });
        Self {
            limit,
            timeout,
            rejection,
            layered,
            answers,
            own_state,
        }
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

/// Parses `specs` into hooks of the module at `place`.
fn compile_hooks<H: ?Sized>(
    specs: Vec<HookSpec<H>>,
    place: u32,
) -> Result<Vec<Hook<H>>, RouteError> {
    (specs.into_iter().enumerate())
        .map(|(index, spec)| {
            Ok(Hook {
                pattern: Pattern::parse(&spec.scope.pattern)?,
                methods: spec.scope.methods.into(),
                priority: spec.scope.priority,
                hook: spec.hook,
                body_end: spec.body_end,
                key: key(place, index),
                own_state: spec.own_state.map(|own| Arc::clone(&own.values)),
            })
        })
        .collect()
}

/// The key of the `index`th route or hook of the module at `place`.
fn key(place: u32, index: usize) -> Key {
    u64::from(place) << 32 | index as u64
}

/// The place of the module that registered what has `key`.
fn place_of(key: Key) -> u32 {
    (key >> 32) as u32
}

/// The static bytes a pattern starts with: `/` and its static segments up
/// to the first that is not, without the `/` before that one; empty for
/// `/`. Every route a hook may apply to is among those the table finds
/// for its scope's bytes (see `Table::visit_covering`).
fn static_start(pattern: &Pattern) -> String {
    let mut text = String::new();
    for segment in &pattern.segments {
        let Segment::Static(static_text) = segment else {
            break;
        };
        text.push('/');
        text.push_str(static_text);
    }
    text
}

/// The hooks of `hooks` that may apply to a route on `method` (`None`: any)
/// and `pattern`, in running order.
fn applied<H: ?Sized>(
    hooks: &Hooks<H>,
    method: Option<&Method>,
    pattern: &Pattern,
) -> Box<[Applied]> {
    let mut applied: Vec<(&Hook<H>, Applied)> = hooks
        .iter()
        .filter(|(_, hook)| match method {
            None => true,
            Some(ours) => {
                hook.methods.is_empty()
                    || (hook.methods.iter()).any(|theirs| {
                        theirs == ours || (*ours == Method::GET && *theirs == Method::HEAD)
                    })
            }
        })
        .filter_map(|(id, hook)| {
            let check = match relation(&hook.pattern.segments, &pattern.segments) {
                Relation::Never => return None,
                Relation::Maybe => true,
                Relation::Always => !hook.pattern.names.is_empty(),
            };
            // A hook for the route's own method applies to every request
            // the route answers (a GET route also answers HEAD, which a
            // GET hook sees too); any other method is checked per request.
            let check = check
                || !hook.methods.is_empty()
                    && !method.is_some_and(|ours| hook.methods.contains(ours));
            let hook_id = u32::try_from(id).expect("fewer than 2^32 hooks");
            Some((
                hook,
                Applied {
                    hook: hook_id,
                    check,
                },
            ))
        })
        .collect();
    applied.sort_by_key(|&(hook, _)| hook.order());
    applied.into_iter().map(|(_, applied)| applied).collect()
}

/// The hooks of each kind that may apply to `route`: for an HTTP route
/// prefixes, postfixes and monitors, for a WebSocket route (whose
/// response is the handshake's) prefixes and monitors.
fn hook_lists(inner: &Tables, route: &mut CompiledRoute) {
    let (method, pattern) = (route.method.as_ref(), &route.pattern);
    route.prefixes = applied(&inner.prefixes, method, pattern);
    route.monitors = applied(&inner.monitors, method, pattern);
    if !route.is_websocket() {
        route.postfixes = applied(&inner.postfixes, method, pattern);
    }
}

/// The module being added, as its steps read it.
struct Adding<'a> {
    place: u32,
    /// The router's settings over the outer routers'.
    settings: RouteSettings,
    /// State types the handlers may read besides what the tables hold.
    also_held: &'a [StateType],
}

/// A module's hooks, compiled.
struct ModuleHooks {
    prefixes: Vec<Hook<dyn ErasedPrefix>>,
    postfixes: Vec<Hook<dyn ErasedPostfix>>,
    monitors: Vec<Hook<dyn ErasedMonitor>>,
}

impl ModuleHooks {
    fn is_empty(&self) -> bool {
        self.prefixes.is_empty() && self.postfixes.is_empty() && self.monitors.is_empty()
    }
}

/// A handler that answers below `base` rather than at a route (a fallback,
/// the handler of 405s), as the tables hold it: the `index`-th of its
/// kind in the module. None for a WebSocket handler, which answers no
/// such request.
fn fallback(module: &Adding<'_>, spec: RouteSpec, base: Pattern, index: usize) -> Option<Fallback> {
    match spec.endpoint {
        Responder::Http(handler) => {
            // A handler in tower layers is handed its base's parameter names.
            let layered = handler
                .layered()
                .then(|| (Arc::from(""), Arc::clone(&base.names)));
            Some(Fallback {
                extraction: Extraction::of(
                    &spec.settings.or(&module.settings),
                    spec.own_state.as_deref(),
                    layered,
                ),
                base,
                handler,
                key: key(module.place, index),
            })
        }
        #[cfg(feature = "ws")]
        Responder::WebSocket(_) => None,
    }
}

impl Tables {
    /// Adds `router`'s routes, hooks, state and fallbacks, as the module at
    /// `place` in registration order (the base is at 0): its routes take
    /// `outer`'s settings where neither they nor `router` set one, and may
    /// read state of the types `also_held` besides what the tables hold.
    ///
    /// Costs what the module holds: each route is laid into the tables
    /// along its path, and checked against every hook; each hook against
    /// the routes under its scope. On an error, `self` may be left
    /// part-changed: the caller drops it.
    pub(crate) fn add(
        &mut self,
        router: Router,
        place: u32,
        outer: &RouteSettings,
        also_held: &[StateType],
    ) -> Result<Added, RouteError> {
        let Router {
            routes,
            prefixes,
            postfixes,
            monitors,
            state,
            state_types,
            settings,
            fallback,
            nested_fallbacks,
            method_not_allowed,
            // A module's layers wrap its routes and fallbacks already; the
            // router's own answers are the root's.
            default_layers: _,
            compiled: _,
            given: _,
            duplicate_state,
        } = router;
        if let Some(name) = duplicate_state {
            return Err(RouteError::DuplicateState { name });
        }
        let module = Adding {
            place,
            settings: settings.or(outer),
            also_held,
        };
        let hooks = ModuleHooks {
            prefixes: compile_hooks(prefixes, place)?,
            postfixes: compile_hooks(postfixes, place)?,
            monitors: compile_hooks(monitors, place)?,
        };
        let mut added = Added {
            place,
            routes: Vec::with_capacity(routes.len()),
            hooks: !hooks.is_empty(),
            state: !state_types.is_empty(),
            fallbacks: fallback.is_some() || !nested_fallbacks.is_empty(),
            needs: Vec::new(),
        };
        self.add_state(place, state_types, state)?;
        let own = fallback.map(|spec| ("/".to_owned(), spec));
        self.add_fallbacks(&module, &mut added, own.into_iter().chain(nested_fallbacks))?;
        self.add_method_not_allowed(&module, &mut added, method_not_allowed)?;
        // The hooks, and those of the routes already in that they apply
        // to: before this module's routes, which are checked against every
        // hook as they come in.
        self.add_hooks(hooks);
        self.add_routes(&module, &mut added, routes)?;
        Ok(added)
    }

    /// Adds a module's state, refused if the tables hold a type of it.
    fn add_state(
        &mut self,
        place: u32,
        types: Vec<StateType>,
        values: http::Extensions,
    ) -> Result<(), RouteError> {
        if let Some((_, name)) = types.iter().find(|(id, _)| self.holds(id)) {
            return Err(RouteError::DuplicateState { name });
        }
        if !types.is_empty() {
            self.states
                .push((place, Arc::new(ModuleState { types, values })));
            self.states.sort_by_key(|&(place, _)| place);
            self.merge_states();
        }
        Ok(())
    }

    /// What a handler's extractors need that the tables, or its route
    /// with parameters of these `names`, do not give; the state it reads
    /// is noted in `added`.
    fn unmet(
        &self,
        module: &Adding<'_>,
        added: &mut Added,
        spec: &RouteSpec,
        names: &[Box<str>],
    ) -> Option<RouteError> {
        let held = |(id, _): &StateType| {
            self.holds(id)
                || module.also_held.iter().any(|(held, _)| held == id)
                || (spec.own_state.as_deref()).is_some_and(|own| own.holds(id))
        };
        for needed in &spec.needs.state {
            if !held(needed) {
                return Some(RouteError::MissingState {
                    pattern: spec.pattern.clone(),
                    name: needed.1,
                });
            }
            if !added.needs.iter().any(|(_, (id, _))| *id == needed.0) {
                added.needs.push((spec.pattern.as_str().into(), *needed));
            }
        }
        let path = spec.needs.path?;
        // The check runs the type's `Deserialize`: one that panics on the
        // value it is given settles nothing (and fails at request time
        // with a 500, as it would have).
        let reason = std::panic::catch_unwind(|| (path.misfit)(names)).ok()??;
        Some(RouteError::PathParameters {
            pattern: spec.pattern.clone(),
            type_name: path.type_name,
            reason,
        })
    }

    /// Adds a module's fallbacks, each with the base path it answers
    /// under, and keeps the fallbacks deepest first, then in registration
    /// order.
    fn add_fallbacks(
        &mut self,
        module: &Adding<'_>,
        added: &mut Added,
        fallbacks: impl Iterator<Item = (String, RouteSpec)>,
    ) -> Result<(), RouteError> {
        for (index, (base, spec)) in fallbacks.enumerate() {
            let base = Pattern::parse(&base)?;
            // A fallback takes the parameters of its base.
            if let Some(error) = self.unmet(module, added, &spec, &base.names) {
                return Err(error);
            }
            if spec.needs.matched_path {
                return Err(RouteError::FallbackMatchedPath {
                    base: base.source.to_string(),
                });
            }
            if (self.fallbacks.iter()).any(|seen| seen.base.source == base.source) {
                return Err(RouteError::DuplicateFallback {
                    base: base.source.to_string(),
                });
            }
            if let Some(fallback) = fallback(module, spec, base, index) {
                self.fallbacks.push(Arc::new(fallback));
            }
        }
        (self.fallbacks).sort_by_key(|f| (std::cmp::Reverse(f.base.segments.len()), f.key));
        Ok(())
    }

    /// Adds a module's handler of requests no route takes the method of
    /// (one in all the tables).
    fn add_method_not_allowed(
        &mut self,
        module: &Adding<'_>,
        added: &mut Added,
        specs: Vec<RouteSpec>,
    ) -> Result<(), RouteError> {
        for spec in specs {
            if self.method_not_allowed.is_some() {
                return Err(RouteError::DuplicateMethodNotAllowed);
            }
            if let Some(error) = self.unmet(module, added, &spec, &[]) {
                return Err(error);
            }
            if let Some(fallback) = fallback(module, spec, Pattern::parse("/")?, 0) {
                self.method_not_allowed = Some((module.place, Arc::new(fallback)));
            }
        }
        Ok(())
    }

    /// Adds a module's hooks, and each to the routes already in that it
    /// applies to.
    fn add_hooks(&mut self, hooks: ModuleHooks) {
        let ModuleHooks {
            prefixes,
            postfixes,
            monitors,
        } = hooks;
        let scopes: Vec<String> = (prefixes.iter().map(|h| static_start(&h.pattern)))
            .chain(postfixes.iter().map(|h| static_start(&h.pattern)))
            .chain(monitors.iter().map(|h| static_start(&h.pattern)))
            .collect();
        for hook in prefixes {
            self.prefixes.insert(Arc::new(hook));
        }
        for hook in postfixes {
            self.postfixes.insert(Arc::new(hook));
        }
        for hook in monitors {
            self.monitors.insert(Arc::new(hook));
        }
        self.rehook(&scopes);
    }

    /// Adds a module's routes to the tables, each with the hooks that
    /// apply to it, then settles the tables' static paths.
    fn add_routes(
        &mut self,
        module: &Adding<'_>,
        added: &mut Added,
        specs: Vec<RouteSpec>,
    ) -> Result<(), RouteError> {
        let mut statics: Vec<(bool, String)> = Vec::new();
        let mut texts = std::collections::HashSet::with_capacity_and_hasher(
            specs.len(),
            std::hash::BuildHasherDefault::<FxHasher>::default(),
        );
        for (index, spec) in specs.into_iter().enumerate() {
            let mut route = self.compile_route(module, added, index, spec, &mut texts)?;
            hook_lists(self, &mut route);
            let route = Arc::new(route);
            let id = self.routes.insert(route.clone());
            added.routes.push(id);
            let websocket = route.is_websocket();
            let target = match websocket {
                false => &mut self.table,
                true => &mut self.websockets,
            };
            if let Err(first) = target.insert(&route.pattern, route.method.as_ref(), id, route.key)
            {
                return Err(RouteError::DuplicateRoute {
                    method: route.method.as_ref().map_or("*", Method::as_str).to_owned(),
                    first: self.routes[first].pattern.source.to_string(),
                    second: route.pattern.source.to_string(),
                });
            }
            if let Some(path) = route.pattern.static_path() {
                statics.push((websocket, path));
            }
        }
        let paths = |websockets: bool| {
            (statics.iter())
                .filter(move |(ws, _)| *ws == websockets)
                .map(|(_, path)| path.as_str())
        };
        self.table.settle(paths(false));
        self.websockets.settle(paths(true));
        Ok(())
    }

    /// One route of a module as the tables hold it, its hooks not yet
    /// found: its pattern parsed (its texts shared through `texts`), its
    /// extractors' needs checked, its settings settled.
    fn compile_route(
        &self,
        module: &Adding<'_>,
        added: &mut Added,
        index: usize,
        spec: RouteSpec,
        texts: &mut std::collections::HashSet<Arc<str>, std::hash::BuildHasherDefault<FxHasher>>,
    ) -> Result<CompiledRoute, RouteError> {
        let mut pattern = Pattern::parse(&spec.pattern).map_err(|error| match spec.nested {
            true => nested(&spec.pattern, error),
            false => error,
        })?;
        pattern.intern(texts);
        if let Some(error) = self.unmet(module, added, &spec, &pattern.names) {
            return Err(error);
        }
        let settings = spec.settings.or(&module.settings);
        let (params_in_request, layered) = match &spec.endpoint {
            Responder::Http(handler) => (
                pattern.names.is_empty() || handler.reads_params_first(),
                handler.layered(),
            ),
            #[cfg(feature = "ws")]
            Responder::WebSocket(_) => (false, false),
        };
        let extraction = Extraction::of(
            &settings,
            spec.own_state.as_deref(),
            layered.then(|| (Arc::clone(&pattern.source), Arc::clone(&pattern.names))),
        );
        Ok(CompiledRoute {
            method: spec.method,
            key: key(module.place, index),
            handling: match spec.endpoint {
                Responder::Http(handler) => Handling::Http(handler),
                #[cfg(feature = "ws")]
                Responder::WebSocket(handler) => Handling::WebSocket(Box::new(WebSocketRoute {
                    handler,
                    limits: settings.websocket_limits.unwrap_or_default(),
                    protocols: (settings.websocket_protocols.clone())
                        .unwrap_or_else(|| Arc::new([])),
                })),
            },
            extraction,
            matched_path_in_response: settings.matched_path_in_response.unwrap_or(false),
            params_in_request,
            nested: spec.nested,
            prefixes: Box::default(),
            postfixes: Box::default(),
            monitors: Box::default(),
            pattern,
        })
    }

    /// Takes away what `added` added. Costs what the module held, and for
    /// its hooks the routes under their scopes.
    pub(crate) fn remove(&mut self, added: &Added) {
        for &id in &added.routes {
            let Some(route) = self.routes.remove(id) else {
                continue;
            };
            let table = match route.is_websocket() {
                false => &mut self.table,
                true => &mut self.websockets,
            };
            let removed = table.remove(&route.pattern, route.method.as_ref(), id, route.key);
            debug_assert!(removed, "a module's route is in the table");
        }
        if added.hooks {
            let mut scopes = Vec::new();
            remove_hooks(&mut self.prefixes, added.place, &mut scopes);
            remove_hooks(&mut self.postfixes, added.place, &mut scopes);
            remove_hooks(&mut self.monitors, added.place, &mut scopes);
            self.rehook(&scopes);
        }
        if added.state {
            self.states.retain(|&(place, _)| place != added.place);
            self.merge_states();
        }
        if added.fallbacks {
            (self.fallbacks).retain(|fallback| place_of(fallback.key) != added.place);
        }
        if (self.method_not_allowed)
            .as_ref()
            .is_some_and(|(place, _)| *place == added.place)
        {
            self.method_not_allowed = None;
        }
    }

    /// Finds again the hooks of the routes that hooks of `scopes` (their
    /// static starts) may apply to.
    fn rehook(&mut self, scopes: &[String]) {
        let mut covered = Vec::new();
        for scope in scopes {
            self.table.visit_covering(scope, |id| covered.push(id));
            self.websockets.visit_covering(scope, |id| covered.push(id));
        }
        covered.sort_unstable();
        covered.dedup();
        for id in covered {
            let mut route = CompiledRoute::clone(&self.routes[id]);
            hook_lists(self, &mut route);
            self.routes.set(id, Arc::new(route));
        }
    }

    /// Whether a module gave state of type `id`.
    fn holds(&self, id: &std::any::TypeId) -> bool {
        (self.states.iter()).any(|(_, given)| given.types.iter().any(|(held, _)| held == id))
    }

    /// Makes the state map again, from every module's.
    fn merge_states(&mut self) {
        let mut state = http::Extensions::new();
        for (_, given) in &self.states {
            state.extend(given.values.clone());
        }
        self.state = Arc::new(state);
    }

    /// The first state that a handler of `added` reads and no module
    /// gives any more, as the error it is.
    pub(crate) fn unmet_state(&self, added: &Added) -> Option<RouteError> {
        let (pattern, (_, name)) = (added.needs.iter()).find(|(_, (id, _))| !self.holds(id))?;
        Some(RouteError::MissingState {
            pattern: pattern.to_string(),
            name,
        })
    }
}

impl Added {
    /// The module's place in registration order.
    pub(crate) fn place(&self) -> u32 {
        self.place
    }

    /// Whether the module gave state: removing it may leave a handler
    /// without the state it reads.
    pub(crate) fn gave_state(&self) -> bool {
        self.state
    }
}

/// Removes the hooks of the module at `place`, adding their scopes'
/// static starts to `scopes`.
fn remove_hooks<H: ?Sized>(hooks: &mut Hooks<H>, place: u32, scopes: &mut Vec<String>) {
    let gone: Vec<usize> = (hooks.iter())
        .filter(|(_, hook)| place_of(hook.key) == place)
        .map(|(id, _)| id)
        .collect();
    for id in gone {
        if let Some(hook) = hooks.remove(id) {
            scopes.push(static_start(&hook.pattern));
        }
    }
}

impl Router {
    /// Validates every route and hook and compiles the table.
    ///
    /// Every mistake a router can hold is found here, before it serves a
    /// request: the compiled table answers each request without an error
    /// of its own.
    ///
    /// # Errors
    ///
    /// The first [`RouteError`]: a malformed pattern (of a route or a
    /// hook), a route registered twice for the same method and pattern, a
    /// state given twice or asked for and never given, a `Path` that cannot
    /// read its route's parameters whatever the path, a service nested
    /// below a catch-all. Its message names the pattern or the type.
    ///
    /// ```
    /// use pronghorn::{Router, RouteError, handler::State};
    ///
    /// let error = Router::new()
    ///     .get("/users/:id", || "one")
    ///     .compile()
    ///     .unwrap_err();
    /// assert!(matches!(error, RouteError::ForeignParameter { .. }));
    /// assert!(error.to_string().contains("write `{id}`"), "{error}");
    ///
    /// #[derive(Clone)]
    /// struct Db;
    /// let error = Router::new()
    ///     .get("/users", |_: State<Db>| "all")
    ///     .compile()
    ///     .unwrap_err();
    /// assert!(matches!(error, RouteError::MissingState { .. }));
    /// ```
    pub fn compile(self) -> Result<CompiledRouter, RouteError> {
        compile(self)
    }
}

impl Router {
    /// The router compiled for serving it as it is, once for it and the
    /// clones it shares the compiled router with.
    ///
    /// # Panics
    ///
    /// If the router does not compile, naming the error: a router served
    /// without [`compile`](Self::compile) is a mistake found at its first
    /// request, as axum finds its own at registration.
    fn served(&self) -> &CompiledRouter {
        self.compiled
            .0
            .get_or_init(|| match self.clone().compile() {
                Ok(router) => router,
                Err(error) => {
                    panic!("a `Router` served without `compile` does not compile: {error}")
                }
            })
    }

    /// The router, compiled, as a service of requests with one body type
    /// `B`: [`CompiledRouter::into_service`] for a router not yet
    /// compiled, as axum's `Router::into_service`.
    ///
    /// # Panics
    ///
    /// If the router does not compile; [`compile`](Self::compile) returns
    /// the error instead.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Body, Router};
    /// use tower::{Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut app = Router::new().get("/", || "home").into_service();
    /// let request = Request::get("/").body(Body::empty()).unwrap();
    /// let response = app.ready().await.unwrap().call(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// # }
    /// ```
    pub fn into_service<B>(self) -> RouterIntoService<B> {
        self.served().clone().into_service()
    }
}

serves_requests!(
    /// A router is a `Service` as it is, as axum's is: compiled at its first
    /// request, once for it and the clones it shares that with, so that an
    /// application's tests call `app().oneshot(request)` and `serve` takes
    /// `app()`. Compile it yourself ([`Router::compile`]) to handle its
    /// mistakes as errors: served as it is, a router that does not compile
    /// panics at its first request, naming the mistake.
    Router,
    |this| &this.served().inner
);

fn compile(router: Router) -> Result<CompiledRouter, RouteError> {
    let mut inner = Tables {
        answers: router.settings.answers.unwrap_or_default(),
        ..Tables::default()
    };
    inner.add(
        router.with_default_answers(),
        0,
        &RouteSettings::default(),
        &[],
    )?;
    Ok(CompiledRouter {
        inner: Arc::new(inner),
    })
}

/// The error of a service that `nest_service` mounted below a catch-all,
/// named for the base the user gave rather than for the catch-all
/// `nest_service` adds below it.
fn nested(pattern: &str, error: RouteError) -> RouteError {
    match (pattern.strip_suffix(NESTED_PATTERN_END), &error) {
        (Some(base), RouteError::AfterCatchAll { segment, .. })
            if NESTED_PATTERN_END.strip_prefix('/') == Some(segment.as_str()) =>
        {
            RouteError::NestedBelowCatchAll {
                base: base.to_owned(),
            }
        }
        _ => error,
    }
}
