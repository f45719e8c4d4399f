//! pronghorn runs an HTTP request pipeline — **prefix → handler → postfix →
//! monitor** — as tower middleware, ready-first: when every step answers
//! synchronously, the whole request completes inside the first `poll` of the
//! response future, with no `Pending`, no boxing and no allocation of the
//! crate's own. The moment one step really is asynchronous, only that step
//! becomes a future.
//!
//! # The pipeline
//!
//! | step | layer | sees | may |
//! | --- | --- | --- | --- |
//! | prefix | [`PrefixLayer`] | the request, in place or by value | let it through (modified or not), or answer early |
//! | handler | your service | the request | answer |
//! | postfix | [`PostfixLayer`] | the response, and the [`RequestHead`] if it asks | modify or replace the response |
//! | monitor | [`MonitorLayer`] | an [`Exchange`]: head, response or error (or neither: cancelled), elapsed time; with `to_body_end`, the body's end. Or the outcome alone | observe; never change what is sent |
//!
//! Each layer is an ordinary [`tower_layer::Layer`], usable alone around any
//! `Service<Request<B>>` — an axum `Router`, a hyper `service_fn`, a
//! tower-http stack — with any body types, keeping the inner error type.
//! Standalone layers compose as tower layers do: a postfix placed outside a
//! prefix sees what that prefix answers.
//!
//! # Ready-first
//!
//! Every hook answers with a [`Step`]: [`Step::Ready`] is used on the spot,
//! only [`Step::Pending`] is stored in the response future. Hooks are written
//! as closures — synchronous, asynchronous, or answering a `Step` — or as
//! types implementing [`PrefixHook`], [`PostfixHook`] or [`MonitorHook`]. The
//! same constructor takes all of them; the compiler picks the right
//! implementation from the closure's argument and return types (see [`hook`]).
//!
//! # Example
//!
//! ```
//! use std::{convert::Infallible, ops::ControlFlow};
//! use http::{HeaderValue, Request, Response, StatusCode};
//! use pronghorn::{Exchange, MonitorLayer, PostfixLayer, PrefixLayer};
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let service = ServiceBuilder::new()
//!     // Outermost: observes the final outcome of every request.
//!     .layer(MonitorLayer::new(|exchange: &Exchange<'_, Response<String>, Infallible>| {
//!         println!("{} {} -> {:?}", exchange.method(), exchange.path(), exchange.status());
//!     }))
//!     // Adds a header to every response, where it lies.
//!     .layer(PostfixLayer::new(|response: &mut Response<String>| {
//!         response.headers_mut().insert("server", HeaderValue::from_static("pronghorn"));
//!     }))
//!     // Refuses requests without a token; looks at the request where it lies.
//!     .layer(PrefixLayer::new(|request: &mut Request<String>| {
//!         if request.headers().contains_key("authorization") {
//!             ControlFlow::Continue(())
//!         } else {
//!             let mut denied = Response::new("who are you?".to_owned());
//!             *denied.status_mut() = StatusCode::UNAUTHORIZED;
//!             ControlFlow::Break(denied)
//!         }
//!     }))
//!     .service(service_fn(|_: Request<String>| async {
//!         Ok::<_, Infallible>(Response::new("hello".to_owned()))
//!     }));
//!
//! let response = service.oneshot(Request::new(String::new())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
//! assert_eq!(response.headers()["server"], "pronghorn");
//! # }
//! ```
//!
//! # The router
//!
//! [`Router`] registers handlers and path-scoped hooks and compiles them into
//! a [`CompiledRouter`], a tower `Service` that runs the same pipeline for
//! each request: prefixes by priority, the handler, postfixes, monitors. See
//! [`router`] for the pattern syntax, the precedence rules and the hook
//! order, [`handler`] for extractors and responses, and
//! [`router::Reloadable`] for tables that change while they serve.
//!
//! ```
//! use http::{Method, Request, StatusCode};
//! use pronghorn::{Router, handler::Path};
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let router = Router::new()
//!     .get("/files/{name}.{ext}", |Path((name, ext)): Path<(String, String)>| format!("{name} as {ext}"))
//!     .compile()
//!     .unwrap();
//! let response = router.oneshot(Request::get("/files/report.pdf").body(String::new()).unwrap()).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! # }
//! ```
//!
//! # Testing
//!
//! A [`CompiledRouter`] is a `Service` for requests with any body, so an
//! application is tested in-process, without a socket: build the router
//! the server runs, and send it requests with `tower::ServiceExt::oneshot`.
//! Hooks and handlers see the body as pronghorn's [`Body`] whatever type
//! the test sends. A test that calls the router through `ServiceExt::ready`
//! names the body type once with [`CompiledRouter::into_service`]: on the
//! router itself, which takes any body, `ready()` cannot tell which request
//! type is meant.
//!
//! ```
//! # #[cfg(feature = "json")] mod json {
//! use http::{Request, StatusCode};
//! use http_body_util::BodyExt;
//! use pronghorn::{CompiledRouter, Router, handler::Json};
//! use tower::ServiceExt;
//!
//! /// The application, as `main` serves it.
//! fn app() -> CompiledRouter {
//!     Router::new()
//!         .post("/echo", |Json(value): Json<serde_json::Value>| Json(value))
//!         .compile()
//!         .expect("valid routes")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # pub async fn main() {
//! let request = Request::post("/echo")
//!     .header("content-type", "application/json")
//!     .body(r#"{"id":7}"#.to_owned())
//!     .unwrap();
//! let response = app().oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! let body = response.into_body().collect().await.unwrap().to_bytes();
//! assert_eq!(body, r#"{"id":7}"#);
//! # } }
//! # #[cfg(feature = "json")] fn main() { json::main() }
//! # #[cfg(not(feature = "json"))] fn main() {}
//! ```
//!
//! # Logging
//!
//! pronghorn logs with [`tracing`], and only what a response cannot tell:
//!
//! - `ERROR`: a prefix, handler or postfix of the router panicked (the step
//!   and the panic's message; the client gets a 500); a monitor failed or
//!   panicked (the response goes out unchanged); a handler asked for state
//!   of a type the router does not hold, an answer carried an invalid
//!   header, or a `Json` answer could not be serialised (each answered
//!   with a 500).
//! - `WARN`: `serve` could not accept a connection.
//! - `DEBUG`: a connection ended with an error (a timeout, a client gone);
//!   connections were still open at the graceful shutdown's deadline; a
//!   WebSocket upgrade failed; `TCP_NODELAY` could not be set.
//!
//! A client can trigger these at will (a request to a route that panics, a
//! flood of connections), so each is rate-limited where it is logged: at
//! most a hundred a second, and the next one logged after a pause counts
//! those left out in its `suppressed` field.
//!
//! The `ERROR` events are logged inside the service's `call` or its
//! response future's poll, so they fall in the span of a tracing
//! middleware around the router: with tower-http's `TraceLayer`, the
//! request's method and URI.
//!
//! # Feature flags
//!
//! - `server` (default): [`serve`], on hyper with HTTP/1.1 and HTTP/2,
//!   `TCP_NODELAY`, answers to pipelined requests written together, a
//!   limit or a timeout on everything a client can hold, and graceful
//!   shutdown; server-sent events ([`sse`]).
//! - `json` (default): `Json<T>`, extractor and response.
//! - `tls`: HTTPS for [`serve`] with rustls (`Serve::tls`, `Tls`), HTTP/2
//!   and HTTP/1.1 by ALPN, certificates replaced while serving.
//! - `ws`: WebSocket routes (`Router::websocket`) and the
//!   `WebSocketUpgrade` extractor, over HTTP/1.1 and HTTP/2, with
//!   pronghorn's own message types; tokio-tungstenite speaks the protocol
//!   below them.
//! - `metrics`: `monitor::Metrics`, OpenTelemetry's HTTP server metrics
//!   through the `metrics` facade, for any exporter.
//! - `axum`: through `handler::Axum`, any axum `IntoResponse` type as a
//!   handler's answer and any axum `FromRequestParts` type (axum-extra's
//!   `TypedHeader`, `CookieJar`) as a handler's argument. (An
//!   `axum::response::Response`, like a `Response` with any other body, is
//!   an answer without it.) Also axum's own `from_fn` layers as written.
//! - `macros`: `#[debug_handler]`, and the derives `FromRequest` and
//!   `FromRequestParts` with axum-extra's `via(..)` and `rejection(..)`.
//! - `typed-header`: `handler::TypedHeader`, a header read and written as
//!   a type of the `headers` crate, as axum-extra's.
//! - `multipart`: `handler::Multipart`, a `multipart/form-data` body read
//!   field by field, as axum's.
//!
//! Without default features the crate is the layers and the router, with no
//! runtime dependency.

