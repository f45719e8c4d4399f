//! [`WithRejection`]: an extractor whose rejection becomes a type of yours.

use std::{
    fmt,
    future::Future,
    marker::PhantomData,
    ops::{Deref, DerefMut},
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::Bytes;
use http::Response;

use super::{
    BytesRejection, Extension, ExtensionRejection, Form, FormRejection, FromRequestBody,
    FromRequestHead, Header, HeaderRejection, MatchedPath, MatchedPathRejection, NamedHeader,
    Needs, NestedPath, NestedPathRejection, Path, PathRejection, Query, QueryRejection, RawForm,
    RawFormRejection, RawPathParams, RawPathParamsRejection, RequestContext, StringRejection,
};
use crate::{body::Body, handler::IntoResponse};

/// An extractor `E` whose rejection is answered as your type `R`, made
/// from it, as axum-extra's `WithRejection` does: an API's errors in one
/// shape without a handler taking `Result` each time.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{IntoResponse, Router, handler::{Json, JsonRejection, WithRejection}};
/// use tower::ServiceExt;
///
/// /// The API's error.
/// struct ApiError(String);
///
/// impl From<JsonRejection> for ApiError {
///     fn from(rejection: JsonRejection) -> Self {
///         ApiError(rejection.message().to_owned())
///     }
/// }
///
/// impl IntoResponse for ApiError {
///     fn into_response(self) -> http::Response<pronghorn::Body> {
///         (StatusCode::BAD_REQUEST, Json(serde_json::json!({ "error": self.0 }))).into_response()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/echo", |WithRejection(Json(value), _): WithRejection<Json<serde_json::Value>, ApiError>| Json(value))
///     .compile()
///     .unwrap();
/// let request = Request::post("/echo").header("content-type", "application/json").body("{".to_owned()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert!(body.starts_with(br#"{"error":"invalid JSON body"#));
/// # }
/// ```
pub struct WithRejection<E, R>(pub E, pub PhantomData<R>);

impl<E, R> WithRejection<E, R> {
    /// The value the extractor read.
    pub fn into_inner(self) -> E {
        self.0
    }
}

impl<E: fmt::Debug, R> fmt::Debug for WithRejection<E, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WithRejection").field(&self.0).finish()
    }
}

impl<E: Clone, R> Clone for WithRejection<E, R> {
    fn clone(&self) -> Self {
        WithRejection(self.0.clone(), PhantomData)
    }
}

impl<E, R> Deref for WithRejection<E, R> {
    type Target = E;

    fn deref(&self) -> &E {
        &self.0
    }
}

impl<E, R> DerefMut for WithRejection<E, R> {
    fn deref_mut(&mut self) -> &mut E {
        &mut self.0
    }
}

/// The rejection an extractor of pronghorn's refuses with, which a handler
/// takes in `Result<E, E::Rejection>`.
pub trait HasRejection {
    /// The rejection.
    type Rejection;
}

macro_rules! has_rejection {
    ($($(#[$attr:meta])* [$($generics:tt)*] $extractor:ty => $rejection:ty;)*) => {$(
        $(#[$attr])*
        impl<$($generics)*> HasRejection for $extractor {
            type Rejection = $rejection;
        }
    )*};
}

has_rejection! {
    [T] Path<T> => PathRejection;
    [T] Query<T> => QueryRejection;
    [N: NamedHeader] Header<N> => HeaderRejection;
    [T] Form<T> => FormRejection;
    [] RawForm => RawFormRejection;
    [T: Clone + Send + Sync + 'static] Extension<T> => ExtensionRejection;
    [] NestedPath => NestedPathRejection;
    [] MatchedPath => MatchedPathRejection;
    [] RawPathParams => RawPathParamsRejection;
    [] String => StringRejection;
    [] Bytes => BytesRejection;
    #[cfg(feature = "json")]
    [T] super::Json<T> => super::JsonRejection;
    #[cfg(feature = "typed-header")]
    [T: headers::Header] super::TypedHeader<T> => super::TypedHeaderRejection;
}

impl<E, R> FromRequestHead for WithRejection<E, R>
where
    E: HasRejection + FromRequestHead,
    Result<E, E::Rejection>: FromRequestHead,
    R: From<E::Rejection> + IntoResponse,
{
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match <Result<E, E::Rejection>>::from_head(context)? {
            Ok(value) => Ok(WithRejection(value, PhantomData)),
            Err(rejection) => Err(R::from(rejection).into_response()),
        }
    }

    fn needs(needs: &mut Needs) {
        E::needs(needs);
    }
}

impl<E, R> FromRequestBody for WithRejection<E, R>
where
    E: HasRejection,
    Result<E, E::Rejection>: FromRequestBody,
    R: From<E::Rejection> + IntoResponse + 'static,
{
    type Future = WithRejectionFuture<<Result<E, E::Rejection> as FromRequestBody>::Future, R>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        WithRejectionFuture {
            inner: <Result<E, E::Rejection>>::from_body(body, context),
            _rejection: PhantomData,
        }
    }
}

/// The future of a [`WithRejection`] that reads the body.
pub struct WithRejectionFuture<F, R> {
    inner: F,
    _rejection: PhantomData<fn() -> R>,
}

impl<F, R> fmt::Debug for WithRejectionFuture<F, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithRejectionFuture")
            .finish_non_exhaustive()
    }
}

impl<F, E, X, R> Future for WithRejectionFuture<F, R>
where
    F: Future<Output = Result<Result<E, X>, Response<Body>>> + Unpin,
    R: From<X> + IntoResponse,
{
    type Output = Result<WithRejection<E, R>, Response<Body>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(match ready!(Pin::new(&mut self.inner).poll(cx))? {
            Ok(value) => Ok(WithRejection(value, PhantomData)),
            Err(rejection) => Err(R::from(rejection).into_response()),
        })
    }
}
