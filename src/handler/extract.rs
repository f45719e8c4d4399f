//! Extractors: what a handler takes as arguments.

// A rejection is the response that answers the request. Boxing it would
// allocate on every rejection; moving it is a copy of a few words.
#![allow(clippy::result_large_err)]

use std::{
    borrow::Cow,
    fmt,
    future::Future,
    marker::PhantomData,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http::{
    HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri, request::Parts,
};
use http_body_util::{BodyExt, Limited, combinators::Collect};

use super::{
    IntoResponse,
    allowance::{BodyAllowance, Reservation},
    de,
    response::internal_error,
};
use http_body::Body as _;

use crate::{Body, params::Params};

/// What the router hands a handler beside the request: the parameters of
/// the matched route, the router's state and the body limit.
#[derive(Clone, Copy, Debug)]
pub struct RouteContext<'a> {
    pub(crate) pattern: &'a str,
    pub(crate) params: Params<'a>,
    pub(crate) state: &'a http::Extensions,
    pub(crate) body_limit: usize,
    pub(crate) body_timeout: Duration,
}

impl<'a> RouteContext<'a> {
    /// The context extractors read, for the head of `request` (its body is
    /// not read: the handler takes it apart).
    pub fn with_request<'p>(&self, request: &'p Request<Body>) -> RequestContext<'p>
    where
        'a: 'p,
    {
        RequestContext {
            request,
            pattern: self.pattern,
            params: self.params,
            state: self.state,
            body_limit: self.body_limit,
            body_timeout: self.body_timeout,
        }
    }
}

/// What synchronous extractors read: the request head, the route
/// parameters and the router's shared state.
#[derive(Debug)]
pub struct RequestContext<'a> {
    /// The request, for its head: the handler has its body.
    pub(crate) request: &'a Request<Body>,
    pub(crate) pattern: &'a str,
    pub(crate) params: Params<'a>,
    pub(crate) state: &'a http::Extensions,
    pub(crate) body_limit: usize,
    pub(crate) body_timeout: Duration,
}

impl<'a> RequestContext<'a> {
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
    pub fn head(&self) -> Parts {
        copy_head(self.request)
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

    /// The router's state of type `T`, if it has one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&'a T> {
        self.state.get::<T>()
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

impl FromRequestHead for Method {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.method().clone())
    }
}

impl FromRequestHead for Uri {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.uri().clone())
    }
}

impl FromRequestHead for HeaderMap {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.headers().clone())
    }
}

fn bad_request(message: String) -> Response<Body> {
    (StatusCode::BAD_REQUEST, message).into_response()
}

/// Route parameters by name, decoded and owned. Allocates; prefer
/// [`Path`] for typed values. A value that does not decode (`%FF`, not
/// UTF-8) answers 400 naming the parameter.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::RouteParams};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/{owner}/{repo}", |params: RouteParams| {
///         format!("{} by {}", params.get("repo").unwrap_or("?"), params.get("owner").unwrap_or("?"))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/ada/my%20engine").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "my engine by ada");
///
/// let request = Request::get("/ada/%FF").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::BAD_REQUEST);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteParams(pub Vec<(String, String)>);

impl RouteParams {
    /// The decoded value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl FromRequestHead for RouteParams {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        let params = context.params;
        params
            .iter_raw()
            .map(|(name, raw)| match crate::params::decode(raw) {
                Ok(value) => Ok((name.to_owned(), value.into_owned())),
                Err(error) => Err(bad_request(format!("route parameter `{name}`: {error}"))),
            })
            .collect::<Result<_, _>>()
            .map(RouteParams)
    }
}

/// Typed route parameters, deserialized with serde: a struct or map by
/// name, a tuple in the order of the pattern, `Vec<(String, String)>` for
/// names and values, or one value for a pattern with one parameter. Values
/// are percent-decoded (borrowed when nothing is escaped); one that does
/// not decode or parse answers 400 naming the parameter. A type that cannot
/// read its route's parameters whatever the path (a tuple of another
/// length, a struct field no parameter names) is refused by
/// [`Router::compile`](crate::Router::compile), naming the route.
///
/// ```
/// use pronghorn::{Router, handler::Path};
///
/// #[derive(serde::Deserialize)]
/// struct File {
///     name: String,
///     ext: String,
/// }
///
/// let router = Router::new()
///     .get("/users/{id}", |Path(id): Path<u64>| format!("user {id}"))
///     .get("/posts/{user}/{post}", |Path((user, post)): Path<(u64, u32)>| format!("{user}/{post}"))
///     .get("/files/{name}.{ext}", |Path(file): Path<File>| format!("{} {}", file.name, file.ext))
///     .compile()
///     .unwrap();
///
/// // `/docs/{name}` names no `ext`: every request would fail.
/// let refused = Router::new().get("/docs/{name}", |Path(file): Path<File>| file.name).compile();
/// assert!(refused.unwrap_err().to_string().contains("missing field `ext`"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Path<T>(pub T);

