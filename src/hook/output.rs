//! What a monitor hook may answer.

use std::fmt::Display;

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
