use std::{fmt, marker::PhantomData, sync::Arc};

use http::Method;

use super::{error::RouteError, scope::Scope};
use crate::router::request::compiled::CompiledRouter;
use crate::router::request::pattern::Pattern;
use crate::router::request::{
    erased::{ErasedMonitor, ErasedPostfix, ErasedPrefix, TypedHook},
    route_hooks::{RoutePostfix, RoutePrefix},
};

use crate::{
    handler::{
        Answers, ByType, ErasedHandler, Handler, Mounted, NESTED_PATTERN_END, Needs, Nesting,
        Rejection, RouteLayer, RouteService, Shape, StateType, StripBase, TypedHandler, state_type,
        wrap,
    },
    monitor::route::RouteMonitor,
};

/// A tower layer given to [`Router::layer`], kept to wrap the router's own
/// 404 and 405 when it is compiled.
pub(crate) type DefaultLayer =
    Arc<dyn Fn(&Arc<dyn ErasedHandler>) -> Arc<dyn ErasedHandler> + Send + Sync>;

/// A router's settings for its routes, or a route's: `None` takes the
/// setting of the router it is nested in, and at the root the default.
#[derive(Clone, Debug, Default)]
pub(crate) struct RouteSettings {
    pub(super) body_limit: Option<usize>,
    pub(super) body_timeout: Option<std::time::Duration>,
    /// Whether routed responses carry their `MatchedPath`.
    pub(super) matched_path_in_response: Option<bool>,
    #[cfg(feature = "ws")]
    pub(super) websocket_limits: Option<crate::ws::Limits>,
    /// The subprotocols WebSocket routes speak, preferred first.
    #[cfg(feature = "ws")]
    pub(super) websocket_protocols: Option<Arc<[Box<str>]>>,
    /// How the extractors' rejections are answered.
    pub(super) rejection: Option<Shape>,
    /// The conventions the router answers by.
    pub(super) answers: Option<Answers>,
}

impl RouteSettings {
    /// These settings, with `outer`'s where these have none.
    pub(crate) fn or(self, outer: &RouteSettings) -> RouteSettings {
        RouteSettings {
            body_limit: self.body_limit.or(outer.body_limit),
            body_timeout: self.body_timeout.or(outer.body_timeout),
            matched_path_in_response: (self.matched_path_in_response)
                .or(outer.matched_path_in_response),
            #[cfg(feature = "ws")]
            websocket_limits: self.websocket_limits.or(outer.websocket_limits),
            #[cfg(feature = "ws")]
            websocket_protocols: (self.websocket_protocols)
                .or_else(|| outer.websocket_protocols.clone()),
            rejection: self.rejection.or_else(|| outer.rejection.clone()),
            answers: self.answers.or(outer.answers),
        }
    }
}

/// The state a nested or merged router gave, for its own routes and hooks
/// (with the state of the routers nested in it, theirs winning).
pub(crate) struct OwnState {
    pub(super) values: Arc<http::Extensions>,
    types: Vec<StateType>,
}

impl OwnState {
    /// The state a router's routes see: what it gave and what the routers
    /// nested in it gave.
    pub(super) fn of(values: http::Extensions, types: Vec<StateType>) -> Arc<Self> {
        Arc::new(Self {
            values: Arc::new(values),
            types,
        })
    }

    /// This state, and `inner`'s over it: the state of a router nested in
    /// this one.
    pub(super) fn under(self: &Arc<Self>, inner: Option<Arc<Self>>) -> Arc<Self> {
        let Some(inner) = inner else {
            return Arc::clone(self);
        };
        let mut values = (*self.values).clone();
        values.extend((*inner.values).clone());
        let mut types = inner.types.clone();
        types.extend(self.types.iter().filter(|(id, _)| !inner.holds(id)));
        Arc::new(Self {
            values: Arc::new(values),
            types,
        })
    }

    /// Whether it holds a state of the type `id`.
    pub(crate) fn holds(&self, id: &std::any::TypeId) -> bool {
        self.types.iter().any(|(held, _)| held == id)
    }
}

#[derive(Clone)]
pub(crate) struct RouteSpec {
    pub(super) method: Option<Method>,
    pub(super) pattern: String,
    pub(super) endpoint: Responder,
    /// What its handler's extractors need of the router and the route.
    pub(super) needs: Needs,
    /// A service mounted by `nest_service`, whose pattern ends with the
    /// catch-all of the path below its base.
    pub(super) nested: bool,
    /// The settings of the routers it was nested from; the innermost's win.
    pub(super) settings: RouteSettings,
    /// The state of the routers it was nested from, if they gave any.
    pub(super) own_state: Option<Arc<OwnState>>,
    /// Where it was nested.
    pub(super) nesting: Nesting,
    /// The layers its path's 405 goes through, as axum's does, innermost
    /// first: those of [`Router::route_layer`] given after it (`true`),
    /// and of [`Router::layer`] given after one of those.
    pub(super) refusal: Vec<(DefaultLayer, bool)>,
    /// One of the router's own answers (its 404 or 405 in the layers of
    /// its `layer`s), not a handler of the user's.
    pub(super) own_answer: bool,
}

/// What answers a route.
#[derive(Clone)]
pub(crate) enum Responder {
    Http(Arc<dyn ErasedHandler>),
    #[cfg(feature = "ws")]
    WebSocket(Arc<crate::ws::ErasedWebSocket>),
}

pub(crate) struct HookSpec<H: ?Sized> {
    pub(super) scope: Scope,
    pub(super) hook: Arc<H>,
    /// A monitor called again when the response body ends.
    pub(super) body_end: bool,
    /// The state of the routers it was nested from, if they gave any.
    pub(super) own_state: Option<Arc<OwnState>>,
}

impl<H: ?Sized> HookSpec<H> {
    /// The hook of a router nested in another: its scope rebased, its
    /// router's state over theirs.
    fn nested(
        self,
        rebase: &dyn Fn(Scope) -> Scope,
        own: &dyn Fn(Option<Arc<OwnState>>) -> Option<Arc<OwnState>>,
    ) -> Self {
        Self {
            scope: rebase(self.scope),
            own_state: own(self.own_state),
            ..self
        }
    }

    fn new(scope: Scope, hook: Arc<H>) -> Self {
        Self {
            scope,
            hook,
            body_end: false,
            own_state: None,
        }
    }
}

impl<H: ?Sized> Clone for HookSpec<H> {
    fn clone(&self) -> Self {
        Self {
            scope: self.scope.clone(),
            hook: self.hook.clone(),
            body_end: self.body_end,
            own_state: self.own_state.clone(),
        }
    }
}

/// `service` itself, when it is a [`Router`]: one given to `nest_service`
/// joins the app.
fn into_router<S: 'static>(service: S) -> Result<Router, S> {
    let mut slot = Some(service);
    let router = (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<Router>>()
        .and_then(Option::take);
    match (router, slot) {
        (Some(router), _) => Ok(router),
        (None, Some(service)) => Err(service),
        (None, None) => unreachable!("the slot is emptied only for a router"),
    }
}

/// `pattern` below a nest's `base`, joined as axum joins them: `/api` and
/// `/users` make `/api/users`, `/api` and `/` make `/api`, `/api/` and `/`
/// make `/api/`.
fn below_base(base: &str, pattern: &str) -> String {
    let rest = pattern.trim_start_matches('/');
    match (base.ends_with('/'), rest) {
        (true, rest) => format!("{base}{rest}"),
        (false, "") if !base.is_empty() => base.to_owned(),
        (false, rest) => format!("{base}/{rest}"),
    }
}

