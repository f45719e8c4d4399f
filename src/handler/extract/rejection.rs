//! Why an extractor refused a request: [`Rejection`], the named rejection
//! of each extractor, and the router-wide shape of their answers.

use std::{borrow::Cow, fmt, ops::Deref, sync::Arc};

use http::{Response, StatusCode};

use crate::{
    body::Body,
    handler::{Answers, IntoResponse},
};

/// Why an extractor refused a request: the status it answers (400, 413,
/// 415, 422, …) and what it tells the client.
///
/// Answered as it is, a rejection is its status with its message as plain
/// text. A handler takes one into its own hands with a `Result` argument
/// (`Result<Json<T>, JsonRejection>`); a router shapes every rejection of
/// its routes at once with [`Router::rejection`](crate::Router::rejection).
/// A custom extractor refuses with [`RequestContext::reject`](super::RequestContext::reject),
/// so that its rejections take the router's shape too.
///
/// ```
/// use http::StatusCode;
/// use pronghorn::handler::Rejection;
///
/// let rejection = Rejection::new("Tenant", StatusCode::BAD_REQUEST, "unknown tenant `acme`");
/// assert_eq!(rejection.status(), StatusCode::BAD_REQUEST);
/// assert_eq!(rejection.to_string(), "unknown tenant `acme`");
/// assert_eq!(rejection.extractor(), "Tenant");
/// ```
#[derive(Clone, Debug)]
pub struct Rejection {
    extractor: &'static str,
    status: StatusCode,
    message: Cow<'static, str>,
    /// What axum's extractor tells the client of the same fault, for a
    /// router that answers as axum does.
    axum: Option<Cow<'static, str>>,
}

impl Rejection {
    /// The rejection of `extractor` (its type's name, as `"Json"`): it
    /// answers `status`, telling the client `message`.
    pub fn new(
        extractor: &'static str,
        status: StatusCode,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            extractor,
            status,
            message: message.into(),
            axum: None,
        }
    }

    /// The same rejection, telling the client `message` where the router
    /// answers as axum does ([`Answers::Axum`](crate::router::Answers)).
    pub(crate) fn or_as_axum(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.axum = Some(message.into());
        self
    }

    /// The rejection as a router answering by `answers` words it.
    pub(crate) fn worded(mut self, answers: Answers) -> Self {
        if answers == Answers::Axum {
            if let Some(axum) = self.axum.take() {
                self.message = axum;
            }
        }
        self
    }

    /// The status it answers.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What it tells the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What it tells the client, owned, as axum's rejections give it.
    pub fn body_text(&self) -> String {
        self.message.to_string()
    }

    /// The extractor that refused: `"Json"`, `"Form"`, `"Path"`,
    /// `"Query"`, `"Header"`, `"body"` (`String`, `Bytes`, `Body`), or the
    /// name a custom extractor gave.
    pub fn extractor(&self) -> &'static str {
        self.extractor
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Rejection {}

/// Its status, with its message as plain text.
impl IntoResponse for Rejection {
    fn into_response(self) -> Response<Body> {
        (self.status, self.message.into_owned()).into_response()
    }
}

/// How a router answers its extractors' rejections, when it says.
#[derive(Clone)]
pub(crate) struct Shape(Arc<dyn Fn(Rejection) -> Response<Body> + Send + Sync>);

impl Shape {
    /// Rejections answered as `shape` makes them.
    pub(crate) fn new(shape: impl Fn(Rejection) -> Response<Body> + Send + Sync + 'static) -> Self {
        Self(Arc::new(shape))
    }

    /// The function it answers by, for a check that two are one.
    pub(crate) fn function(&self) -> &Arc<dyn Fn(Rejection) -> Response<Body> + Send + Sync> {
        &self.0
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Shape")
    }
}

/// The answer to `rejection`: worded by `answers`, as `shape` makes it,
/// else as it is.
#[inline]
pub(crate) fn answer(
    shape: Option<&Shape>,
    answers: Answers,
    rejection: Rejection,
) -> Response<Body> {
    let rejection = rejection.worded(answers);
    match shape {
        Some(shape) => (shape.0)(rejection),
        None => rejection.into_response(),
    }
}

