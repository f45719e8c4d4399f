//! Extractors of what the request carries beside its head's fields: a
//! value put in its extensions, the route it matched, its URI as received.

use std::sync::Arc;

use http::{Request, Response, StatusCode, Uri};

use super::{
    Answers, FromRequestBody, FromRequestHead, IntoResponse, Needs, RequestContext,
    extract::streamed, mounted::NESTED_PATTERN_END, response::internal_error,
};
use crate::body::Body;

/// A value an outer layer put in the request's extensions (with
/// `tower_http::add_extension`, `request.extensions_mut().insert(..)`, or
/// an `Extension` given as a layer, as axum's is), cloned for the handler.
///
/// A request without one answers 500, and the log names the type: the
/// value is missing because the server is set up wrong, not because of
/// anything the client sent (with axum's answers, in axum's words).
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Extension};
/// use tower::ServiceExt;
///
/// #[derive(Clone)]
/// struct User(&'static str);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/me", |Extension(User(name)): Extension<User>| format!("hello {name}"))
///     .compile()
///     .unwrap();
///
/// let mut request = Request::get("/me").body(String::new()).unwrap();
/// request.extensions_mut().insert(User("ada"));
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello ada");
///
/// let request = Request::get("/me").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::INTERNAL_SERVER_ERROR);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extension<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromRequestHead for Extension<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match context.extensions().get::<T>() {
            Some(value) => Ok(Extension(value.clone())),
            None => {
                error_limited!(
                    extension = std::any::type_name::<T>(),
                    "pronghorn: a handler asked for a request extension no layer inserted"
                );
                Err(match context.answers {
                    Answers::Pronghorn => internal_error(),
                    Answers::Axum => (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!(
                            "Missing request extension: Extension of type `{}` was not found. \
                             Perhaps you forgot to add it? See `axum::Extension`.",
                            std::any::type_name::<T>()
                        ),
                    )
                        .into_response(),
                })
            }
        }
    }
}

/// An `Extension` is a layer as well, as axum's is: it puts its value in
/// each request's extensions, for the handlers and layers below.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Extension};
/// use tower::ServiceExt;
///
/// #[derive(Clone)]
/// struct Pool(&'static str);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |Extension(Pool(name)): Extension<Pool>| name)
///     .layer(Extension(Pool("main")))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "main");
/// # }
/// ```
impl<S, T: Clone> tower_layer::Layer<S> for Extension<T> {
    type Service = AddExtension<S, T>;

    fn layer(&self, inner: S) -> AddExtension<S, T> {
        AddExtension {
            inner,
            value: self.0.clone(),
        }
    }
}

/// The service of an [`Extension`] given as a layer.
#[derive(Clone, Debug)]
pub struct AddExtension<S, T> {
    inner: S,
    value: T,
}

impl<S, T, B> tower_service::Service<Request<B>> for AddExtension<S, T>
where
    S: tower_service::Service<Request<B>>,
    T: Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    #[inline]
    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        request.extensions_mut().insert(self.value.clone());
        self.inner.call(request)
    }
}

/// The client's address, when the server puts it in the request:
/// [`Serve::connect_info`](crate::Serve::connect_info) with `serve`, or an
/// outer layer that inserts a `ConnectInfo<T>` extension. Without one, the
/// request is answered 500 and the log says so. Under `axum::serve` with
/// `into_make_service_with_connect_info`, read axum's own instead:
/// `Axum<axum::extract::ConnectInfo<SocketAddr>>` (feature `axum`).
///
/// ```no_run
/// # #[cfg(feature = "server")]
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// use std::net::SocketAddr;
/// use pronghorn::{Router, handler::ConnectInfo, serve};
///
/// let router = Router::new()
///     .get("/ip", |ConnectInfo(peer): ConnectInfo<SocketAddr>| peer.ip().to_string())
///     .compile()
///     .unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// serve(listener, router).connect_info(true).await
/// # }
/// # #[cfg(not(feature = "server"))] fn main() {}
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectInfo<T>(pub T);