/// Builds a routing table of handlers and path-scoped hooks; [`compile`]
/// validates it into a [`CompiledRouter`](crate::router::CompiledRouter).
///
/// The compiled router serves requests with any body — hyper's `Incoming`
/// under [`serve`](crate::serve()), axum's `Body` under `nest_service`, a
/// `String` in a test — and its hooks and handlers see it as pronghorn's
/// [`Body`](crate::Body).
///
/// Registration never fails: every mistake — a malformed pattern, a
/// duplicate route — is reported by [`compile`], naming the pattern. A
/// router is also a tower `Service` as it is, as axum's is, compiled at
/// its first request (a router that does not compile then logs its error
/// once and answers 500; [`serve`](crate::serve()) refuses to start with
/// it, returning the error): an application's tests call
/// `app().oneshot(request)`, and [`serve`](crate::serve()) takes `app()`.
///
/// `S` is the state type its handlers are written for, as in axum: a
/// `Router<AppState>` reads `State<AppState>` and the parts of it that
/// [`FromRef`](crate::handler::FromRef) names, and
/// [`with_state`](Router::with_state) gives it the value, making a
/// `Router` that is compiled and served. A `Router` (its state type
/// [`ByType`](crate::handler::ByType)) finds each `State<T>` by type among
/// the values given with [`state`](Router::state).
///
/// [`compile`]: Router::compile
///
/// # Example
///
/// ```
/// use std::ops::ControlFlow;
/// use http::{Request, StatusCode};
/// use pronghorn::{Body, Router, handler::Path, router::{Priority, Route, Scope}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", || "home")
///     .get("/users/{id}", |Path(id): Path<u64>| format!("user {id}"))
///     .prefix(Scope::new("/users").priority(Priority::HIGH), |request: Request<Body>, _: &mut Route<'_>| {
///         if request.headers().contains_key("authorization") {
///             ControlFlow::Continue(request)
///         } else {
///             ControlFlow::Break(StatusCode::UNAUTHORIZED)
///         }
///     })
///     .compile()
///     .unwrap();
///
/// let response = router.clone().oneshot(Request::get("/users/7").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.status(), StatusCode::OK);
/// # }
/// ```
#[must_use = "a router does nothing until it is served, as it is or compiled (`compile`)"]
pub struct Router<S = ByType> {
    pub(super) routes: Vec<RouteSpec>,
    pub(super) prefixes: Vec<HookSpec<dyn ErasedPrefix>>,
    pub(super) postfixes: Vec<HookSpec<dyn ErasedPostfix>>,
    pub(super) monitors: Vec<HookSpec<dyn ErasedMonitor>>,
    pub(super) state: http::Extensions,
    /// The types of `state`, in registration order.
    pub(super) state_types: Vec<StateType>,
    /// The types this router gave itself, with `state`.
    pub(super) given: Vec<std::any::TypeId>,
    /// A type one router gave twice, an error of `compile`.
    pub(super) duplicate_state: Option<&'static str>,
    /// A base given to `nest` that is no pattern, an error of `compile`
    /// whether or not the nested router has routes.
    pub(super) bad_base: Option<RouteError>,
    /// Settings for its routes: body limits, WebSocket limits and the like.
    pub(super) settings: RouteSettings,
    /// What answers a path no route matches, in 404's stead.
    pub(super) fallback: Option<RouteSpec>,
    /// The fallbacks of routers nested or merged into this one, with the
    /// base each answers below.
    pub(super) nested_fallbacks: Vec<(String, RouteSpec)>,
    /// What answers a path that routes take for other methods, in 405's
    /// stead: this router's and those of routers nested or merged into it
    /// (more than one is an error of `compile`).
    pub(super) method_not_allowed: Vec<RouteSpec>,
    /// The layers given to [`Router::layer`], in order: the router's own
    /// 404 and 405 go through them.
    pub(super) default_layers: Vec<DefaultLayer>,
    /// The router compiled, once it is served as it is (a `Service`):
    /// shared with its clones, and left behind by any change.
    pub(super) compiled: Compiled,
    /// The state type its handlers are written for.
    state_type: PhantomData<fn() -> S>,
}

/// A router compiled for serving it as it is, shared by its clones: the
/// compiled router, or, if it does not compile, the error and a router
/// that answers 500 to every request.
#[derive(Clone, Default)]
pub(crate) struct Compiled(pub(super) Arc<std::sync::OnceLock<Result<CompiledRouter, Unservable>>>);

/// A router that does not compile, as it is served: why, and what answers.
pub(crate) struct Unservable {
    /// Read by `serve`, which refuses to start with it.
    #[cfg_attr(not(feature = "server"), expect(dead_code, reason = "read by `serve`"))]
    pub(super) error: RouteError,
    pub(super) answers: CompiledRouter,
}

impl RouteSpec {
    pub(crate) fn http<H: Handler<M, S>, M: 'static, S: 'static>(
        method: Option<Method>,
        pattern: &str,
        handler: H,
    ) -> Self {
        let mut needs = Needs::default();
        handler.value_needs(&mut needs);
        Self {
            method,
            pattern: pattern.to_owned(),
            endpoint: Responder::Http(Arc::new(TypedHandler::<H, M, S>::new(handler))),
            needs,
            nested: false,
            settings: RouteSettings::default(),
            own_state: None,
            nesting: Nesting::default(),
            refusal: Vec::new(),
            own_answer: false,
        }
    }
}

/// Cloning a router shares its handlers and hooks (they are reference
/// counted): the clone registers and compiles on its own.
impl<S: 'static> Default for Router<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Clone for Router<S> {
    fn clone(&self) -> Self {
        Self {
            routes: self.routes.clone(),
            prefixes: self.prefixes.clone(),
            postfixes: self.postfixes.clone(),
            monitors: self.monitors.clone(),
            state: self.state.clone(),
            state_types: self.state_types.clone(),
            given: self.given.clone(),
            duplicate_state: self.duplicate_state,
            bad_base: self.bad_base.clone(),
            settings: self.settings.clone(),
            fallback: self.fallback.clone(),
            nested_fallbacks: self.nested_fallbacks.clone(),
            method_not_allowed: self.method_not_allowed.clone(),
            default_layers: self.default_layers.clone(),
            compiled: self.compiled.clone(),
            state_type: PhantomData,
        }
    }
}

impl<S> fmt::Debug for Router<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<_> = self
            .routes
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r.method.as_ref().map_or("*", Method::as_str),
                    r.pattern
                )
            })
            .collect();
        f.debug_struct("Router")
            .field("routes", &routes)
            .field("prefixes", &self.prefixes.len())
            .field("postfixes", &self.postfixes.len())
            .field("monitors", &self.monitors.len())
            .field("settings", &self.settings)
            .finish()
    }
}

macro_rules! method_routes {
    ($($name:ident => $method:ident),*) => {$(
        #[doc = concat!("Routes `", stringify!($method), "` requests for `pattern` to `handler`.")]
        pub fn $name<H, M>(self, pattern: &str, handler: H) -> Self
        where
            H: Handler<M, S>,
            M: 'static,
        {
            self.method(Method::$method, pattern, handler)
        }
    )*};
}

