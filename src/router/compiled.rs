//! What [`Router::compile`](super::Router::compile) builds: the route
//! table, the hooks, and for each route the hooks that may apply to it, in
//! running order; and the lookups a request makes in them (its route, or
//! the answer no route gives, and which hooks run).

use std::sync::Arc;

use http::{HeaderValue, Method};

use super::{
    CompiledRouter, Priority, RouteError,
    builder::{Endpoint, HookSpec, Router},
    hook::{ErasedMonitor, ErasedPostfix, ErasedPrefix},
    params::{Captures, MAX_PATH, Params},
    pattern::{Pattern, Segment, match_parts},
    table::{Methods, RouteId, Table, catch_all_end, next_segment},
};
use crate::RequestHead;

/// A hook as compiled: its pattern, scope and the hook itself.
pub(super) struct Hook<H: ?Sized> {
    pub(super) pattern: Pattern,
    pub(super) method: Option<Method>,
    pub(super) priority: Priority,
    pub(super) hook: Arc<H>,
}

/// A hook that may apply to a route, in running order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Applied {
    pub(super) hook: u32,
    /// Whether the hook's method and pattern must be checked at request
    /// time: it may not apply, or it has parameters to bind.
    pub(super) check: bool,
}

/// A route as compiled: its pattern, what answers it, and the hooks of each
/// kind that may apply to it, in running order.
pub(super) struct CompiledRoute<B> {
    pub(super) pattern: Pattern,
    pub(super) endpoint: Endpoint<B>,
    pub(super) prefixes: Box<[Applied]>,
    pub(super) postfixes: Box<[Applied]>,
    pub(super) monitors: Box<[Applied]>,
}

/// The compiled router's tables, shared by its clones and by the requests
/// in flight on them.
pub(super) struct Inner<B> {
    pub(super) table: Table,
    /// WebSocket routes, found like GET routes among themselves.
    pub(super) websockets: Table,
    pub(super) routes: Vec<CompiledRoute<B>>,
    pub(super) prefixes: Vec<Hook<dyn ErasedPrefix<B>>>,
    pub(super) postfixes: Vec<Hook<dyn ErasedPostfix>>,
    pub(super) monitors: Vec<Hook<dyn ErasedMonitor>>,
    pub(super) state: http::Extensions,
    pub(super) body_limit: usize,
    pub(super) body_timeout: std::time::Duration,
    #[cfg(feature = "ws")]
    pub(super) websocket_limits: crate::ws::Limits,
    /// What this table was compiled from, for [`Reloadable`](super::Reloadable).
    pub(super) source: Router<B>,
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
pub(super) fn applied_at<H: ?Sized>(
    hooks: &[Hook<H>],
    methods: &[&Method],
    path: &str,
) -> Box<[Applied]> {
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
            body_timeout: router.body_timeout,
            #[cfg(feature = "ws")]
            websocket_limits: router.websocket_limits,
            source,
        }),
    })
}

/// What the lookup decided for a request.
pub(super) enum Target {
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
    pub(super) fn lookup(
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
    pub(super) fn find(
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
        let mut allow = |methods: &Methods| {
            for m in methods.methods() {
                if !allowed.contains(m) {
                    allowed.push(m.clone());
                }
            }
        };
        // A WebSocket route takes GET: another method there is a 405 too.
        self.table.visit_all(path, &mut allow);
        self.websockets.visit_all(path, &mut allow);
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
pub(super) fn next_hook<'r, H: ?Sized>(
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
pub(super) fn applies<H: ?Sized>(
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
