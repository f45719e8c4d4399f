//! [`TypedHeader`]: a header read as the `headers` crate types it (feature
//! `typed-header`).

use std::fmt;

use http::{HeaderName, Response, StatusCode};

use super::{FromRequestHead, Rejection, RequestContext};
use crate::{body::Body, handler::IntoResponse};

/// A request header decoded into a type of the
/// [`headers`](https://docs.rs/headers) crate (`UserAgent`, `Authorization<Bearer>`,
/// `ContentType`, `IfNoneMatch`, …) or of your own that implements its
/// `Header` trait, as axum's `TypedHeader` reads it (feature
/// `typed-header`). A request without the header answers 400, one whose
/// header does not decode too; `Option<TypedHeader<T>>` is `None` without
/// the header, and still refuses one that does not decode.
///
/// ```
/// use headers::{UserAgent, authorization::{Authorization, Bearer}};
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::TypedHeader};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |TypedHeader(token): TypedHeader<Authorization<Bearer>>, agent: Option<TypedHeader<UserAgent>>| {
///         let agent = agent.map_or("someone".to_owned(), |TypedHeader(agent)| agent.to_string());
///         format!("{} from {agent}", token.token())
///     })
///     .compile()
///     .unwrap();
/// let request = Request::get("/").header("authorization", "Bearer t0k").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "t0k from someone");
///
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypedHeader<T>(pub T);

impl<T> std::ops::Deref for TypedHeader<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for TypedHeader<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: headers::Header> TypedHeader<T> {
    /// The header, or why there is none that decodes: its rejection
    /// worded as the router answers.
    fn find(context: &RequestContext<'_>) -> Result<Self, TypedHeaderRejection> {
        let name = T::name();
        let mut values = context.headers().get_all(name).iter().peekable();
        let (reason, rejection) = match values.peek() {
            None => (
                TypedHeaderRejectionReason::Missing,
                Rejection::new(
                    "TypedHeader",
                    StatusCode::BAD_REQUEST,
                    format!("missing request header `{name}`"),
                )
                .or_as_axum(format!("Header of type `{name}` was missing")),
            ),
            Some(_) => match T::decode(&mut values) {
                Ok(value) => return Ok(TypedHeader(value)),
                Err(error) => {
                    let rejection = Rejection::new(
                        "TypedHeader",
                        StatusCode::BAD_REQUEST,
                        format!("invalid request header `{name}`: {error}"),
                    )
                    .or_as_axum(format!("{error} ({name})"));
                    (TypedHeaderRejectionReason::Error(error), rejection)
                }
            },
        };
        Err(TypedHeaderRejection {
            name,
            reason,
            rejection: rejection.worded(context.answers),
        })
    }
}

impl<T: headers::Header> FromRequestHead for TypedHeader<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::find(context).map_err(|refused| context.reject(refused.rejection))
    }

    /// `None` without the header; a header that does not decode is still
    /// refused.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        match Self::find(context) {
            Ok(header) => Ok(Some(header)),
            Err(refused) if refused.is_missing() => Ok(None),
            Err(refused) => Err(context.reject(refused.rejection)),
        }
    }
}

/// The header, or why there is none that decodes, for the handler to
/// answer itself.
#[diagnostic::do_not_recommend]
impl<T: headers::Header> FromRequestHead for Result<TypedHeader<T>, TypedHeaderRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(TypedHeader::find(context))
    }
}

/// Why `TypedHeader` refused a request (400), as axum-extra's
/// `TypedHeaderRejection`: which header, and whether it was missing or
/// did not decode.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{TypedHeader, TypedHeaderRejection}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |agent: Result<TypedHeader<headers::UserAgent>, TypedHeaderRejection>| match agent {
///         Ok(TypedHeader(agent)) => agent.to_string(),
///         Err(rejection) if rejection.is_missing() => format!("no {}", rejection.name()),
///         Err(rejection) => rejection.body_text(),
///     })
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "no user-agent");
/// # }
/// ```
#[derive(Debug)]
pub struct TypedHeaderRejection {
    name: &'static HeaderName,
    reason: TypedHeaderRejectionReason,
    rejection: Rejection,
}

/// Why a typed header was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum TypedHeaderRejectionReason {
    /// The request has no such header.
    Missing,
    /// The header does not decode as its type.
    Error(headers::Error),
}

impl TypedHeaderRejectionReason {
    /// Whether the header was missing.
    pub fn is_missing(&self) -> bool {
        matches!(self, Self::Missing)
    }
}

impl TypedHeaderRejection {
    /// The header's name.
    pub fn name(&self) -> &HeaderName {
        self.name
    }

    /// Why it was refused.
    pub fn reason(&self) -> &TypedHeaderRejectionReason {
        &self.reason
    }

    /// Whether the header was missing.
    pub fn is_missing(&self) -> bool {
        self.reason.is_missing()
    }

    /// The status it answers.
    pub fn status(&self) -> StatusCode {
        self.rejection.status()
    }

    /// What it tells the client.
    pub fn body_text(&self) -> String {
        self.rejection.body_text()
    }
}

impl fmt::Display for TypedHeaderRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.rejection.fmt(f)
    }
}

impl std::error::Error for TypedHeaderRejection {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.reason {
            TypedHeaderRejectionReason::Error(error) => Some(error),
            TypedHeaderRejectionReason::Missing => None,
        }
    }
}

/// Its status, with its message as plain text.
impl IntoResponse for TypedHeaderRejection {
    fn into_response(self) -> Response<Body> {
        self.rejection.into_response()
    }
}