impl<S: 'static> Router<S> {
    /// An empty router.
    pub fn new() -> Self {
        // A router may be served as it is: the server is told how to
        // compile it first.
        #[cfg(feature = "server")]
        crate::served::check_before_serving(Router::<ByType>::check_if_router);
        Self {
            routes: Vec::new(),
            prefixes: Vec::new(),
            postfixes: Vec::new(),
            monitors: Vec::new(),
            state: http::Extensions::new(),
            state_types: Vec::new(),
            given: Vec::new(),
            duplicate_state: None,
            bad_base: None,
            settings: RouteSettings::default(),
            fallback: None,
            nested_fallbacks: Vec::new(),
            method_not_allowed: Vec::new(),
            default_layers: Vec::new(),
            compiled: Compiled::default(),
            state_type: PhantomData,
        }
    }

    /// Routes `method` requests for `pattern` to `handler`.
    fn method<H, M>(mut self, method: Method, pattern: &str, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.routes
            .push(RouteSpec::http(Some(method), pattern, handler));
        self
    }

    /// Routes requests of any method for `pattern` to `handler`; routes for
    /// the request's own method are searched first.
    pub fn any<H, M>(mut self, pattern: &str, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.routes.push(RouteSpec::http(None, pattern, handler));
        self
    }

    method_routes!(get => GET, post => POST, put => PUT, patch => PATCH, delete => DELETE);

    /// Routes requests of any method for `pattern` to a tower `service`,
    /// which sees the request as it came (its body as pronghorn's
    /// [`Body`](crate::Body)); hooks scoped over `pattern` run around it.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use http::{Request, Response};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Body, Router};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let echo = tower::service_fn(|request: Request<Body>| async move {
    ///     Ok::<_, Infallible>(Response::new(format!("{} {}", request.method(), request.uri())))
    /// });
    /// let router = Router::new().route_service("/echo", echo).compile().unwrap();
    /// let request = Request::post("/echo?x=1").body(String::new()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "POST /echo?x=1");
    /// # }
    /// ```
    pub fn route_service<T: RouteService>(self, pattern: &str, service: T) -> Self {
        self.mount(None, pattern, service, false)
    }

    /// Routes `method` requests for `pattern` to a tower `service`, as
    /// [`route_service`](Self::route_service) does for any method. Other
    /// methods on `pattern` are answered 405 with `Allow`, as for handlers.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use http::{Method, Request, Response, StatusCode};
    /// use pronghorn::{Body, Router};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let purge = tower::service_fn(|_: Request<Body>| async { Ok::<_, Infallible>(Response::new(String::from("purged"))) });
    /// let router = Router::new()
    ///     .method_service(Method::DELETE, "/cache", purge)
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::get("/cache").body(String::new()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    /// assert_eq!(response.headers()["allow"], "DELETE");
    /// # }
    /// ```
    pub fn method_service<T: RouteService>(
        self,
        method: Method,
        pattern: &str,
        service: T,
    ) -> Self {
        self.mount(Some(method), pattern, service, false)
    }

    /// Mounts a tower `service` at `base`: it answers `base` and every path
    /// below it, of any method, and sees the path below `base` (`/static`
    /// mounted, `/static/app.css` is seen as `/app.css`, and `/static/docs/`
    /// as `/docs/`: a trailing slash is kept); the URI as it came
    /// stays readable as an [`OriginalUri`](crate::handler::OriginalUri)
    /// extension. Hooks scoped over those paths run around it: a prefix on
    /// `/static` can refuse a request before the service sees it. A base
    /// may hold parameters, not a catch-all (which would leave no path
    /// below it): that is an error of [`compile`](Self::compile). Hooks and
    /// monitors see the pattern `/static` for the base itself and
    /// `/static/{*nested_path}` below it; the service finds the base as its
    /// [`MatchedPath`](crate::handler::MatchedPath).
    ///
    /// The service does not know its base: a link it builds from the path
    /// it sees points below the root. One redirect is put right: to the
    /// path it saw with a slash added, as tower-http's `ServeDir` answers a
    /// directory (`/docs` to `/docs/`), which goes out as `/static/docs/`.
    /// The example `static_files` serves a directory behind a token.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use http_body_util::BodyExt;
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // A legacy axum router, mounted as a module.
    /// let legacy = axum::Router::new().route("/hello", axum::routing::get(|| async { "hello from axum" }));
    /// let router = Router::new().nest_service("/legacy", legacy).compile().unwrap();
    ///
    /// let request = Request::get("/legacy/hello").body(String::new()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello from axum");
    /// # }
    /// ```
    pub fn nest_service<T: RouteService>(self, base: &str, service: T) -> Self {
        let service = match into_router(service) {
            Ok(router) => return self.join(base, router),
            Err(service) => service,
        };
        let base = base.trim_end_matches('/');
        let below = format!("{base}{NESTED_PATTERN_END}");
        let root = if base.is_empty() { "/" } else { base };
        self.mount(None, root, service.clone(), true)
            .mount(None, &below, service, true)
    }

    /// Wraps the routes registered so far, and the router's answers to
    /// paths no route takes, in a tower `layer`: a `TraceLayer`, a
    /// `TimeoutLayer`, a `CompressionLayer`, as axum's `Router::layer`
    /// takes them. The router's type does not change.
    ///
    /// The layer runs after routing, around each route's handler: it sees
    /// the request the handler would see, with the route's
    /// [`MatchedPath`](crate::handler::MatchedPath) in its extensions,
    /// and what the handler answers. It wraps:
    ///
    /// - every route registered before it, those of nested and merged
    ///   routers included (not WebSocket routes, whose handshake is the
    ///   router's);
    /// - the [fallback](Self::fallback) and the
    ///   [`method_not_allowed`](Self::method_not_allowed) handler, if set
    ///   before it;
    /// - the router's own 404 and 405, whenever the layer is given: they
    ///   are answered as a fallback is, through the layers, with hooks
    ///   over the path running around them as around any fallback. (Set
    ///   on a router that is nested or merged into another, only its
    ///   routes and its own fallback are wrapped.)
    ///
    /// Routes registered after it are not wrapped; [`route_layer`](Self::route_layer)
    /// wraps the routes alone. A layer's error must be turned into an
    /// answer before the router takes it:
    /// [`HandleErrorLayer`](crate::HandleErrorLayer) does that.
    ///
    /// How layers order with the router's hooks, for one request:
    ///
    /// | step | runs |
    /// | --- | --- |
    /// | prefix hooks | first, by priority: one that answers skips the layers and the handler |
    /// | tower layers | around the handler, the one given last outermost: `Router::layer` and `route_layer` outside a route's own (`MethodRouter::layer`, `Handler::layer`) |
    /// | handler | inside the layers |
    /// | postfix hooks | on what the layers answered |
    /// | monitors | see the final answer, and time the layers too |
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Body, Router, handler::MatchedPath};
    /// use tower::ServiceExt;
    /// use tower_http::trace::TraceLayer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let spans = Arc::new(Mutex::new(Vec::new()));
    /// let seen = spans.clone();
    /// let router = Router::new()
    ///     .get("/users/{id}", || "ada")
    ///     .layer(TraceLayer::new_for_http().make_span_with(move |request: &Request<Body>| {
    ///         let route = request.extensions().get::<MatchedPath>().map(MatchedPath::as_str);
    ///         seen.lock().unwrap().push(route.map(str::to_owned));
    ///         tracing::info_span!("request", route)
    ///     }))
    ///     .compile()
    ///     .unwrap();
    ///
    /// for path in ["/users/7", "/nowhere"] {
    ///     router.clone().oneshot(Request::get(path).body(String::new()).unwrap()).await.unwrap();
    /// }
    /// assert_eq!(*spans.lock().unwrap(), [Some("/users/{id}".to_owned()), None]);
    /// # }
    /// ```
    pub fn layer<L, M>(mut self, layer: L) -> Self
    where
        L: RouteLayer<M>,
    {
        let layer = layer.into_route_layer();
        self.compiled = Compiled::default();
        let answers = (self.routes.iter_mut())
            .chain(self.fallback.iter_mut())
            .chain(self.method_not_allowed.iter_mut())
            .chain(self.nested_fallbacks.iter_mut().map(|(_, spec)| spec));
        for spec in answers {
            spec.wrap(&layer);
        }
        let layer: DefaultLayer =
            Arc::new(move |handler: &Arc<dyn ErasedHandler>| wrap(handler, &layer));
        for spec in &mut self.routes {
            if !spec.refusal.is_empty() {
                spec.refusal.push((Arc::clone(&layer), false));
            }
        }
        (self.default_layers).push(layer);
        self
    }

    /// Wraps the routes registered so far in a tower `layer`, as
    /// [`layer`](Self::layer) does, and the 405 of their paths, as axum's
    /// `route_layer` does: a path no route takes is still answered 404
    /// without going through it, but another method on a guarded path
    /// meets the guard first, so that a stranger is not told which methods
    /// it has. An authorisation layer goes here, so that a client asking
    /// for a path that does not exist is told so.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use http::{Request, StatusCode, header};
    /// use pronghorn::{Body, IntoResponse, PrefixLayer, Router};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/admin", || "welcome")
    ///     .route_layer(PrefixLayer::new(|request: &mut Request<Body>| {
    ///         match request.headers().contains_key(header::AUTHORIZATION) {
    ///             true => ControlFlow::Continue(()),
    ///             false => ControlFlow::Break(StatusCode::UNAUTHORIZED.into_response()),
    ///         }
    ///     }))
    ///     .compile()
    ///     .unwrap();
    /// let status = |path: &str| {
    ///     let request = Request::get(path).body(String::new()).unwrap();
    ///     let router = router.clone();
    ///     async move { router.oneshot(request).await.unwrap().status() }
    /// };
    /// assert_eq!(status("/admin").await, StatusCode::UNAUTHORIZED);
    /// assert_eq!(status("/nowhere").await, StatusCode::NOT_FOUND);
    /// let delete = Request::delete("/admin").body(String::new()).unwrap();
    /// assert_eq!(router.clone().oneshot(delete).await.unwrap().status(), StatusCode::UNAUTHORIZED);
    /// # }
    /// ```
    pub fn route_layer<L, M>(mut self, layer: L) -> Self
    where
        L: RouteLayer<M>,
    {
        let layer = layer.into_route_layer();
        self.compiled = Compiled::default();
        for spec in &mut self.routes {
            spec.wrap(&layer);
        }
        let refusal: DefaultLayer =
            Arc::new(move |handler: &Arc<dyn ErasedHandler>| wrap(handler, &layer));
        for spec in &mut self.routes {
            spec.refusal.push((Arc::clone(&refusal), true));
        }
        self
    }

    /// The router as the root of a compiled router: its own 404 and 405
    /// answered through the layers given to [`layer`](Self::layer), by a
    /// fallback and a `method_not_allowed` handler of the router's own,
    /// unless it has its own.
    pub(crate) fn with_default_answers(mut self) -> Self {
        self.compiled = Compiled::default();
        let layers = std::mem::take(&mut self.default_layers);
        if layers.is_empty() {
            return self;
        }
        let answers = self.settings.answers.unwrap_or_default();
        let layered = |answer: fn(Answers) -> http::Response<crate::body::Body>| {
            let answer = move || answer(answers);
            let handler: Arc<dyn ErasedHandler> =
                Arc::new(TypedHandler::<_, _, ByType>::new(answer));
            let handler = layers
                .iter()
                .fold(handler, |handler, layer| layer(&handler));
            RouteSpec {
                endpoint: Responder::Http(handler),
                own_answer: true,
                ..RouteSpec::http::<_, _, ByType>(None, "", answer)
            }
        };
        if self.fallback.is_none() {
            self.fallback = Some(layered(Answers::not_found));
        }
        if self.method_not_allowed.is_empty() {
            (self.method_not_allowed).push(layered(Answers::method_not_allowed));
        }
        self
    }

    fn mount<T: RouteService>(
        mut self,
        method: Option<Method>,
        pattern: &str,
        service: T,
        nested: bool,
    ) -> Self {
        self.compiled = Compiled::default();
        let mounted = Mounted { service, nested };
        self.routes.push(RouteSpec {
            nested,
            ..RouteSpec::http(method, pattern, mounted)
        });
        self
    }

    /// Answers requests for paths that no route matches with `handler`, in
    /// 404's stead. A path that routes take for other methods still gets
    /// 405 with `Allow`, and OPTIONS there its automatic answer; hooks
    /// scoped over the path run around the fallback. A router
    /// [nested](Self::nest) under a base keeps its fallback for the paths
    /// below that base, and the fallback takes the base's parameters
    /// (`Path`, `RouteParams`); the deepest base that covers a path answers
    /// it.
    ///
    /// ```
    /// use http::{Request, StatusCode, Uri};
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/", || "home")
    ///     .fallback(|uri: Uri| (StatusCode::NOT_FOUND, format!("nothing at {uri}")))
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::get("/nowhere").body(String::new()).unwrap();
    /// let response = router.clone().oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::NOT_FOUND);
    /// // Another method on a routed path is still 405.
    /// let request = Request::post("/").body(String::new()).unwrap();
    /// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::METHOD_NOT_ALLOWED);
    /// # }
    /// ```
    pub fn fallback<H, M>(mut self, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.fallback = Some(RouteSpec::http(None, "", handler));
        self
    }

    /// Removes the router's own [fallback](Self::fallback), as axum's
    /// `reset_fallback`: a path no route matches is answered 404 again (or
    /// by the fallback of the router it is nested in).
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new().fallback(|| "anything").reset_fallback();
    /// let request = Request::get("/nowhere").body(String::new()).unwrap();
    /// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::NOT_FOUND);
    /// # }
    /// ```
    pub fn reset_fallback(mut self) -> Self {
        self.compiled = Compiled::default();
        self.fallback = None;
        self
    }

    /// Whether any route was registered, here or in a router nested or
    /// merged into this one, as axum's `has_routes`.
    ///
    /// ```
    /// use pronghorn::Router;
    ///
    /// let empty: Router = Router::new().fallback(|| "anything");
    /// assert!(!empty.has_routes());
    /// let api: Router = Router::new().nest("/api", Router::new().get("/", || "api"));
    /// assert!(api.has_routes());
    /// ```
    pub fn has_routes(&self) -> bool {
        !self.routes.is_empty()
    }

    /// Answers requests for paths that routes take only for other methods
    /// with `handler`, in the 405's stead: its response goes out with the
    /// router's `Allow`. OPTIONS there keeps its automatic answer, and
    /// hooks scoped over the path run around the handler, as around a
    /// [fallback](Self::fallback). One router of those
    /// [nested](Self::nest) or merged together may set it, once; two are
    /// an error of [`compile`](Self::compile).
    ///
    /// ```
    /// use http::{Request, StatusCode, header};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::Json};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/items", || "items")
    ///     .method_not_allowed(|| {
    ///         let body = serde_json::json!({ "error": "method not allowed" });
    ///         (StatusCode::METHOD_NOT_ALLOWED, Json(body))
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::delete("/items").body(String::new()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    /// assert_eq!(response.headers()[header::ALLOW], "GET, HEAD");
    /// let body = response.into_body().collect().await.unwrap().to_bytes();
    /// assert_eq!(body, r#"{"error":"method not allowed"}"#);
    /// # }
    /// ```
    pub fn method_not_allowed<H, M>(mut self, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        (self.method_not_allowed).push(RouteSpec::http(None, "", handler));
        self
    }

    /// axum's name for [`method_not_allowed`](Self::method_not_allowed):
    /// the same, so that an axum app's `.method_not_allowed_fallback(h)`
    /// reads as it is.
    pub fn method_not_allowed_fallback<H, M>(self, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.method_not_allowed(handler)
    }

    /// Answers requests for paths that no route matches with a tower
    /// `service`, as [`fallback`](Self::fallback) does with a handler: the
    /// service sees the request as it came, and a routed path asked with
    /// another method is still 405.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use http_body_util::BodyExt;
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // The new routes first; the rest of the application as it was.
    /// let legacy = axum::Router::new().route("/old", axum::routing::get(|| async { "from axum" }));
    /// let router = Router::new()
    ///     .get("/new", || "from pronghorn")
    ///     .fallback_service(legacy)
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::get("/old").body(String::new()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "from axum");
    /// # }
    /// ```
    pub fn fallback_service<T: RouteService>(mut self, service: T) -> Self {
        self.compiled = Compiled::default();
        let mounted = Mounted {
            service,
            nested: false,
        };
        self.fallback = Some(RouteSpec::http(None, "", mounted));
        self
    }

    /// The limits of this router's WebSocket connections: message, frame
    /// and write buffer sizes (by default suited to untrusted clients, see
    /// [`ws::Limits`](crate::ws::Limits)).
    #[cfg(feature = "ws")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ws")))]
    pub fn websocket_limits(mut self, limits: crate::ws::Limits) -> Self {
        self.compiled = Compiled::default();
        self.settings.websocket_limits = Some(limits);
        self
    }

    /// The subprotocols this router's WebSocket routes speak, preferred
    /// first (feature `ws`). A handshake that offers some is answered with
    /// the first of these it offers, which the handler reads with
    /// [`WebSocket::protocol`](crate::ws::WebSocket::protocol); one that
    /// offers none of them is answered with none.
    ///
    /// ```
    /// use pronghorn::{Router, ws::WebSocket};
    ///
    /// let router = Router::new()
    ///     .websocket("/graphql", |socket: WebSocket| async move {
    ///         match socket.protocol() {
    ///             Some("graphql-transport-ws") => { /* speak it */ }
    ///             _ => { /* the client offered none of ours */ }
    ///         }
    ///     })
    ///     .websocket_protocols(["graphql-transport-ws"])
    ///     .compile()
    ///     .unwrap();
    /// # let _ = router;
    /// ```
    #[cfg(feature = "ws")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ws")))]
    pub fn websocket_protocols<I, P>(mut self, protocols: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<Box<str>>,
    {
        self.compiled = Compiled::default();
        self.settings.websocket_protocols = Some(protocols.into_iter().map(Into::into).collect());
        self
    }

    /// Routes WebSocket upgrades of `GET pattern` to `handler`, which
    /// receives the connection once the handshake is done (feature `ws`),
    /// and the values of its extractors, taken at the handshake (see
    /// [`WebSocketHandler`](crate::ws::WebSocketHandler)).
    ///
    /// Prefix hooks for GET and any method run first, and an answering
    /// prefix's response is sent as a normal HTTP response, with no upgrade;
    /// postfixes do not run; monitors see the handshake's outcome (101). A
    /// plain GET without upgrade headers gets 426 Upgrade Required, unless a
    /// GET route answers the path.
    ///
    /// ```
    /// use futures_util::{SinkExt, StreamExt};
    /// use pronghorn::Router;
    /// use pronghorn::handler::RouteParams;
    /// use pronghorn::ws::WebSocket;
    ///
    /// let router = Router::new()
    ///     .websocket("/echo", |mut socket: WebSocket, _: RouteParams| async move {
    ///         while let Some(Ok(message)) = socket.next().await {
    ///             if message.is_close() || socket.send(message).await.is_err() {
    ///                 break;
    ///             }
    ///         }
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// ```
    #[cfg(feature = "ws")]
    pub fn websocket<H, M>(mut self, pattern: &str, handler: H) -> Self
    where
        H: crate::ws::WebSocketHandler<M, S>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        let mut needs = Needs::default();
        H::needs(&mut needs);
        self.routes.push(RouteSpec {
            method: Some(Method::GET),
            pattern: pattern.to_owned(),
            endpoint: Responder::WebSocket(crate::ws::erase::<H, M, S>(handler)),
            needs,
            nested: false,
            settings: RouteSettings::default(),
            own_state: None,
            nesting: Nesting::default(),
            refusal: Vec::new(),
            own_answer: false,
        });
        self
    }

    /// Registers a prefix hook: it runs before the handler and lets the
    /// request through or answers it.
    ///
    /// A hook that only looks at (or edits) the request takes it as `&mut`
    /// and answers `ControlFlow<R>`: `Continue(())` lets it through. One
    /// that takes it by value returns it (see [`RoutePrefix`] for every
    /// form, asynchronous ones included).
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use http::{Request, StatusCode, header};
    /// use pronghorn::{Body, Router, router::Route};
    ///
    /// let router = Router::new()
    ///     .get("/admin", || "welcome")
    ///     .prefix("/admin", |request: &mut Request<Body>, _: &mut Route<'_>| {
    ///         if request.headers().contains_key(header::AUTHORIZATION) {
    ///             ControlFlow::Continue(())
    ///         } else {
    ///             ControlFlow::Break(StatusCode::UNAUTHORIZED)
    ///         }
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// # let _ = router;
    /// ```
    pub fn prefix<H, M>(mut self, scope: impl Into<Scope>, hook: H) -> Self
    where
        H: RoutePrefix<M>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.prefixes
            .push(HookSpec::new(scope.into(), Arc::new(TypedHook::new(hook))));
        self
    }

    /// Registers a postfix hook: it runs after the handler and may modify
    /// or replace the response.
    ///
    /// A hook that only edits the response takes it as `&mut` and returns
    /// nothing; one that may replace it takes it by value and returns it, a
    /// [`Replace`](crate::router::Replace) (which skips later postfixes), a
    /// `Result`, or a future or [`Step`](crate::Step) of one of these (see
    /// [`RoutePostfix`]).
    ///
    /// ```
    /// use http::{HeaderValue, Response, StatusCode};
    /// use pronghorn::{Body, Router, router::Route};
    ///
    /// let router = Router::new()
    ///     .get("/", || "hello")
    ///     .postfix("/", |_: &Route<'_>, response: &mut Response<Body>| {
    ///         response
    ///             .headers_mut()
    ///             .insert("x-frame-options", HeaderValue::from_static("DENY"));
    ///     })
    ///     .postfix("/", |_: &Route<'_>, response: Response<Body>| {
    ///         // An error answer replaces the response.
    ///         if response.status().is_server_error() {
    ///             Err((StatusCode::SERVICE_UNAVAILABLE, "try again"))
    ///         } else {
    ///             Ok(response)
    ///         }
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// # let _ = router;
    /// ```
    pub fn postfix<H, M>(mut self, scope: impl Into<Scope>, hook: H) -> Self
    where
        H: RoutePostfix<M>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.postfixes
            .push(HookSpec::new(scope.into(), Arc::new(TypedHook::new(hook))));
        self
    }

    /// Registers a monitor hook: it observes the outcome before the response
    /// is handed back, and cannot change it. It is called for every request
    /// its scope covers: answered by the handler, early by a prefix, with a
    /// [`Failure`](crate::router::Failure) (a panic, an error value), or
    /// cancelled before any answer (see [`RouteMonitor`] for every form).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Router, router::RouteExchange};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let router = Router::new()
    ///     .get("/users/{id}", || "ada")
    ///     .get("/boom", || -> &'static str { panic!("a bug") })
    ///     .monitor("/", move |exchange: &RouteExchange<'_>| {
    ///         let pattern = exchange.pattern().map(str::to_owned);
    ///         let failed = exchange.error().is_some();
    ///         log.lock().unwrap().push((pattern, exchange.status(), failed));
    ///     })
    ///     .compile()
    ///     .unwrap();
    ///
    /// for path in ["/users/7", "/boom", "/nowhere"] {
    ///     let request = Request::get(path).body(String::new()).unwrap();
    ///     router.clone().oneshot(request).await.unwrap();
    /// }
    /// assert_eq!(*seen.lock().unwrap(), [
    ///     (Some("/users/{id}".to_owned()), Some(StatusCode::OK), false),
    ///     (Some("/boom".to_owned()), Some(StatusCode::INTERNAL_SERVER_ERROR), true),
    ///     (None, Some(StatusCode::NOT_FOUND), false),
    /// ]);
    /// # }
    /// ```
    pub fn monitor<H, M>(mut self, scope: impl Into<Scope>, hook: H) -> Self
    where
        H: RouteMonitor<M>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.monitors
            .push(HookSpec::new(scope.into(), Arc::new(TypedHook::new(hook))));
        self
    }

    /// Registers a monitor hook that is called twice: like any monitor
    /// when the response head is ready, and again when the response body
    /// has ended, with [`Exchange::body_end`](crate::Exchange::body_end)
    /// telling the bytes sent, the times to the first and last byte, and
    /// whether the body was sent whole, failed, or was dropped before its
    /// end (a client gone mid-stream). The second call sees the status,
    /// not the response headers, which have gone out.
    ///
    /// Only the requests such a monitor covers pay for it: their body is
    /// wrapped (one allocation, and one for the request's state, which
    /// lives until the body ends). Its asynchronous answer at the body's
    /// end is polled once: no one waits for it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use http::Request;
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, router::RouteExchange};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let sent = Arc::new(Mutex::new(Vec::new()));
    /// let log = sent.clone();
    /// let router = Router::new()
    ///     .get("/hello", || "hello")
    ///     .monitor_body("/", move |exchange: &RouteExchange<'_>| {
    ///         if let Some(end) = exchange.body_end() {
    ///             log.lock().unwrap().push((end.bytes(), end.ended().as_str()));
    ///         }
    ///     })
    ///     .compile()
    ///     .unwrap();
    ///
    /// let response = router.oneshot(Request::get("/hello").body(String::new()).unwrap()).await.unwrap();
    /// assert!(sent.lock().unwrap().is_empty(), "the body has not been sent");
    /// response.into_body().collect().await.unwrap();
    /// assert_eq!(*sent.lock().unwrap(), [(5, "complete")]);
    /// # }
    /// ```
    pub fn monitor_body<H, M>(mut self, scope: impl Into<Scope>, hook: H) -> Self
    where
        H: RouteMonitor<M>,
        M: 'static,
    {
        self.compiled = Compiled::default();
        self.monitors.push(HookSpec {
            body_end: true,
            ..HookSpec::new(scope.into(), Arc::new(TypedHook::new(hook)))
        });
        self
    }

    /// Shares `state` with handlers, which take it with
    /// [`State<T>`](crate::handler::State), as axum's `with_state` does.
    ///
    /// Each router holds its own: a route reads the state of its type that
    /// its own router holds, else that of the router it is nested in, and
    /// so on out; and where none of its routers holds one, the one
    /// another router gave (the outer router's first, then in the order
    /// of nesting). Two routers nested in one may so hold a value of one
    /// type each, for their own routes and hooks.
    ///
    /// # Errors
    ///
    /// At [`compile`](Self::compile): one router given two states of the
    /// same type (or two [reloadable](crate::router::Reloadable) modules),
    /// and a handler that asks for a state of a type no router holds, are
    /// [`RouteError`](crate::RouteError)s naming the type.
    ///
    /// ```
    /// use http::Request;
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, RouteError, handler::State};
    /// use tower::ServiceExt;
    ///
    /// #[derive(Clone)]
    /// struct Greeting(&'static str);
    ///
    /// let greet = |State(Greeting(text)): State<Greeting>| text;
    /// let app = Router::new()
    ///     .get("/", greet)
    ///     .nest("/fr", Router::new().get("/", greet).state(Greeting("bonjour")))
    ///     .state(Greeting("hello"))
    ///     .compile()
    ///     .unwrap();
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// for (path, text) in [("/", "hello"), ("/fr", "bonjour")] {
    ///     let response = app.clone().oneshot(Request::get(path).body(String::new()).unwrap()).await.unwrap();
    ///     assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), text);
    /// }
    /// # });
    ///
    /// let error = Router::new().state(Greeting("a")).state(Greeting("b")).compile().unwrap_err();
    /// assert!(matches!(error, RouteError::DuplicateState { .. }));
    /// assert!(error.to_string().contains("Greeting"), "{error}");
    /// ```
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, state: T) -> Self {
        self.compiled = Compiled::default();
        let given = state_type::<T>();
        if self.given.contains(&given.0) {
            self.duplicate_state = self.duplicate_state.or(Some(given.1));
        }
        self.given.push(given.0);
        // Its own value, over one a router nested in it gave.
        self.state.insert(state);
        if !self.state_types.iter().any(|(held, _)| *held == given.0) {
            self.state_types.push(given);
        }
        self
    }

    /// Gives the router the state its handlers are written for, as axum's
    /// `with_state`: a `Router<S>` whose handlers read `State<S>`, or a
    /// part of it with [`FromRef`](crate::handler::FromRef), becomes a
    /// router that needs no state (or the state `S2` of the router it is
    /// nested in). The state is held as [`state`](Self::state) holds it,
    /// and found by type too.
    ///
    /// ```
    /// use pronghorn::{Router, handler::State};
    ///
    /// let router = Router::new()
    ///     .get("/", |State(name): State<&'static str>| format!("hello {name}"))
    ///     .with_state("ada")
    ///     .compile()
    ///     .unwrap();
    /// # let _ = router;
    /// ```
    pub fn with_state<S2>(self, state: S) -> Router<S2>
    where
        S: Clone + Send + Sync + 'static,
    {
        self.state(state).restate()
    }

    /// The router, for handlers written for another state type.
    fn restate<S2>(self) -> Router<S2> {
        Router {
            routes: self.routes,
            prefixes: self.prefixes,
            postfixes: self.postfixes,
            monitors: self.monitors,
            state: self.state,
            state_types: self.state_types,
            given: self.given,
            duplicate_state: self.duplicate_state,
            bad_base: self.bad_base,
            settings: self.settings,
            fallback: self.fallback,
            nested_fallbacks: self.nested_fallbacks,
            method_not_allowed: self.method_not_allowed,
            default_layers: self.default_layers,
            compiled: self.compiled,
            state_type: PhantomData,
        }
    }

    /// Puts the [`MatchedPath`](crate::handler::MatchedPath) of the route
    /// that answered in each response's extensions (off by default: it
    /// costs each routed response an extension's allocations), for the
    /// layers outside the router, which see the response and not the
    /// route: a tracing layer naming its span, a metrics layer labelling
    /// by route. Handlers, mounted services and monitors have the pattern
    /// without it. A response from a router mounted below this one with
    /// [`nest_service`](Self::nest_service) keeps the path that router
    /// put there, if it did.
    ///
    /// ```
    /// use http::{Request, Response};
    /// use pronghorn::{Body, Router, handler::MatchedPath};
    /// use tower::{ServiceBuilder, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/users/{id}", || "ada")
    ///     .matched_path_in_response(true)
    ///     .compile()
    ///     .unwrap();
    /// let service = ServiceBuilder::new()
    ///     .map_response(|response: Response<Body>| {
    ///         let route = response.extensions().get::<MatchedPath>().map(MatchedPath::as_str);
    ///         assert_eq!(route, Some("/users/{id}"));
    ///         response
    ///     })
    ///     .service(router);
    /// service.oneshot(Request::get("/users/7").body(String::new()).unwrap()).await.unwrap();
    /// # }
    /// ```
    pub fn matched_path_in_response(mut self, enabled: bool) -> Self {
        self.compiled = Compiled::default();
        self.settings.matched_path_in_response = Some(enabled);
        self
    }

    /// Answers every rejection of this router's extractors — a `Json`
    /// body that does not parse, a `Query` or `Path` that does not read,
    /// a missing `Header`, a body over the limit — with `shape`: for
    /// example as JSON, for a whole API at once. Set on a router
    /// [nested](Self::nest) in another, it holds for the nested router's
    /// routes; elsewhere the outer router's holds. A handler that takes a
    /// rejection into its own hands (`Result<Json<T>, JsonRejection>`)
    /// answers it itself.
    ///
    /// ```
    /// use http::{Request, StatusCode, header};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::{Json, Rejection}};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .post("/points", |Json(point): Json<(i32, i32)>| format!("{point:?}"))
    ///     .rejection(|rejection: Rejection| {
    ///         let body = serde_json::json!({ "error": rejection.message() });
    ///         (rejection.status(), Json(body))
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::post("/points")
    ///     .header(header::CONTENT_TYPE, "application/json")
    ///     .body("[1,".to_owned())
    ///     .unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    /// assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    /// let body = response.into_body().collect().await.unwrap().to_bytes();
    /// assert!(body.starts_with(br#"{"error":"invalid JSON body"#));
    /// # }
    /// ```
    pub fn rejection<F, R>(mut self, shape: F) -> Self
    where
        F: Fn(Rejection) -> R + Send + Sync + 'static,
        R: crate::handler::IntoResponse,
    {
        self.compiled = Compiled::default();
        let shape = move |rejection: Rejection| shape(rejection).into_response();
        self.settings.rejection = Some(Shape::new(shape));
        self
    }

    /// The conventions the router answers by where pronghorn's and axum's
    /// differ: its own 404 and 405, `Allow`, OPTIONS, trailing slashes,
    /// the words of its extractors' rejections (see [`Answers`] for each).
    /// They are chosen once for an app: the router that is compiled sets
    /// them for every path, and every router nested, merged or given to
    /// [`nest_service`](Self::nest_service) follows them (what one of
    /// those says is not read).
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, router::Answers};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new().get("/", || "home").answers(Answers::Axum).compile().unwrap();
    /// let response = router.oneshot(Request::get("/nowhere").body(String::new()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::NOT_FOUND);
    /// assert!(response.into_body().collect().await.unwrap().to_bytes().is_empty());
    /// # }
    /// ```
    pub fn answers(mut self, answers: Answers) -> Self {
        self.compiled = Compiled::default();
        self.settings.answers = Some(answers);
        self
    }

    /// The largest request body an extractor reads (default 2 MiB); a
    /// larger one is answered with 413 — at once when the request declares
    /// a longer `content-length`, before a client that asked for
    /// `100 Continue` is told to send it. Set on a router
    /// [nested](Self::nest) in another, it holds for the nested router's
    /// routes: an upload module may take more than the rest.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let uploads = Router::new()
    ///     .post("/", |file: String| format!("{} bytes stored", file.len()))
    ///     .body_limit(64);
    /// let router = Router::new()
    ///     .post("/notes", |note: String| format!("{} bytes kept", note.len()))
    ///     .body_limit(16)
    ///     .nest("/uploads", uploads)
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::post("/notes").body("x".repeat(17)).unwrap();
    /// let response = router.clone().oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    /// let request = Request::post("/uploads").body("x".repeat(17)).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// # }
    /// ```
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.compiled = Compiled::default();
        self.settings.body_limit = Some(bytes);
        self
    }

    /// How long a body extractor waits for the whole request body (default
    /// 30 s); a body not all there in time is answered with 408, so that a
    /// client sending slowly or not at all does not hold its request for
    /// ever. A body the handler streams itself (a `Body` or the whole
    /// `Request` as its argument) fails with an error at the same
    /// deadline, and the handler answers as it sees fit. Counted from when
    /// the extractor finds the body still not ready after the connection
    /// passed on what it read with the head: a body sent with its head
    /// costs no timer. The timer is Tokio's: outside a Tokio runtime,
    /// bodies have no timeout.
    ///
    /// ```
    /// use std::{convert::Infallible, time::Duration};
    /// use bytes::Bytes;
    /// use http::{Request, StatusCode};
    /// use http_body_util::StreamBody;
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .post("/upload", |body: Bytes| format!("{} bytes", body.len()))
    ///     .body_timeout(Duration::from_secs(5))
    ///     .compile()
    ///     .unwrap();
    /// // A client that sends a head and then nothing.
    /// let silent = StreamBody::new(futures_util::stream::pending::<Result<http_body::Frame<Bytes>, Infallible>>());
    /// let request = Request::post("/upload").body(silent).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    /// # }
    /// ```
    #[cfg(feature = "server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "server")))]
    pub fn body_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.compiled = Compiled::default();
        self.settings.body_timeout = Some(timeout);
        self
    }

    /// Mounts `other`'s routes and hooks under `base` (`"/api"`: `/users`
    /// becomes `/api/users`), after this router's own.
    ///
    /// Its state is its own routes' and hooks' first, and the others'
    /// where this router holds none of its type (see [`state`](Self::state));
    /// its [fallback](Self::fallback) answers the
    /// paths below `base` that no route matches; its settings for routes
    /// ([body limit](Self::body_limit) and timeout, WebSocket limits and
    /// subprotocols, [`matched_path_in_response`](Self::matched_path_in_response)),
    /// where it sets them, hold for its own routes, and this router's for
    /// the rest. Conflicts, such as a route both routers register or two
    /// fallbacks for one base, are errors of [`compile`](Self::compile).
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::Router;
    ///
    /// let users = Router::new().get("/", || "all").get("/{id}", || "one");
    /// let router = Router::new()
    ///     .get("/", || "home")
    ///     .nest("/users", users)
    ///     .merge(Router::new().get("/health", || "ok"))
    ///     .compile()
    ///     .unwrap();
    /// assert_eq!(router.at(&Method::GET, "/users").unwrap().pattern(), "/users");
    /// assert_eq!(router.at(&Method::GET, "/users/7").unwrap().pattern(), "/users/{id}");
    /// assert!(router.at(&Method::GET, "/health").is_some());
    ///
    /// let twice = Router::new().get("/a", || "1").merge(Router::new().get("/a", || "2"));
    /// assert!(twice.compile().is_err());
    /// ```
    pub fn nest(self, base: &str, other: Router<S>) -> Self {
        self.nest_router(base, other)
    }

    /// [`nest`](Self::nest) of a router of any state type: one given to
    /// [`nest_service`](Self::nest_service) or [`merge`](Self::merge).
    fn nest_router<S2>(mut self, base: &str, other: Router<S2>) -> Self {
        self.compiled = Compiled::default();
        // A base that is no pattern is refused even with nothing below it,
        // as it is with routes.
        let checked = (!base.is_empty() && base != "/").then(|| Pattern::parse(base));
        let segments = match &checked {
            Some(Ok(pattern)) => u16::try_from(pattern.segments().len()).unwrap_or(u16::MAX),
            _ => 0,
        };
        self.bad_base = (self.bad_base.take())
            .or(other.bad_base.clone())
            .or(checked.and_then(Result::err));
        let join = |pattern: &str| below_base(base, pattern);
        let rebase = |scope: Scope| scope.rebased(join);
        let settings = other.settings;
        // What its routes and hooks see first: the state it holds (its own
        // and its nested routers'). Routes elsewhere see it too, where this
        // router holds none of the type.
        let given = (!other.state_types.is_empty())
            .then(|| OwnState::of(other.state.clone(), other.state_types.clone()));
        let mut state = other.state;
        state.extend(std::mem::take(&mut self.state));
        self.state = state;
        for held in other.state_types {
            if !self.state_types.iter().any(|(seen, _)| *seen == held.0) {
                self.state_types.push(held);
            }
        }
        self.duplicate_state = self.duplicate_state.or(other.duplicate_state);
        let own = |inner: Option<Arc<OwnState>>| match &given {
            Some(given) => Some(given.under(inner)),
            None => inner,
        };
        // A spec of `other`, below the base: its router's settings and
        // state under its own, the base's segments stripped from the URI
        // its handler sees (by a layer of its own below this router's
        // layers, where its router gave it layers).
        let below = |spec: RouteSpec| {
            let mut spec = RouteSpec {
                settings: spec.settings.or(&settings),
                own_state: own(spec.own_state),
                nesting: spec.nesting.under(base, segments),
                ..spec
            };
            if segments > 0 && spec.layered() {
                spec.wrap(&StripBase::new(segments));
            }
            spec
        };
        self.routes
            .extend(other.routes.into_iter().map(|route| RouteSpec {
                pattern: join(&route.pattern),
                ..below(route)
            }));
        let (rebase, own) = (&rebase, &own);
        (self.prefixes).extend(other.prefixes.into_iter().map(|h| h.nested(rebase, own)));
        (self.postfixes).extend(other.postfixes.into_iter().map(|h| h.nested(rebase, own)));
        (self.monitors).extend(other.monitors.into_iter().map(|h| h.nested(rebase, own)));
        (self.method_not_allowed).extend(other.method_not_allowed.into_iter().map(below));
        self.nested_fallbacks.extend(
            (other.fallback.map(|spec| (String::new(), spec)).into_iter())
                .chain(other.nested_fallbacks)
                // A fallback covers its base's subtree, slash or none.
                .map(|(path, spec)| (below_base(base.trim_end_matches('/'), &path), below(spec))),
        );
        self
    }

    /// A `Router` given to [`nest_service`](Self::nest_service), joined to
    /// this one as [`nest`](Self::nest) joins it, but for its root route,
    /// which answers `base` with a slash as well, as a service mounted
    /// there would see `/` in both.
    fn join(self, base: &str, mut other: Router) -> Self {
        for route in &mut other.routes {
            if route.pattern.trim_start_matches('/').is_empty() {
                route.nested = true;
            }
        }
        self.nest_router(base.trim_end_matches('/'), other)
    }

    /// Adds `other`'s routes and hooks to this router's, after them: `nest`
    /// at the root (see [`nest`](Self::nest)).
    ///
    /// As in axum, a [layer](Self::layer) given before `merge` wraps what
    /// was there, not what is merged: where this router has no
    /// [fallback](Self::fallback) of its own, its 404 and 405 are
    /// `other`'s, wrapped in `other`'s layers.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::Router;
    /// use tower::ServiceExt;
    /// use tower_http::validate_request::ValidateRequestHeaderLayer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let private = Router::new()
    ///     .get("/", || "secret")
    ///     .layer(ValidateRequestHeaderLayer::accept("application/json"));
    /// let router = private.merge(Router::new().get("/public", || "hi")).compile().unwrap();
    ///
    /// let html = |path| Request::get(path).header("accept", "text/html").body(String::new()).unwrap();
    /// let answer = |path| router.clone().oneshot(html(path));
    /// assert_eq!(answer("/").await.unwrap().status(), StatusCode::NOT_ACCEPTABLE);
    /// assert_eq!(answer("/nowhere").await.unwrap().status(), StatusCode::NOT_FOUND);
    /// # }
    /// ```
    pub fn merge(mut self, mut other: Router<S>) -> Self {
        if self.fallback.is_none() {
            self.default_layers = std::mem::take(&mut other.default_layers);
        }
        self.nest_router("", other)
    }
}

