//! The answers no route gives — 404, 405 with `Allow`, the automatic
//! OPTIONS, 426 for a plain GET to a WebSocket route — and [`Answers`],
//! the conventions a router answers by where pronghorn's and axum's
//! differ. How each of them looks is decided here alone; the router
//! decides which one a request gets.

use http::{HeaderValue, Response, StatusCode, header};

use super::{FromRequestHead, IntoResponse, RequestContext};
use crate::body::Body;

/// The `Allow` of a 405 that a route's `route_layer`s wrap, in the
/// request's extensions while they have it: the router's own 405 below
/// them answers with it.
#[derive(Clone, Debug)]
pub(crate) struct Allowed(HeaderValue);

impl Allowed {
    /// The `Allow` of a path's 405.
    pub(crate) fn new(allow: HeaderValue) -> Self {
        Self(allow)
    }
}

impl FromRequestHead for Allowed {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        (context.extensions().get::<Allowed>().cloned())
            .ok_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
    }
}

/// The conventions a router answers by where pronghorn's and axum's
/// differ, set with [`Router::answers`](crate::Router::answers).
///
/// | | `Pronghorn` (the default) | `Axum` |
/// | --- | --- | --- |
/// | the router's own 404 and 405 | `text/plain` bodies, `Not Found` and `Method Not Allowed` | empty, with no content type |
/// | `Allow` of a 405 | `GET, POST, HEAD`: registration order, `HEAD` last | `GET,HEAD,POST`: `HEAD` after `GET` |
/// | OPTIONS on a path routed for other methods | 204 with `Allow`, after the prefix hooks (which may answer a preflight) | 405 with `Allow` |
/// | a trailing slash, an empty segment | ignored: `/users/` is `/users` | kept: `/users/` matches a route registered as `/users/` only (`/users` and `/users/` may be two routes), `/a//b` no route without a catch-all |
/// | which route answers | the method's routes first, then those of any method: `GET /admin` goes to `GET /{*path}` before `ANY /admin`; a node's parameters in registration order | the most specific path first, then the method among its routes (else 405); a parameter with text (`a{c}c`) before a bare one; a nested router's fallback competes as `/base/{*rest}` |
/// | an extractor's rejection | pronghorn's words: ``invalid query string: `limit`: cannot parse `x` as u32: …`` | axum's: `Failed to deserialize query string: limit: …`, `Invalid URL: Cannot parse ...`, … |
///
/// They are chosen once for an app: every answer, match and rejection
/// follows the setting of the router that is compiled, and a router
/// nested, merged or given to `nest_service` follows it. Either way, a
/// rejection names the field at
/// fault (`items[1].id: invalid type: …` in a JSON body), and a
/// [`Router::rejection`](crate::Router::rejection) shape is handed the
/// rejection worded as set.
///
/// pronghorn's own conventions are the default: a 404 that says so, an
/// OPTIONS answered as RFC 9110 describes, and a path that means the same
/// with or without a stray slash. `Axum` answers as an application ported
/// from axum, and its tests, expect.
///
/// ```
/// use http::{Method, Request, StatusCode, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, router::{Answers, get}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .route("/users", get(|| "all").post(|| "created"))
///     .answers(Answers::Axum)
///     .compile()
///     .unwrap();
/// let answer = |method: Method, path: &str| {
///     let request = Request::builder().method(method).uri(path).body(String::new()).unwrap();
///     router.clone().oneshot(request)
/// };
/// let refused = answer(Method::DELETE, "/users").await.unwrap();
/// assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
/// assert_eq!(refused.headers()[header::ALLOW], "GET,HEAD,POST");
/// assert!(refused.into_body().collect().await.unwrap().to_bytes().is_empty());
/// assert_eq!(answer(Method::GET, "/users/").await.unwrap().status(), StatusCode::NOT_FOUND);
/// assert_eq!(answer(Method::OPTIONS, "/users").await.unwrap().status(), StatusCode::METHOD_NOT_ALLOWED);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Answers {
    /// pronghorn's own conventions.
    #[default]
    Pronghorn,
    /// axum's, as its 0.8 release answers.
    Axum,
}

impl Answers {
    /// The router's own answer to a path no route takes.
    pub(crate) fn not_found(self) -> Response<Body> {
        match self {
            Answers::Pronghorn => (StatusCode::NOT_FOUND, "Not Found").into_response(),
            Answers::Axum => StatusCode::NOT_FOUND.into_response(),
        }
    }

    /// The router's own answer to a method no route of the path takes,
    /// but for its `Allow`.
    pub(crate) fn method_not_allowed(self) -> Response<Body> {
        match self {
            Answers::Pronghorn => {
                (StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed").into_response()
            }
            Answers::Axum => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        }
    }

    /// The router's own 405 to a method no route of the path takes, with
    /// the methods that path allows.
    pub(crate) fn method_not_allowed_allowing(self, allow: &HeaderValue) -> Response<Body> {
        let mut response = self.method_not_allowed();
        response.headers_mut().insert(header::ALLOW, allow.clone());
        response
    }

    /// The automatic answer to an OPTIONS that no route or prefix answers,
    /// on a path that allows `allow`: 204, with `Allow`.
    pub(crate) fn options(allow: &HeaderValue) -> Response<Body> {
        let mut response = StatusCode::NO_CONTENT.into_response();
        response.headers_mut().insert(header::ALLOW, allow.clone());
        response
    }

    /// The answer to a request without the upgrade that its WebSocket
    /// route needs: 426, naming the protocol.
    pub(crate) fn upgrade_required() -> Response<Body> {
        let mut response = (StatusCode::UPGRADE_REQUIRED, "Upgrade Required").into_response();
        response
            .headers_mut()
            .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        response
    }

    /// The router's own 405 as a handler, with the `Allow` the router hands
    /// it ([`Allowed`]): what a route's `route_layer`s wrap.
    pub(crate) fn refusal(
        self,
    ) -> impl Fn(Option<Allowed>) -> Response<Body> + Clone + Send + Sync {
        move |allowed: Option<Allowed>| match allowed {
            Some(Allowed(allow)) => self.method_not_allowed_allowing(&allow),
            None => self.method_not_allowed(),
        }
    }
}