/// What a connection tells of itself, as axum's `Connected`: a type of
/// your own that [`Serve::connect_info_as`](crate::Serve::connect_info_as)
/// makes from each connection it accepts (an
/// [`IncomingStream`](crate::IncomingStream)), and each of the
/// connection's requests carries as a [`ConnectInfo`].
///
/// ```no_run
/// # #[cfg(all(unix, feature = "server"))]
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// use pronghorn::{IncomingStream, Router, handler::{ConnectInfo, Connected}, serve};
/// use tokio::net::{UnixListener, unix::UCred};
///
/// #[derive(Clone, Debug)]
/// struct Peer {
///     credentials: Option<UCred>,
/// }
///
/// impl Connected<IncomingStream<'_, UnixListener>> for Peer {
///     fn connect_info(stream: IncomingStream<'_, UnixListener>) -> Self {
///         Peer { credentials: stream.io().peer_cred().ok() }
///     }
/// }
///
/// let router = Router::new()
///     .get("/", |ConnectInfo(peer): ConnectInfo<Peer>| format!("{peer:?}"))
///     .compile()
///     .unwrap();
/// let listener = UnixListener::bind("/run/app.sock")?;
/// serve(listener, router).connect_info_as::<Peer>().await
/// # }
/// # #[cfg(not(all(unix, feature = "server")))] fn main() {}
/// ```
pub trait Connected<T>: Clone + Send + Sync + 'static {
    /// What `stream` tells of itself.
    fn connect_info(stream: T) -> Self;
}

impl Connected<std::net::SocketAddr> for std::net::SocketAddr {
    fn connect_info(address: Self) -> Self {
        address
    }
}

impl<T: Clone + Send + Sync + 'static> FromRequestHead for ConnectInfo<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match context.extensions().get::<ConnectInfo<T>>() {
            Some(info) => Ok(info.clone()),
            None => {
                error_limited!(
                    connect_info = std::any::type_name::<T>(),
                    "pronghorn: a handler asked for the client's address, and the server does not give it (`Serve::connect_info(true)`)"
                );
                Err(internal_error())
            }
        }
    }
}

/// A stand-in for the server's [`ConnectInfo`] in tests: a tower layer
/// that puts `ConnectInfo(value)` in each request that has none, as axum's
/// `MockConnectInfo` does. Given to [`Router::layer`](crate::Router::layer),
/// or around the compiled router.
///
/// ```
/// use std::net::SocketAddr;
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{ConnectInfo, MockConnectInfo}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/ip", |ConnectInfo(peer): ConnectInfo<SocketAddr>| peer.ip().to_string())
///     .layer(MockConnectInfo(SocketAddr::from(([192, 0, 2, 7], 4000))))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/ip").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "192.0.2.7");
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MockConnectInfo<T>(pub T);

impl<S, T: Clone> tower_layer::Layer<S> for MockConnectInfo<T> {
    type Service = MockConnectInfoService<S, T>;

    fn layer(&self, inner: S) -> Self::Service {
        MockConnectInfoService {
            inner,
            value: self.0.clone(),
        }
    }
}

/// The service of [`MockConnectInfo`].
#[derive(Clone, Copy, Debug)]
pub struct MockConnectInfoService<S, T> {
    inner: S,
    value: T,
}

impl<S, T, B> tower_service::Service<Request<B>> for MockConnectInfoService<S, T>
where
    S: tower_service::Service<Request<B>>,
    T: Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    #[inline]
    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        if request.extensions().get::<ConnectInfo<T>>().is_none() {
            let info = ConnectInfo(self.value.clone());
            request.extensions_mut().insert(info);
        }
        self.inner.call(request)
    }
}

/// The pattern of the route the request matched, as registered, with the
/// bases of the routers it was nested in: `/api/users/{id}` for
/// `/api/users/7`. A router mounted as a service with
/// [`Router::nest_service`](crate::Router::nest_service) counts its base
/// too.
///
/// A [fallback](crate::Router::fallback) answers paths no route matches:
/// there it takes `Option<MatchedPath>`, which is `None`, and
/// [`compile`](crate::Router::compile) refuses a fallback that takes
/// `MatchedPath`.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::MatchedPath};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let users = Router::new().get("/users/{id}", |path: MatchedPath| path.as_str().to_owned());
/// let api = Router::new().nest("/api", users).compile().unwrap();
/// let router = Router::new().nest_service("/v1", api).compile().unwrap();
///
/// let request = Request::get("/v1/api/users/7").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/v1/api/users/{id}");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedPath(Arc<str>);

impl MatchedPath {
    /// The pattern.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromRequestHead for MatchedPath {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(MatchedPath::below(context.extensions(), context.pattern()))
    }

    /// `None` in a [fallback](crate::Router::fallback), which answers
    /// paths no route matches.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        let pattern = context.pattern();
        Ok((!pattern.is_empty()).then(|| MatchedPath::below(context.extensions(), pattern)))
    }

    /// A fallback's handler that takes it is refused by `compile`.
    fn needs(needs: &mut Needs) {
        needs.matched_path = true;
    }
}

