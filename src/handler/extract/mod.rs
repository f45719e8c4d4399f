//! Extractors: what a handler takes as arguments. Here, what every
//! extractor is given (the request's context), the two traits, and
//! `Option` of any; each family of extractors in its own file, its
//! rejection beside it, as axum's `extract/`.

// A rejection is the response that answers the request. Boxing it would
// allocate on every rejection; moving it is a copy of a few words.
#![expect(
    clippy::result_large_err,
    reason = "a rejection is the response that answers the request: boxing it would allocate on every rejection"
)]

use std::{fmt, future::Future, sync::Arc, time::Duration};

use http::{HeaderMap, Method, Request, Response, Uri, request::Parts};

use crate::{body::Body, head::RequestHead, params::Params};

use super::{ErasedHandler, answers::Answers, nested::Nesting};

mod body;
mod connect_info;
mod de;
mod extension;
mod form;
mod header;
#[cfg(feature = "json")]
mod json;
mod matched_path;
#[cfg(feature = "multipart")]
mod multipart;
mod nested_path;
mod path;
mod query;
mod rejection;
mod request_parts;
mod state;
#[cfg(feature = "typed-header")]
mod typed_header;
mod with_rejection;

#[cfg(feature = "json")]
pub use self::json::{Json, JsonDataError, JsonRejection, JsonSyntaxError, MissingJsonContentType};
#[cfg(feature = "multipart")]
pub use self::multipart::{Field, Multipart, MultipartError};
#[cfg(feature = "ws")]
pub(crate) use self::rejection::{rejection_enum, rejection_variants};
#[cfg(feature = "typed-header")]
pub use self::typed_header::{TypedHeader, TypedHeaderRejection, TypedHeaderRejectionReason};
pub(crate) use self::{
    body::streamed,
    rejection::{Fault, Shape},
};
pub use self::{
    body::{
        BodyFuture, BytesRejection, FailedToBufferBody, InvalidUtf8, LengthLimitError,
        StringRejection, UnknownBodyError,
    },
    connect_info::{ConnectInfo, Connected, MockConnectInfo, MockConnectInfoService},
    extension::{AddExtension, Extension, ExtensionRejection, MissingExtension},
    form::{
        FailedToDeserializeForm, FailedToDeserializeFormBody, Form, FormRejection,
        InvalidFormContentType, RawForm, RawFormRejection,
    },
    header::{Header, HeaderRejection, NamedHeader, headers},
    matched_path::{MatchedPath, MatchedPathMissing, MatchedPathRejection},
    nested_path::{NestedPath, NestedPathRejection},
    path::{
        FailedToDeserializePathParams, InvalidUtf8InPathParam, MissingPathParams, Path,
        PathErrorKind, PathRejection, RawPathParams, RawPathParamsIter, RawPathParamsRejection,
        RouteParams,
    },
    query::{FailedToDeserializeQueryString, Query, QueryRejection, RawQuery},
    rejection::Rejection,
    request_parts::OriginalUri,
    state::{ByType, FromRef, State, StateSource},
    with_rejection::{HasRejection, WithRejection, WithRejectionFuture},
};

/// What the router hands a handler beside the request: the parameters of
/// the matched route, the router's state and the body limit.
#[derive(Clone, Copy, Debug)]
pub struct RouteContext<'a> {
    pattern: &'a str,
    /// The parameters, their path left empty when `params_in_request`.
    params: Params<'a>,
    /// Whether the parameters' path is the request's own: no step ran
    /// before the handler, so the path is as received, and the router kept
    /// no copy of it.
    params_in_request: bool,
    state: &'a Arc<http::Extensions>,
    /// What the route's extractors hold to.
    extraction: &'a Extraction,
    /// The request's head as received, when the router kept a copy for
    /// its hooks: the parameters were captured in its path, and the steps
    /// after the handler read the request's headers.
    head: Option<&'a RequestHead>,
}

