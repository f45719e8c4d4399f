//! The compiled router: routes, path-scoped hooks, and the pipeline that
//! runs them.
//!
//! # Patterns
//!
//! Segments are separated by `/`; empty segments are ignored, in patterns
//! and in paths alike, unless the router answers as axum does
//! ([`Answers::Axum`]: a trailing slash only where the pattern has one).
//!
//! | pattern | matches |
//! | --- | --- |
//! | `/users` | exactly `/users` |
//! | `/users/{id}` | one segment: `/users/7` (`id=7`) |
//! | `/files/{name}.{ext}` | `/files/report.final.json` (`name=report`, `ext=final.json`) |
//! | `/v{major}.{minor}` | `/v1.2` |
//! | `/files/{*path}` | one or more segments: `/files/a/b` (`path=a/b`) |
//! | `/files/{*path}/edit` | `/files/a/b/edit` (`path=a/b`) |
//!
//! A parameter followed by literal text captures up to the first
//! occurrence of that text; one at the end of its segment captures the
//! rest. Captures are never empty. `{{` and `}}` are literal braces. Names
//! are `[A-Za-z_][A-Za-z0-9_]*`.
//!
//! Literal text is compared with the path as received, still
//! percent-encoded: `/my%20files` matches a request for `/my%20files`.
//! Text no path holds — `?`, `#`, a space, a control character — is an
//! error of [`compile`](crate::Router::compile): the route could never
//! match.
//!
//! # Precedence
//!
//! The routes of the request's method are searched before routes for any
//! method. At each segment: the static child, then dynamic siblings in the
//! order their patterns were first registered, then catch-alls; a branch
//! that fails further down is abandoned for the next (backtracking). HEAD is
//! answered by a HEAD route, else an any-method route, else the GET route
//! with its body removed. A path that matches only for other methods gets
//! 405 with `Allow`; OPTIONS without a route of its own runs the prefix
//! hooks (so a CORS prefix can answer a preflight), then answers 204 with
//! `Allow`. No match: 404. A request target that is not a path, as the
//! `*` of `OPTIONS *` or a CONNECT's `host:port`, matches no route.
//!
//! # Hooks
//!
//! [`Router::prefix`], [`Router::postfix`] and [`Router::monitor`] register
//! a hook on a [`Scope`]: a method (or any), a pattern whose whole subtree
//! it covers, and a [`Priority`]. Hooks run by priority; at equal priority
//! method-specific before any-method, then shallower patterns first, then in
//! registration order. [`Router::compile`] settles, for every route, which
//! hooks certainly apply and which need a check at request time; a route
//! that no hook can apply to calls its handler directly. Hooks see the
//! request as received, whatever a prefix did to it, from a copy of its
//! head; a route with no hook pays for none: no copy, and no clock read.
//!
//! Which hooks see which answers:
//!
//! | the answer | prefixes | postfixes | monitors |
//! | --- | --- | --- | --- |
//! | the handler's, its extractors' rejections included | all, before it | all | all |
//! | a 500 for a handler that panicked | all | none | all |
//! | a prefix's, in the handler's stead | those before it | none | all |
//! | a postfix's, replacing the response | all | those before it | all |
//! | a [fallback](Router::fallback)'s, for a path no route matches | all | all | all |
//! | the automatic 204 to OPTIONS (and an OPTIONS 404) | all: one may answer a preflight | none | all |
//! | the router's own 404, 405 and 426 | none | none | all |
//!
//! A router given a tower layer with [`Router::layer`] answers its 404 and
//! 405 as a fallback's, through the layer: the hooks over the path run
//! around them, as the fallback's row says.
//!
//! A header on every answer: a prefix on `/` stages it with
//! [`Route::stage_header`], and it goes out with whatever answers after the
//! prefix ran — the handler's, another prefix's, a postfix's, a 500. The
//! router's own 404, 405 and 426 run no prefix: give the router a
//! [fallback](Router::fallback) for 404s, or put a tower layer (tower-http's
//! `SetResponseHeaderLayer`) around the compiled router, which every answer
//! passes through.
//!
//! # Tower middleware
//!
//! Tower layers go inside the router, after routing, as axum puts them:
//! [`Router::layer`] wraps the routes registered so far and the router's
//! answers to paths no route takes, [`Router::route_layer`] the routes
//! alone, [`MethodRouter::layer`] and
//! [`Handler::layer`](crate::handler::Handler::layer) one route's
//! handlers. A layer sees the request the handler would see, with its
//! [`MatchedPath`](crate::handler::MatchedPath) and
//! [`RouteMatch`](crate::handler::RouteMatch) in its extensions; prefix
//! hooks run before it, postfixes and monitors see what it answered (the
//! table is [`Router::layer`]'s). A layer that fails, as a timeout does,
//! goes inside a [`HandleErrorLayer`](crate::HandleErrorLayer).
//!
//! ```
//! use std::time::Duration;
//! use http::{Request, StatusCode};
//! use pronghorn::{Router, handler::Path, router::get};
//! use tower::ServiceExt;
//! use tower_http::timeout::TimeoutLayer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let timeout = TimeoutLayer::with_status_code(StatusCode::GATEWAY_TIMEOUT, Duration::from_millis(50));
//! let router = Router::new()
//!     .get("/fast", || "fast")
//!     .route("/slow/{n}", get(|Path(n): Path<u64>| async move {
//!         tokio::time::sleep(Duration::from_millis(n)).await;
//!         "done"
//!     }).layer(timeout))
//!     .compile()
//!     .unwrap();
//!
//! let answer = |uri: &str| router.clone().oneshot(Request::get(uri).body(String::new()).unwrap());
//! assert_eq!(answer("/slow/1").await.unwrap().status(), StatusCode::OK);
//! assert_eq!(answer("/slow/1000").await.unwrap().status(), StatusCode::GATEWAY_TIMEOUT);
//! # }
//! ```
//!
//! A layer also goes around the whole compiled router, as around any
//! service: it then runs before routing, and sees every request.
//!
//! # When the steps run
//!
//! The router runs a request's steps inside `Service::call`, one after the
//! other, as far as they answer at once: a request whose steps are all
//! synchronous is answered before `call` returns, and its response future
//! is ready when first polled. The future of an asynchronous step (an
//! async handler or hook, a body still arriving) is polled for the first
//! time there too, with a waker that ignores wake-ups; if it is still
//! pending, the request's state moves into the response future, which
//! polls that step with the caller's waker from then on. So a future that
//! completes without waiting costs no trip through the scheduler — one that
//! awaits `tokio::task::yield_now()` once, for one, goes on at the response
//! future's first poll without having yielded to other tasks.
//!
//! ```
//! use std::{pin::pin, task::{Context, Waker}};
//! use http::Request;
//! use pronghorn::Router;
//! use tower::Service;
//!
//! let mut router = Router::new()
//!     .get("/sync", || "now")
//!     .get("/async", || async { "also now" })
//!     .get("/yield", || async {
//!         tokio::task::yield_now().await;
//!         "after one yield_now"
//!     })
//!     .compile()
//!     .unwrap();
//! for path in ["/sync", "/async", "/yield"] {
//!     let mut future = pin!(router.call(Request::get(path).body(String::new()).unwrap()));
//!     let poll = future.as_mut().poll(&mut Context::from_waker(Waker::noop()));
//!     assert!(poll.is_ready(), "{path} is answered at its first poll");
//! }
//! ```

