//! Monitor: a hook that observes the outcome of every request before the
//! response is handed back, and cannot change it.
//!
//! A [`MonitorHook`] gets an [`Exchange`]: the request head, a shared borrow
//! of the inner service's response or error (the borrow is the snapshot:
//! nothing is cloned), and the time the inner service took. The response is
//! handed back only once the monitor has finished, so a monitor that writes
//! a log line or a metric is done before the client hears back.
//!
//! # What a monitor sees
//!
//! Behind the router ([`Router::monitor`](crate::Router::monitor)), in
//! every outcome of a request. Every call also sees the request head and
//! headers, the monitor's own parameters and the elapsed time.
//!
//! | outcome | when it runs | `status()` | `error()` | `pattern()` |
//! | --- | --- | --- | --- | --- |
//! | answered by the handler | before the response is handed back | the response's | `None` | the route's |
//! | a step answered an error value (`Err(E)`) | same | the error response's | [`Failure::Error`](crate::router::Failure::Error): step, type, message | the route's |
//! | a step panicked | same | 500 | [`Failure::Panic`](crate::router::Failure::Panic): step, message | the route's |
//! | a prefix answered early | same | the prefix's answer's | `None` | the route's |
//! | 404 | same | 404 | `None` | `None` |
//! | 405 | same | 405 | `None` | `None` |
//! | OPTIONS answered automatically | same | 204 | `None` | the pattern the path matched |
//! | 426 (a plain GET to a WebSocket route) | same | 426 | `None` | the route's |
//! | cancelled: the response future dropped unanswered (not while a panic unwinds, when a monitor's own panic would abort the process) | at the drop | `None` | [`Failure::Cancelled`](crate::router::Failure::Cancelled) | the route's |
//! | WebSocket connection closed | when the handler ends | 101 | `None`, or the handler's panic | the route's |
//!
//! A monitor registered with
//! [`Router::monitor_body`](crate::Router::monitor_body) is called again
//! when the response body ends, with [`Exchange::body_end`] telling how
//! (the call at the head has `None`): [`Ended::Complete`] when it was sent
//! whole, [`Ended::Failed`] with the error of a body that failed
//! mid-stream, [`Ended::Dropped`] when it was dropped before its end (the
//! client went away, the server shut down); with the bytes sent and the
//! times to the first and last byte. The second call sees the status, not
//! the response headers.
//!
//! Behind a [`MonitorLayer`] the monitor sees the inner service's response
//! or error, or neither when the request was cancelled
//! ([`Exchange::is_cancelled`]); it has no pattern, parameters or request
//! headers. [`MonitorLayer::to_body_end`] makes a layer whose hook is
//! called again when the body ends, as `monitor_body` does. A layer's hook
//! that needs only the outcome takes `Option<Result<&R, &E>>` instead of
//! the exchange (`None`: cancelled); the layer then keeps no copy of the
//! request head and reads no clock, and costs what a hand-written counting
//! layer costs:
//!
//! ```
//! # use std::sync::atomic::{AtomicU64, Ordering};
//! # use http::{Request, Response};
//! # use pronghorn::MonitorLayer;
//! # use tower::{service_fn, ServiceBuilder, ServiceExt};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! static SERVER_ERRORS: AtomicU64 = AtomicU64::new(0);
//! let count = MonitorLayer::new(|outcome: Option<Result<&Response<()>, &std::io::Error>>| {
//!     if !matches!(outcome, Some(Ok(response)) if !response.status().is_server_error()) {
//!         SERVER_ERRORS.fetch_add(1, Ordering::Relaxed);
//!     }
//! });
//! let service = ServiceBuilder::new().layer(count).service(service_fn(|_: Request<()>| async {
//!     Ok::<_, std::io::Error>(Response::new(()))
//! }));
//! service.oneshot(Request::new(())).await.unwrap();
//! assert_eq!(SERVER_ERRORS.load(Ordering::Relaxed), 0);
//! # }
//! ```
//!
//! [`AccessLog`] is a ready-made monitor: one `tracing` event per request.
//!
//! A monitor is isolated from the response. One that returns an error
//! (see [`MonitorOutput`](crate::hook::MonitorOutput)) or panics — when
//! called or inside its future — is logged with [`tracing`] and the response
//! goes out unchanged. Like a postfix hook, the hook is cloned into each
//! response future, so it must be `Clone`.
//!
//! # Example
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use http::{Request, Response, StatusCode};
//! use pronghorn::{Exchange, MonitorLayer};
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = seen.clone();
//! let monitor = MonitorLayer::new(move |exchange: &Exchange<'_, Response<()>, _>| {
//!     let line = format!("{} {} {:?}", exchange.method(), exchange.path(), exchange.status());
//!     log.lock().unwrap().push(line);
//! });
//!
//! let service = ServiceBuilder::new().layer(monitor).service(service_fn(|_: Request<()>| async {
//!     Ok::<_, std::convert::Infallible>(Response::new(()))
//! }));
//!
//! service.oneshot(Request::get("/health").body(()).unwrap()).await.unwrap();
//! assert_eq!(*seen.lock().unwrap(), ["GET /health Some(200)"]);
//! # let _ = StatusCode::OK;
//! # }
//! ```

mod access_log;
mod body;
mod exchange;
mod future;
mod hook;
mod layer;
#[cfg(feature = "metrics")]
mod metrics;
pub(crate) mod route;
mod service;
mod to_body_end;

pub(crate) use self::body::{sent_head, watch};
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use self::metrics::{
    ACTIVE_REQUESTS, ActiveFuture, ActiveRequests, ActiveRequestsLayer, Metrics, REQUEST_DURATION,
    RESPONSE_BODY_SIZE,
};
pub use self::{
    access_log::AccessLog,
    body::{BodyEnd, Ended},
    exchange::Exchange,
    future::ResponseFuture,
    hook::MonitorHook,
    layer::MonitorLayer,
    service::Monitor,
    to_body_end::{BodyMonitor, BodyMonitorFuture, BodyMonitorLayer},
};