#![cfg_attr(docsrs, feature(doc_cfg))]
// Here rather than in Cargo.toml's lints, which reach the tests, examples
// and benchmarks too: those are programs (one counts allocations with an
// allocator of its own), and their `pub` items are for the test crates
// that share them.
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

#[macro_use]
mod log;

#[cfg(feature = "macros")]
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
pub mod body;
mod clock;
pub mod error_handling;
pub mod from_axum;
pub mod handler;
mod head;
pub mod hook;
pub mod middleware;
pub mod monitor;
mod panic;
mod params;
pub mod postfix;
pub mod prefix;
pub mod router;
#[cfg(feature = "server")]
mod serve;
#[cfg(feature = "server")]
mod served;
#[cfg(feature = "server")]
mod shares;
#[cfg(feature = "server")]
mod shutdown;
#[cfg(feature = "server")]
pub mod sse;
pub mod step;
#[cfg(feature = "ws")]
mod upgrade_slots;
#[cfg(feature = "ws")]
pub mod ws;

#[cfg(feature = "tls")]
pub use self::serve::Tls;
#[cfg(feature = "server")]
pub use self::serve::{
    ConnLimiter, IncomingStream, IntoMakeServiceWithConnectInfo, Listener, ListenerExt, Serve,
    Served, TapIo, WithGracefulShutdown, serve,
};

