//! A handler as a tower `Service` of its own: [`HandlerWithoutStateExt`].

use crate::handler::Handler;

use super::builder::Router;

/// A handler as a tower `Service` of its own, as axum's
/// `HandlerWithoutStateExt` makes one: it answers every request, whatever
/// its method and path.
///
/// The service is a [`Router`] whose [fallback](Router::fallback) the
/// handler is, so that it can be given [state](Router::state), layers
/// and settings as any router, and is served or called as a router is:
/// compiled at its first request (or by [`serve`](crate::serve()) before
/// its first client).
///
/// ```
/// use http::{Request, StatusCode, Uri};
/// use pronghorn::router::HandlerWithoutStateExt;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let not_found = |uri: Uri| async move { (StatusCode::NOT_FOUND, format!("no {}", uri.path())) };
/// let service = not_found.into_service();
/// let request = Request::get("/anywhere").body(String::new()).unwrap();
/// let response = service.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::NOT_FOUND);
/// # }
/// ```
pub trait HandlerWithoutStateExt<M>: Handler<M> {
    /// The handler as a service answering every request.
    fn into_service(self) -> Router;
}

impl<H: Handler<M>, M: 'static> HandlerWithoutStateExt<M> for H {
    fn into_service(self) -> Router {
        Router::new().fallback(self)
    }
}