macro_rules! named_rejections {
    ($($name:ident: $what:literal;)*) => {$(
        #[doc = concat!("Why ", $what, " refused a request: a [`Rejection`], for a handler")]
        #[doc = concat!("that takes `Result<_, ", stringify!($name), ">` to answer it itself.")]
        #[derive(Clone, Debug)]
        pub struct $name(pub(super) Rejection);

        impl Deref for $name {
            type Target = Rejection;

            fn deref(&self) -> &Rejection {
                &self.0
            }
        }

        impl From<$name> for Rejection {
            fn from(rejection: $name) -> Rejection {
                rejection.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::error::Error for $name {}

        /// Its status, with its message as plain text.
        impl IntoResponse for $name {
            fn into_response(self) -> Response<Body> {
                self.0.into_response()
            }
        }
    )*};
}

named_rejections! {
    HeaderRejection: "`Header`";
    BodyRejection: "a body extractor (`String`, `Bytes`)";
}

/// One fault of an extractor, a variant of its rejection as axum names
/// it: its status and text, and what it is, for a `match`.
macro_rules! rejection_variants {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        $(#[$attr])*
        #[derive(Clone, Debug)]
        pub struct $name(pub(super) $crate::handler::Rejection);

        impl $name {
            /// The status it answers.
            pub fn status(&self) -> ::http::StatusCode {
                self.0.status()
            }

            /// What it tells the client.
            pub fn body_text(&self) -> String {
                self.0.body_text()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::error::Error for $name {}

        /// Its status, with its text.
        impl $crate::handler::IntoResponse for $name {
            fn into_response(self) -> ::http::Response<$crate::body::Body> {
                $crate::handler::IntoResponse::into_response(self.0)
            }
        }
    )*};
}

/// An extractor's rejection as axum's enum of it: which fault, each
/// variant with its `status()` and `body_text()`, and the whole a
/// [`Rejection`] (`Deref`) answered as its status and text.
macro_rules! rejection_enum {
    ($(#[$attr:meta])* $name:ident ($what:literal) {
        $($(#[$vattr:meta])* $variant:ident($inner:ty),)*
    } $(from |$rejection:ident| $classify:expr)?) => {
        $(#[$attr])*
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vattr])* $variant($inner),)*
        }

        impl $name {
            /// The status it answers.
            pub fn status(&self) -> ::http::StatusCode {
                match self {
                    $(Self::$variant(inner) => inner.status(),)*
                }
            }

            /// What it tells the client.
            pub fn body_text(&self) -> String {
                match self {
                    $(Self::$variant(inner) => inner.body_text(),)*
                }
            }

            $(
            /// Which of its faults `rejection`, made by
            #[doc = concat!($what, ",")]
            /// is.
            pub(crate) fn of($rejection: $crate::handler::Rejection) -> Self {
                $classify
            }
            )?
        }

        impl ::std::ops::Deref for $name {
            type Target = $crate::handler::Rejection;

            fn deref(&self) -> &$crate::handler::Rejection {
                match self {
                    $(Self::$variant(inner) => &inner.0,)*
                }
            }
        }

        impl From<$name> for $crate::handler::Rejection {
            fn from(rejection: $name) -> $crate::handler::Rejection {
                match rejection {
                    $($name::$variant(inner) => inner.0,)*
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                (**self).fmt(f)
            }
        }

        impl std::error::Error for $name {}

        /// Its status, with its text.
        impl $crate::handler::IntoResponse for $name {
            fn into_response(self) -> ::http::Response<$crate::body::Body> {
                $crate::handler::IntoResponse::into_response($crate::handler::Rejection::from(self))
            }
        }
    };
}

#[cfg(feature = "ws")]
pub(crate) use {rejection_enum, rejection_variants};

rejection_variants! {
    /// A query string that does not read as the `Query`'s type (400).
    FailedToDeserializeQueryString;
    /// A form request without `Content-Type: application/x-www-form-urlencoded` (415).
    InvalidFormContentType;
    /// A GET or HEAD request's query string that does not read as the
    /// `Form`'s type (400).
    FailedToDeserializeForm;
    /// A form body that does not read as the `Form`'s type (422).
    FailedToDeserializeFormBody;
}

rejection_enum! {
    /// Why `Query` refused a request, as axum's `QueryRejection`, for a
    /// handler that takes `Result<Query<T>, QueryRejection>` to answer it
    /// itself.
    QueryRejection ("`Query`") {
        /// The query string does not read as the type.
        FailedToDeserializeQueryString(FailedToDeserializeQueryString),
    } from |rejection| Self::FailedToDeserializeQueryString(FailedToDeserializeQueryString(rejection))
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
        BytesRejection(BodyRejection),
    } from |rejection| match (rejection.extractor(), rejection.status()) {
        ("Form", StatusCode::UNSUPPORTED_MEDIA_TYPE) => {
            Self::InvalidFormContentType(InvalidFormContentType(rejection))
        }
        ("Form", StatusCode::UNPROCESSABLE_ENTITY) => {
            Self::FailedToDeserializeFormBody(FailedToDeserializeFormBody(rejection))
        }
        ("Form", _) => Self::FailedToDeserializeForm(FailedToDeserializeForm(rejection)),
        _ => Self::BytesRejection(BodyRejection(rejection)),
    }
}

#[cfg(feature = "json")]
rejection_variants! {
    /// JSON of the wrong shape for the `Json`'s type: a field missing, a
    /// string for a number (422).
    JsonDataError;
    /// A body that is not JSON (400).
    JsonSyntaxError;
    /// A request without a JSON content type (415).
    MissingJsonContentType;
}

#[cfg(feature = "json")]
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
        BytesRejection(BodyRejection),
    } from |rejection| match (rejection.extractor(), rejection.status()) {
        ("Json", StatusCode::UNSUPPORTED_MEDIA_TYPE) => {
            Self::MissingJsonContentType(MissingJsonContentType(rejection))
        }
        ("Json", StatusCode::UNPROCESSABLE_ENTITY) => Self::JsonDataError(JsonDataError(rejection)),
        ("Json", _) => Self::JsonSyntaxError(JsonSyntaxError(rejection)),
        _ => Self::BytesRejection(BodyRejection(rejection)),
    }
}

