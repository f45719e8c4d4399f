//! [`PrefixLayer`]: the `tower` layer that wraps a service in a [`Prefix`].

use std::marker::PhantomData;

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

crate::hook::hook_layer!(PrefixLayer, Prefix, "PrefixHook");