impl<T: serde::de::DeserializeOwned> FromRequestHead for Path<T> {
    fn needs(needs: &mut Needs) {
        needs.path = Some(PathNeeds {
            type_name: std::any::type_name::<T>(),
            misfit: de::misfit::<T>,
        });
    }

    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::deserialize(context.params).map_err(Self::rejection)
    }

    /// `None` when the route's parameters do not fit `T` (a route without
    /// them); 400 when a value does not decode or parse.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        optional(Self::deserialize(context.params), Self::rejection)
    }
}

impl<T: serde::de::DeserializeOwned> Path<T> {
    fn deserialize(params: Params<'_>) -> Result<Self, de::Error> {
        let pairs = params
            .iter_raw()
            .map(|(name, raw)| match crate::params::decode(raw) {
                Ok(value) => Ok((Cow::Borrowed(name), value)),
                Err(error) => Err(de::Error::value(format!("`{name}`: {error}"))),
            });
        T::deserialize(de::Pairs::new(pairs, params.len())).map(Path)
    }

    fn rejection(error: de::Error) -> Response<Body> {
        bad_request(format!("invalid route parameters: {error}"))
    }
}

/// An optional extractor's answer: `None` when the keys do not fit the
/// type, whatever their values; a rejection when a value is malformed.
fn optional<T>(
    result: Result<T, de::Error>,
    rejection: impl FnOnce(de::Error) -> Response<Body>,
) -> Result<Option<T>, Response<Body>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.shape => Ok(None),
        Err(error) => Err(rejection(error)),
    }
}

/// The query string, deserialized with serde from `application/x-www-form-urlencoded`
/// pairs (`+` is a space): a struct or map by key, or `Vec<(String, String)>`
/// for every pair in order, repeated keys included (a struct's field given
/// twice answers 400, and a map keeps the last value). A missing query is
/// an empty one; a value that does not decode or parse answers 400 naming
/// the key. `Option<Query<T>>` is `None` when the query lacks a field `T`
/// needs, and still answers 400 for a malformed value.
///
/// ```
/// use pronghorn::{Router, handler::Query};
///
/// #[derive(serde::Deserialize)]
/// struct Page {
///     page: u32,
///     per_page: Option<u32>,
/// }
///
/// let router = Router::new()
///     .get("/items", |Query(page): Query<Page>| format!("{} {:?}", page.page, page.per_page))
///     .compile()
///     .unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Query<T>(pub T);

/// Decodes one form-encoded component: `+` is a space, then percent-decoding.
fn form_decode(raw: &str) -> Result<Cow<'_, str>, de::Error> {
    let spaced = if raw.contains('+') {
        Cow::Owned(raw.replace('+', " "))
    } else {
        Cow::Borrowed(raw)
    };
    let decoded = match &spaced {
        Cow::Borrowed(text) => crate::params::percent_decode(text),
        Cow::Owned(text) => crate::params::percent_decode(text).map(|v| Cow::Owned(v.into_owned())),
    };
    decoded.map_err(|error| de::Error::value(error.to_string()))
}

impl<T: serde::de::DeserializeOwned> FromRequestHead for Query<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::deserialize(context).map_err(Self::rejection)
    }

    /// `None` when the query string lacks what `T` needs, or has keys `T`
    /// refuses; 400 when a value does not decode or parse.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        optional(Self::deserialize(context), Self::rejection)
    }
}

impl<T: serde::de::DeserializeOwned> Query<T> {
    fn deserialize(context: &RequestContext<'_>) -> Result<Self, de::Error> {
        from_pairs(context.uri().query().unwrap_or("")).map(Query)
    }

    fn rejection(error: de::Error) -> Response<Body> {
        bad_request(format!("invalid query string: {error}"))
    }
}

/// `T` from `key=value&…` text, as a query string or a form writes it.
fn from_pairs<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, de::Error> {
    let pairs = || text.split('&').filter(|pair| !pair.is_empty());
    let decoded = pairs().map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        Ok((form_decode(key)?, form_decode(value)?))
    });
    T::deserialize(de::Pairs::new(decoded, pairs().count()))
}

