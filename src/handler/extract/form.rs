//! A form: [`Form`], deserialized from the body (or a GET's query
//! string), [`RawForm`], its bytes; and [`FormRejection`], why `Form`
//! refused.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};

use super::{
    BytesRejection, FromRequestBody, Rejection, RequestContext,
    body::{BodyFuture, media_type, unless_of_type},
    query::from_pairs,
    rejection::{rejection_enum, rejection_variants},
};
use crate::{
    body::Body,
    handler::{IntoResponse, internal_error},
};

/// A form sent as the body (`application/x-www-form-urlencoded`),
/// deserialized into `T` as [`Query`](super::Query) reads a query string;
/// for a GET or HEAD request, as axum reads it, the query string itself.
/// A request of another content type answers 415; a body that is not
/// UTF-8, 400; a form that does not fit `T`, 422 (400 for a query
/// string), as axum answers. The body limit applies.
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
        match Self::query(context) {
            Some(query) => BodyFuture::new(query, context, None, |bytes, _| {
                bytes.and_then(|bytes| Self::parse(bytes, false))
            }),
            None => BodyFuture::new(body, context, Self::refused(context), |bytes, _| {
                bytes.and_then(|bytes| Self::parse(bytes, true))
            }),
        }
    }
}

/// The value as a form body, `application/x-www-form-urlencoded`, as
/// axum's `Form` answers. A value that is not a flat list of fields (a
/// nested struct) answers 500, the cause logged.
///
/// ```
/// use http::{Request, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Form};
/// use tower::ServiceExt;
///
/// #[derive(serde::Serialize)]
/// struct Page { size: u32, q: Option<String> }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/next", || Form(Page { size: 10, q: Some("a b&c".to_owned()) }))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/next").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.headers()[header::CONTENT_TYPE], "application/x-www-form-urlencoded");
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "size=10&q=a+b%26c");
/// # }
/// ```
impl<T: serde::Serialize> IntoResponse for Form<T> {
    fn into_response(self) -> Response<Body> {
        match serde_urlencoded::to_string(&self.0) {
            Ok(form) => {
                let mut response = Response::new(Body::from(form));
                response.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                );
                response
            }
            Err(error) => {
                error_limited!(%error, "pronghorn: a form response could not be serialised");
                internal_error()
            }
        }
    }
}

/// The form, or why the body does not read as one, for the handler to
/// answer itself.
impl<T> FromRequestBody for Result<Form<T>, FormRejection>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        match Form::<T>::query(context) {
            Some(query) => BodyFuture::new(query, context, None, |bytes, answers| {
                Ok(bytes
                    .and_then(|bytes| Form::parse(bytes, false))
                    .map_err(|rejection| FormRejection::of(rejection.worded(answers))))
            }),
            None => BodyFuture::new(
                body,
                context,
                Form::<T>::refused(context),
                |bytes, answers| {
                    Ok(bytes
                        .and_then(|bytes| Form::parse(bytes, true))
                        .map_err(|rejection| FormRejection::of(rejection.worded(answers))))
                },
            ),
        }
    }
}

impl<T: serde::de::DeserializeOwned> Form<T> {
    /// The form of a GET or HEAD request: its query string, as a body to
    /// read in its stead (its own body, if any, is not read). `None` for
    /// another method, whose form is its body.
    fn query(context: &RequestContext<'_>) -> Option<Body> {
        let method = context.method();
        (method == http::Method::GET || method == http::Method::HEAD).then(|| {
            let query = context.uri().query().unwrap_or("");
            Body::from(Bytes::copy_from_slice(query.as_bytes()))
        })
    }

    /// Why a request is refused before its body is read: its content type.
    fn refused(context: &RequestContext<'_>) -> Option<Rejection> {
        let form = media_type(context.headers()).is_some_and(|essence| {
            essence.eq_ignore_ascii_case(b"application/x-www-form-urlencoded")
        });
        unless_of_type(
            form,
            "Form",
            "application/x-www-form-urlencoded",
            "Form requests must have `Content-Type: application/x-www-form-urlencoded`",
        )
    }