/// Why `Path` refused a request: a [`Rejection`] (400), for a handler that
/// takes `Result<Path<T>, PathRejection>` to answer it itself, and the
/// [kind](PathErrorKind) of fault: which parameter, with which value,
/// did not read as which type.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{Path, PathErrorKind, PathRejection}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/users/{id}", |id: Result<Path<u32>, PathRejection>| match id {
///         Ok(Path(id)) => format!("user {id}"),
///         Err(rejection) => match rejection.kind() {
///             PathErrorKind::ParseError { value, expected_type } => {
///                 format!("`{value}` is no {expected_type}")
///             }
///             other => other.to_string(),
///         },
///     })
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/users/ada").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "`ada` is no u32");
/// # }
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum PathRejection {
    /// The parameters do not read as the type.
    FailedToDeserializePathParams(FailedToDeserializePathParams),
    /// The route has no parameters to read.
    MissingPathParams(MissingPathParams),
}

/// Parameters that do not read as the `Path`'s type (400), and which
/// [kind](PathErrorKind) of fault it is.
#[derive(Clone, Debug)]
pub struct FailedToDeserializePathParams {
    rejection: Rejection,
    kind: PathErrorKind,
}

/// A `Path` on a route without parameters (500), as axum's; pronghorn
/// refuses such a route when it compiles, so only a `Path` read outside
/// a route meets it.
#[derive(Clone, Debug)]
pub struct MissingPathParams {
    rejection: Rejection,
    kind: PathErrorKind,
}

