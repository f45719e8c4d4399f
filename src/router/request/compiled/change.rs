//! The tables' write side: a module's parts laid in, and taken out again.
//!
//! Setup time compiles a module's routes, hooks, state and fallbacks and
//! hands them over here one kind at a time; what a module put in is
//! recorded in its [`ModuleParts`], which is what taking it out reads.
//! Each change costs what it changes: a route is laid into the table
//! along its path and checked against every hook; a hook against the
//! routes under its scope.

use std::sync::Arc;

use http::Method;

use crate::{
    handler::{Answers, StateType},
    router::request::{
        erased::{ErasedMonitor, ErasedPostfix, ErasedPrefix},
        pattern::{Pattern, Segment, match_parts},
        table::{Key, RouteId, Table},
    },
};

use super::{Applied, CompiledRoute, Fallback, Handling, Hook, Hooks, ModuleState, Tables};

/// Which of the tables holds a route.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TableKind {
    Routes,
    WebSockets,
    Slashed,
}

/// What one module put in the tables: what taking it out removes.
#[derive(Debug)]
pub(crate) struct ModuleParts {
    place: u32,
    /// Its routes, HTTP and WebSocket.
    routes: Vec<RouteId>,
    /// Whether it put in hooks, state or fallbacks.
    hooks: bool,
    state: bool,
    fallbacks: bool,
}

impl ModuleParts {
    /// The parts of the module at `place` in registration order (the base
    /// is at 0), before it puts anything in.
    pub(crate) fn new(place: u32) -> Self {
        Self {
            place,
            routes: Vec::new(),
            hooks: false,
            state: false,
            fallbacks: false,
        }
    }

    /// The module's place in registration order.
    pub(crate) fn place(&self) -> u32 {
        self.place
    }

    /// Whether the module gave state: taking it out may leave a handler
    /// without the state it reads.
    pub(crate) fn gave_state(&self) -> bool {
        self.state
    }
}

/// A route put in for a method and pattern another route holds: the ids
/// of both, the first's already in the tables.
#[derive(Debug)]
pub(crate) struct Clash {
    pub(in crate::router) first: RouteId,
    pub(in crate::router) second: RouteId,
}

impl CompiledRoute {
    /// Whether a WebSocket handler answers it.
    pub(crate) fn is_websocket(&self) -> bool {
        !matches!(self.handling, Handling::Http(_))
    }

    /// Whether its pattern ends with a slash (`/foo/`) after a segment of
    /// its own: not a catch-all's, nor a nested service's base.
    fn slashed(&self) -> bool {
        let source = &self.pattern.source();
        source.len() > 1
            && source.ends_with('/')
            && !self.nested
            && !(self.pattern.segments().iter()).any(|segment| matches!(segment, Segment::CatchAll))
    }
}

impl Tables {
    /// Whether a module gave state of type `id`.
    pub(crate) fn holds_state(&self, id: &std::any::TypeId) -> bool {
        (self.states.iter()).any(|(_, given)| given.types.iter().any(|(held, _)| held == id))
    }

    /// Puts in a module's state; the caller has checked that the tables
    /// hold no type of it.
    pub(crate) fn add_state(
        &mut self,
        parts: &mut ModuleParts,
        types: Vec<StateType>,
        values: http::Extensions,
    ) {
        if types.is_empty() {
            return;
        }
        parts.state = true;
        (self.states).push((parts.place, Arc::new(ModuleState { types, values })));
        self.states.sort_by_key(|&(place, _)| place);
        self.merge_states();
    }

    /// Whether a fallback answers below `base` (its source) already.
    pub(crate) fn has_fallback_at(&self, base: &str) -> bool {
        (self.fallbacks.iter()).any(|seen| &**seen.base.source() == base)
    }

    /// Puts in one of a module's fallbacks; they are put in order with
    /// the module's others ([`settle_fallbacks`](Self::settle_fallbacks)).
    pub(crate) fn add_fallback(&mut self, parts: &mut ModuleParts, fallback: Fallback) {
        parts.fallbacks = true;
        self.fallbacks.push(Arc::new(fallback));
    }

    /// Keeps the fallbacks deepest first, then in registration order.
    pub(crate) fn settle_fallbacks(&mut self) {
        (self.fallbacks).sort_by_key(|f| (std::cmp::Reverse(f.base.segments().len()), f.key));
    }

    /// Whether a module gave the handler of 405s (one in all the tables).
    pub(crate) fn has_method_not_allowed(&self) -> bool {
        self.method_not_allowed.is_some()
    }

    /// Puts in a module's handler of requests no route takes the method
    /// of.
    pub(crate) fn set_method_not_allowed(&mut self, parts: &ModuleParts, handler: Fallback) {
        self.method_not_allowed = Some((parts.place, Arc::new(handler)));
    }

