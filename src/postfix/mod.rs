//! Postfix: a hook that sees the request head and the inner service's
//! response, and may modify or replace it.
//!
//! A [`PostfixHook`] gets the [`RequestHead`](crate::RequestHead) (method,
//! URI, version — copied before the request moved into the inner service)
//! and the response by value, and answers the response to send on: the same
//! one, modified, or another. A closure `FnMut(&mut R)` edits the response
//! where it lies and sees nothing of the request: no head is copied for it,
//! and it costs what tower's `MapResponse` costs. Errors of the inner service pass through
//! untouched. The hook is cloned into each response future, as tower's
//! `MapResponse` does, so it must be `Clone` (a closure capturing nothing or
//! an `Arc` is).
//!
//! # Example
//!
//! ```
//! use http::{HeaderValue, Request, Response};
//! use pronghorn::{PostfixLayer, RequestHead};
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server_header = PostfixLayer::new(|response: &mut Response<String>| {
//!     response.headers_mut().insert("server", HeaderValue::from_static("pronghorn"));
//! });
//! // Asynchronous: the closure returns a future of the response.
//! let echo_path = PostfixLayer::new(|head: &RequestHead, response: Response<String>| {
//!     let path = head.path().to_owned();
//!     async move { response.map(|body| format!("{body} at {path}")) }
//! });
//!
//! let service = ServiceBuilder::new().layer(server_header).layer(echo_path).service(service_fn(
//!     |_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new("hello".to_owned())) },
//! ));
//!
//! let response = service.oneshot(Request::get("/here").body(()).unwrap()).await.unwrap();
//! assert_eq!(response.headers()["server"], "pronghorn");
//! assert_eq!(response.body(), "hello at /here");
//! # }
//! ```

mod future;
mod hook;
mod layer;
mod service;

pub use self::{future::ResponseFuture, hook::PostfixHook, layer::PostfixLayer, service::Postfix};