/// The default limit of a request body read by an extractor: 2 MiB.
pub(crate) const DEFAULT_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// How long a body extractor waits for the whole body by default.
pub(crate) const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a route's extractors hold to: the body's limit and timeout, and
/// the shape of their rejections.
#[derive(Clone, Debug)]
pub(crate) struct Extraction {
    limit: usize,
    timeout: Duration,
    /// How the route's router answers rejections, if it says.
    rejection: Option<Shape>,
    /// What the route's tower layers hand its handler with the request:
    /// `None` for a handler without layers.
    layered: Option<Arc<RouteInfo>>,
    /// How the rejections are worded.
    answers: Answers,
    /// The state of the router the route was registered in, when it is
    /// not the compiled router's: read before that.
    own_state: Option<Arc<http::Extensions>>,
    /// Where the route was nested.
    nesting: Nesting,
}

/// What a layered route's handler reads beside the request, shared by the
/// route's requests: its pattern, its parameters' names, what its
/// extractors hold to.
#[derive(Debug)]
pub(crate) struct RouteInfo {
    pattern: Arc<str>,
    names: Arc<[Box<str>]>,
    /// What its extractors hold to (with no info of its own).
    extraction: Extraction,
    /// What answers another method on its path, through its
    /// `route_layer` layers, as axum's 405 goes: `None` when none wraps it.
    refusal: Option<Refusal>,
}

/// A route's 405 in the layers of its `route_layer`s.
#[derive(Clone)]
pub(crate) struct Refusal(pub(crate) Arc<dyn ErasedHandler>);

impl fmt::Debug for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Refusal")
    }
}

impl Extraction {
    /// What a route's extractors hold to: bodies of at most `limit` bytes
    /// within `timeout`, rejections shaped by `rejection` and worded by
    /// `answers`, the state `own_state` read first, the bases it was
    /// nested below.
    pub(crate) fn new(
        limit: usize,
        timeout: Duration,
        rejection: Option<Shape>,
        answers: Answers,
        own_state: Option<Arc<http::Extensions>>,
        nesting: Nesting,
    ) -> Self {
        Extraction {
            limit,
            timeout,
            rejection,
            layered: None,
            answers,
            own_state,
            nesting,
        }
    }

    /// The same, with bodies of at most `limit` bytes.
    pub(crate) fn with_limit(&self, limit: usize) -> Self {
        Extraction {
            limit,
            ..self.clone()
        }
    }

    /// The same, handing `info` to the handler below the route's layers.
    pub(crate) fn handing_layers(self, info: Arc<RouteInfo>) -> Self {
        Extraction {
            layered: Some(info),
            ..self
        }
    }

    /// Whether `other` holds to the same: a route's may stand for it.
    /// Never for a handler in layers, whose route is its own.
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        self.layered.is_none()
            && other.layered.is_none()
            && (self.limit, self.timeout, self.answers, &self.nesting)
                == (other.limit, other.timeout, other.answers, &other.nesting)
            && same_arc(self.own_state.as_ref(), other.own_state.as_ref())
            && same_arc(
                self.rejection.as_ref().map(|shape| shape.function()),
                other.rejection.as_ref().map(|shape| shape.function()),
            )
    }

    /// What the route's tower layers hand its handler.
    #[inline]
    pub(crate) fn layered(&self) -> Option<&Arc<RouteInfo>> {
        self.layered.as_ref()
    }

    /// How the route's router answers rejections, if it says.
    #[inline]
    pub(crate) fn rejection(&self) -> Option<&Shape> {
        self.rejection.as_ref()
    }

    /// How the route's rejections are worded.
    #[inline]
    pub(crate) fn answers(&self) -> Answers {
        self.answers
    }

    /// Where the route was nested.
    #[inline]
    pub(crate) fn nesting(&self) -> &Nesting {
        &self.nesting
    }
}

/// Whether `a` and `b` are both absent or the same allocation.
fn same_arc<T: ?Sized>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

impl RouteInfo {
    /// The info of a route of `pattern`, its parameters `names`, its
    /// extractors holding to `extraction`, its 405 through its layers
    /// `refusal`.
    pub(crate) fn new(
        pattern: Arc<str>,
        names: Arc<[Box<str>]>,
        extraction: Extraction,
        refusal: Option<Refusal>,
    ) -> Self {
        RouteInfo {
            pattern,
            names,
            extraction,
            refusal,
        }
    }

