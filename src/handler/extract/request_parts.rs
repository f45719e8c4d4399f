//! The request's own parts: its method, version, URI (and the URI as
//! received, [`OriginalUri`]), headers, head, and the whole request.

use http::{HeaderMap, Method, Request, Response, Uri, Version};

use super::{FromRequestBody, FromRequestHead, MatchedPath, RequestContext, streamed};
use crate::body::Body;

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
