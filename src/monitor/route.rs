//! What a router's monitors see and are: the [`Failure`] a request may
//! stand for, the [`RouteExchange`], and the [`RouteMonitor`] trait. Here,
//! below the router, so that the ready-made monitors need nothing of it;
//! the router re-exports them (`pronghorn::router::Failure`, …).

use std::{fmt, future::Future};

use http::Response;

use crate::{
    body::Body,
    hook::{FnAsync, FnStep, FnSync, MonitorOutput},
    step::BoxFuture,
    step::Step,
};

use super::Exchange;

/// Why a request failed, as monitors see it: a step's error value, a
/// step's panic, or the request's cancellation.
///
/// An error value and a panic become the response that goes out (the
/// error's own, or a 500); a cancelled request sends nothing.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use http::{Request, StatusCode};
/// use pronghorn::{Router, router::{Failure, RouteExchange}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let failures = Arc::new(Mutex::new(Vec::new()));
/// let seen = failures.clone();
/// let router = Router::new()
///     .get("/broken", || -> &'static str { panic!("the disk is full") })
///     .monitor("/", move |exchange: &RouteExchange<'_>| {
///         if let Some(failure) = exchange.error() {
///             seen.lock().unwrap().push(failure.clone());
///         }
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/broken").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
/// let failures = failures.lock().unwrap();
/// assert_eq!(failures[0], Failure::Panic { step: "handler", message: "the disk is full".into() });
/// assert_eq!(failures[0].kind(), "panic");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// A prefix, the handler or a postfix answered an error value: the
    /// `Err(E)` of a `Result` it returned, whose response (`E:
    /// IntoResponse`) goes out with its own status.
    Error {
        /// Which step: `"prefix"`, `"handler"` or `"postfix"`.
        step: &'static str,
        /// The error's type, as `std::any::type_name` gives it.
        type_name: &'static str,
        /// What the error says of itself, for the logs, if its type offers
        /// it ([`IntoResponse::error_message`](crate::IntoResponse::error_message));
        /// never sent to the client.
        message: Option<String>,
    },
    /// A handler or hook panicked. The message is logged and shown to
    /// monitors, never sent to the client.
    Panic {
        /// Which step: `"prefix"`, `"handler"` or `"postfix"`.
        step: &'static str,
        /// The panic message, when it was a string.
        message: String,
    },
    /// The response future was dropped before the request was answered
    /// (the client went away, an outer timeout fired): monitors run once,
    /// with no response.
    Cancelled,
}

impl Failure {
    /// A short name of the kind of failure, fit for a metric's label:
    /// the error's type name, `"panic"` or `"cancelled"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Error { type_name, .. } => type_name,
            Self::Panic { .. } => "panic",
            Self::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Error {
                step,
                type_name,
                message,
            } => {
                write!(f, "the {step} answered an error `{type_name}`")?;
                match message {
                    Some(message) => write!(f, ": {message}"),
                    None => Ok(()),
                }
            }
            Self::Panic { step, message } => write!(f, "the {step} panicked: {message}"),
            Self::Cancelled => f.write_str("the request was cancelled before it was answered"),
        }
    }
}

impl std::error::Error for Failure {}

/// The exchange a router monitor sees: the request head, the response that
/// goes out, the [`Failure`] it may stand for, the matched route's pattern
/// and the time the request took.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use http::Request;
/// use pronghorn::{Router, router::RouteExchange};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let log = lines.clone();
/// let router = Router::new()
///     .get("/users/{id}", || "user")
///     .get("/boom", || -> &'static str { panic!("secret detail") })
///     .monitor("/", move |exchange: &RouteExchange<'_>| {
///         let status = exchange.status().unwrap().as_u16();
///         let pattern = exchange.pattern().unwrap_or("-");
///         let failed = exchange.error().map(|failure| failure.to_string());
///         log.lock().unwrap().push(format!("{status} {pattern} {failed:?}"));
///     })
///     .compile()
///     .unwrap();
///
/// for path in ["/users/7", "/boom", "/nowhere"] {
///     let request = Request::get(path).body(String::new()).unwrap();
///     router.clone().oneshot(request).await.unwrap();
/// }
/// assert_eq!(*lines.lock().unwrap(), [
///     "200 /users/{id} None",
///     "500 /boom Some(\"the handler panicked: secret detail\")",
///     "404 - None",
/// ]);
/// # }
/// ```
pub type RouteExchange<'a> = Exchange<'a, Response<Body>, Failure>;

/// A monitor hook for the router: `Fn(&Exchange<'_, Response<Body>,
/// Failure>) -> X` where `X` is a [`MonitorOutput`], a future of one, or a
/// [`Step`] of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a monitor hook for the router",
    label = "not a monitor hook",
    note = "a router monitor is `Fn(&RouteExchange<'_>)` answering `()` or `Result<(), E: Display>`, a future or a `Step` of one"
)]
pub trait RouteMonitor<M>: Send + Sync + 'static {
    #[doc(hidden)]
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>>;
}

impl<F, O> RouteMonitor<FnSync> for F
where
    F: Fn(&RouteExchange<'_>) -> O + Send + Sync + 'static,
    O: MonitorOutput,
{
    #[inline]
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>> {
        self(exchange).report();
        Step::Ready(())
    }
}

impl<F, Fut> RouteMonitor<FnAsync> for F
where
    F: Fn(&RouteExchange<'_>) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: MonitorOutput + 'static,
{
    #[inline]
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>> {
        Step::<Fut::Output, Fut>::Pending(self(exchange)).erase(MonitorOutput::report)
    }
}

impl<F, O, Fut> RouteMonitor<FnStep> for F
where
    F: Fn(&RouteExchange<'_>) -> Step<O, Fut> + Send + Sync + 'static,
    O: MonitorOutput + 'static,
    Fut: Future<Output = O> + Send + 'static,
{
    #[inline]
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>> {
        self(exchange).erase(MonitorOutput::report)
    }
}
