//! [`PrefixLayer`]: the `tower` layer that wraps a service in a [`Prefix`].

use std::{fmt, marker::PhantomData};

use tower_layer::Layer;

use super::Prefix;
use crate::hook::FnEdit;

/// Applies a [`PrefixHook`](super::PrefixHook) to the inner service: see the
/// [module docs](crate::prefix).
///
/// The hook is a closure or a [`PrefixHook`](super::PrefixHook); the marker `M` tells
/// closures apart (see [`hook`](crate::hook)) and is inferred. Its default
/// is the layer's usual closure form, so a function returning the layer
/// names no marker.
///
/// ```
/// use std::ops::ControlFlow;
/// use http::{Request, Response, StatusCode};
/// use pronghorn::PrefixLayer;
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let layer = PrefixLayer::new(|request: Request<String>| match request.uri().path() {
///     "/private" => ControlFlow::Break(Response::new("no".to_owned())),
///     _ => ControlFlow::Continue(request),
/// });
/// let service = layer.layer(service_fn(|_: Request<String>| async {
///     Ok::<_, std::convert::Infallible>(Response::new("yes".to_owned()))
/// }));
/// let response = service.oneshot(Request::get("/private").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.body(), "no");
/// # }
/// ```
pub struct PrefixLayer<H, M = FnEdit> {
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

impl<H, M> PrefixLayer<H, M> {
    /// A layer running `hook`: a closure or a [`PrefixHook`](super::PrefixHook).
    pub fn new(hook: H) -> Self {
        Self {
            hook,
            _marker: PhantomData,
        }
    }
}

impl<S, H: Clone, M> Layer<S> for PrefixLayer<H, M> {
    type Service = Prefix<S, H, M>;

    fn layer(&self, inner: S) -> Self::Service {
        Prefix::new(inner, self.hook.clone())
    }
}

impl<H: Clone, M> Clone for PrefixLayer<H, M> {
    fn clone(&self) -> Self {
        Self::new(self.hook.clone())
    }
}

impl<H, M> fmt::Debug for PrefixLayer<H, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixLayer")
            .field("hook", &std::any::type_name::<H>())
            .finish()
    }
}
