//! Why an extractor refused a request: [`Rejection`], the router-wide
//! shape of rejections' answers, and the macros that name each
//! extractor's rejection beside it (its enum of faults, as axum's).

use std::{borrow::Cow, fmt, sync::Arc};

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

/// A rejection of one kind, a [`Rejection`] by another name, for a handler
/// that takes `Result<_, ItsName>`.
macro_rules! named_rejections {
    ($($name:ident: $what:literal;)*) => {$(
        #[doc = concat!("Why ", $what, " refused a request: a [`Rejection`](crate::handler::Rejection), for a handler")]
        #[doc = concat!("that takes `Result<_, ", stringify!($name), ">` to answer it itself.")]
        #[derive(Clone, Debug)]
        pub struct $name(pub(super) $crate::handler::Rejection);

        impl ::std::ops::Deref for $name {
            type Target = $crate::handler::Rejection;

            fn deref(&self) -> &$crate::handler::Rejection {
                &self.0
            }
        }

        impl From<$name> for $crate::handler::Rejection {
            fn from(rejection: $name) -> $crate::handler::Rejection {
                rejection.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::error::Error for $name {}

        /// Its status, with its message as plain text.
        impl $crate::handler::IntoResponse for $name {
            fn into_response(self) -> ::http::Response<$crate::body::Body> {
                $crate::handler::IntoResponse::into_response(self.0)
            }
        }
    )*};
}

/// What a variant of a rejection enum holds, however deep: a
/// [`Rejection`], borrowed or owned.
pub(crate) trait Fault {
    /// The rejection it is.
    fn rejection(&self) -> &Rejection;

    /// The rejection it is, owned.
    fn into_rejection(self) -> Rejection;
}

/// One fault of an extractor, a variant of its rejection as axum names
/// it: its status and text, and what it is, for a `match`.
macro_rules! rejection_variants {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        $(#[$attr])*
        #[derive(Clone, Debug)]
        pub struct $name(pub(super) $crate::handler::Rejection);

        impl $crate::handler::Fault for $name {
            fn rejection(&self) -> &$crate::handler::Rejection {
                &self.0
            }

            fn into_rejection(self) -> $crate::handler::Rejection {
                self.0
            }
        }

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

        impl $crate::handler::Fault for $name {
            fn rejection(&self) -> &$crate::handler::Rejection {
                match self {
                    $(Self::$variant(inner) => $crate::handler::Fault::rejection(inner),)*
                }
            }

            fn into_rejection(self) -> $crate::handler::Rejection {
                match self {
                    $(Self::$variant(inner) => $crate::handler::Fault::into_rejection(inner),)*
                }
            }
        }

        impl ::std::ops::Deref for $name {
            type Target = $crate::handler::Rejection;

            fn deref(&self) -> &$crate::handler::Rejection {
                $crate::handler::Fault::rejection(self)
            }
        }

        impl From<$name> for $crate::handler::Rejection {
            fn from(rejection: $name) -> $crate::handler::Rejection {
                $crate::handler::Fault::into_rejection(rejection)
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

pub(crate) use {named_rejections, rejection_enum, rejection_variants};

/// The answer to `rejection`, whose cause is the server's set-up rather
/// than the request (a missing extension, a `NestedPath` on a route not
/// nested): a bare 500, the cause logged and never sent; with axum's
/// answers, axum's words.
pub(super) fn set_up_wrong(answers: Answers, rejection: Rejection) -> Response<Body> {
    match answers {
        Answers::Pronghorn => crate::handler::response::internal_error(),
        Answers::Axum => rejection.worded(answers).into_response(),
    }
}

/// A 400 of `extractor`, saying what of the request does not read as it
/// needs.
pub(super) fn bad_request(extractor: &'static str, message: String) -> Rejection {
    Rejection::new(extractor, http::StatusCode::BAD_REQUEST, message)
}
