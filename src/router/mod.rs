//! The compiled router: routes, path-scoped hooks, and the pipeline that
//! runs them.
//!
//! # Patterns
//!
//! Segments are separated by `/`; empty segments are ignored, in patterns
//! and in paths alike.
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
//! `Allow`. No match: 404.
//!
//! # Hooks
//!
//! [`Router::prefix`], [`Router::postfix`] and [`Router::monitor`] register
//! a hook on a [`Scope`]: a method (or any), a pattern whose whole subtree
//! it covers, and a [`Priority`]. Hooks run by priority; at equal priority
//! method-specific before any-method, then shallower patterns first, then in
//! registration order. [`Router::compile`] settles, for every route, which
//! hooks certainly apply and which need a check at request time; a route
//! that no hook can apply to calls its handler directly.
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
//! let mut router = Router::<()>::new()
//!     .get("/sync", || "now")
//!     .get("/async", || async { "also now" })
//!     .get("/yield", || async {
//!         tokio::task::yield_now().await;
//!         "after one yield_now"
//!     })
//!     .compile()
//!     .unwrap();
//! for path in ["/sync", "/async", "/yield"] {
//!     let mut future = pin!(router.call(Request::get(path).body(()).unwrap()));
//!     let poll = future.as_mut().poll(&mut Context::from_waker(Waker::noop()));
//!     assert!(poll.is_ready(), "{path} is answered at its first poll");
//! }
//! ```

mod builder;
mod compiled;
mod error;
mod hook;
pub(crate) mod params;
mod pattern;
mod pipeline;
mod reload;
mod service;
mod table;

use std::fmt;

use http::Method;

pub use self::{
    builder::Router,
    error::RouteError,
    hook::{
        PostfixOutput, PrefixOutput, Replace, Route, RouteExchange, RouteMonitor, RoutePostfix,
        RoutePrefix,
    },
    params::{DecodeError, Params},
    reload::Reloadable,
    service::{CompiledRouter, Match, ResponseFuture},
};

/// The most parameters one pattern may hold.
pub const MAX_PARAMETERS: usize = 16;

/// When a hook runs among the hooks that apply: lower runs first.
///
/// Equal priorities keep their order of registration, method-specific
/// hooks before any-method ones and shallower patterns before deeper ones
/// (see the [module docs](crate::router)).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use http::{Request, Response};
/// use pronghorn::{Body, Router, router::{Priority, Route, Scope}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let order = Arc::new(Mutex::new(Vec::new()));
/// let hook = |name: &'static str| {
///     let order = order.clone();
///     move |_: &Route<'_>, _: &mut Response<Body>| order.lock().unwrap().push(name)
/// };
/// let router = Router::new()
///     .get("/", || "home")
///     .postfix("/", hook("normal"))
///     .postfix(Scope::new("/").priority(Priority::LOWEST), hook("lowest"))
///     .postfix(Scope::new("/").priority(Priority::HIGHEST), hook("highest"))
///     .compile()
///     .unwrap();
///
/// router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(*order.lock().unwrap(), ["highest", "normal", "lowest"]);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(u8);

impl Priority {
    /// Runs first.
    pub const HIGHEST: Self = Self(0);
    /// Runs before `NORMAL`.
    pub const HIGH: Self = Self(1);
    /// The default.
    pub const NORMAL: Self = Self(2);
    /// Runs after `NORMAL`.
    pub const LOW: Self = Self(3);
    /// Runs last.
    pub const LOWEST: Self = Self(4);
}

/// Where a hook applies: a method (or any), a pattern whose subtree it
/// covers, and a priority.
///
/// A pattern string converts into a scope for any method at
/// [`Priority::NORMAL`].
///
/// ```
/// use http::Method;
/// use pronghorn::router::{Priority, Scope};
///
/// let everywhere: Scope = "/".into();
/// let admin_gets = Scope::new("/admin").method(Method::GET).priority(Priority::HIGH);
/// # let _ = (everywhere, admin_gets);
/// ```
#[derive(Clone, Debug)]
pub struct Scope {
    pub(crate) method: Option<Method>,
    pub(crate) pattern: String,
    pub(crate) priority: Priority,
}

impl Scope {
    /// Any method, `pattern`'s subtree, normal priority.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            method: None,
            pattern: pattern.into(),
            priority: Priority::NORMAL,
        }
    }

    /// Only requests with `method`.
    pub fn method(mut self, method: Method) -> Self {
        self.method = Some(method);
        self
    }

    /// Runs at `priority`.
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
}

impl From<&str> for Scope {
    fn from(pattern: &str) -> Self {
        Self::new(pattern)
    }
}

impl From<String> for Scope {
    fn from(pattern: String) -> Self {
        Self::new(pattern)
    }
}

impl From<(Method, &str)> for Scope {
    fn from((method, pattern): (Method, &str)) -> Self {
        Self::new(pattern).method(method)
    }
}

/// A step of the router's pipeline that failed; monitors see it beside the
/// 500 response it became.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// A handler or hook panicked. The message is logged and shown to
    /// monitors, never sent to the client.
    Panic {
        /// Which step: `"prefix"`, `"handler"` or `"postfix"`.
        step: &'static str,
        /// The panic message, when it was a string.
        message: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Panic { step, message } => write!(f, "the {step} panicked: {message}"),
        }
    }
}

impl std::error::Error for Failure {}
