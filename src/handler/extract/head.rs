//! Extractors of the request's head: its method, URI and headers, the
//! route's parameters (`Path`, `RouteParams`), the query (`Query`), one
//! header (`Header`), the router's state (`State`), and `Option` of any.

// A rejection is the response that answers the request: see `super`.
#![expect(
    clippy::result_large_err,
    reason = "a rejection is the response that answers the request: boxing it would allocate on every rejection"
)]

use std::{borrow::Cow, marker::PhantomData};

use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, Uri, Version};

use super::{
    FailedToDeserializePathParams, FromRequestHead, HeaderRejection, Needs, PathErrorKind,
    PathNeeds, PathRejection, QueryRejection, Rejection, RequestContext, state_type,
};
use crate::{
    body::Body,
    handler::{de, response::internal_error},
    params::Params,
};

impl FromRequestHead for Method {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.method().clone())
    }
}

/// The request's HTTP version.
///
/// ```
/// use http::{Request, Version};
/// use pronghorn::Router;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |version: Version| format!("{version:?}"))
///     .compile()
///     .unwrap();
/// let request = Request::get("/").version(Version::HTTP_2).body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// # use http_body_util::BodyExt;
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "HTTP/2.0");
/// # }
/// ```
impl FromRequestHead for Version {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.version())
    }
}

/// The URI the route sees: below a [nest](crate::Router::nest)'s base,
/// without it, as axum's `nest` strips it (the whole URI is the
/// [`OriginalUri`](crate::handler::OriginalUri)).
///
/// ```
/// use http::{Request, Uri};
/// use http_body_util::BodyExt;
/// use pronghorn::Router;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let api = Router::new().get("/users", |uri: Uri| uri.to_string());
/// let router = Router::new().nest("/api", api).compile().unwrap();
/// let request = Request::get("/api/users?page=2").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "/users?page=2");
/// # }
/// ```
impl FromRequestHead for Uri {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.route_uri())
    }
}

/// A copy of the request's head, as axum's `http::request::Parts`
/// extractor: its URI the one the route sees (below a nest's base, without
/// it), its extensions the request's.
///
/// ```
/// use http::{Request, request::Parts};
/// use http_body_util::BodyExt;
/// use pronghorn::Router;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |parts: Parts| format!("{} {}", parts.method, parts.uri))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/?q").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "GET /?q");
/// # }
/// ```
impl FromRequestHead for http::request::Parts {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.head())
    }
}

impl FromRequestHead for HeaderMap {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(context.headers().clone())
    }
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
                Err(error) => Err(context.reject(bad_request(
                    "RouteParams",
                    format!("route parameter `{name}`: {error}"),
                ))),
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
        Self::deserialize(context.params)
            .map_err(|error| context.reject(Self::rejection(error).into()))
    }

    /// `None` when the route's parameters do not fit `T` (a route without
    /// them); 400 when a value does not decode or parse.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        optional(context, Self::deserialize(context.params), |e| {
            Self::rejection(e).into()
        })
    }
}

/// The route's parameters, or why they do not read as `T`, for the handler
/// to answer itself.
impl<T: serde::de::DeserializeOwned> FromRequestHead for Result<Path<T>, PathRejection> {
    fn needs(needs: &mut Needs) {
        Path::<T>::needs(needs);
    }

    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Path::deserialize(context.params)
            .map_err(|error| Path::<T>::rejection(error).worded(context.answers)))
    }
}

impl<T: serde::de::DeserializeOwned> Path<T> {
    /// The parameters read as `T`, each value a string borrowed by what
    /// reads it, as axum hands them: the path's own text where it needed
    /// no decoding, else its decoded copy.
    fn deserialize(params: Params<'_>) -> Result<Self, de::Error> {
        let count = params.len();
        if !params.iter_raw().any(|(_, raw)| raw.contains('%')) {
            let pairs = params
                .iter_raw()
                .map(|(name, raw)| Ok((Cow::Borrowed(name), Cow::Borrowed(raw))));
            return T::deserialize(de::Pairs::of_path(pairs, count)).map(Path);
        }
        let decoded = (params.iter_raw())
            .map(|(name, raw)| match crate::params::decode(raw) {
                Ok(value) => Ok((name, value)),
                Err(error) => Err((name, raw, error)),
            })
            .collect::<Result<Vec<_>, _>>();
        let decoded = decoded.map_err(|(name, raw, error)| {
            de::Error::failed(de::Failed {
                key: name.to_owned(),
                value: raw.to_owned(),
                at: de::At::Key,
                expected: None,
                detail: error.to_string(),
                not_utf8: true,
            })
        })?;
        let pairs = (decoded.iter())
            .map(|(name, value)| Ok((Cow::Borrowed(*name), Cow::Borrowed(value.as_ref()))));
        T::deserialize(de::Pairs::of_path(pairs, count)).map(Path)
    }

    fn rejection(error: de::Error) -> PathRejection {
        let kind = match error.failed.as_deref() {
            Some(failed) if failed.not_utf8 => PathErrorKind::InvalidUtf8InPathParam {
                key: failed.key.clone(),
            },
            Some(failed) => match (failed.expected, failed.at) {
                (Some(expected_type), de::At::Single) => PathErrorKind::ParseError {
                    value: failed.value.clone(),
                    expected_type,
                },
                (Some(expected_type), de::At::Index(index)) => PathErrorKind::ParseErrorAtIndex {
                    index,
                    value: failed.value.clone(),
                    expected_type,
                },
                (Some(expected_type), de::At::Key) => PathErrorKind::ParseErrorAtKey {
                    key: failed.key.clone(),
                    value: failed.value.clone(),
                    expected_type,
                },
                (None, _) => PathErrorKind::DeserializeError {
                    key: failed.key.clone(),
                    value: failed.value.clone(),
                    message: failed.detail.clone(),
                },
            },
            None => PathErrorKind::Message(error.message.clone()),
        };
        let rejection = bad_request("Path", format!("invalid route parameters: {error}"))
            .or_as_axum(format!("Invalid URL: {kind}"));
        PathRejection::FailedToDeserializePathParams(FailedToDeserializePathParams::new(
            rejection, kind,
        ))
    }
}

