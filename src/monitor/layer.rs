//! [`MonitorLayer`]: the `tower` layer that wraps a service in a [`Monitor`].

use std::marker::PhantomData;

use super::Monitor;
use crate::hook::FnSync;

/// Applies a [`MonitorHook`](super::MonitorHook) to the inner service: see the
/// [module docs](crate::monitor).
///
/// The hook is a closure or a [`MonitorHook`](super::MonitorHook); the marker `M` tells
/// closures apart (see [`hook`](crate::hook)) and is inferred. Its default
/// is the layer's usual closure form, so a function returning the layer
/// names no marker.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
/// use http::{Request, Response};
/// use pronghorn::{Exchange, MonitorLayer};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let seen = Arc::new(AtomicUsize::new(0));
/// let counter = seen.clone();
/// let layer = MonitorLayer::new(move |_: &Exchange<'_, Response<String>, std::convert::Infallible>| {
///     counter.fetch_add(1, Ordering::Relaxed);
/// });
/// let service = layer.layer(service_fn(|_: Request<String>| async {
///     Ok::<_, std::convert::Infallible>(Response::new("hello".to_owned()))
/// }));
/// service.oneshot(Request::new(String::new())).await.unwrap();
/// assert_eq!(seen.load(Ordering::Relaxed), 1);
/// # }
/// ```
pub struct MonitorLayer<H, M = FnSync> {
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

crate::hook::hook_layer!(MonitorLayer, Monitor, "MonitorHook");

impl<H, M> MonitorLayer<H, M> {
    /// The hook.
    pub(super) fn into_hook(self) -> H {
        self.hook
    }
}