/// The [`http`](https://docs.rs/http) crate pronghorn's types are made of
/// (`Request`, `StatusCode`, `header`, …), as axum's `axum::http`: an app
/// names it without a dependency of its own.
#[doc(no_inline)]
pub use http;

pub use self::{
    body::{Body, BoxError, Request, Response},
    error_handling::HandleErrorLayer,
    handler::IntoResponse,
    head::RequestHead,
    monitor::{Exchange, Monitor, MonitorHook, MonitorLayer},
    postfix::{Postfix, PostfixHook, PostfixLayer},
    prefix::{Prefix, PrefixHook, PrefixLayer},
    router::{CompiledRouter, RouteError, Router},
    step::Step,
};
/// Checks a handler function part by part (feature `macros`), so that the
/// compiler's first error names its mistake.
///
/// A handler with a mistake is refused where it is registered, as "not a
/// handler of pronghorn's": rustc cannot tell which of a handler's forms
/// was meant, so it cannot say what is wrong. On the handler's function,
/// `#[debug_handler]` checks each part on its own: the first error names the
/// argument that is not an extractor, the body extractor that is not last
/// (or the first of two), the answer that is not a response, or — rustc's
/// own "future cannot be sent between threads safely" — the value an
/// asynchronous handler holds across an `.await` that keeps its future
/// from being `Send`. The function is left as written, and costs nothing
/// at run time.
///
/// It checks functions without generic parameters; a closure with a
/// mistake can be written as one to be checked. A handler written for a
/// [`Router<S>`](Router), whose `State` reads a part of its `S`, names it:
/// `#[debug_handler(state = AppState)]`, as axum's.
///
/// ```
/// use pronghorn::{Router, debug_handler, handler::{Json, Path}};
///
/// #[debug_handler]
/// async fn rename(Path(id): Path<u32>, Json(name): Json<String>) -> String {
///     format!("{id} is now {name}")
/// }
///
/// let router = Router::new().put("/users/{id}", rename).compile().unwrap();
/// ```
///
/// ```compile_fail
/// # use pronghorn::{debug_handler, handler::{Json, Path}};
/// // error: `Json<String>` cannot be extracted from a request's head
/// //        (only the last argument may read the body)
/// #[debug_handler]
/// async fn rename(Json(name): Json<String>, Path(id): Path<u32>) -> String {
///     format!("{id} is now {name}")
/// }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use pronghorn_macros::debug_handler;

// The README's example serves JSON over `serve`: checked with the default
// features.
#[cfg(all(doctest, feature = "server", feature = "json"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
