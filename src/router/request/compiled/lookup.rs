//! Request time: the lookups a request makes in the compiled router — its
//! route, or the answer no route gives — and which of the hooks that may
//! apply to it run.

use http::{HeaderValue, Method};

use super::{Applied, Hook, Hooks, Tables};
use crate::{
    handler::Answers,
    head::RequestHead,
    params::{Captures, MAX_PATH},
    router::request::{
        pattern::{Part, Pattern, Segment, match_parts},
        table::{Methods, RouteId, Table, catch_all_end, next_segment},
    },
};

/// What the lookup decided for a request.
pub(crate) enum Target {
    /// A route answers; `as_get` when a GET route answers a HEAD request.
    Route { id: RouteId, as_get: bool },
    /// No route for the method: 405, or for OPTIONS an automatic 204; both
    /// with `Allow`. `route` is the first of the routes the path matched.
    MethodNotAllowed {
        allow: HeaderValue,
        options: bool,
        route: RouteId,
    },
    /// No route for the path, and no fallback: 404.
    NotFound,
    /// No route for the path: the fallback at this index in
    /// `Tables::fallbacks` answers.
    Fallback { id: usize },
    /// A plain GET to a path only WebSocket routes answer: 426.
    UpgradeRequired { route: RouteId },
}

impl Target {
    /// The pattern monitors are told: the route's that answers, or that
    /// the path matched for an automatic OPTIONS answer or a 426. None for
    /// a 405 or a 404.
    #[inline]
    pub(crate) fn pattern<'r>(&self, router: &'r Tables) -> Option<&'r str> {
        match *self {
            Target::Route { id, .. }
            | Target::MethodNotAllowed {
                options: true,
                route: id,
                ..
            }
            | Target::UpgradeRequired { route: id } => Some(router.routes[id].pattern.source()),
            _ => None,
        }
    }
}

