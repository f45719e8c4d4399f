//! [`IntoResponse`]: what a handler or hook may answer.

use std::{borrow::Cow, convert::Infallible};

use bytes::Bytes;
use http::{
    HeaderValue, Response, StatusCode,
    header::{CONTENT_TYPE, HeaderMap},
};

use crate::body::Body;

/// Something that converts into a response.
///
/// Implemented for text (`&'static str`, `String`, `Box<str>`,
/// `Cow<'static, str>`: `text/plain`), bytes (`Bytes`, `Vec<u8>`,
/// `Box<[u8]>`, `&'static [u8]`, `Cow<'static, [u8]>`:
/// `application/octet-stream`), a [`Body`] (streamed, no `content-type`),
/// `StatusCode` (empty body), `()` (200, empty), `Response<B>` for any body
/// `B` (hyper's, http-body-util's, axum's: see [`Body::new`]),
/// `(StatusCode, T)`, a `HeaderMap` (an empty 200), headers before an
/// answer, as a `HeaderMap` or an array of pairs, with or without a status
/// (`([(K, V); N], T)`, `(StatusCode, HeaderMap, T)`, …), `Json<T>`
/// (feature `json`), and `Result<T, E>` where both convert.
///
/// ```
/// use http::StatusCode;
/// use pronghorn::IntoResponse;
///
/// let response = (StatusCode::CREATED, "made").into_response();
/// assert_eq!(response.status(), StatusCode::CREATED);
/// assert_eq!(response.headers()["content-type"], "text/plain; charset=utf-8");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be turned into a response",
    label = "not an answer pronghorn knows",
    note = "answers are strings, bytes, a `Body`, `StatusCode`, `Json`, `Html`, `Redirect`, `Response<B>`, tuples of a status and response parts (headers, `Extension`, `Redirect`, …) before one of those, `Result`s of them; with the `axum` feature, `Axum(..)` takes any axum response"
)]
pub trait IntoResponse {
    /// Builds the response.
    fn into_response(self) -> Response<Body>;

    /// What the value says of itself when a step answers it as an error
    /// (the `Err` of a `Result` a handler, prefix or postfix returns): the
    /// message monitors see in
    /// [`Failure::Error`](crate::router::Failure::Error), for the logs,
    /// never sent to the client. `None` unless a type says more.
    ///
    /// ```
    /// use http::{Request, Response, StatusCode};
    /// use pronghorn::{Body, IntoResponse, Router, router::{Failure, RouteExchange}};
    /// use tower::ServiceExt;
    ///
    /// /// A database error: the client is told 503, the logs are told why.
    /// struct Unavailable(&'static str);
    ///
    /// impl IntoResponse for Unavailable {
    ///     fn into_response(self) -> Response<Body> {
    ///         StatusCode::SERVICE_UNAVAILABLE.into_response()
    ///     }
    ///
    ///     fn error_message(&self) -> Option<String> {
    ///         Some(format!("database: {}", self.0))
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/", || Err::<&str, _>(Unavailable("connection refused")))
    ///     .monitor("/", |exchange: &RouteExchange<'_>| {
    ///         let Some(Failure::Error { message, .. }) = exchange.error() else { panic!() };
    ///         assert_eq!(message.as_deref(), Some("database: connection refused"));
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    /// # }
    /// ```
    #[inline]
    fn error_message(&self) -> Option<String> {
        None
    }
}

/// The mark an error value's response carries, for the router to tell
/// monitors: the error's type and message.
#[derive(Clone, Debug)]
pub(crate) struct ErrorValue {
    pub(crate) type_name: &'static str,
    pub(crate) message: Option<String>,
}

/// The response of an error value, marked as one.
#[cold]
pub(crate) fn error_response<E: IntoResponse>(error: E) -> Response<Body> {
    let message = error.error_message();
    let mut response = error.into_response();
    // An error made an answer already (an `ErrorResponse`) keeps its own.
    if response.extensions().get::<ErrorValue>().is_none() {
        response.extensions_mut().insert(ErrorValue {
            type_name: std::any::type_name::<E>(),
            message,
        });
    }
    response
}

/// A handler's result whose error is any answer, as axum's
/// `response::Result`: `?` turns each error that is [`IntoResponse`] into
/// the [`ErrorResponse`] that answers the request.
///
/// ```
/// use http::StatusCode;
/// use pronghorn::{Router, handler::{ErrorResponse, Result}};
///
/// fn find(id: u32) -> Result<&'static str> {
///     match id {
///         7 => Ok("ada"),
///         _ => Err(StatusCode::NOT_FOUND)?,
///     }
/// }
///
/// let answer: Result<&str> = find(3);
/// assert!(matches!(answer, Err(ErrorResponse { .. })));
/// let router = Router::new().get("/", || find(7)).compile().unwrap();
/// # let _ = router;
/// ```
pub type Result<T, E = ErrorResponse> = std::result::Result<T, E>;

/// Any answer as an error, as axum's `response::ErrorResponse`: what
/// [`Result`]'s `?` makes of an error that is [`IntoResponse`]. Its
/// monitors see the error it was made from.
///
/// It holds its answer boxed, so that a `Result` of it is small (one
/// pointer, allocated when there is an error).
#[derive(Debug)]
pub struct ErrorResponse {
    response: Box<Response<Body>>,
}

