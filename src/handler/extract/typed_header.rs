//! [`TypedHeader`]: a header read as the `headers` crate types it (feature
//! `typed-header`).

// A rejection is the response that answers the request: see `mod.rs`.
#![expect(
    clippy::result_large_err,
    reason = "a rejection is the response that answers the request: boxing it would allocate on every rejection"
)]

use http::{Response, StatusCode};

use super::{FromRequestHead, Rejection, RequestContext};
use crate::body::Body;

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
    /// The header, `None` without one, or the refusal of one that does not
    /// decode.
    fn find(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        let mut values = context.headers().get_all(T::name()).iter().peekable();
        if values.peek().is_none() {
            return Ok(None);
        }
        match T::decode(&mut values) {
            Ok(value) => Ok(Some(TypedHeader(value))),
            Err(error) => {
                let name = T::name();
                let rejection = Rejection::new(
                    "TypedHeader",
                    StatusCode::BAD_REQUEST,
                    format!("invalid request header `{name}`: {error}"),
                )
                .or_as_axum(format!("{error} ({name})"));
                Err(context.reject(rejection))
            }
        }
    }
}

impl<T: headers::Header> FromRequestHead for TypedHeader<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::find(context)?.ok_or_else(|| {
            let name = T::name();
            let rejection = Rejection::new(
                "TypedHeader",
                StatusCode::BAD_REQUEST,
                format!("missing request header `{name}`"),
            )
            .or_as_axum(format!("Header of type `{name}` was missing"));
            context.reject(rejection)
        })
    }

    /// `None` without the header; a header that does not decode is still
    /// refused.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        Self::find(context)
    }
}
