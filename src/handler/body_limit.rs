//! [`DefaultBodyLimit`]: the body limit of the routes below a layer, as
//! axum's layer of that name sets it.

use std::task::{Context, Poll};

use http::Request;
use tower_layer::Layer;
use tower_service::Service;

/// A layer that sets the largest body the extractors of the routes below
/// it read, as axum's `DefaultBodyLimit`: [`max`](Self::max) bytes, or
/// none at all ([`disable`](Self::disable)); the layer nearest the handler
/// wins. [`Router::body_limit`](crate::Router::body_limit) sets the same
/// for a router's routes without a layer.
///
/// ```
/// use http::{Request, StatusCode};
/// use pronghorn::{Router, handler::DefaultBodyLimit};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/", |body: String| body)
///     .layer(DefaultBodyLimit::max(4))
///     .compile()
///     .unwrap();
/// let request = Request::post("/").body("too long".to_owned()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DefaultBodyLimit {
    limit: usize,
}

/// The limit a [`DefaultBodyLimit`] set, in the request's extensions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyLimit(pub(crate) usize);

impl DefaultBodyLimit {
    /// At most `limit` bytes.
    pub fn max(limit: usize) -> Self {
        Self { limit }
    }

    /// No limit of the route's own (the server's bounds still hold).
    pub fn disable() -> Self {
        Self { limit: usize::MAX }
    }
}

impl<S> Layer<S> for DefaultBodyLimit {
    type Service = DefaultBodyLimitService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DefaultBodyLimitService {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of a [`DefaultBodyLimit`] layer.
#[derive(Clone, Debug)]
pub struct DefaultBodyLimitService<S> {
    inner: S,
    limit: usize,
}

impl<S, B> Service<Request<B>> for DefaultBodyLimitService<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        // Over an outer layer's: this one is nearer the handler.
        request.extensions_mut().insert(BodyLimit(self.limit));
        self.inner.call(request)
    }
}