/// A form sent as the body (`application/x-www-form-urlencoded`),
/// deserialized into `T` as [`Query`] reads a query string. A request of
/// another content type answers 415; a body that is not UTF-8, 400; a form
/// that does not fit `T`, 422, as axum answers. The body limit applies.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Form};
/// use tower::ServiceExt;
///
/// #[derive(serde::Deserialize)]
/// struct Login { user: String, remember: bool }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/login", |Form(login): Form<Login>| format!("{} {}", login.user, login.remember))
///     .compile()
///     .unwrap();
/// let request = Request::post("/login")
///     .header("content-type", "application/x-www-form-urlencoded")
///     .body("user=ada+l&remember=true".to_owned())
///     .unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "ada l true");
///
/// let request = Request::post("/login").body("user=ada".to_owned()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Form<T>(pub T);

impl<T> FromRequestBody for Form<T>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let form = media_type(context.headers()).is_some_and(|essence| {
            essence.eq_ignore_ascii_case(b"application/x-www-form-urlencoded")
        });
        let refused = (!form).then(|| {
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "expected a request with `content-type: application/x-www-form-urlencoded`",
            )
                .into_response()
        });
        BodyFuture::new(body, context, refused, |bytes| {
            let text = std::str::from_utf8(&bytes)
                .map_err(|error| bad_request(format!("form body is not UTF-8: {error}")))?;
            from_pairs(text).map(Form).map_err(|error| {
                let message = format!("invalid form body: {error}");
                (StatusCode::UNPROCESSABLE_ENTITY, message).into_response()
            })
        })
    }
}

/// The media type the request's `content-type` declares, without its
/// parameters. Media types are ASCII and case-insensitive: compared as
/// bytes, without allocating.
fn media_type(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(http::header::CONTENT_TYPE)?.as_bytes();
    let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
    Some(value[..end].trim_ascii())
}

/// The answer to a body that declares more than `limit` bytes (hyper's
/// declares what `content-length` says), before a byte of it is read: a
/// client waiting for `100 Continue` is not told to send.
pub(super) fn declared_too_large(body: &Body, limit: usize) -> Option<Response<Body>> {
    (body.size_hint().lower() > limit as u64).then(|| too_large(limit))
}

/// The body itself, as it streams in, for a handler that reads it at its
/// own pace (its last argument). The body limit and the body timeout
/// apply: past the limit, or when the body is not all there by the
/// deadline, the stream ends with an error. A body declaring more than the
/// limit is answered 413 before the handler runs.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, Router};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/count", |body: Body| async move {
///         let mut body = std::pin::pin!(body);
///         let mut bytes = 0;
///         while let Some(Ok(frame)) = body.frame().await {
///             bytes += frame.data_ref().map_or(0, |data| data.len());
///         }
///         format!("{bytes} bytes")
///     })
///     .compile()
///     .unwrap();
/// let request = Request::post("/count").body("12345".to_owned()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "5 bytes");
/// # }
/// ```
impl FromRequestBody for Body {
    type Future = std::future::Ready<Result<Self, Response<Body>>>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        std::future::ready(streamed(body, context.body_limit, context.body_timeout))
    }
}

/// A body a handler streams itself: refused at once if it declares more
/// than `limit` bytes, and otherwise cut with an error at `limit` bytes or
/// when it is not all there within `timeout`.
pub(super) fn streamed(
    body: Body,
    limit: usize,
    timeout: Duration,
) -> Result<Body, Response<Body>> {
    match declared_too_large(&body, limit) {
        Some(refused) => Err(refused),
        None => Ok(Body::new(Streamed {
            body: Limited::new(body, limit),
            deadline: Deadline::new(timeout),
        })),
    }
}

/// A body a handler streams, with its limit and its deadline.
struct Streamed {
    body: Limited<Body>,
    deadline: Deadline,
}

impl http_body::Body for Streamed {
    type Data = Bytes;
    type Error = crate::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Pending if this.deadline.poll_passed(cx) => {
                Poll::Ready(Some(Err(this.deadline.passed().into())))
            }
            polled => polled,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// `None` when the request does not carry a `T`; see
/// [`FromRequestHead::from_head_optional`].
impl<T: FromRequestHead> FromRequestHead for Option<T> {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        T::from_head_optional(context)
    }
}

