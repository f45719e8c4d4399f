//! Prefix: a hook that sees the request before the inner service and lets it
//! through or answers early.
//!
//! A [`PrefixHook`] gets the request by value and answers a
//! [`ControlFlow`](std::ops::ControlFlow):
//!
//! - `Continue(request)` passes the request — the same one or a modified one —
//!   to the inner service;
//! - `Break(response)` answers early: the inner service is not called.
//!
//! A synchronous hook costs nothing beyond its own code: the inner service is
//! called in the same `call`, and an early answer is ready on the first poll.
//! Only an asynchronous answer is stored in the response future; the inner
//! service, which `poll_ready` made ready, is then moved into that future
//! (and a clone left in its place, as tower's `AsyncFilter` does), so the
//! inner service must be `Clone`.
//!
//! # Example
//!
//! ```
//! use std::ops::ControlFlow;
//! use http::{Request, Response, StatusCode};
//! use pronghorn::PrefixLayer;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // Synchronous: answer 401 unless the request carries a token.
//! let auth = PrefixLayer::new(|request: Request<String>| {
//!     if request.headers().contains_key("authorization") {
//!         ControlFlow::Continue(request)
//!     } else {
//!         let mut denied = Response::new(String::new());
//!         *denied.status_mut() = StatusCode::UNAUTHORIZED;
//!         ControlFlow::Break(denied)
//!     }
//! });
//! // Asynchronous: the same constructor; the closure returns a future.
//! let tag = PrefixLayer::new(|mut request: Request<String>| async move {
//!     request.headers_mut().insert("x-checked", "yes".parse().unwrap());
//!     ControlFlow::Continue(request)
//! });
//!
//! let service = ServiceBuilder::new().layer(auth).layer(tag).service(service_fn(
//!     |request: Request<String>| async move {
//!         let checked = request.headers().contains_key("x-checked");
//!         Ok::<_, std::convert::Infallible>(Response::new(format!("checked: {checked}")))
//!     },
//! ));
//!
//! let denied = service.clone().oneshot(Request::new(String::new())).await.unwrap();
//! assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
//!
//! let request = Request::builder().header("authorization", "t").body(String::new()).unwrap();
//! let allowed = service.oneshot(request).await.unwrap();
//! assert_eq!(allowed.body(), "checked: true");
//! # }
//! ```

mod future;
mod hook;
mod layer;
mod service;

pub use self::{future::ResponseFuture, hook::PrefixHook, layer::PrefixLayer, service::Prefix};
