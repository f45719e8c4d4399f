//! [`PostfixLayer`]: the `tower` layer that wraps a service in a [`Postfix`].

use std::marker::PhantomData;

use super::Postfix;
use crate::hook::FnBare;

/// Applies a [`PostfixHook`](super::PostfixHook) to the inner service: see the
/// [module docs](crate::postfix).
///
/// The hook is a closure or a [`PostfixHook`](super::PostfixHook); the marker `M` tells
/// closures apart (see [`hook`](crate::hook)) and is inferred. Its default
/// is the layer's usual closure form, so a function returning the layer
/// names no marker.
///
/// ```
/// use http::{HeaderValue, Request, Response};
/// use pronghorn::{PostfixLayer, RequestHead};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let layer = PostfixLayer::new(|_: &RequestHead, mut response: Response<String>| {
///     response.headers_mut().insert("x-served-by", HeaderValue::from_static("pronghorn"));
///     response
/// });
/// let service = layer.layer(service_fn(|_: Request<String>| async {
///     Ok::<_, std::convert::Infallible>(Response::new("hello".to_owned()))
/// }));
/// let response = service.oneshot(Request::new(String::new())).await.unwrap();
/// assert_eq!(response.headers()["x-served-by"], "pronghorn");
/// # }
/// ```
pub struct PostfixLayer<H, M = FnBare> {
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

crate::hook::hook_layer!(PostfixLayer, Postfix, "PostfixHook");