impl Tables {
    /// Finds the target of a request; `upgrade` when it asks for a
    /// WebSocket upgrade.
    pub(crate) fn lookup(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Target {
        if !is_path(path) {
            return self.not_found(path, captures);
        }
        if self.answers != Answers::Pronghorn {
            return self.strictly(method, path, upgrade, captures);
        }
        self.route_or_allow(method, path, upgrade, captures)
    }

    /// The route for the request, else the `Allow` answer of the path, or
    /// 404: the target as pronghorn's routes match.
    #[inline(always)]
    fn route_or_allow(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Target {
        (self.find(method, path, upgrade, captures))
            .unwrap_or_else(|| self.allow_or_not_found(method, path, captures))
    }

    /// The target as axum's routes match: the most specific path first,
    /// then the method among its routes (see [`path_first`](Self::path_first)),
    /// keeping a path's slashes: a trailing slash only where the route's
    /// pattern has one, and no empty segment but in a catch-all's part.
    #[cold]
    #[inline(never)]
    fn strictly(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Target {
        let target = self.path_first(method, path, upgrade, captures);
        let target = self.nested_fallback_over(target, path, captures);
        let route = match target {
            Target::Route { id, .. }
            | Target::MethodNotAllowed { route: id, .. }
            | Target::UpgradeRequired { route: id } => &self.routes[id],
            Target::NotFound | Target::Fallback { .. } => return target,
        };
        let pattern = &route.pattern;
        if route.nested
            || pattern
                .segments()
                .iter()
                .any(|s| matches!(s, Segment::CatchAll))
        {
            return target;
        }
        let slash = |text: &str| text.len() > 1 && text.ends_with('/');
        let trimmed = path.strip_suffix('/').unwrap_or(path);
        if slash(path) == slash(pattern.source()) && !trimmed.contains("//") {
            return target;
        }
        self.not_found(path, captures)
    }

    /// `target`, or the fallback of a nested router where its base is more
    /// specific than the route found: axum routes a nested router's
    /// fallback as `/base` and `/base/{*rest}`, so that `/nest/b` is the
    /// fallback's of a router nested at `/nest` rather than `/{x}/{y}`'s.
    fn nested_fallback_over(&self, target: Target, path: &str, captures: &mut Captures) -> Target {
        let (Target::Route { id, .. } | Target::MethodNotAllowed { route: id, .. }) = target else {
            return target;
        };
        let pattern = &self.routes[id].pattern;
        for (index, fallback) in self.fallbacks.iter().enumerate() {
            let base = &fallback.base;
            let mut own = Captures::new();
            if outranks(base, pattern) && match_hook(base, path, &mut own) {
                *captures = own;
                return Target::Fallback { id: index };
            }
        }
        target
    }

    /// The target as axum chooses it: the routes of the most specific path
    /// that has any, then among them the method's, else GET's for HEAD,
    /// else one for any method, else a 405 whose `Allow` names that
    /// path's methods alone, however many less specific paths would take
    /// the method.
    fn path_first(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Target {
        if let Some(target) = self.upgrade_route(method, path, upgrade, captures) {
            return target;
        }
        // A path with a trailing slash is a route's of its own first.
        if path.len() > 1 && path.ends_with('/') {
            if let Some(target) = self.most_specific(&self.slashed, method, path, captures) {
                return target;
            }
        }
        (self.most_specific(&self.table, method, path, captures))
            .or_else(|| self.find_otherwise(method, path, captures))
            .unwrap_or_else(|| self.allow_or_not_found(method, path, captures))
    }

    /// The target in `table` of the most specific path that has routes,
    /// as [`path_first`](Self::path_first) chooses it.
    fn most_specific(
        &self,
        table: &Table,
        method: &Method,
        path: &str,
        captures: &mut Captures,
    ) -> Option<Target> {
        let as_get = std::cell::Cell::new(false);
        let allowed = std::cell::RefCell::new(Vec::new());
        let found = table.find(path, captures, |methods| {
            allowed.borrow_mut().clear();
            if let Some(id) = methods.get(method) {
                return Some(id);
            }
            // GET's for HEAD before a handler of any method, as axum's
            // method router's fallback comes after them.
            if *method == Method::HEAD {
                if let Some(id) = methods.get(&Method::GET) {
                    as_get.set(true);
                    return Some(id);
                }
            }
            if let Some(id) = methods.any() {
                return Some(id);
            }
            allowed.borrow_mut().extend(methods.methods().cloned());
            methods.first()
        });
        let allowed = allowed.into_inner();
        Some(match found? {
            route if !allowed.is_empty() => self.allow(method, allowed, route),
            id => Target::Route {
                id,
                as_get: as_get.get(),
            },
        })
    }

    /// The target of a path no route matches: the fallback of the deepest
    /// base that covers it, with the base's parameters in `captures`, or
    /// 404. A target that is not a path (`*`) is below no base but the
    /// root.
    fn not_found(&self, path: &str, captures: &mut Captures) -> Target {
        let mut below = |base: &Pattern| match is_path(path) {
            true => match_hook(base, path, captures),
            false => base.segments().is_empty(),
        };
        match self
            .fallbacks
            .iter()
            .position(|fallback| below(&fallback.base))
        {
            Some(id) => Target::Fallback { id },
            None => Target::NotFound,
        }
    }

    /// The route for the request, or the upgrade it lacks; `None` when no
    /// route takes its method. `path` is a path: see [`is_path`].
    pub(crate) fn find(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Option<Target> {
        if let Some(target) = self.upgrade_route(method, path, upgrade, captures) {
            return Some(target);
        }
        let found = self
            .table
            .find(path, captures, |methods| methods.get(method));
        match found {
            Some(id) => Some(Target::Route { id, as_get: false }),
            None => self.find_otherwise(method, path, captures),
        }
    }

    /// The WebSocket route a GET asking for an upgrade (or an HTTP/2
    /// extended CONNECT) finds first, before any other.
    #[inline(always)]
    fn upgrade_route(
        &self,
        method: &Method,
        path: &str,
        upgrade: bool,
        captures: &mut Captures,
    ) -> Option<Target> {
        if !(upgrade && (*method == Method::GET || *method == Method::CONNECT)) {
            return None;
        }
        let id = self.find_websocket(path, captures)?;
        Some(Target::Route { id, as_get: false })
    }

    /// The WebSocket route for `path`.
    #[inline(never)]
    fn find_websocket(&self, path: &str, captures: &mut Captures) -> Option<RouteId> {
        (self.websockets).find(path, captures, |methods| methods.get(&Method::GET))
    }

    /// The route for a request that no route of its own method takes: one
    /// for any method, GET's for HEAD, or the WebSocket route a plain GET
    /// lacks the upgrade for.
    // Out of line and cold: a request its method's route answers never
    // comes here.
    #[cold]
    #[inline(never)]
    fn find_otherwise(
        &self,
        method: &Method,
        path: &str,
        captures: &mut Captures,
    ) -> Option<Target> {
        let route = |id| Some(Target::Route { id, as_get: false });
        let table = &self.table;
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
        if *method == Method::GET || *method == Method::HEAD {
            if let Some(route) = self.find_websocket(path, captures) {
                return Some(Target::UpgradeRequired { route });
            }
        }
        None
    }

    /// The `Allow` answer for a path that other methods reach, or 404.
    #[inline(never)]
    fn allow_or_not_found(&self, method: &Method, path: &str, captures: &mut Captures) -> Target {
        let mut allowed: Vec<Method> = Vec::new();
        let mut first = None;
        let mut allow = |methods: &Methods| {
            first = first.or(methods.first());
            for m in methods.methods() {
                if !allowed.contains(m) {
                    allowed.push(m.clone());
                }
            }
        };
        // A WebSocket route takes GET: another method there is a 405 too.
        self.table.visit_all(path, &mut allow);
        self.websockets.visit_all(path, &mut allow);
        let (false, Some(route)) = (allowed.is_empty(), first) else {
            return self.not_found(path, captures);
        };
        self.allow(method, allowed, route)
    }

    /// The 405 (or for OPTIONS, with pronghorn's answers, the automatic
    /// answer) of a path whose routes, the first of them `route`, take the
    /// methods `allowed`.
    fn allow(&self, method: &Method, mut allowed: Vec<Method>, route: RouteId) -> Target {
        let axum = self.answers == Answers::Axum;
        if !allowed.contains(&Method::HEAD) {
            // axum writes HEAD after the GET it comes with; pronghorn last.
            match allowed.iter().position(|m| *m == Method::GET) {
                Some(get) if axum => allowed.insert(get + 1, Method::HEAD),
                Some(_) => allowed.push(Method::HEAD),
                None => {}
            }
        }
        // axum answers OPTIONS as any other method no route takes.
        let options = *method == Method::OPTIONS && !axum;
        if options && !allowed.contains(&Method::OPTIONS) {
            allowed.push(Method::OPTIONS);
        }
        let separator = if axum { "," } else { ", " };
        let allow = allowed
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(separator);
        let allow = HeaderValue::from_str(&allow).expect("method names are valid header text");
        Target::MethodNotAllowed {
            allow,
            options,
            route,
        }
    }
}

/// Whether a nested fallback's `base`, routed as `base/{*rest}`, is more
/// specific than a route's `pattern` on a path both match: at the first
/// segment where they differ in kind, the base's is static where the
/// route's is a parameter, or a parameter with text where the route's is a
/// bare one. Where the base ends, its catch-all ranks below anything.
fn outranks(base: &Pattern, pattern: &Pattern) -> bool {
    let rank = |segment: Option<&Segment>| match segment {
        Some(Segment::Static(_)) => 0,
        Some(Segment::Dynamic(parts)) if parts.iter().any(|p| matches!(p, Part::Literal(_))) => 1,
        Some(Segment::Dynamic(_)) => 2,
        Some(Segment::CatchAll) | None => 3,
    };
    for (at, segment) in base.segments().iter().enumerate() {
        let (ours, theirs) = (rank(Some(segment)), rank(pattern.segments().get(at)));
        if ours != theirs {
            return ours < theirs;
        }
    }
    false
}

/// Whether a hook for `methods` (none: any) runs for the request of
/// `head` that found `target`: HEAD served by a GET route runs GET hooks.
fn method_applies(head: &RequestHead, target: &Target, methods: &[Method]) -> bool {
    methods.is_empty()
        || methods.iter().any(|method| {
            method == head.method()
                || matches!(target, Target::Route { as_get: true, .. }) && *method == Method::GET
        })
}

/// The next hook of `list` from `from` that applies to the request of
/// `head`, with its position in the list and its parameters bound in
/// `captures`. A request with hooks has a copy of its head; it is read
/// only for a hook that must be checked.
pub(crate) fn next_hook<'r, H: ?Sized>(
    hooks: &'r Hooks<H>,
    list: &[Applied],
    from: usize,
    head: Option<&RequestHead>,
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
pub(crate) fn applies<H: ?Sized>(
    applied: &Applied,
    hook: &Hook<H>,
    head: Option<&RequestHead>,
    target: &Target,
    captures: &mut Captures,
) -> bool {
    !applied.check || scope_takes(&hook.methods, &hook.pattern, head, target, captures)
}

/// Whether a hook's `methods` and `pattern` take the request, its
/// parameters bound in `captures`.
// Out of line: most hooks need no check, and the match's code would
// lengthen every run of the pipeline.
#[inline(never)]
fn scope_takes(
    methods: &[Method],
    pattern: &Pattern,
    head: Option<&RequestHead>,
    target: &Target,
    captures: &mut Captures,
) -> bool {
    let head = head.expect(COPIED);
    method_applies(head, target, methods) && match_hook(pattern, head.path(), captures)
}

/// Why a step that reads the copy of the request's head finds it: every
/// request that runs a hook has one.
pub(crate) const COPIED: &str = "a request with hooks has a copy of its head";

/// Whether a request's target is a path. `*` (of `OPTIONS *`) and the
/// `host:port` of a CONNECT are not: they name no route, not even a
/// catch-all at the root, which would take them for a segment.
pub(crate) fn is_path(target: &str) -> bool {
    target.starts_with('/')
}

/// Binds the parameters of a route's `pattern` in the `path` it matched.
pub(crate) fn bind(pattern: &Pattern, path: &str, captures: &mut Captures) {
    match_hook(pattern, path, captures);
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
    for segment in pattern.segments() {
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
                // The rest of the path, less the static suffix.
                let suffix = pattern
                    .suffix()
                    .into_iter()
                    .flat_map(|suffix| suffix.iter());
                return match catch_all_end(path, start, suffix.map(|text| &**text)) {
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

/// Every hook of `hooks` whose scope takes `methods` and `path`, in running
/// order: for answers that no route gives (404, 405, automatic OPTIONS).
pub(crate) fn applied_at<H: ?Sized>(
    hooks: &Hooks<H>,
    methods: &[&Method],
    path: &str,
) -> Box<[Applied]> {
    let mut captures = Captures::new();
    let mut found: Vec<(usize, &Hook<H>)> = (hooks.iter())
        .filter(|(_, hook)| {
            hook.methods.is_empty()
                || hook.methods.iter().any(|m| methods.contains(&m))
                    && match_hook(&hook.pattern, path, &mut captures)
        })
        .collect();
    found.sort_by_key(|(_, hook)| hook.order());
    found
        .into_iter()
        .map(|(id, _)| Applied {
            hook: id as u32,
            check: true,
        })
        .collect()
}