/// A header name known at compile time, for [`Header`].
///
/// ```
/// use http::HeaderName;
/// use pronghorn::handler::{Header, NamedHeader};
///
/// struct RequestId;
///
/// impl NamedHeader for RequestId {
///     const NAME: HeaderName = HeaderName::from_static("x-request-id");
/// }
///
/// fn handler(Header(id, _): Header<RequestId>) -> String {
///     format!("request {}", id.to_str().unwrap_or("?"))
/// }
/// # let _ = handler;
/// ```
pub trait NamedHeader {
    /// The header's name.
    const NAME: HeaderName;
}

/// The value of one request header; a missing header answers 400 naming
/// it. Take `Option<Header<N>>` where it may be absent. Names of common
/// headers are in [`headers`]; [`NamedHeader`] names one of your own.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{Header, headers::{Authorization, UserAgent}}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |Header(token, _): Header<Authorization>, agent: Option<Header<UserAgent>>| {
///         let agent = agent.as_ref().and_then(|Header(value, _)| value.to_str().ok());
///         format!("{} from {}", token.len(), agent.unwrap_or("someone"))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/").header("authorization", "secret").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "6 from someone");
///
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// let text = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(text, "missing request header `authorization`");
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Header<N>(pub HeaderValue, pub PhantomData<N>);

impl<N: NamedHeader> FromRequestHead for Header<N> {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match context.headers().get(N::NAME) {
            Some(value) => Ok(Header(value.clone(), PhantomData)),
            None => Err(bad_request(format!("missing request header `{}`", N::NAME))),
        }
    }
}

/// Names of common headers, for [`Header`].
pub mod headers {
    use http::{HeaderName, header};

    use super::NamedHeader;

    macro_rules! named {
        ($($(#[$doc:meta])* $ty:ident => $name:expr),*) => {$(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;

            impl NamedHeader for $ty {
                const NAME: HeaderName = $name;
            }
        )*};
    }

    named! {
        /// `accept`
        Accept => header::ACCEPT,
        /// `authorization`
        Authorization => header::AUTHORIZATION,
        /// `content-type`
        ContentType => header::CONTENT_TYPE,
        /// `cookie`
        Cookie => header::COOKIE,
        /// `host`
        Host => header::HOST,
        /// `origin`
        Origin => header::ORIGIN,
        /// `user-agent`
        UserAgent => header::USER_AGENT
    }
}

/// Shared state registered with [`Router::state`](crate::Router::state),
/// cloned for each call (wrap it in an `Arc`).
///
/// A route whose handler asks for a state of a type no router holds is
/// refused by [`Router::compile`](crate::Router::compile), naming the type.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// use http::Request;
/// use pronghorn::{Router, handler::State};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let hits = Arc::new(AtomicU64::new(0));
/// let router = Router::new()
///     .get("/hit", |State(hits): State<Arc<AtomicU64>>| {
///         format!("hit {}", hits.fetch_add(1, Ordering::Relaxed) + 1)
///     })
///     .state(hits.clone())
///     .compile()
///     .unwrap();
///
/// for _ in 0..3 {
///     router.clone().oneshot(Request::get("/hit").body(String::new()).unwrap()).await.unwrap();
/// }
/// assert_eq!(hits.load(Ordering::Relaxed), 3);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromRequestHead for State<T> {
    fn needs(needs: &mut Needs) {
        needs.state.push(state_type::<T>());
    }

    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match context.state::<T>() {
            Some(state) => Ok(State(state.clone())),
            None => {
                error_limited!(
                    state = std::any::type_name::<T>(),
                    "pronghorn: a handler asked for state the router was not given"
                );
                Err(internal_error())
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a body extractor: collects the body within the limit
    /// and converts it. A named type, not a box: a body that is already
    /// complete is read without allocating for the future.
    pub struct BodyFuture<T> {
        #[pin]
        collect: Option<Collect<Limited<Body>>>,
        // What the body may take of its connection's and its server's
        // allowances, given back when the future is dropped.
        reservation: Option<Reservation>,
        deadline: Deadline,
        // Why the body is refused before it is read (a wrong content type,
        // a declared length over the limit).
        refused: Option<Response<Body>>,
        limit: usize,
        convert: fn(Bytes) -> Result<T, Response<Body>>,
    }
}

/// The answer to a body its HTTP/2 connection has no allowance left for.
#[cold]
fn connection_busy() -> Response<Body> {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "too many request bodies being read on this connection at once",
    )
        .into_response()
}

/// The answer to a body that waited for room on the server until its
/// deadline.
#[cold]
fn server_busy() -> Response<Body> {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "too many request bodies being read at once; try again later",
    )
        .into_response()
}