impl Router {
    /// The router, as axum's `into_make_service` hands it to `serve`:
    /// [`serve`](crate::serve()) takes the router itself, so that an axum
    /// app's `serve(listener, app.into_make_service())` reads as it is.
    pub fn into_make_service(self) -> Self {
        self
    }

    /// The router, its requests carrying what their connection tells of
    /// itself, a [`ConnectInfo<C>`](crate::handler::ConnectInfo), as
    /// axum's `into_make_service_with_connect_info`: given to
    /// [`serve`](crate::serve()), which makes a `C` from each connection
    /// it accepts ([`Connected`](crate::handler::Connected): the peer's
    /// `SocketAddr` over TCP, or a type of your own). The same as
    /// [`Serve::connect_info_as`](crate::Serve::connect_info_as).
    ///
    /// ```no_run
    /// # #[tokio::main] async fn main() -> std::io::Result<()> {
    /// use std::net::SocketAddr;
    /// use pronghorn::{Router, handler::ConnectInfo, serve};
    ///
    /// let app = Router::new().get("/", |ConnectInfo(peer): ConnectInfo<SocketAddr>| peer.to_string());
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    /// serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
    /// # }
    /// ```
    #[cfg(feature = "server")]
    pub fn into_make_service_with_connect_info<C>(
        self,
    ) -> crate::serve::IntoMakeServiceWithConnectInfo<Self, C> {
        crate::serve::IntoMakeServiceWithConnectInfo::new(self)
    }
}
