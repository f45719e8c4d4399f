//! The router's state: [`State`].

use http::Response;

use super::{FromRequestHead, Needs, RequestContext, state_type};
use crate::{body::Body, handler::response::internal_error};

/// Shared state registered with [`Router::state`](crate::Router::state),
/// cloned for each call (wrap it in an `Arc`).
///
/// A route whose handler asks for a state of a type no router holds is
/// refused by [`Router::compile`](crate::Router::compile), naming the type.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// use http::Request;
/// use pronghorn::{Router, handler::State};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let hits = Arc::new(AtomicU64::new(0));
/// let router = Router::new()
///     .get("/hit", |State(hits): State<Arc<AtomicU64>>| {
///         format!("hit {}", hits.fetch_add(1, Ordering::Relaxed) + 1)
///     })
///     .state(hits.clone())
///     .compile()
///     .unwrap();
///
/// for _ in 0..3 {
///     router.clone().oneshot(Request::get("/hit").body(String::new()).unwrap()).await.unwrap();
/// }
/// assert_eq!(hits.load(Ordering::Relaxed), 3);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromRequestHead for State<T> {
    fn needs(needs: &mut Needs) {
        needs.state.push(state_type::<T>());
    }

    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match context.state::<T>() {
            Some(state) => Ok(State(state.clone())),
            None => {
                error_limited!(
                    state = std::any::type_name::<T>(),
                    "pronghorn: a handler asked for state the router was not given"
                );
                Err(internal_error())
            }
        }
    }
}
