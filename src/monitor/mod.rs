//! Monitor: a hook that observes the outcome of every request before the
//! response is handed back, and cannot change it.
//!
//! A [`MonitorHook`] gets an [`Exchange`]: the request head, a shared borrow
//! of the inner service's response or error (the borrow is the snapshot:
//! nothing is cloned), and the time the inner service took. The response is
//! handed back only once the monitor has finished, so a monitor that writes
//! a log line or a metric is done before the client hears back.
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

mod body;
mod future;
mod hook;
mod layer;
mod service;

pub(crate) use self::body::Watched;
pub use self::{
    body::{BodyEnd, Ended},
    future::ResponseFuture,
    hook::{Exchange, MonitorHook},
    layer::MonitorLayer,
    service::Monitor,
};