    /// The info of the route `context` is for, copied from it.
    pub(crate) fn of(context: &RouteContext<'_>) -> Arc<Self> {
        Arc::new(RouteInfo {
            pattern: context.pattern.into(),
            names: context.params.names().into(),
            extraction: Extraction {
                layered: None,
                ..context.extraction.clone()
            },
            refusal: None,
        })
    }

    /// The route's pattern.
    #[inline]
    pub(crate) fn pattern(&self) -> &Arc<str> {
        &self.pattern
    }

    /// Its parameters' names.
    #[inline]
    pub(crate) fn names(&self) -> &Arc<[Box<str>]> {
        &self.names
    }

    /// What its extractors hold to.
    #[inline]
    pub(crate) fn extraction(&self) -> &Extraction {
        &self.extraction
    }

    /// What answers another method on its path through its layers.
    #[inline]
    pub(crate) fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_ref()
    }
}

impl<'a> RouteContext<'a> {
    /// The context of a route of `pattern` with `params` (their path the
    /// request's own when `params_in_request`), the router's `state`,
    /// its extractors holding to `extraction`, the request's `head` as
    /// received when the router kept a copy.
    #[inline]
    pub(crate) fn new(
        pattern: &'a str,
        params: Params<'a>,
        params_in_request: bool,
        state: &'a Arc<http::Extensions>,
        extraction: &'a Extraction,
        head: Option<&'a RequestHead>,
    ) -> Self {
        RouteContext {
            pattern,
            params,
            params_in_request,
            state,
            extraction,
            head,
        }
    }

    /// The route's pattern.
    #[inline]
    pub(crate) fn pattern(&self) -> &'a str {
        self.pattern
    }

    /// The parameters as captured, their path left empty when they lie
    /// in the request's own.
    #[inline]
    pub(crate) fn captured_params(&self) -> Params<'a> {
        self.params
    }

    /// The router's state.
    #[inline]
    pub(crate) fn state(&self) -> &'a Arc<http::Extensions> {
        self.state
    }

    /// What the route's extractors hold to.
    #[inline]
    pub(crate) fn extraction(&self) -> &'a Extraction {
        self.extraction
    }

    /// The request's head as received, when the router kept a copy.
    #[inline]
    pub(crate) fn head(&self) -> Option<&'a RequestHead> {
        self.head
    }

    /// Reads through `extraction` instead of the route's.
    pub(crate) fn read_through(&mut self, extraction: &'a Extraction) {
        self.extraction = extraction;
    }

    /// The context extractors read, for the head of `request` (its body is
    /// not read: the handler takes it apart).
    // Inlined: most handlers read little of it, and a handler of no
    // argument none.
    #[inline]
    pub fn with_request<'p>(&'p self, request: &'p Request<Body>) -> RequestContext<'p>
    where
        'a: 'p,
    {
        RequestContext {
            request,
            route: Some(self),
            pattern: self.pattern,
            params: self.params(request),
            state: self.state.as_ref(),
            own_state: self.extraction.own_state.as_deref(),
            body_limit: self.extraction.limit,
            body_timeout: self.extraction.timeout,
            rejection: self.extraction.rejection.as_ref(),
            answers: self.extraction.answers,
            nesting: &self.extraction.nesting,
        }
    }

    /// The parameters of the matched route, in the path of `request`, the
    /// request this context came with.
    #[inline]
    pub(crate) fn params<'p>(&self, request: &'p Request<Body>) -> Params<'p>
    where
        'a: 'p,
    {
        match self.params_in_request {
            true => self.params.in_path(request.uri().path()),
            false => self.params,
        }
    }
}

