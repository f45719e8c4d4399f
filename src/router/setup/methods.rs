//! Method routers as values: [`get`], [`post`], … [`any`], [`on`], chained
//! (`get(list).post(create)`) and registered at a path with
//! [`Router::route`](crate::Router::route), as axum writes them.

use std::{fmt, marker::PhantomData, task::Context};

use http::{Method, Request, Response};
use tower_layer::Layer;

use super::builder::{Compiled, OwnState, Responder, RouteSpec, Router};
use crate::{
    body::Body,
    handler::{
        ByType, Endpoint, Handler, Mounted, Needs, OuterState, RouteContext, RouteLayer,
        RouteService, StateType, state_type, wrap,
    },
    router::request::compiled::CompiledRouter,
    step::{BoxFuture, Step},
};

/// The methods a handler of a [`MethodRouter`] answers: one of the
/// standard methods, several joined with [`or`](Self::or), or any method
/// at all, the extension ones included (`Method::from_bytes(b"PURGE")`
/// converts into one).
///
/// ```
/// use http::Method;
/// use pronghorn::{Router, router::{MethodFilter, on}};
///
/// let purge = Method::from_bytes(b"PURGE").unwrap();
/// let router = Router::new()
///     .route("/items", on(MethodFilter::PUT.or(MethodFilter::PATCH), || "stored"))
///     .route("/cache/{key}", on(purge.clone(), || "purged"))
///     .compile()
///     .unwrap();
/// assert!(router.at(&Method::PATCH, "/items").is_some());
/// assert!(router.at(&purge, "/cache/users").is_some());
/// assert!(router.at(&Method::GET, "/cache/users").is_none());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct MethodFilter {
    /// The standard methods, a bit each in the order of `STANDARD`.
    bits: u16,
    /// Extension methods.
    others: Vec<Method>,
}

/// The standard methods, in the order of `MethodFilter`'s bits.
const STANDARD: [Method; 9] = [
    Method::CONNECT,
    Method::DELETE,
    Method::GET,
    Method::HEAD,
    Method::OPTIONS,
    Method::PATCH,
    Method::POST,
    Method::PUT,
    Method::TRACE,
];

macro_rules! filters {
    ($($name:ident = $bit:literal),*) => {$(
        #[doc = concat!("`", stringify!($name), "` requests.")]
        pub const $name: Self = Self { bits: 1 << $bit, others: Vec::new() };
    )*};
}

impl MethodFilter {
    filters!(
        CONNECT = 0,
        DELETE = 1,
        GET = 2,
        HEAD = 3,
        OPTIONS = 4,
        PATCH = 5,
        POST = 6,
        PUT = 7,
        TRACE = 8
    );

    /// The methods of both filters.
    pub fn or(mut self, other: Self) -> Self {
        self.bits |= other.bits;
        for method in other.others {
            if !self.others.contains(&method) {
                self.others.push(method);
            }
        }
        self
    }

    /// Its methods, standard ones first.
    fn methods(&self) -> impl Iterator<Item = Method> + '_ {
        (STANDARD.iter().enumerate())
            .filter(|(bit, _)| self.bits & (1 << bit) != 0)
            .map(|(_, method)| method.clone())
            .chain(self.others.iter().cloned())
    }
}

impl From<Method> for MethodFilter {
    fn from(method: Method) -> Self {
        match STANDARD.iter().position(|standard| *standard == method) {
            Some(bit) => Self {
                bits: 1 << bit,
                others: Vec::new(),
            },
            None => Self {
                bits: 0,
                others: vec![method],
            },
        }
    }
}

impl fmt::Debug for MethodFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.methods()).finish()
    }
}

