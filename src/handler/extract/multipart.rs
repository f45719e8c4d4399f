//! [`Multipart`]: a `multipart/form-data` body read field by field, with
//! the `multer` crate (feature `multipart`).

use std::fmt;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use http_body_util::BodyDataStream;

use super::{FromRequestBody, Rejection, RequestContext, streamed};
use crate::{body::Body, handler::IntoResponse};

/// A `multipart/form-data` request body, read one [`Field`] after the
/// other as it arrives, as axum's `Multipart` reads it (feature
/// `multipart`, on the [`multer`](https://docs.rs/multer) crate). The body
/// limit and timeout hold over the whole body; a request of another
/// content type, or without a boundary, answers 400.
///
/// ```
/// use http::{Request, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Multipart};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/upload", |mut multipart: Multipart| async move {
///         let mut names = Vec::new();
///         while let Some(field) = multipart.next_field().await.unwrap() {
///             let name = field.name().unwrap_or("?").to_owned();
///             let bytes = field.bytes().await.unwrap();
///             names.push(format!("{name}: {} bytes", bytes.len()));
///         }
///         names.join(", ")
///     })
///     .compile()
///     .unwrap();
/// let body = "--X\r\ncontent-disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--X--\r\n";
/// let request = Request::post("/upload")
///     .header(header::CONTENT_TYPE, "multipart/form-data; boundary=X")
///     .body(body.to_owned())
///     .unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "note: 5 bytes");
/// # }
/// ```
pub struct Multipart {
    inner: multer::Multipart<'static>,
}

impl fmt::Debug for Multipart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Multipart").finish_non_exhaustive()
    }
}

impl Multipart {
    /// The next field, `None` after the last.
    ///
    /// # Errors
    ///
    /// The body is not well-formed multipart, or is over the body limit
    /// (413), or could not be read.
    pub async fn next_field(&mut self) -> Result<Option<Field<'_>>, MultipartError> {
        let field = self.inner.next_field().await.map_err(MultipartError)?;
        Ok(field.map(|inner| Field {
            inner,
            _multipart: self,
        }))
    }
}

impl FromRequestBody for Multipart {
    type Future = std::future::Ready<Result<Self, Response<Body>>>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let read = match boundary(context) {
            Ok(boundary) => Multipart::read(body, boundary, context),
            Err(_) => Err(no_boundary()),
        };
        std::future::ready(read.map_err(|rejection| context.reject(rejection)))
    }
}

/// `None` for a request that is not `multipart/form-data` (a body it may
/// carry is let go), as axum's `Option<Multipart>`; one that is, without
/// a boundary, is refused as `Multipart` refuses it.
impl FromRequestBody for Option<Multipart> {
    type Future = std::future::Ready<Result<Self, Response<Body>>>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let read = match boundary(context) {
            Ok(boundary) => Multipart::read(body, boundary, context).map(Some),
            Err(None) => Ok(None),
            Err(Some(_)) => Err(no_boundary()),
        };
        std::future::ready(read.map_err(|rejection| context.reject(rejection)))
    }
}

/// The boundary of a `multipart/form-data` request; `Err(None)` when the
/// request does not say it is one, `Err(Some(error))` when it says so
/// without a boundary.
fn boundary(context: &RequestContext<'_>) -> Result<String, Option<multer::Error>> {
    let content_type = (context.headers().get(header::CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .ok_or(None)?;
    multer::parse_boundary(content_type).map_err(|error| match error {
        multer::Error::NoMultipart => None,
        error => Some(error),
    })
}

#[cold]
fn no_boundary() -> Rejection {
    Rejection::new(
        "Multipart",
        StatusCode::BAD_REQUEST,
        "expected a `multipart/form-data` request with a boundary",
    )
    .or_as_axum("Invalid `boundary` for `multipart/form-data` request")
}

impl Multipart {
    /// The fields of `body`, parted at `boundary`, read within the route's
    /// body limit and timeout.
    fn read(body: Body, boundary: String, context: &RequestContext<'_>) -> Result<Self, Rejection> {
        match streamed(body, context.body_limit, context.body_timeout) {
            Ok(body) => Ok(Multipart {
                inner: multer::Multipart::new(BodyDataStream::new(body), boundary),
            }),
            // A body declared over the limit: axum finds it as it reads.
            Err(rejection) => Err(rejection.or_as_axum("Request payload is too large")),
        }
    }
}

/// One field of a [`Multipart`] body; the next is read once this one is
/// done with.
pub struct Field<'a> {
    inner: multer::Field<'static>,
    // Borrowed so that one field is read at a time.
    _multipart: &'a mut Multipart,
}

impl fmt::Debug for Field<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Field")
            .field("name", &self.name())
            .field("file_name", &self.file_name())
            .finish_non_exhaustive()
    }
}

impl Field<'_> {
    /// The field's name, from its `content-disposition`.
    pub fn name(&self) -> Option<&str> {
        self.inner.name()
    }

    /// The file name, for a file's field.
    pub fn file_name(&self) -> Option<&str> {
        self.inner.file_name()
    }

    /// The field's content type.
    pub fn content_type(&self) -> Option<&str> {
        self.inner.content_type().map(|mime| mime.as_ref())
    }

    /// The field's headers.
    pub fn headers(&self) -> &HeaderMap {
        self.inner.headers()
    }

    /// The field's whole content.
    ///
    /// # Errors
    ///
    /// As [`Multipart::next_field`].
    pub async fn bytes(self) -> Result<Bytes, MultipartError> {
        self.inner.bytes().await.map_err(MultipartError)
    }

    /// The field's whole content, as text.
    ///
    /// # Errors
    ///
    /// As [`Multipart::next_field`].
    pub async fn text(self) -> Result<String, MultipartError> {
        self.inner.text().await.map_err(MultipartError)
    }

    /// The next chunk of the field's content as it arrives, `None` after
    /// the last.
    ///
    /// # Errors
    ///
    /// As [`Multipart::next_field`].
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, MultipartError> {
        self.inner.chunk().await.map_err(MultipartError)
    }
}

/// Why a [`Multipart`] body could not be read: answered 413 when it is over
/// the body limit, else 400.
#[derive(Debug)]
pub struct MultipartError(multer::Error);

impl MultipartError {
    /// The status it answers: 413 over the body limit, else 400.
    pub fn status(&self) -> StatusCode {
        match self.too_large() {
            true => StatusCode::PAYLOAD_TOO_LARGE,
            false => StatusCode::BAD_REQUEST,
        }
    }

    /// What it tells the client, in axum's words: `Request payload is too
    /// large` over the body limit, else what was wrong with the body.
    pub fn body_text(&self) -> String {
        match self.too_large() {
            true => "Request payload is too large".to_owned(),
            false => self.0.to_string(),
        }
    }

    fn too_large(&self) -> bool {
        match &self.0 {
            multer::Error::FieldSizeExceeded { .. } | multer::Error::StreamSizeExceeded { .. } => {
                true
            }
            multer::Error::StreamReadFailed(error) => limit_exceeded(&**error),
            _ => false,
        }
    }
}

/// Whether `error`, or what caused it, is the body limit's.
fn limit_exceeded(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut error = Some(error);
    while let Some(current) = error {
        if current.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        error = current.source();
    }
    false
}

impl fmt::Display for MultipartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error parsing `multipart/form-data` request: {}", self.0)
    }
}

impl std::error::Error for MultipartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl IntoResponse for MultipartError {
    fn into_response(self) -> Response<Body> {
        (self.status(), self.body_text()).into_response()
    }
}