/// What synchronous extractors read: the request head, the route
/// parameters and the router's shared state.
#[derive(Debug)]
pub struct RequestContext<'a> {
    /// The request, for its head: the handler has its body.
    request: &'a Request<Body>,
    /// The route's context, where a route's handler or its layers run the
    /// extractors (a hook's have none).
    route: Option<&'a RouteContext<'a>>,
    pattern: &'a str,
    params: Params<'a>,
    state: &'a http::Extensions,
    /// The state of the route's own router, read first.
    own_state: Option<&'a http::Extensions>,
    body_limit: usize,
    body_timeout: Duration,
    rejection: Option<&'a Shape>,
    answers: Answers,
    /// Where the route was nested.
    nesting: &'a Nesting,
}

impl<'a> RequestContext<'a> {
    /// What a hook's extractors read: `request`'s head where it lies, the
    /// hook's parameters, the router's state and its rejections' shape.
    /// A hook sees the path as it came, and reads no body.
    pub(crate) fn of_hook(
        request: &'a Request<Body>,
        pattern: &'a str,
        params: Params<'a>,
        state: &'a http::Extensions,
        own_state: Option<&'a http::Extensions>,
        rejection: Option<&'a Shape>,
        answers: Answers,
    ) -> Self {
        RequestContext {
            request,
            route: None,
            pattern,
            params,
            state,
            own_state,
            body_limit: 0,
            body_timeout: Duration::ZERO,
            rejection,
            answers,
            nesting: &super::NOT_NESTED,
        }
    }

    /// The request, for its head.
    #[inline]
    pub(crate) fn request(&self) -> &'a Request<Body> {
        self.request
    }

    /// The route's context, where a route's handler or its layers run the
    /// extractors.
    #[inline]
    pub(crate) fn route(&self) -> Option<&'a RouteContext<'a>> {
        self.route
    }

    /// How the route's router words rejections.
    #[cfg(feature = "ws")]
    #[inline]
    pub(crate) fn answers(&self) -> Answers {
        self.answers
    }

    /// Reads `state` before the router's: a middleware function's own.
    pub(crate) fn read_state_first(&mut self, state: &'a http::Extensions) {
        self.own_state = Some(state);
    }

    /// The answer to `rejection`, as the route's router shapes its
    /// rejections ([`Router::rejection`](crate::Router::rejection)), else
    /// as it is: what a custom extractor answers when it refuses.
    ///
    /// ```
    /// use http::{Response, StatusCode};
    /// use pronghorn::{Body, handler::{FromRequestHead, Rejection, RequestContext}};
    ///
    /// struct Tenant(String);
    ///
    /// impl FromRequestHead for Tenant {
    ///     fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
    ///         match context.headers().get("x-tenant").and_then(|v| v.to_str().ok()) {
    ///             Some(name) => Ok(Tenant(name.to_owned())),
    ///             None => Err(context.reject(Rejection::new(
    ///                 "Tenant",
    ///                 StatusCode::BAD_REQUEST,
    ///                 "missing header `x-tenant`",
    ///             ))),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn reject(&self, rejection: Rejection) -> Response<Body> {
        rejection::answer(self.rejection, self.answers, rejection)
    }

    /// The request method.
    pub fn method(&self) -> &'a Method {
        self.request.method()
    }

    /// The request URI.
    pub fn uri(&self) -> &'a Uri {
        self.request.uri()
    }

    /// The request's HTTP version.
    pub fn version(&self) -> http::Version {
        self.request.version()
    }

    /// The request headers.
    pub fn headers(&self) -> &'a HeaderMap {
        self.request.headers()
    }

    /// The request extensions: what the server and outer layers put there.
    pub fn extensions(&self) -> &'a http::Extensions {
        self.request.extensions()
    }

    /// A copy of the request head, for what must own one (a service
    /// called in the handler's stead, the whole request as an argument).
    /// Below a [nest](crate::Router::nest)'s base, its URI is the one the
    /// route sees, without the base, and the whole one is its
    /// [`OriginalUri`](crate::handler::OriginalUri) extension.
    pub fn head(&self) -> Parts {
        let mut head = copy_head(self.request);
        super::nested::strip_bases(&mut head.uri, &mut head.extensions, self.nesting.bases());
        head
    }

    /// The URI the route sees: below a [nest](crate::Router::nest)'s base,
    /// without the base (`/users` of `/api/users`), else the request's
    /// ([`uri`](Self::uri)). What the `Uri` extractor reads.
    pub fn route_uri(&self) -> Uri {
        super::nested::seen_uri(
            self.request.uri(),
            self.request.extensions(),
            self.nesting.bases(),
        )
        .unwrap_or_else(|| self.request.uri().clone())
    }

    /// The parameters of the matched route.
    pub fn params(&self) -> Params<'a> {
        self.params
    }

    /// The pattern of the matched route, as registered (nest bases
    /// included).
    pub fn pattern(&self) -> &'a str {
        self.pattern
    }

    /// The state of type `T` the route's router holds, else the state of
    /// that type of the router it is nested in, and so on to the root, if
    /// one does. The state given with [`Router::with_state`](crate::Router::with_state)
    /// is found by its type too; an extractor of your own reads a part of
    /// it with [`FromRef`]: `context.state::<AppState>().map(Key::from_ref)`.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&'a T> {
        match self.own_state.and_then(http::Extensions::get::<T>) {
            Some(own) => Some(own),
            None => (self.state.get::<T>()).or_else(|| {
                let outer = self.request.extensions().get::<OuterState>()?;
                outer.get::<T>()
            }),
        }
    }

    /// The most bytes a body extractor reads
    /// ([`Router::body_limit`](crate::Router::body_limit); 2 MiB unless
    /// set): what a [`FromRequestBody`] of your own should hold to.
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// How long a body extractor waits for the whole body (30 s unless
    /// set with `Router::body_timeout`, feature `server`).
    pub fn body_timeout(&self) -> Duration {
        self.body_timeout
    }
}

