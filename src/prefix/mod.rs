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
//! called in the same `call`, and an early answer is ready on the first poll;
//! the inner service need not be `Clone`. Only an asynchronous answer is
//! stored in the response future; the inner service, which `poll_ready`
//! made ready, is then moved into that future (and a clone left in its
//! place, as tower's `AsyncFilter` does), so for a hook that may suspend
//! the inner service must be `Clone`.
//!
//! An early answer is of the inner service's response type. Over the router
//! or any service answering `Response<pronghorn::Body>`, any
//! [`IntoResponse`](crate::IntoResponse) converts to it:
//! `ControlFlow::Break(StatusCode::UNAUTHORIZED.into_response())`.
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
//!
//! # Outside a layer that changes the body
//!
//! Inside tower-http's `CompressionLayer` (or `TraceLayer`, or any layer
//! that wraps the body), the response type is that layer's —
//! `Response<CompressionBody<..>>` — which a prefix cannot build. Put
//! `map_response(IntoResponse::into_response)` between them: the responses
//! become `Response<pronghorn::Body>` (the compressed body kept as it
//! streams), and the prefix answers with any `IntoResponse`.
//!
//! ```
//! use std::ops::ControlFlow;
//! use http::{Request, StatusCode, header};
//! use pronghorn::{Body, IntoResponse, PrefixLayer, Router};
//! use tower::{ServiceBuilder, ServiceExt};
//! use tower_http::compression::CompressionLayer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let router = Router::new().get("/", || "hello ".repeat(100)).compile().unwrap();
//! let service = ServiceBuilder::new()
//!     .layer(PrefixLayer::new(|request: Request<Body>| {
//!         if request.headers().contains_key(header::AUTHORIZATION) {
//!             ControlFlow::Continue(request)
//!         } else {
//!             ControlFlow::Break(StatusCode::UNAUTHORIZED.into_response())
//!         }
//!     }))
//!     .map_response(IntoResponse::into_response)
//!     .layer(CompressionLayer::new())
//!     .service(router);
//!
//! let denied = service.clone().oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
//! let request = Request::get("/")
//!     .header(header::AUTHORIZATION, "t")
//!     .header(header::ACCEPT_ENCODING, "gzip")
//!     .body(Body::empty())
//!     .unwrap();
//! let compressed = service.oneshot(request).await.unwrap();
//! assert_eq!(compressed.headers()[header::CONTENT_ENCODING], "gzip");
//! # }
//! ```

mod future;
mod hook;
mod layer;
mod service;

pub use self::{
    future::ResponseFuture,
    hook::{PrefixHook, Verdict},
    layer::PrefixLayer,
    service::Prefix,
};