    /// Puts in a module's hooks, and each into the lists of the routes
    /// already in that it applies to.
    pub(crate) fn add_hooks(
        &mut self,
        parts: &mut ModuleParts,
        prefixes: Vec<Hook<dyn ErasedPrefix>>,
        postfixes: Vec<Hook<dyn ErasedPostfix>>,
        monitors: Vec<Hook<dyn ErasedMonitor>>,
    ) {
        parts.hooks = !(prefixes.is_empty() && postfixes.is_empty() && monitors.is_empty());
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

    /// Puts in one of a module's routes with the hooks that apply to it;
    /// its static path is settled with the module's others
    /// ([`settle_routes`](Self::settle_routes)).
    pub(crate) fn add_route(
        &mut self,
        parts: &mut ModuleParts,
        mut route: CompiledRoute,
    ) -> Result<(), Clash> {
        hook_lists(self, &mut route);
        let route = Arc::new(route);
        let id = self.routes.insert(route.clone());
        parts.routes.push(id);
        (self
            .table_of(&route)
            .insert(&route.pattern, route.method.as_ref(), id, route.key))
        .map_err(|first| Clash { first, second: id })
    }

    /// The table that holds `route`.
    fn table_of(&mut self, route: &CompiledRoute) -> &mut Table {
        match self.kind_of(route) {
            TableKind::Routes => &mut self.table,
            TableKind::WebSockets => &mut self.websockets,
            TableKind::Slashed => &mut self.slashed,
        }
    }

    /// Which table holds `route`: the WebSocket routes', with axum's
    /// answers the routes' whose pattern ends with a slash, or the rest's.
    fn kind_of(&self, route: &CompiledRoute) -> TableKind {
        if route.is_websocket() {
            TableKind::WebSockets
        } else if self.answers == Answers::Axum && route.slashed() {
            TableKind::Slashed
        } else {
            TableKind::Routes
        }
    }

    /// Settles the static paths of the module's routes in the tables'
    /// index.
    pub(crate) fn settle_routes(&mut self, parts: &ModuleParts) {
        let statics: Vec<(TableKind, String)> = (parts.routes.iter())
            .filter_map(|&id| {
                let route = &self.routes[id];
                Some((self.kind_of(route), route.pattern.static_path()?))
            })
            .collect();
        let paths = |kind: TableKind| {
            (statics.iter())
                .filter(move |(of, _)| *of == kind)
                .map(|(_, path)| path.as_str())
        };
        self.table.settle(paths(TableKind::Routes));
        self.websockets.settle(paths(TableKind::WebSockets));
        self.slashed.settle(paths(TableKind::Slashed));
    }

    /// Takes out what the module of `parts` put in. Costs what the module
    /// held, and for its hooks the routes under their scopes.
    pub(crate) fn remove(&mut self, parts: &ModuleParts) {
        for &id in &parts.routes {
            let Some(route) = self.routes.remove(id) else {
                continue;
            };
            let table = self.table_of(&route);
            let removed = table.remove(&route.pattern, route.method.as_ref(), id, route.key);
            debug_assert!(removed, "a module's route is in the table");
        }
        if parts.hooks {
            let mut scopes = Vec::new();
            remove_hooks(&mut self.prefixes, parts.place, &mut scopes);
            remove_hooks(&mut self.postfixes, parts.place, &mut scopes);
            remove_hooks(&mut self.monitors, parts.place, &mut scopes);
            self.rehook(&scopes);
        }
        if parts.state {
            self.states.retain(|&(place, _)| place != parts.place);
            self.merge_states();
        }
        if parts.fallbacks {
            (self.fallbacks).retain(|fallback| place_of(fallback.key) != parts.place);
        }
        if (self.method_not_allowed)
            .as_ref()
            .is_some_and(|(place, _)| *place == parts.place)
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
            self.slashed.visit_covering(scope, |id| covered.push(id));
        }
        covered.sort_unstable();
        covered.dedup();
        for id in covered {
            let mut route = CompiledRoute::clone(&self.routes[id]);
            hook_lists(self, &mut route);
            self.routes.set(id, Arc::new(route));
        }
    }

    /// Makes the state map again, from every module's.
    fn merge_states(&mut self) {
        let mut state = http::Extensions::new();
        for (_, given) in &self.states {
            state.extend(given.values.clone());
        }
        self.state = Arc::new(state);
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

/// The key of the `index`th route or hook of the module at `place`.
pub(crate) fn key(place: u32, index: usize) -> Key {
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
    for segment in pattern.segments() {
        let Segment::Static(static_text) = segment else {
            break;
        };
        text.push('/');
        text.push_str(static_text);
    }
    text
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
            let check = match relation(hook.pattern.segments(), pattern.segments()) {
                Relation::Never => return None,
                Relation::Maybe => true,
                Relation::Always => !hook.pattern.names().is_empty(),
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
fn hook_lists(tables: &Tables, route: &mut CompiledRoute) {
    let (method, pattern) = (route.method.as_ref(), &route.pattern);
    route.prefixes = applied(&tables.prefixes, method, pattern);
    route.monitors = applied(&tables.monitors, method, pattern);
    if !route.is_websocket() {
        route.postfixes = applied(&tables.postfixes, method, pattern);
    }
}
