//! Markers that tell closure hooks apart, and what a monitor may report.
//!
//! A hook trait such as [`PrefixHook<B, R, M>`](crate::PrefixHook) is
//! implemented for closures three times, once per marker `M`:
//!
//! | marker | the closure returns |
//! | --- | --- |
//! | [`FnSync`] | the value itself: the step is always ready |
//! | [`FnAsync`] | a future of the value: the step is always pending |
//! | [`FnStep`] | a [`Step`](crate::Step): it decides per call |
//! | [`FnEdit`] | works on the message in place, through `&mut`: a prefix answers whether to go on, a postfix nothing |
//!
//! A type that implements the trait itself uses the default marker,
//! [`Custom`]. The compiler picks the marker from the closure's return type,
//! so the same constructor takes every kind of hook and no annotation is
//! needed beyond the closure's argument types. The layers and services carry
//! the marker as a type parameter; nothing is stored for it.
//!
//! The marker is settled where the layer is used as a service, as any
//! inferred type is. A layer kept in a field of a named type spells it out:
//! `PrefixLayer<fn(Request<B>) -> ControlFlow<R, Request<B>>, FnSync>`.

use std::{any::Any, fmt::Display};

/// Marker of a closure hook that answers synchronously.
#[derive(Debug)]
pub enum FnSync {}

/// Marker of a closure hook that answers with a future.
#[derive(Debug)]
pub enum FnAsync {}

/// Marker of a closure hook that answers with a [`Step`](crate::Step).
#[derive(Debug)]
pub enum FnStep {}

/// Marker of a closure that works on the message where it lies, through
/// `&mut`: a prefix that answers `ControlFlow<R>` (`Continue(())` lets the
/// request through), a postfix that edits the response and returns
/// nothing. The step is always ready, and the message is not moved in and
/// out of the closure.
#[derive(Debug)]
pub enum FnEdit {}

/// Marker of a type that implements a hook trait itself (the default).
#[derive(Debug)]
pub enum Custom {}

/// What a monitor hook answers: `()`, or a `Result` whose error is logged.
///
/// A monitor cannot change the response. When it fails, the failure is
/// reported with [`tracing`] at the `ERROR` level and the response goes out
/// unchanged. The event falls in the request's span when a tracing
/// middleware wraps the router (see [Logging](crate#logging)).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use http::{Request, StatusCode};
/// use pronghorn::{Router, router::RouteExchange};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let log = Arc::new(Mutex::new(Vec::new()));
/// let lines = log.clone();
/// let router = Router::new()
///     .get("/", || "hello")
///     // A monitor that can fail: an `Err` is logged, never sent.
///     .monitor("/", move |exchange: &RouteExchange<'_>| -> Result<(), String> {
///         let mut lines = lines.lock().map_err(|_| "the log is poisoned".to_owned())?;
///         lines.push(format!("{} {:?}", exchange.path(), exchange.status()));
///         if lines.len() > 1 {
///             return Err(format!("{} lines, one was expected", lines.len()));
///         }
///         Ok(())
///     })
///     .compile()
///     .unwrap();
///
/// for _ in 0..2 {
///     let response = router.clone().oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
///     // The second monitor call fails; its response goes out unchanged.
///     assert_eq!(response.status(), StatusCode::OK);
/// }
/// assert_eq!(log.lock().unwrap().len(), 2);
/// # }
/// ```
pub trait MonitorOutput {
    /// Reports a failure, if this output is one.
    fn report(self);
}

impl MonitorOutput for () {
    #[inline]
    fn report(self) {}
}

impl<E: Display> MonitorOutput for Result<(), E> {
    #[inline]
    fn report(self) {
        if let Err(error) = self {
            error_limited!(%error, "pronghorn: monitor hook failed");
        }
    }
}

/// The message of a panic, when its payload is a string.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)")
}

/// Logs a monitor hook's panic: the response goes out unchanged.
pub(crate) fn log_monitor_panic(panic: &(dyn Any + Send)) {
    error_limited!(
        panic = panic_message(panic),
        "pronghorn: monitor hook panicked; response unchanged"
    );
}