/// The state where a `MethodRouter` given as a handler (a fallback) is
/// called, in the request its own router is handed: what its handlers
/// read after their own router's.
#[derive(Clone)]
pub(crate) struct OuterState {
    /// The state of the router the handler was registered with.
    own: Option<Arc<http::Extensions>>,
    /// The app's.
    state: Arc<http::Extensions>,
}

impl OuterState {
    /// The state `route`'s handler reads.
    pub(crate) fn of(route: &RouteContext<'_>) -> Self {
        OuterState {
            own: route.extraction().own_state.clone(),
            state: Arc::clone(route.state()),
        }
    }

    fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        match self.own.as_deref().and_then(http::Extensions::get::<T>) {
            Some(own) => Some(own),
            None => self.state.get::<T>(),
        }
    }
}

/// A copy of `request`'s head. The first copy of a URI built from a
/// string moves its bytes to shared storage; hyper's already are.
pub(crate) fn copy_head<B>(request: &Request<B>) -> Parts {
    let mut copy = Request::new(());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    *copy.extensions_mut() = request.extensions().clone();
    copy.into_parts().0
}

/// An extractor that needs only the request head: it runs synchronously.
///
/// Implement it for an extractor of your own; answering `Err` ends the
/// request with that response before the handler runs.
///
/// ```
/// use http::{Request, Response, StatusCode};
/// use pronghorn::{Body, IntoResponse, Router, handler::{FromRequestHead, RequestContext}};
/// use tower::ServiceExt;
///
/// /// The tenant a request is for, from its `x-tenant` header.
/// struct Tenant(String);
///
/// impl FromRequestHead for Tenant {
///     fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
///         match context.headers().get("x-tenant").map(|v| v.to_str()) {
///             Some(Ok(name)) => Ok(Tenant(name.to_owned())),
///             _ => Err((StatusCode::BAD_REQUEST, "which tenant?").into_response()),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/me", |Tenant(name): Tenant| format!("tenant {name}"))
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/me").header("x-tenant", "acme").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::OK);
///
/// let request = Request::get("/me").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be extracted from a request's head",
    label = "not an extractor of pronghorn's",
    note = "a handler's arguments are pronghorn extractors (`pronghorn::handler::Path`, `Query`, `State`, `Header`, ...), not axum's; only its last argument may read the body (`Json`, `String`, `Bytes`)"
)]
pub trait FromRequestHead: Sized {
    /// Extracts the value, or answers the request with a response.
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>>;