/// The handlers of one path by method, as a value: made by [`get`],
/// [`post`], … [`any`], [`on`] and their `_service` forms, chained with
/// the methods of the same names, and registered with
/// [`Router::route`](crate::Router::route). A method given twice, here or
/// by another registration of the path, is an error of
/// [`compile`](crate::Router::compile).
///
/// `S` is the state type its handlers are written for, that of the
/// [`Router<S>`](crate::Router) it is routed in, until
/// [`with_state`](MethodRouter::with_state) gives it.
///
/// ```
/// use http::{Method, Request, StatusCode};
/// use pronghorn::{Router, handler::Path, router::{MethodRouter, get}};
/// use tower::ServiceExt;
///
/// /// The routes of one resource, built apart and registered together.
/// fn items() -> MethodRouter {
///     get(|| "all items").post(|body: String| format!("stored {body}"))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .route("/items", items())
///     .route("/items/{id}", get(|Path(id): Path<u32>| format!("item {id}")).delete(|| "gone"))
///     .compile()
///     .unwrap();
/// assert!(router.at(&Method::POST, "/items").is_some());
/// let request = Request::put("/items").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
/// assert_eq!(response.headers()["allow"], "GET, POST, HEAD");
/// # }
/// ```
#[must_use = "a method router does nothing until it is registered with `Router::route`"]
pub struct MethodRouter<S = ByType> {
    /// Routes whose pattern `Router::route` fills in.
    routes: Vec<RouteSpec>,
    /// The method router compiled as a router of its own, answering every
    /// path, when it is served as a service.
    served: Compiled,
    /// The same, when it is a handler (a fallback): compiled apart, as its
    /// handlers may read the state of the route it answers at.
    handling: Compiled,
    /// The state type its handlers are written for.
    state_type: PhantomData<fn() -> S>,
}

impl<S> Default for MethodRouter<S> {
    fn default() -> Self {
        Self {
            routes: Vec::new(),
            served: Compiled::default(),
            handling: Compiled::default(),
            state_type: PhantomData,
        }
    }
}

impl<S> Clone for MethodRouter<S> {
    fn clone(&self) -> Self {
        Self {
            routes: self.routes.clone(),
            served: self.served.clone(),
            handling: self.handling.clone(),
            state_type: PhantomData,
        }
    }
}

impl<S> fmt::Debug for MethodRouter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let methods = self.routes.iter().map(|route| match &route.method {
            Some(method) => method.as_str(),
            None => "*",
        });
        f.debug_struct("MethodRouter")
            .field("methods", &methods.collect::<Vec<_>>())
            .finish()
    }
}

macro_rules! method_functions {
    ($($name:ident, $service:ident => $method:ident;)*) => {
        $(
            #[doc = concat!("Routes `", stringify!($method), "` requests to `handler`, as a [`MethodRouter`] to register with [`Router::route`](crate::Router::route).")]
            pub fn $name<H, M, S>(handler: H) -> MethodRouter<S>
            where
                H: Handler<M, S>,
                M: 'static,
                S: 'static,
            {
                MethodRouter::new().$name(handler)
            }

            #[doc = concat!("Routes `", stringify!($method), "` requests to a tower `service`, as [`Router::route_service`](crate::Router::route_service) does for any method.")]
            pub fn $service<T: RouteService, S: 'static>(service: T) -> MethodRouter<S> {
                MethodRouter::new().$service(service)
            }
        )*

        impl<S: 'static> MethodRouter<S> {
            $(
                #[doc = concat!("Routes `", stringify!($method), "` requests to `handler` too.")]
                pub fn $name<H, M>(self, handler: H) -> Self
                where
                    H: Handler<M, S>,
                    M: 'static,
                {
                    self.on(MethodFilter::$method, handler)
                }

                #[doc = concat!("Routes `", stringify!($method), "` requests to a tower `service` too.")]
                pub fn $service<T: RouteService>(self, service: T) -> Self {
                    self.on_service(MethodFilter::$method, service)
                }
            )*
        }
    };
}

method_functions! {
    connect, connect_service => CONNECT;
    delete, delete_service => DELETE;
    get, get_service => GET;
    head, head_service => HEAD;
    options, options_service => OPTIONS;
    patch, patch_service => PATCH;
    post, post_service => POST;
    put, put_service => PUT;
    trace, trace_service => TRACE;
}

/// Routes requests of the methods of `filter` to `handler`.
pub fn on<H, M, S>(filter: impl Into<MethodFilter>, handler: H) -> MethodRouter<S>
where
    H: Handler<M, S>,
    M: 'static,
    S: 'static,
{
    MethodRouter::new().on(filter, handler)
}

/// Routes requests of the methods of `filter` to a tower `service`.
pub fn on_service<T: RouteService, S: 'static>(
    filter: impl Into<MethodFilter>,
    service: T,
) -> MethodRouter<S> {
    MethodRouter::new().on_service(filter, service)
}