/// The pattern of the bases a route was [nested](crate::Router::nest)
/// under, as axum's `NestedPath`: `/api` for a route of a router nested at
/// `/api`, `/api/v2` for one nested at `/v2` in a router nested at `/api`,
/// `/{version}/api` with a parameter in the base, the same in its
/// router's fallback and in the extractors of its middleware functions.
///
/// A route that was not nested answers 500 (logged); `Option<NestedPath>`
/// is `None` there.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::NestedPath};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let users = Router::new().get("/users", |base: NestedPath| base.as_str().to_owned());
/// let router = Router::new().nest("/api", Router::new().nest("/v2", users)).compile().unwrap();
///
/// let request = Request::get("/api/v2/users").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/api/v2");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestedPath(Arc<str>);

impl NestedPath {
    /// The bases' pattern.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl NestedPath {
    /// The nested path a service mounted below `path` is handed, in its
    /// request's extensions, for the routes of its own to read.
    pub(super) fn insert(extensions: &mut http::Extensions, path: &Arc<str>) {
        extensions.insert(NestedPath(Arc::clone(path)));
    }

    /// The nested path of the route `context` is for: its own bases below
    /// those of the route its app was mounted at.
    fn of(context: &RequestContext<'_>) -> Option<Self> {
        let outer = context.extensions().get::<NestedPath>();
        Some(match (outer, context.nesting.path()) {
            (None, None) => return None,
            (Some(outer), None) => outer.clone(),
            (None, Some(own)) => NestedPath(Arc::clone(own)),
            (Some(outer), Some(own)) => {
                NestedPath(format!("{}{own}", outer.0.trim_end_matches('/')).into())
            }
        })
    }
}

// Niche: not among the extractors the compiler suggests.
#[diagnostic::do_not_recommend]
impl FromRequestHead for NestedPath {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::of(context).ok_or_else(|| not_nested(context.answers))
    }

    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        Ok(Self::of(context))
    }
}

#[cold]
fn not_nested(answers: Answers) -> Response<Body> {
    error_limited!("pronghorn: a handler asked for the `NestedPath` of a route not nested");
    match answers {
        Answers::Pronghorn => internal_error(),
        Answers::Axum => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The matched route is not nested",
        )
            .into_response(),
    }
}

/// The matched path of the service a request went to with
/// [`Router::nest_service`](crate::Router::nest_service): the base the
/// router it reaches is mounted at, as its own matched paths start.
#[derive(Clone, Debug)]
pub(crate) struct NestedAt(MatchedPath);

impl MatchedPath {
    /// `pattern`, below the base its router was mounted at as a service,
    /// if a request with `extensions` went through one.
    fn below(extensions: &http::Extensions, pattern: &str) -> Self {
        MatchedPath::below_shared(extensions, pattern, || Arc::from(pattern))
    }

    /// [`below`](Self::below), with the pattern as `shared` makes it: a
    /// route that keeps its pattern shared puts it in a request without
    /// copying it.
    pub(crate) fn below_shared(
        extensions: &http::Extensions,
        pattern: &str,
        shared: impl FnOnce() -> Arc<str>,
    ) -> Self {
        match extensions.get::<NestedAt>() {
            Some(NestedAt(MatchedPath(base))) if !pattern.is_empty() => match (&**base, pattern) {
                ("/", _) => MatchedPath(shared()),
                (_, "/") => MatchedPath(base.clone()),
                _ => MatchedPath(format!("{base}{pattern}").into()),
            },
            _ => MatchedPath(shared()),
        }
    }

    /// The matched path of the route of `pattern`, as the world outside
    /// the route sees it: the base alone for a service nested below it;
    /// `None` for a request no route matched.
    pub(crate) fn of(extensions: &http::Extensions, pattern: &str) -> Option<Self> {
        let pattern = pattern
            .strip_suffix(NESTED_PATTERN_END)
            .map_or(pattern, |base| if base.is_empty() { "/" } else { base });
        (!pattern.is_empty()).then(|| MatchedPath::below(extensions, pattern))
    }

    /// [`of`](Self::of), for a route that keeps its pattern shared: no
    /// copy of it is made unless the request went through a nested
    /// service.
    pub(crate) fn of_shared(extensions: &http::Extensions, pattern: &Arc<str>) -> Option<Self> {
        if pattern.is_empty() || pattern.ends_with(NESTED_PATTERN_END) {
            return MatchedPath::of(extensions, pattern);
        }
        Some(MatchedPath::below_shared(extensions, pattern, || {
            Arc::clone(pattern)
        }))
    }

    /// Puts the pattern of the route `request` matched in its extensions,
    /// for the service or handler it goes on to; for a service `nested`
    /// below it, also the base the service's own routes start from.
    pub(crate) fn insert(request: &mut Request<Body>, pattern: &str, nested: bool) {
        if let Some(matched) = MatchedPath::of(request.extensions(), pattern) {
            if nested {
                request.extensions_mut().insert(NestedAt(matched.clone()));
            }
            request.extensions_mut().insert(matched);
        }
    }
}