    /// What `Option<Self>` extracts: `None` when the request does not
    /// carry the value, an answer when it carries one that is not valid.
    ///
    /// By default any failure of [`from_head`](Self::from_head) counts as
    /// absence. [`Query`] and [`Path`] say more: a malformed value answers
    /// 400 even under `Option`, so that a client's mistake is not silently
    /// ignored.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::Query};
    /// use tower::ServiceExt;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Page { page: u32 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/items", |page: Option<Query<Page>>| match page {
    ///         Some(Query(page)) => format!("page {}", page.page),
    ///         None => "first page".to_owned(),
    ///     })
    ///     .compile()
    ///     .unwrap();
    ///
    /// let answer = |uri: &str| router.clone().oneshot(Request::get(uri).body(String::new()).unwrap());
    /// let response = answer("/items").await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "first page");
    /// let response = answer("/items?page=2").await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "page 2");
    /// assert_eq!(answer("/items?page=two").await.unwrap().status(), StatusCode::BAD_REQUEST);
    /// # }
    /// ```
    #[inline]
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        Ok(Self::from_head(context).ok())
    }

    /// Adds what the extractor needs of its router and route, so that
    /// [`Router::compile`](crate::Router::compile) can refuse a route that
    /// cannot give it: a state no router holds, parameters a `Path` cannot
    /// read.
    #[doc(hidden)]
    #[inline]
    fn needs(needs: &mut Needs) {
        let _ = needs;
    }
}

/// What a handler's argument that reads the head is, under a router of
/// state type `S`: any [`FromRequestHead`], and [`State<T>`](State) where
/// `S` gives a `T` (see [`FromRef`] and [`ByType`]). Implemented here for
/// those; implement [`FromRequestHead`] for an extractor of your own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be extracted from a request's head",
    label = "not an extractor of pronghorn's",
    note = "a `State<T>` under a `Router<S>` needs `T: FromRef<S>`; under a `Router` that names no state type, `T: Clone + Send + Sync + 'static`",
    note = "a handler's arguments are pronghorn extractors (`pronghorn::handler::Path`, `Query`, `State`, `Header`, ...), not axum's; only its last argument may read the body (`Json`, `String`, `Bytes`)"
)]
pub trait HeadArgument<S>: Sized {
    /// Extracts the value, or answers the request with a response.
    #[doc(hidden)]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>>;

    /// Adds what the argument needs of its router and route.
    #[doc(hidden)]
    fn needs(needs: &mut Needs);
}

impl<S, T: FromRequestHead> HeadArgument<S> for T {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        <T as FromRequestHead>::from_head(context)
    }

    #[inline]
    fn needs(needs: &mut Needs) {
        <T as FromRequestHead>::needs(needs);
    }
}

/// The head extractors among a handler's, a WebSocket handler's or a
/// prefix's arguments, as one tuple, under a router of state type `S`:
/// each is taken in order, and the first that refuses answers the request.
pub(crate) trait HeadExtractors<S>: Sized {
    fn extract(context: &RequestContext<'_>) -> Result<Self, Response<Body>>;

    fn needs(needs: &mut Needs);
}

macro_rules! head_extractors {
    ($($ty:ident),*) => {
        #[allow(
            non_snake_case,
            unused_variables,
            reason = "the extractors are named after their type parameters; no extractor uses no context"
        )]
        impl<S, $($ty: HeadArgument<S>,)*> HeadExtractors<S> for ($($ty,)*) {
            #[inline]
            fn extract(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
                Ok(($(<$ty as HeadArgument<S>>::from_head(context)?,)*))
            }

            #[inline]
            fn needs(needs: &mut Needs) {
                $(<$ty as HeadArgument<S>>::needs(needs);)*
            }
        }
    };
}