/// Routes requests of any method to `handler`; at the same path, a
/// handler for the request's own method is preferred.
pub fn any<H, M, S>(handler: H) -> MethodRouter<S>
where
    H: Handler<M, S>,
    M: 'static,
    S: 'static,
{
    MethodRouter::new().any(handler)
}

/// Routes requests of any method to a tower `service`.
pub fn any_service<T: RouteService, S: 'static>(service: T) -> MethodRouter<S> {
    MethodRouter::new().any_service(service)
}

impl<S: 'static> MethodRouter<S> {
    /// A method router with no handler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Routes requests of the methods of `filter` to `handler` too.
    pub fn on<H, M>(mut self, filter: impl Into<MethodFilter>, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        let route = RouteSpec::http(None, "", handler);
        self.add(filter.into(), route);
        self
    }

    /// Routes requests of the methods of `filter` to a tower `service` too.
    pub fn on_service<T: RouteService>(
        mut self,
        filter: impl Into<MethodFilter>,
        service: T,
    ) -> Self {
        let route = RouteSpec::http(None, "", Mounted::at_route(service));
        self.add(filter.into(), route);
        self
    }

    /// Routes requests of any method to `handler` too; a handler for the
    /// request's own method is preferred.
    pub fn any<H, M>(mut self, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.routes.push(RouteSpec::http(None, "", handler));
        self
    }

    /// Routes requests of any method to a tower `service` too.
    pub fn any_service<T: RouteService>(mut self, service: T) -> Self {
        (self.routes).push(RouteSpec::http(None, "", Mounted::at_route(service)));
        self
    }

    /// Answers the methods none of its handlers takes with `handler`, in
    /// the 405's stead, as axum's `MethodRouter::fallback`: a handler of
    /// any method that its own methods' handlers are preferred to (and,
    /// with axum's answers, GET's for HEAD).
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Router, router::get};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .route("/", get(|| "home").fallback(|| (StatusCode::IM_A_TEAPOT, "not here")))
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::delete("/").body(String::new()).unwrap();
    /// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::IM_A_TEAPOT);
    /// # }
    /// ```
    pub fn fallback<H, M>(self, handler: H) -> Self
    where
        H: Handler<M, S>,
        M: 'static,
    {
        self.any(handler)
    }

    /// Answers the methods none of its handlers takes with a tower
    /// `service`, in the 405's stead, as axum's
    /// `MethodRouter::fallback_service`: [`fallback`](Self::fallback) of a
    /// service.
    pub fn fallback_service<T: RouteService>(self, service: T) -> Self {
        self.any_service(service)
    }

    /// Its handlers and `other`'s, as axum's `MethodRouter::merge`. A
    /// method both take is an error of [`compile`](crate::Router::compile)
    /// where it is routed (axum panics).
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::{Router, router::{get, post}};
    ///
    /// let items = get(|| "all").merge(post(|| "stored"));
    /// let router = Router::new().route("/items", items).compile().unwrap();
    /// assert!(router.at(&Method::POST, "/items").is_some());
    ///
    /// let twice = get(|| "one").merge(get(|| "two"));
    /// assert!(Router::new().route("/", twice).compile().is_err());
    /// ```
    pub fn merge(mut self, other: Self) -> Self {
        self.routes.extend(other.routes);
        self.served = Compiled::default();
        self.handling = Compiled::default();
        self
    }

    /// The methods its handlers take by name, as axum's
    /// `MethodRouter::method_filter`: `None` when it has only a handler
    /// of any method.
    ///
    /// ```
    /// use pronghorn::router::{MethodFilter, MethodRouter, any, get};
    ///
    /// let router: MethodRouter = get(|| "a").post(|| "b");
    /// assert_eq!(router.method_filter(), Some(MethodFilter::GET.or(MethodFilter::POST)));
    /// let router: MethodRouter = any(|| "c");
    /// assert_eq!(router.method_filter(), None);
    /// ```
    pub fn method_filter(&self) -> Option<MethodFilter> {
        let methods = self.routes.iter().filter_map(|route| route.method.clone());
        methods.map(MethodFilter::from).reduce(MethodFilter::or)
    }

    /// Gives its handlers `state`, found by its type by their
    /// [`State`](crate::handler::State) extractors, before the router's.
    /// [`with_state`](Self::with_state) gives the state its handlers are
    /// written for, as axum's.
    ///
    /// ```
    /// use http::Request;
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::State, router::get};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let hello = get(|State(name): State<&'static str>| format!("hello {name}")).state("ada");
    /// let router = Router::new().route("/", hello).compile().unwrap();
    /// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello ada");
    /// # }
    /// ```
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, state: T) -> Self {
        let mut values = http::Extensions::new();
        values.insert(state);
        let given = OwnState::of(values, vec![state_type::<T>()]);
        for route in &mut self.routes {
            route.own_state = Some(given.under(route.own_state.take()));
        }
        self.served = Compiled::default();
        self.handling = Compiled::default();
        self
    }

    /// Gives its handlers the state they are written for, as axum's
    /// `MethodRouter::with_state`: a `MethodRouter<S>` whose handlers read
    /// `State<S>` or parts of it ([`FromRef`](crate::handler::FromRef))
    /// becomes one that needs no state (or the state `S2` of the router
    /// it goes to), its handlers reading `state` before the router's.
    pub fn with_state<S2>(self, state: S) -> MethodRouter<S2>
    where
        S: Clone + Send + Sync,
    {
        self.state(state).restate()
    }

    /// The method router, for handlers written for another state type.
    fn restate<S2>(self) -> MethodRouter<S2> {
        MethodRouter {
            routes: self.routes,
            served: self.served,
            handling: self.handling,
            state_type: PhantomData,
        }
    }

    /// The method router as a router of its own, answering every path,
    /// compiled at its first request.
    fn served(&self) -> &CompiledRouter {
        self.served
            .get_or_compile(|| (self.as_router(), Vec::new()))
    }

    /// The method router compiled as a router of its own, as a handler
    /// answers with it: its handlers read the state of the route it
    /// answers at besides their own ([`OuterState`]).
    fn handling(&self) -> &CompiledRouter {
        self.handling
            .get_or_compile(|| (self.as_router(), self.outside_needs()))
    }

    /// A router answering every path with the method router.
    fn as_router(&self) -> Router {
        Router::new()
            .route("/", self.clone().restate())
            .route("/{*path}", self.clone().restate())
    }

    /// The state types its handlers read that it does not give them: the
    /// route it answers at gives them ([`OuterState`]).
    fn outside_needs(&self) -> Vec<StateType> {
        let mut needed: Vec<StateType> = Vec::new();
        for route in &self.routes {
            for wanted in &route.needs.state {
                let given = (route.own_state.as_deref()).is_some_and(|own| own.holds(&wanted.0));
                if !given && !needed.iter().any(|(id, _)| *id == wanted.0) {
                    needed.push(*wanted);
                }
            }
        }
        needed
    }

    /// One route per method of `filter`, sharing `route`'s handler.
    fn add(&mut self, filter: MethodFilter, route: RouteSpec) {
        for method in filter.methods() {
            self.routes.push(RouteSpec {
                method: Some(method),
                ..route.clone()
            });
        }
    }

    /// Wraps the handlers given so far in a tower `layer`: each sees the
    /// requests the router hands its handler, with the route's
    /// [`MatchedPath`](crate::handler::MatchedPath) in their extensions,
    /// and what the handler answers. A method no handler takes is
    /// answered 405 by the router, outside this layer (see
    /// [`Router::layer`](crate::Router::layer)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Router, router::get};
    /// use tower::ServiceExt;
    /// use tower_http::timeout::TimeoutLayer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let timeout = TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, Duration::from_millis(10));
    /// let slow = || async {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    ///     "late"
    /// };
    /// let router = Router::new()
    ///     .route("/report", get(slow).layer(timeout))
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::get("/report").body(String::new()).unwrap();
    /// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::REQUEST_TIMEOUT);
    /// # }
    /// ```
    pub fn layer<L, M>(mut self, layer: L) -> Self
    where
        L: RouteLayer<M>,
    {
        let layer = layer.into_route_layer();
        for route in &mut self.routes {
            route.wrap(&layer);
        }
        self
    }

    /// The same as [`layer`](Self::layer): the 405 of a method no handler
    /// takes is the router's, outside both.
    pub fn route_layer<L, M>(self, layer: L) -> Self
    where
        L: RouteLayer<M>,
    {
        self.layer(layer)
    }
}