    /// The form in `bytes`: a body's (a misfit is 422), else a query
    /// string's (400), as axum answers them.
    fn parse(bytes: Bytes, body: bool) -> Result<Self, Rejection> {
        let text = std::str::from_utf8(&bytes).map_err(|error| {
            Rejection::new(
                "Form",
                StatusCode::BAD_REQUEST,
                format!("form body is not UTF-8: {error}"),
            )
        })?;
        from_pairs(text).map(Form).map_err(|error| {
            let (status, axum) = match body {
                true => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Failed to deserialize form body",
                ),
                false => (StatusCode::BAD_REQUEST, "Failed to deserialize form"),
            };
            Rejection::new("Form", status, format!("invalid form body: {error}"))
                .or_as_axum(format!("{axum}: {}", error.with_path()))
        })
    }
}

/// A form's raw bytes, as axum's `RawForm`: a GET or HEAD request's query
/// string, another's body (`application/x-www-form-urlencoded`, else 415),
/// for a handler that parses it itself.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::RawForm};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |RawForm(form): RawForm| form)
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/?a=1&b=2").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "a=1&b=2");
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawForm(pub Bytes);

impl FromRequestBody for RawForm {
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        match Form::<()>::query(context) {
            Some(query) => BodyFuture::new(query, context, None, |bytes, _| bytes.map(RawForm)),
            None => BodyFuture::new(body, context, Form::<()>::refused(context), |bytes, _| {
                bytes.map(RawForm)
            }),
        }
    }
}

/// The form's bytes, or why the body could not be read as one, for the
/// handler to answer itself.
impl FromRequestBody for Result<RawForm, RawFormRejection> {
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let (body, refused) = match Form::<()>::query(context) {
            Some(query) => (query, None),
            None => (body, Form::<()>::refused(context)),
        };
        BodyFuture::new(body, context, refused, |bytes, answers| {
            Ok(bytes
                .map(RawForm)
                .map_err(|rejection| RawFormRejection::of(rejection.worded(answers))))
        })
    }
}

rejection_variants! {
    /// A form request without `Content-Type: application/x-www-form-urlencoded` (415).
    InvalidFormContentType;
    /// A GET or HEAD request's query string that does not read as the
    /// `Form`'s type (400).
    FailedToDeserializeForm;
    /// A form body that does not read as the `Form`'s type (422).
    FailedToDeserializeFormBody;
}

rejection_enum! {
    /// Why `RawForm` refused a request, as axum's `RawFormRejection`, for
    /// a handler that takes `Result<RawForm, RawFormRejection>` to answer
    /// it itself.
    RawFormRejection ("`RawForm`") {
        /// The request is not a form.
        InvalidFormContentType(InvalidFormContentType),
        /// The body could not be read: over the limit, too slow, cut off.
        BytesRejection(BytesRejection),
    } from |rejection| match (rejection.extractor(), rejection.status()) {
        ("Form", StatusCode::UNSUPPORTED_MEDIA_TYPE) => {
            Self::InvalidFormContentType(InvalidFormContentType(rejection))
        }
        _ => Self::BytesRejection(BytesRejection::of(rejection)),
    }
}

rejection_enum! {
    /// Why `Form` refused a request, as axum's `FormRejection`, for a
    /// handler that takes `Result<Form<T>, FormRejection>` to answer it
    /// itself.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::{Form, FormRejection}};
    /// use tower::ServiceExt;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Login { user: String }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .post("/login", |form: Result<Form<Login>, FormRejection>| match form {
    ///         Ok(Form(login)) => login.user,
    ///         Err(FormRejection::InvalidFormContentType(_)) => "send a form".to_owned(),
    ///         Err(other) => other.body_text(),
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::post("/login").body("user=ada".to_owned()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "send a form");
    /// # }
    /// ```
    FormRejection ("`Form`") {
        /// The request is not a form.
        InvalidFormContentType(InvalidFormContentType),
        /// A GET or HEAD request's query string does not read as the type.
        FailedToDeserializeForm(FailedToDeserializeForm),
        /// The body does not read as the type.
        FailedToDeserializeFormBody(FailedToDeserializeFormBody),
        /// The body could not be read: over the limit, too slow, cut off.
        BytesRejection(BytesRejection),
    } from |rejection| match (rejection.extractor(), rejection.status()) {
        ("Form", StatusCode::UNSUPPORTED_MEDIA_TYPE) => {
            Self::InvalidFormContentType(InvalidFormContentType(rejection))
        }
        ("Form", StatusCode::UNPROCESSABLE_ENTITY) => {
            Self::FailedToDeserializeFormBody(FailedToDeserializeFormBody(rejection))
        }
        ("Form", _) => Self::FailedToDeserializeForm(FailedToDeserializeForm(rejection)),
        _ => Self::BytesRejection(BytesRejection::of(rejection)),
    }
}