/// Calls the macro `$name` once for each list of type parameters that
/// arguments are written with: none (unless `nonempty`), `T1`, up to
/// `T1, …, T8`.
macro_rules! for_each_arity {
    ($name:ident) => {
        $name!();
        $crate::handler::for_each_arity!($name, nonempty);
    };
    ($name:ident, nonempty) => {
        $name!(T1);
        $name!(T1, T2);
        $name!(T1, T2, T3);
        $name!(T1, T2, T3, T4);
        $name!(T1, T2, T3, T4, T5);
        $name!(T1, T2, T3, T4, T5, T6);
        $name!(T1, T2, T3, T4, T5, T6, T7);
        $name!(T1, T2, T3, T4, T5, T6, T7, T8);
    };
}
pub(crate) use for_each_arity;

for_each_arity!(head_extractors);

/// A type of router state: its id, and its name for errors.
#[doc(hidden)]
pub type StateType = (std::any::TypeId, &'static str);

/// The [`StateType`] of `T`.
pub(crate) fn state_type<T: 'static>() -> StateType {
    (std::any::TypeId::of::<T>(), std::any::type_name::<T>())
}

/// What a handler's extractors need of its router and its route, checked
/// by [`Router::compile`](crate::Router::compile).
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Needs {
    /// The types of router state read.
    pub(crate) state: Vec<StateType>,
    /// What a `Path<T>` reads.
    pub(crate) path: Option<PathNeeds>,
    /// Whether a `MatchedPath` is read: a fallback has none.
    pub(crate) matched_path: bool,
}

/// What a `Path<T>` reads of its route's parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PathNeeds {
    /// The name of `T`.
    pub(crate) type_name: &'static str,
    /// Why `T` cannot be read from parameters of these names, whatever
    /// their values, if it cannot.
    pub(crate) misfit: fn(&[Box<str>]) -> Option<String>,
}

/// An extractor that consumes the request body: at most one per handler,
/// as its last argument.
///
/// Implement it for a body extractor of your own. Its future is polled
/// once where the handler is called (a body already received costs no
/// suspension); answering `Err` ends the request with that response before
/// the handler runs. Hold to [`RequestContext::body_limit`].
///
/// ```
/// use std::{future::Future, pin::Pin};
/// use bytes::Bytes;
/// use http::{Request, Response, StatusCode};
/// use http_body_util::{BodyExt, Limited};
/// use pronghorn::{Body, IntoResponse, Router, handler::{FromRequestBody, RequestContext}};
/// use tower::ServiceExt;
///
/// /// The body's lines that are not empty.
/// struct Lines(Vec<String>);
///
/// impl FromRequestBody for Lines {
///     type Future = Pin<Box<dyn Future<Output = Result<Self, Response<Body>>> + Send>>;
///
///     fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
///         let body = Limited::new(body, context.body_limit());
///         Box::pin(async move {
///             let Ok(body) = body.collect().await else {
///                 return Err((StatusCode::PAYLOAD_TOO_LARGE, "too long").into_response());
///             };
///             match String::from_utf8(body.to_bytes().to_vec()) {
///                 Ok(text) => Ok(Lines(text.lines().filter(|l| !l.is_empty()).map(str::to_owned).collect())),
///                 Err(_) => Err((StatusCode::BAD_REQUEST, "not UTF-8").into_response()),
///             }
///         })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/lines", |Lines(lines): Lines| format!("{} lines", lines.len()))
///     .body_limit(64)
///     .compile()
///     .unwrap();
///
/// let request = Request::post("/lines").body("one\n\ntwo\n".to_owned()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "2 lines");
///
/// let request = Request::post("/lines").body("x".repeat(65)).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be extracted from a request's body",
    label = "not a body extractor of pronghorn's",
    note = "a handler's last argument may read the body: `Json<T>`, `Form<T>`, `String`, `Bytes`, `Body`, the whole `Request<Body>`, or a type that implements `pronghorn::handler::FromRequestBody`"
)]
pub trait FromRequestBody: Sized {
    /// The future of the value. It is polled once where the handler is
    /// called: a body that is already complete costs no suspension.
    type Future: Future<Output = Result<Self, Response<Body>>> + Send + Unpin + 'static;

    /// Starts reading `body`.
    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future;
}

/// `None` when the request does not carry a `T`; see
/// [`FromRequestHead::from_head_optional`].
impl<T: FromRequestHead> FromRequestHead for Option<T> {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        T::from_head_optional(context)
    }
}