/// The answer to a body over `limit` bytes.
fn too_large(limit: usize) -> Response<Body> {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body larger than the limit of {limit} bytes"),
    )
        .into_response()
}

/// A body extractor's deadline, armed the second time the body keeps the
/// extractor waiting.
///
/// Not the first: served by hyper, the extractor is first polled before
/// hyper has passed on the body bytes it read with the head, and polled
/// again in the same turn of the connection, when a body sent with its
/// head is complete. A request whose body arrives with it so costs no
/// timer; one that waits for it costs one (boxed: body futures are
/// `Unpin`).
#[cfg(feature = "server")]
#[derive(Debug)]
struct Deadline {
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    timeout: Duration,
    waited: bool,
}

#[cfg(feature = "server")]
impl Deadline {
    fn new(timeout: Duration) -> Self {
        Self {
            sleep: None,
            timeout,
            waited: false,
        }
    }

    /// Whether the deadline passed, the body not being ready. Outside a
    /// Tokio runtime there is no timer, and no deadline.
    fn poll_passed(&mut self, cx: &mut Context<'_>) -> bool {
        if self.sleep.is_none() {
            if !std::mem::replace(&mut self.waited, true)
                || tokio::runtime::Handle::try_current().is_err()
            {
                return false;
            }
            self.sleep = Some(Box::pin(tokio::time::sleep(self.timeout)));
        }
        let sleep = self.sleep.as_mut().expect("armed above");
        sleep.as_mut().poll(cx).is_ready()
    }

    /// What a body cut at the deadline fails with.
    fn passed(&self) -> String {
        format!("request body not received within {:?}", self.timeout)
    }

    /// Arms the deadline at the next poll, the first wait included.
    fn arm(&mut self) -> &mut Self {
        self.waited = true;
        self
    }
}

/// Without a runtime's timer, no deadline.
#[cfg(not(feature = "server"))]
#[derive(Debug)]
struct Deadline;

#[cfg(not(feature = "server"))]
impl Deadline {
    fn new(_: Duration) -> Self {
        Self
    }

    fn poll_passed(&mut self, _: &mut Context<'_>) -> bool {
        false
    }

    fn passed(&self) -> String {
        unreachable!("no deadline passes without a timer")
    }

    fn arm(&mut self) -> &mut Self {
        self
    }
}

impl<T> BodyFuture<T> {
    fn new(
        body: Body,
        context: &RequestContext<'_>,
        refused: Option<Response<Body>>,
        convert: fn(Bytes) -> Result<T, Response<Body>>,
    ) -> Self {
        let limit = context.body_limit;
        // A body that says it is longer than the limit (hyper's says what
        // `content-length` declares) is refused before it is polled: a
        // client waiting for `100 Continue` is not told to send.
        let mut refused = refused.or_else(|| declared_too_large(&body, limit));
        // What the body may take of its connection's allowance (HTTP/2) and
        // its server's.
        let mut reservation = None;
        if let (None, Some(allowance)) = (
            &refused,
            context.request.extensions().get::<BodyAllowance>(),
        ) {
            let declared = body
                .size_hint()
                .exact()
                .and_then(|n| usize::try_from(n).ok());
            reservation = allowance.reserve(declared.unwrap_or(limit).min(limit));
            refused = reservation.is_none().then(connection_busy);
        }
        Self {
            collect: refused
                .is_none()
                .then(|| Limited::new(body, limit).collect()),
            reservation,
            deadline: Deadline::new(context.body_timeout),
            refused,
            limit,
            convert,
        }
    }
}

impl<T> fmt::Debug for BodyFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyFuture")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl<T> Future for BodyFuture<T> {
    type Output = Result<T, Response<Body>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(collect) = this.collect.as_pin_mut() else {
            let refused = this.refused.take().expect("future polled after completion");
            return Poll::Ready(Err(refused));
        };
        if let Some(reservation) = this.reservation {
            if reservation.poll_room(cx).is_pending() {
                // Only room given back wakes the wait: the deadline is
                // armed at once.
                if this.deadline.arm().poll_passed(cx) {
                    return Poll::Ready(Err(server_busy()));
                }
                return Poll::Pending;
            }
        }
        let collected = match collect.poll(cx) {
            Poll::Ready(collected) => collected,
            Poll::Pending if this.deadline.poll_passed(cx) => {
                return Poll::Ready(Err((
                    StatusCode::REQUEST_TIMEOUT,
                    "request body not received within the time allowed",
                )
                    .into_response()));
            }
            Poll::Pending => return Poll::Pending,
        };
        Poll::Ready(match collected {
            Ok(collected) => (this.convert)(collected.to_bytes()),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => {
                Err(too_large(*this.limit))
            }
            Err(error) => Err(bad_request(format!(
                "request body could not be read: {error}"
            ))),
        })
    }
}