impl<T: IntoResponse> From<T> for ErrorResponse {
    fn from(error: T) -> Self {
        ErrorResponse {
            response: Box::new(error_response(error)),
        }
    }
}

/// The value's answer, or the error's (an `ErrorResponse` is not an
/// answer of its own, so that every answer converts into one).
impl<T: IntoResponse> IntoResponse for Result<T> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        match self {
            Ok(value) => value.into_response(),
            Err(error) => *error.response,
        }
    }
}

#[inline]
fn with_type(body: Body, content_type: HeaderValue) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(CONTENT_TYPE, content_type);
    response
}

// Constants, so that the header text is checked once, at compile time, and
// not on every response.
const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const OCTETS: HeaderValue = HeaderValue::from_static("application/octet-stream");
#[cfg(feature = "json")]
pub(crate) const JSON: HeaderValue = HeaderValue::from_static("application/json");

impl IntoResponse for &'static str {
    #[inline]
    fn into_response(self) -> Response<Body> {
        with_type(Body::from(self), TEXT)
    }
}

impl IntoResponse for String {
    #[inline]
    fn into_response(self) -> Response<Body> {
        with_type(Body::from(self), TEXT)
    }
}

impl IntoResponse for Bytes {
    #[inline]
    fn into_response(self) -> Response<Body> {
        with_type(Body::from(self), OCTETS)
    }
}

impl IntoResponse for &'static [u8] {
    #[inline]
    fn into_response(self) -> Response<Body> {
        with_type(Body::from(self), OCTETS)
    }
}

impl IntoResponse for Vec<u8> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        with_type(Body::from(self), OCTETS)
    }
}

impl IntoResponse for Box<str> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        String::from(self).into_response()
    }
}

impl IntoResponse for Cow<'static, str> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        match self {
            Cow::Borrowed(text) => text.into_response(),
            Cow::Owned(text) => text.into_response(),
        }
    }
}

impl IntoResponse for Box<[u8]> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        Vec::from(self).into_response()
    }
}

impl IntoResponse for Cow<'static, [u8]> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        match self {
            Cow::Borrowed(bytes) => bytes.into_response(),
            Cow::Owned(bytes) => bytes.into_response(),
        }
    }
}

/// A body as it is, with no `content-type`: a stream, say.
impl IntoResponse for Body {
    #[inline]
    fn into_response(self) -> Response<Body> {
        Response::new(self)
    }
}

/// An empty 200 with these headers.
impl IntoResponse for HeaderMap {
    #[inline]
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

impl IntoResponse for StatusCode {
    #[inline]
    fn into_response(self) -> Response<Body> {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = self;
        response
    }
}

impl IntoResponse for () {
    #[inline]
    fn into_response(self) -> Response<Body> {
        Response::new(Body::empty())
    }
}

impl IntoResponse for Infallible {
    fn into_response(self) -> Response<Body> {
        match self {}
    }
}

/// A response with any body: hyper's and http-body-util's (`Full`,
/// `Empty`), axum's, a stream. A [`Body`] is kept as it is; a full, empty
/// or `String` body is stored inline; any other is boxed (see
/// [`Body::new`]).
impl<B> IntoResponse for Response<B>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<crate::body::BoxError>,
{
    #[inline]
    fn into_response(self) -> Response<Body> {
        match crate::body::downcast::<Response<Body>, _>(self) {
            Ok(response) => response,
            Err(response) => response.map(Body::new),
        }
    }
}

/// Marks a response that stands for an answer that could not be built —
/// a header that is not valid, a body that would not serialise — as axum's
/// `IntoResponseFailed` does: its 500 is not overridden by the status of
/// a tuple around it (`(StatusCode::CREATED, [("\n", "x")], ())` answers
/// 500, not a 201 that says "Internal Server Error").
///
/// ```
/// use http::StatusCode;
/// use pronghorn::handler::{IntoResponse, IntoResponseFailed};
///
/// let response = (StatusCode::CREATED, [("bad\nname", "x")], "made").into_response();
/// assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
/// assert!(response.extensions().get::<IntoResponseFailed>().is_some());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntoResponseFailed;

/// The status goes on `T`'s response, unless building it failed
/// ([`IntoResponseFailed`]): that stays a 500.
impl<T: IntoResponse> IntoResponse for (StatusCode, T) {
    #[inline]
    fn into_response(self) -> Response<Body> {
        let mut response = self.1.into_response();
        if response.extensions().get::<IntoResponseFailed>().is_none() {
            *response.status_mut() = self.0;
        }
        response
    }
}

/// The 500 that a failure inside the server becomes: its cause is logged,
/// never sent. Marked [`IntoResponseFailed`], so that no status around it
/// replaces it.
pub(crate) fn internal_error() -> Response<Body> {
    let mut response = (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response();
    response.extensions_mut().insert(IntoResponseFailed);
    response
}

impl<T: IntoResponse, E: IntoResponse> IntoResponse for Result<T, E> {
    #[inline]
    fn into_response(self) -> Response<Body> {
        match self {
            Ok(value) => value.into_response(),
            Err(error) => error_response(error),
        }
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