// Setup time (`setup/`): what `Router` collects and `compile` makes of it, and the
// changes a `Reloadable` makes. Request time: the compiled tables, the
// lookup and the pipeline that serve a request. Request time imports
// nothing of setup time (`.ci/layers.py` checks it).
mod request;
mod setup;

pub use self::{
    request::{
        compiled::{CompiledRouter, Priority},
        pipeline::future::ResponseFuture,
        route::Route,
        route_hooks::{
            PostfixOutput, PrefixOutput, Replace, RoutePostfix, RoutePrefix, RouteVerdict, Staged,
        },
        service::{Match, RouterAsService, RouterIntoService},
    },
    setup::{
        builder::Router,
        error::RouteError,
        handler_service::HandlerWithoutStateExt,
        methods::{
            MethodFilter, MethodRouter, any, any_service, connect, connect_service, delete,
            delete_service, get, get_service, head, head_service, on, on_service, options,
            options_service, patch, patch_service, post, post_service, put, put_service, trace,
            trace_service,
        },
        reload::{Modules, Reloadable},
        scope::Scope,
    },
};
pub use crate::handler::{Answers, Endpoint, EndpointFuture};
pub use crate::monitor::route::{Failure, RouteExchange, RouteMonitor};

pub use crate::params::{DecodeError, MAX_PARAMETERS, Params};