macro_rules! body_extractor {
    ($ty:ty, $convert:expr) => {
        impl FromRequestBody for $ty {
            type Future = BodyFuture<Self>;

            fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
                BodyFuture::new(body, context, None, $convert)
            }
        }
    };
}

body_extractor!(Bytes, Ok);
body_extractor!(String, |bytes: Bytes| {
    String::from_utf8(bytes.to_vec())
        .map_err(|error| bad_request(format!("request body is not UTF-8: {error}")))
});

/// Whether the request declares a JSON body (`application/json` or
/// `application/*+json`).
#[cfg(feature = "json")]
fn is_json(headers: &HeaderMap) -> bool {
    let Some((kind, subtype)) =
        media_type(headers).and_then(|essence| essence.split_at_checked(12))
    else {
        return false;
    };
    kind.eq_ignore_ascii_case(b"application/")
        && (subtype.eq_ignore_ascii_case(b"json")
            || subtype.len() > 5 && subtype[subtype.len() - 5..].eq_ignore_ascii_case(b"+json"))
}

/// A JSON request body or response (feature `json`).
///
/// As an extractor (a handler's last argument) it reads the body within
/// the router's [body limit](crate::Router::body_limit) and answers 413
/// over it, 415 when the content type is not JSON (`application/json` or
/// `application/*+json`), 400 with the parser's message when the body is
/// not JSON, and 422 when it is JSON but not the value expected (a field
/// missing, a string for a number), as axum answers. As an answer it
/// serialises its value with `content-type: application/json`.
///
/// ```
/// use http::{Request, StatusCode, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Json};
/// use serde::{Deserialize, Serialize};
/// use tower::ServiceExt;
///
/// #[derive(Deserialize, Serialize)]
/// struct Point { x: i32, y: i32 }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/flip", |Json(p): Json<Point>| Json(Point { x: p.y, y: p.x }))
///     .compile()
///     .unwrap();
/// let post = |content_type: &str, body: &str| {
///     Request::post("/flip")
///         .header(header::CONTENT_TYPE, content_type)
///         .body(body.to_owned())
///         .unwrap()
/// };
///
/// let response = router.clone().oneshot(post("application/json", r#"{"x":1,"y":2}"#)).await.unwrap();
/// assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(body, r#"{"x":2,"y":1}"#);
///
/// let response = router.clone().oneshot(post("application/json", r#"{"x":1"#)).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// let response = router.clone().oneshot(post("application/json", r#"{"x":1}"#)).await.unwrap();
/// assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
/// let response = router.oneshot(post("text/plain", r#"{"x":1,"y":2}"#)).await.unwrap();
/// assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
/// # }
/// ```
#[cfg(feature = "json")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

#[cfg(feature = "json")]
impl<T> FromRequestBody for Json<T>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let refused = (!is_json(context.headers())).then(|| {
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "expected a request with `content-type: application/json`",
            )
                .into_response()
        });
        BodyFuture::new(body, context, refused, |bytes| {
            serde_json::from_slice(&bytes).map(Json).map_err(|error| {
                // As axum: well-formed JSON of the wrong shape is 422.
                let status = match error.classify() {
                    serde_json::error::Category::Data => StatusCode::UNPROCESSABLE_ENTITY,
                    _ => StatusCode::BAD_REQUEST,
                };
                (status, format!("invalid JSON body: {error}")).into_response()
            })
        })
    }
}

#[cfg(feature = "json")]
impl<T: serde::Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response<Body> {
        match serde_json::to_vec(&self.0) {
            Ok(bytes) => {
                let mut response = Response::new(Body::from(bytes));
                response
                    .headers_mut()
                    .insert(http::header::CONTENT_TYPE, super::response::JSON);
                response
            }
            Err(error) => {
                error_limited!(%error, "pronghorn: a JSON response could not be serialised");
                internal_error()
            }
        }
    }
}
