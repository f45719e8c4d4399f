//! Build time: what [`Router::compile`] builds from a [`Router`] — the
//! route table, the hooks, and for each route the hooks that may apply to
//! it, in running order.

use std::{sync::Arc, time::Duration};

use http::Method;

use crate::handler::{ErasedHandler, NESTED_PATTERN_END, StateType};

use super::{
    builder::{
        DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, Endpoint, HookSpec, RouteSettings, RouteSpec,
        Router,
    },
    error::RouteError,
    hooks::{ErasedMonitor, ErasedPostfix, ErasedPrefix},
    pattern::{Pattern, Segment, match_parts},
    scope::Priority,
    table::Table,
};

/// A compiled, immutable router: a tower `Service` that is always ready,
/// never fails (`Error = Infallible`) and clones by an `Arc` bump.
///
/// Built by [`Router::compile`](super::Router::compile); see the
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
pub struct CompiledRouter {
    pub(super) inner: Arc<Inner>,
}

impl Clone for CompiledRouter {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

/// A hook as compiled: its pattern, scope and the hook itself.
pub(super) struct Hook<H: ?Sized> {
    pub(super) pattern: Pattern,
    pub(super) method: Option<Method>,
    pub(super) priority: Priority,
    pub(super) hook: Arc<H>,
    /// A monitor called again when the response body ends.
    pub(super) body_end: bool,
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
pub(super) struct CompiledRoute {
    pub(super) pattern: Pattern,
    pub(super) endpoint: Endpoint,
    pub(super) body: BodyLimits,
    /// Whether its responses carry their `MatchedPath`.
    pub(super) matched_path_in_response: bool,
    #[cfg(feature = "ws")]
    pub(super) websocket_limits: crate::ws::Limits,
    #[cfg(feature = "ws")]
    pub(super) websocket_protocols: Arc<[Box<str>]>,
    pub(super) prefixes: Box<[Applied]>,
    pub(super) postfixes: Box<[Applied]>,
    pub(super) monitors: Box<[Applied]>,
}

/// The compiled router's tables, shared by its clones and by the requests
/// in flight on them.
pub(super) struct Inner {
    pub(super) table: Table,
    /// WebSocket routes, found like GET routes among themselves.
    pub(super) websockets: Table,
    pub(super) routes: Vec<CompiledRoute>,
    pub(super) prefixes: Vec<Hook<dyn ErasedPrefix>>,
    pub(super) postfixes: Vec<Hook<dyn ErasedPostfix>>,
    pub(super) monitors: Vec<Hook<dyn ErasedMonitor>>,
    pub(super) state: http::Extensions,
    /// What answers a path no route matches, in 404's stead: the fallback
    /// of the deepest base that covers the path, the first registered among
    /// bases of one depth.
    pub(super) fallbacks: Box<[Fallback]>,
}

/// A fallback as compiled: the base it answers below, and its handler.
pub(super) struct Fallback {
    pub(super) base: Pattern,
    pub(super) handler: Arc<dyn ErasedHandler>,
    pub(super) body: BodyLimits,
}

/// What a handler's body extractors hold to, for one route.
#[derive(Clone, Copy, Debug)]
pub(super) struct BodyLimits {
    pub(super) limit: usize,
    pub(super) timeout: Duration,
}

impl BodyLimits {
    /// The limits of a route with `settings`.
    fn of(settings: &RouteSettings) -> Self {
        Self {
            limit: settings.body_limit.unwrap_or(DEFAULT_BODY_LIMIT),
            timeout: settings.body_timeout.unwrap_or(DEFAULT_BODY_TIMEOUT),
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

fn compile_hooks<H: ?Sized>(specs: Vec<HookSpec<H>>) -> Result<Vec<Hook<H>>, RouteError> {
    specs
        .into_iter()
        .map(|spec| {
            Ok(Hook {
                pattern: Pattern::parse(&spec.scope.pattern)?,
                method: spec.scope.method,
                priority: spec.scope.priority,
                hook: spec.hook,
                body_end: spec.body_end,
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

pub(super) fn order_key<H: ?Sized>(hook: &Hook<H>, index: usize) -> (Priority, bool, usize, usize) {
    (
        hook.priority,
        hook.method.is_none(),
        hook.pattern.segments.len(),
        index,
    )
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

fn compile(router: Router) -> Result<CompiledRouter, RouteError> {
    let prefixes = compile_hooks(router.prefixes)?;
    let postfixes = compile_hooks(router.postfixes)?;
    let monitors = compile_hooks(router.monitors)?;
    let mut table = Table::default();
    #[cfg_attr(not(feature = "ws"), allow(unused_mut))]
    let mut websockets = Table::default();
    for (index, (id, name)) in router.state_types.iter().enumerate() {
        if router.state_types[..index]
            .iter()
            .any(|(seen, _)| seen == id)
        {
            return Err(RouteError::DuplicateState { name });
        }
    }
    let held = |(id, _): &StateType| router.state_types.iter().any(|(held, _)| held == id);
    // What a handler's extractors need that its router or its route, with
    // parameters of these names, does not give.
    let unmet = |spec: &RouteSpec, names: &[Box<str>]| {
        if let Some(&(_, name)) = spec.needs.state.iter().find(|&needed| !held(needed)) {
            return Some(RouteError::MissingState {
                pattern: spec.pattern.clone(),
                name,
            });
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
    };
    let mut fallbacks: Vec<Fallback> = Vec::new();
    let own = router.fallback.map(|spec| ("/".to_owned(), spec));
    for (base, spec) in own.into_iter().chain(router.nested_fallbacks) {
        let base = Pattern::parse(&base)?;
        // A fallback takes the parameters of its base.
        if let Some(error) = unmet(&spec, &base.names) {
            return Err(error);
        }
        if spec.needs.matched_path {
            return Err(RouteError::FallbackMatchedPath {
                base: base.source.to_string(),
            });
        }
        if fallbacks.iter().any(|seen| seen.base.source == base.source) {
            return Err(RouteError::DuplicateFallback {
                base: base.source.to_string(),
            });
        }
        match spec.endpoint {
            Endpoint::Http(handler) => fallbacks.push(Fallback {
                base,
                handler,
                body: BodyLimits::of(&spec.settings.or(&router.settings)),
            }),
            #[cfg(feature = "ws")]
            Endpoint::WebSocket(_) => {}
        }
    }
    // Deepest first; a stable sort keeps the order of registration.
    fallbacks.sort_by_key(|fallback| std::cmp::Reverse(fallback.base.segments.len()));
    let mut routes: Vec<CompiledRoute> = Vec::with_capacity(router.routes.len());
    for spec in router.routes {
        let pattern = Pattern::parse(&spec.pattern).map_err(|error| match spec.nested {
            true => nested(&spec.pattern, error),
            false => error,
        })?;
        if let Some(error) = unmet(&spec, &pattern.names) {
            return Err(error);
        }
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
        let settings = spec.settings.or(&router.settings);
        routes.push(CompiledRoute {
            prefixes: applied(&prefixes, spec.method.as_ref(), &pattern),
            postfixes,
            monitors: applied(&monitors, spec.method.as_ref(), &pattern),
            pattern,
            endpoint: spec.endpoint,
            body: BodyLimits::of(&settings),
            matched_path_in_response: settings.matched_path_in_response.unwrap_or(false),
            #[cfg(feature = "ws")]
            websocket_limits: settings.websocket_limits.unwrap_or_default(),
            #[cfg(feature = "ws")]
            websocket_protocols: settings.websocket_protocols.unwrap_or_else(|| Arc::new([])),
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
            fallbacks: fallbacks.into(),
        }),
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
