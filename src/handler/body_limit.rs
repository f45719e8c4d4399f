//! [`DefaultBodyLimit`]: the body limit of the routes below a layer, as
//! axum's layer of that name sets it.

use tower_layer::Layer;

use super::{AddExtension, Extension};

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

impl DefaultBodyLimit {
    /// At most `limit` bytes.
    pub fn max(limit: usize) -> Self {
        Self { limit }
    }

    /// No limit of the route's own (the server's bounds still hold).
    pub fn disable() -> Self {
        Self { limit: usize::MAX }
    }

    /// The limit it sets.
    pub(crate) fn limit(self) -> usize {
        self.limit
    }
}

/// The layer puts itself in the request's extensions, where the handler
/// below the layers reads it: one nearer the handler, put there later,
/// wins.
impl<S> Layer<S> for DefaultBodyLimit {
    type Service = AddExtension<S, DefaultBodyLimit>;

    fn layer(&self, inner: S) -> Self::Service {
        Extension(*self).layer(inner)
    }
}