/// The whole request, as a handler's last argument: its head, its
/// extensions and its body, unread (limited to
/// [`Router::body_limit`](crate::Router::body_limit) as it is read). The
/// route's [`MatchedPath`] is in its extensions.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, Router, handler::MatchedPath};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/echo/{name}", |request: Request<Body>| async move {
///         let pattern = request.extensions().get::<MatchedPath>().unwrap().as_str().to_owned();
///         let body = request.into_body().collect().await.unwrap().to_bytes();
///         format!("{pattern}: {}", String::from_utf8_lossy(&body))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::post("/echo/ada").body("hi".to_owned()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/echo/{name}: hi");
/// # }
/// ```
impl FromRequestBody for Request<Body> {
    type Future = std::future::Ready<Result<Self, Response<Body>>>;

    /// The head is the router's, kept for the steps after the handler: the
    /// request a handler owns has a copy of it.
    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let streamed = streamed(body, context.body_limit, context.body_timeout);
        std::future::ready(match streamed {
            Ok(body) => {
                let mut request = Request::from_parts(context.head(), body);
                MatchedPath::insert(&mut request, context.pattern(), false);
                Ok(request)
            }
            Err(rejection) => Err(context.reject(rejection)),
        })
    }
}

/// The request's URI as the server received it, whatever a layer before
/// the router rewrote: the value an outer layer stored as `OriginalUri`,
/// or else the request's own URI.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::OriginalUri};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/where", |OriginalUri(uri): OriginalUri| uri.to_string())
///     .compile()
///     .unwrap();
/// let request = Request::get("/where?now").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/where?now");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginalUri(pub Uri);

impl FromRequestHead for OriginalUri {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok((context.extensions().get::<OriginalUri>())
            .cloned()
            .unwrap_or_else(|| OriginalUri(context.uri().clone())))
    }
}

/// An HTML answer: `content-type: text/html; charset=utf-8`.
///
/// ```
/// use pronghorn::{IntoResponse, handler::Html};
///
/// let response = Html("<h1>hello</h1>").into_response();
/// assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Html<T>(pub T);

impl<T: Into<Body>> IntoResponse for Html<T> {
    fn into_response(self) -> Response<Body> {
        let mut response = Response::new(self.0.into());
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/html; charset=utf-8"),
        );
        response
    }
}

/// A redirect to another location: `303 See Other` ([`to`](Self::to)),
/// `307 Temporary Redirect` or `308 Permanent Redirect`.
///
/// ```
/// use http::StatusCode;
/// use pronghorn::{IntoResponse, handler::Redirect};
///
/// let response = Redirect::permanent("/new").into_response();
/// assert_eq!(response.status(), StatusCode::PERMANENT_REDIRECT);
/// assert_eq!(response.headers()["location"], "/new");
/// ```
///
/// A location that is not valid header text answers 500 and is logged.
/// Before an answer in a tuple, it sets the status and `location` on it,
/// and a status before it in the tuple wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    status: StatusCode,
    location: String,
}

impl Redirect {
    /// `303 See Other`: the client fetches `location` with GET.
    pub fn to(location: impl Into<String>) -> Self {
        Self::with(StatusCode::SEE_OTHER, location)
    }

    /// `307 Temporary Redirect`: the client repeats the request, method and
    /// body included, at `location`.
    pub fn temporary(location: impl Into<String>) -> Self {
        Self::with(StatusCode::TEMPORARY_REDIRECT, location)
    }

    /// `308 Permanent Redirect`: as `temporary`, and for good.
    pub fn permanent(location: impl Into<String>) -> Self {
        Self::with(StatusCode::PERMANENT_REDIRECT, location)
    }

    /// The status it answers: 303, 307 or 308.
    ///
    /// ```
    /// use http::StatusCode;
    /// use pronghorn::handler::Redirect;
    ///
    /// let redirect = Redirect::temporary("/elsewhere");
    /// assert_eq!(redirect.status_code(), StatusCode::TEMPORARY_REDIRECT);
    /// assert_eq!(redirect.location(), "/elsewhere");
    /// ```
    pub fn status_code(&self) -> StatusCode {
        self.status
    }

    /// Where it sends the client.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn with(status: StatusCode, location: impl Into<String>) -> Self {
        Self {
            status,
            location: location.into(),
        }
    }
}

/// Its status and `location` on an empty body; as a part of a tuple,
/// the same on the answer after it (`(Redirect::to("/"), Html(…))`).
impl IntoResponse for Redirect {
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}