crate::router::request::service::serves_requests!(
    /// A method router is a `Service` as it is, as axum's is: it answers
    /// any path, each request by its method (405 with `Allow` for the
    /// others), compiled at its first request; so it may be a
    /// [`fallback_service`](Router::fallback_service) or a
    /// [`nest_service`](Router::nest_service), or called with `oneshot`.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::router::get;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let response = get(|| "hi").oneshot(Request::get("/any/path").body(String::new()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// let response = get(|| "hi").oneshot(Request::post("/").body(String::new()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    /// # }
    /// ```
    MethodRouter,
    |this| this.served().tables()
);

/// A [`MethodRouter`] given to a [`Router`]: its routes at a path.
impl<S: 'static> Router<S> {
    /// Routes requests for `pattern` to the handlers of `methods`, a
    /// [`MethodRouter`] made with [`get`](crate::router::get),
    /// [`post`](crate::router::post), … [`on`](crate::router::on) and
    /// chained: `get(list).post(create)`. [`get`](Self::get),
    /// [`post`](Self::post) and the others register one method each.
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::{Router, router::{get, on}};
    ///
    /// let purge = Method::from_bytes(b"PURGE").unwrap();
    /// let router = Router::new()
    ///     .route("/users", get(|| "all").post(|| "created"))
    ///     .route("/cache/{key}", on(purge.clone(), || "purged"))
    ///     .compile()
    ///     .unwrap();
    /// assert!(router.at(&Method::POST, "/users").is_some());
    /// assert!(router.at(&purge, "/cache/users").is_some());
    /// assert!(router.at(&Method::GET, "/cache/users").is_none());
    /// ```
    pub fn route(mut self, pattern: &str, methods: MethodRouter<S>) -> Self {
        self.compiled = Compiled::default();
        // A method router with no handler takes the path and no method:
        // 405 with an empty `Allow`, as axum's answers.
        let methods = match methods.routes.is_empty() {
            true => methods.any(|| {
                let allow = [(http::header::ALLOW, http::HeaderValue::from_static(""))];
                (http::StatusCode::METHOD_NOT_ALLOWED, allow)
            }),
            false => methods,
        };
        self.routes
            .extend(methods.routes.into_iter().map(|route| RouteSpec {
                pattern: pattern.to_owned(),
                ..route
            }));
        self
    }
}