/// A 400 of `extractor`, saying what of the request does not read as it
/// needs.
fn bad_request(extractor: &'static str, message: String) -> Rejection {
    Rejection::new(extractor, http::StatusCode::BAD_REQUEST, message)
}

/// An optional extractor's answer: `None` when the keys do not fit the
/// type, whatever their values; a rejection when a value is malformed.
fn optional<T>(
    context: &RequestContext<'_>,
    result: Result<T, de::Error>,
    rejection: impl FnOnce(de::Error) -> Rejection,
) -> Result<Option<T>, Response<Body>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.shape => Ok(None),
        Err(error) => Err(context.reject(rejection(error))),
    }
}

/// The query string, deserialized with serde from `application/x-www-form-urlencoded`
/// pairs (`+` is a space): a struct or map by key, or `Vec<(String, String)>`
/// for every pair in order, repeated keys included (a struct's field given
/// twice answers 400, and a map keeps the last value). A missing query is
/// an empty one. Escapes are read as `form_urlencoded` (and axum) reads
/// them: a malformed one (`?next=%ZZ`) stays as text, bytes that are not
/// UTF-8 become U+FFFD. A value that does not parse answers 400 naming the
/// key. `Option<Query<T>>` is `None` when the query lacks a field `T`
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

/// Decodes one form-encoded component as `form_urlencoded` (and so axum)
/// reads it: `+` is a space, then lenient percent-decoding (a malformed
/// escape stays as text, bytes that are not UTF-8 become U+FFFD).
fn form_decode(raw: &str) -> Result<Cow<'_, str>, de::Error> {
    let spaced = if raw.contains('+') {
        Cow::Owned(raw.replace('+', " "))
    } else {
        Cow::Borrowed(raw)
    };
    Ok(match &spaced {
        Cow::Borrowed(text) => crate::params::percent_decode_lenient(text),
        Cow::Owned(text) => Cow::Owned(crate::params::percent_decode_lenient(text).into_owned()),
    })
}

impl<T: serde::de::DeserializeOwned> FromRequestHead for Query<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::deserialize(context).map_err(|error| context.reject(Self::rejection(error)))
    }

    /// `None` when the query string lacks what `T` needs, or has keys `T`
    /// refuses; 400 when a value does not parse.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        optional(context, Self::deserialize(context), Self::rejection)
    }
}

/// The query, or why it does not read as `T`, for the handler to answer
/// itself.
impl<T: serde::de::DeserializeOwned> FromRequestHead for Result<Query<T>, QueryRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Query::deserialize(context).map_err(|error| {
            QueryRejection::of(Query::<T>::rejection(error).worded(context.answers))
        }))
    }
}

impl<T: serde::de::DeserializeOwned> Query<T> {
    fn deserialize(context: &RequestContext<'_>) -> Result<Self, de::Error> {
        from_pairs(context.uri().query().unwrap_or("")).map(Query)
    }

    /// The query of `uri`, outside a router, as axum's
    /// `Query::try_from_uri`: what the extractor would read of a request
    /// with that URI.
    ///
    /// ```
    /// use pronghorn::handler::Query;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Page { page: u32 }
    ///
    /// let uri = "/items?page=2".parse().unwrap();
    /// assert_eq!(Query::<Page>::try_from_uri(&uri).unwrap().0.page, 2);
    /// let bad = "/items?page=x".parse().unwrap();
    /// assert_eq!(Query::<Page>::try_from_uri(&bad).unwrap_err().status(), http::StatusCode::BAD_REQUEST);
    /// ```
    pub fn try_from_uri(uri: &Uri) -> Result<Self, QueryRejection> {
        from_pairs(uri.query().unwrap_or(""))
            .map(Query)
            .map_err(|error| QueryRejection::of(Self::rejection(error)))
    }

    fn rejection(error: de::Error) -> Rejection {
        let axum = format!("Failed to deserialize query string: {}", error.with_path());
        bad_request("Query", format!("invalid query string: {error}")).or_as_axum(axum)
    }
}

/// `T` from `key=value&…` text, as a query string or a form writes it.
pub(super) fn from_pairs<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, de::Error> {
    let pairs = || text.split('&').filter(|pair| !pair.is_empty());
    let decoded = pairs().map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        Ok((form_decode(key)?, form_decode(value)?))
    });
    T::deserialize(de::Pairs::new(decoded, pairs().count()))
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
        Self::find(context).map_err(|rejection| context.reject(rejection.0))
    }
}

/// The header, or the rejection of a request without it, for the handler
/// to answer itself.
impl<N: NamedHeader> FromRequestHead for Result<Header<N>, HeaderRejection> {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Header::find(context).map_err(|HeaderRejection(rejection)| {
            HeaderRejection(rejection.worded(context.answers))
        }))
    }
}

impl<N: NamedHeader> Header<N> {
    fn find(context: &RequestContext<'_>) -> Result<Self, HeaderRejection> {
        match context.headers().get(N::NAME) {
            Some(value) => Ok(Header(value.clone(), PhantomData)),
            None => Err(HeaderRejection(
                bad_request("Header", format!("missing request header `{}`", N::NAME))
                    .or_as_axum(format!("Header of type `{}` was missing", N::NAME)),
            )),
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