impl FailedToDeserializePathParams {
    /// The rejection of a fault of `kind`.
    pub(crate) fn new(rejection: Rejection, kind: PathErrorKind) -> Self {
        Self { rejection, kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &PathErrorKind {
        &self.kind
    }

    /// What was wrong, owned.
    pub fn into_kind(self) -> PathErrorKind {
        self.kind
    }
}

impl PathRejection {
    /// What was wrong, for a message of your own.
    pub fn kind(&self) -> &PathErrorKind {
        match self {
            Self::FailedToDeserializePathParams(inner) => &inner.kind,
            Self::MissingPathParams(inner) => &inner.kind,
        }
    }

    /// The status it answers.
    pub fn status(&self) -> StatusCode {
        self.rejection().status()
    }

    /// What it tells the client.
    pub fn body_text(&self) -> String {
        self.rejection().body_text()
    }

    /// The same, worded as a router answering by `answers` words it.
    pub(crate) fn worded(self, answers: Answers) -> Self {
        match self {
            Self::FailedToDeserializePathParams(inner) => {
                Self::FailedToDeserializePathParams(FailedToDeserializePathParams {
                    rejection: inner.rejection.worded(answers),
                    ..inner
                })
            }
            Self::MissingPathParams(inner) => Self::MissingPathParams(MissingPathParams {
                rejection: inner.rejection.worded(answers),
                ..inner
            }),
        }
    }

    fn rejection(&self) -> &Rejection {
        match self {
            Self::FailedToDeserializePathParams(inner) => &inner.rejection,
            Self::MissingPathParams(inner) => &inner.rejection,
        }
    }
}

macro_rules! path_variants {
    ($($name:ident),*) => {$(
        impl $name {
            /// The status it answers.
            pub fn status(&self) -> StatusCode {
                self.rejection.status()
            }

            /// What it tells the client.
            pub fn body_text(&self) -> String {
                self.rejection.body_text()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.rejection.fmt(f)
            }
        }

        impl std::error::Error for $name {}

        impl IntoResponse for $name {
            fn into_response(self) -> Response<Body> {
                self.rejection.into_response()
            }
        }
    )*};
}

path_variants!(FailedToDeserializePathParams, MissingPathParams);

impl Deref for PathRejection {
    type Target = Rejection;

    fn deref(&self) -> &Rejection {
        self.rejection()
    }
}

impl From<PathRejection> for Rejection {
    fn from(rejection: PathRejection) -> Rejection {
        match rejection {
            PathRejection::FailedToDeserializePathParams(inner) => inner.rejection,
            PathRejection::MissingPathParams(inner) => inner.rejection,
        }
    }
}

impl fmt::Display for PathRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.rejection().fmt(f)
    }
}

impl std::error::Error for PathRejection {}

/// Its status, with its message as plain text.
impl IntoResponse for PathRejection {
    fn into_response(self) -> Response<Body> {
        Rejection::from(self).into_response()
    }
}

/// What kept a route's parameters from reading as a `Path`'s type, as
/// axum's `path::ErrorKind` tells it (its `Display` is axum's wording).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathErrorKind {
    /// The value of parameter `key` does not parse as `expected_type`
    /// (a field of a struct or map).
    ParseErrorAtKey {
        /// The parameter.
        key: String,
        /// Its value, percent-decoded.
        value: String,
        /// The type it was read as.
        expected_type: &'static str,
    },
    /// The value at `index` does not parse as `expected_type` (an element
    /// of a tuple or sequence).
    ParseErrorAtIndex {
        /// Its place among the parameters.
        index: usize,
        /// Its value, percent-decoded.
        value: String,
        /// The type it was read as.
        expected_type: &'static str,
    },
    /// The route's one value does not parse as `expected_type`.
    ParseError {
        /// The value, percent-decoded.
        value: String,
        /// The type it was read as.
        expected_type: &'static str,
    },
    /// The value of parameter `key` is not UTF-8 once percent-decoded.
    InvalidUtf8InPathParam {
        /// The parameter.
        key: String,
    },
    /// The value of parameter `key` was refused by its type's own
    /// deserializer (an enum's unknown variant, a validating newtype).
    DeserializeError {
        /// The parameter.
        key: String,
        /// Its value, percent-decoded.
        value: String,
        /// Why its type refused it.
        message: String,
    },
    /// Anything else.
    Message(String),
}

impl fmt::Display for PathErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathErrorKind::ParseErrorAtKey {
                key,
                value,
                expected_type,
            } => write!(
                f,
                "Cannot parse `{key}` with value `{value}` to a `{expected_type}`"
            ),
            PathErrorKind::ParseErrorAtIndex {
                index,
                value,
                expected_type,
            } => write!(
                f,
                "Cannot parse value at index {index} with value `{value}` to a `{expected_type}`"
            ),
            PathErrorKind::ParseError {
                value,
                expected_type,
            } => write!(f, "Cannot parse `{value}` to a `{expected_type}`"),
            PathErrorKind::InvalidUtf8InPathParam { key } => write!(f, "Invalid UTF-8 in `{key}`"),
            PathErrorKind::DeserializeError {
                key,
                value,
                message,
            } => write!(f, "Cannot parse `{key}` with value `{value}`: {message}"),
            PathErrorKind::Message(message) => f.write_str(message),
        }
    }
}
