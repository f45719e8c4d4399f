//! JSON: [`Json`], read from the body and written as an answer; and
//! [`JsonRejection`], why it refused.

use std::fmt;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};

use super::{
    BytesRejection, FromRequestBody, Rejection, RequestContext,
    body::{BodyFuture, media_type, unless_of_type},
    rejection::{rejection_enum, rejection_variants},
};
use crate::{
    body::Body,
    handler::response::{IntoResponse, internal_error},
};

/// Whether the request declares a JSON body (`application/json` or
/// `application/*+json`).
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T> FromRequestBody for Json<T>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let refused = Self::refused(context);
        BodyFuture::new(body, context, refused, |bytes, _| {
            bytes.and_then(Self::parse)
        })
    }
}

/// The value, or why the body does not read as one, for the handler to
/// answer itself.
impl<T> FromRequestBody for Result<Json<T>, super::JsonRejection>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let refused = Json::<T>::refused(context);
        BodyFuture::new(body, context, refused, |bytes, answers| {
            Ok(bytes
                .and_then(Json::parse)
                .map_err(|rejection| super::JsonRejection::of(rejection.worded(answers))))
        })
    }
}

/// `None` for a request that declares no content type (a body it may
/// carry is read and let go); otherwise what [`Json`] extracts, its
/// rejections included: as axum's `Option<Json<T>>`.
impl<T> FromRequestBody for Option<Json<T>>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        if !context.headers().contains_key(http::header::CONTENT_TYPE) {
            return BodyFuture::new(body, context, None, |_, _| Ok(None));
        }
        let refused = Json::<T>::refused(context);
        BodyFuture::new(body, context, refused, |bytes, _| {
            bytes.and_then(Json::parse).map(Some)
        })
    }
}

impl<T: serde::de::DeserializeOwned> Json<T> {
    /// Why a request is refused before its body is read: its content type.
    fn refused(context: &RequestContext<'_>) -> Option<Rejection> {
        unless_of_type(
            is_json(context.headers()),
            "Json",
            "application/json",
            "Expected request with `Content-Type: application/json`",
        )
    }

    /// The JSON in `bytes`; a rejection names the field at fault by its
    /// path (`items[2].id: invalid type: …`), as axum's does.
    ///
    /// The success path tracks no path: tracking costs a seed per value
    /// and an allocation per map key, so it is paid only by a body that
    /// fails, parsed a second time to find where.
    fn parse(bytes: Bytes) -> Result<Self, Rejection> {
        Self::parse_slice(&bytes)
    }

    /// [`parse`](Self::parse), of a slice.
    fn parse_slice(bytes: &[u8]) -> Result<Self, Rejection> {
        match serde_json::from_slice(bytes) {
            Ok(value) => Ok(Json(value)),
            Err(error) => Err(Self::rejection(bytes, &error)),
        }
    }

    /// The JSON in `bytes`, as axum's `Json::from_bytes`: for an extractor
    /// of your own that has the body already, or a test. Its rejection is
    /// worded as pronghorn's answers; what a router's handlers take is
    /// worded as the router answers.
    ///
    /// # Errors
    ///
    /// Bytes that are not JSON (`JsonSyntaxError`), or not of `T`'s shape
    /// (`JsonDataError`, naming the field at fault).
    ///
    /// ```
    /// use pronghorn::handler::{Json, rejection::JsonRejection};
    ///
    /// let Json(numbers) = Json::<Vec<u32>>::from_bytes(b"[1, 2]").unwrap();
    /// assert_eq!(numbers, [1, 2]);
    /// let error = Json::<Vec<u32>>::from_bytes(b"[1, \"two\"]").unwrap_err();
    /// assert!(matches!(error, JsonRejection::JsonDataError(_)));
    /// assert!(error.body_text().starts_with("invalid JSON body: [1]: invalid type"));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, JsonRejection> {
        Self::parse_slice(bytes).map_err(JsonRejection::of)
    }

    /// Why `bytes` do not read as a `T`, the field at fault named by its
    /// path: found by parsing again, with tracking.
    #[cold]
    fn rejection(bytes: &[u8], error: &serde_json::Error) -> Rejection {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        let tracked =
            serde_path_to_error::deserialize::<_, T>(&mut deserializer).map(|_| deserializer.end());
        match tracked {
            // As axum: well-formed JSON of the wrong shape is 422.
            Err(tracked) => json_rejection(
                tracked.inner().classify() == serde_json::error::Category::Data,
                &tracked,
            ),
            // Text after the value is malformed JSON.
            Ok(Err(trailing)) => json_rejection(false, &trailing),
            // A `Deserialize` that fails only once: the first error stands.
            Ok(Ok(())) => {
                json_rejection(error.classify() == serde_json::error::Category::Data, error)
            }
        }
    }
}

/// The rejection of a JSON body: of the wrong shape for its type (`data`,
/// 422) or not JSON at all (400).
#[cold]
fn json_rejection(data: bool, error: &dyn fmt::Display) -> Rejection {
    let (status, axum) = match data {
        true => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "Failed to deserialize the JSON body into the target type",
        ),
        false => (
            StatusCode::BAD_REQUEST,
            "Failed to parse the request body as JSON",
        ),
    };
    Rejection::new("Json", status, format!("invalid JSON body: {error}"))
        .or_as_axum(format!("{axum}: {error}"))
}

impl<T: serde::Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response<Body> {
        match serde_json::to_vec(&self.0) {
            Ok(bytes) => {
                let mut response = Response::new(Body::from(bytes));
                response
                    .headers_mut()
                    .insert(http::header::CONTENT_TYPE, crate::handler::response::JSON);
                response
            }
            Err(error) => {
                error_limited!(%error, "pronghorn: a JSON response could not be serialised");
                internal_error()
            }
        }
    }
}

rejection_variants! {
    /// JSON of the wrong shape for the `Json`'s type: a field missing, a
    /// string for a number (422).
    JsonDataError;
    /// A body that is not JSON (400).
    JsonSyntaxError;
    /// A request without a JSON content type (415).
    MissingJsonContentType;
}

rejection_enum! {
    /// Why `Json` refused a request, as axum's `JsonRejection`, for a
    /// handler that takes `Result<Json<T>, JsonRejection>` to answer it
    /// itself.
    JsonRejection ("`Json`") {
        /// The JSON is not of the type's shape.
        JsonDataError(JsonDataError),
        /// The body is not JSON.
        JsonSyntaxError(JsonSyntaxError),
        /// The request does not say it is JSON.
        MissingJsonContentType(MissingJsonContentType),
        /// The body could not be read: over the limit, too slow, cut off.
        BytesRejection(BytesRejection),
    } from |rejection| match (rejection.extractor(), rejection.status()) {
        ("Json", StatusCode::UNSUPPORTED_MEDIA_TYPE) => {
            Self::MissingJsonContentType(MissingJsonContentType(rejection))
        }
        ("Json", StatusCode::UNPROCESSABLE_ENTITY) => Self::JsonDataError(JsonDataError(rejection)),
        ("Json", _) => Self::JsonSyntaxError(JsonSyntaxError(rejection)),
        _ => Self::BytesRejection(BytesRejection::of(rejection)),
    }
}
