//! Why an extractor refused a request: [`Rejection`], the named rejection
//! of each extractor, and the router-wide shape of their answers.

use std::{borrow::Cow, fmt, ops::Deref, sync::Arc};

use http::{Response, StatusCode};

use crate::{body::Body, handler::IntoResponse};

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
        }
    }

    /// The status it answers.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What it tells the client.
    pub fn message(&self) -> &str {
        &self.message
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
pub(crate) struct Shape(pub(crate) Arc<dyn Fn(Rejection) -> Response<Body> + Send + Sync>);

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Shape")
    }
}

/// The answer to `rejection`: as `shape` makes it, else as it is.
#[inline]
pub(crate) fn answer(shape: Option<&Shape>, rejection: Rejection) -> Response<Body> {
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
        pub struct $name(pub(crate) Rejection);

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
    PathRejection: "`Path`";
    QueryRejection: "`Query`";
    HeaderRejection: "`Header`";
    FormRejection: "`Form`";
    BodyRejection: "a body extractor (`String`, `Bytes`)";
}

#[cfg(feature = "json")]
named_rejections! {
    JsonRejection: "`Json`";
}