/// Marker of a method router as a handler.
#[derive(Debug)]
pub enum FromMethodRouter {}

/// A method router is a handler as well, as axum's is, so that it may be a
/// [`fallback`](Router::fallback): `.fallback(get(handler))` answers GET
/// requests no route takes, and 405 the others.
#[diagnostic::do_not_recommend]
impl<S: 'static> Handler<FromMethodRouter, S> for MethodRouter<S> {
    // Its parameters are read before the copy of the request goes on.
    const READS_PARAMS_FIRST: bool = true;

    /// The state its handlers read and do not give themselves, checked
    /// where it is registered.
    fn value_needs(&self, needs: &mut Needs) {
        needs.state.extend(self.outside_needs());
    }

    /// Its router is handed a copy of the request, which carries the
    /// state its handlers read from the route it answers at.
    fn call(
        &self,
        request: &mut Request<Body>,
        route: RouteContext<'_>,
        cx: &mut Context<'_>,
    ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
        request.extensions_mut().insert(OuterState::of(&route));
        let mounted = Mounted::at_route(self.handling().clone());
        let answer = mounted.call(request, route, cx);
        request.extensions_mut().remove::<OuterState>();
        answer
    }
}

impl RouteSpec {
    /// Whether the route's handler is in tower layers.
    pub(crate) fn layered(&self) -> bool {
        matches!(&self.endpoint, Responder::Http(handler) if handler.layered())
    }

    /// Wraps the route's handler in `layer`; a WebSocket route is left as
    /// it is.
    pub(crate) fn wrap<L>(&mut self, layer: &L)
    where
        L: Layer<Endpoint>,
        L::Service: RouteService,
    {
        #[cfg_attr(
            not(feature = "ws"),
            allow(irrefutable_let_patterns, reason = "without `ws`, every route is HTTP")
        )]
        if let Responder::Http(handler) = &mut self.endpoint {
            *handler = wrap(handler, layer);
        }
    }
}
