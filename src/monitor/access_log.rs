//! [`AccessLog`]: the monitor every server needs, one `tracing` event per
//! request.

use http::{HeaderMap, Response, header};

use super::route::{Failure, RouteExchange, RouteMonitor};
use super::{Exchange, MonitorHook};
use crate::{
    body::Body,
    hook::Custom,
    step::Step,
    step::{BoxFuture, Never},
};

/// A monitor that writes one `tracing` event per request, at the `INFO`
/// level with the target `pronghorn::access`: method, path, matched
/// pattern, status, duration, bytes sent, user agent, and the failure if
/// there was one. Each field but the method, path and status can be left
/// out.
///
/// Registered with [`Router::monitor`](crate::Router::monitor), it writes
/// when the response head is ready: the duration is the time to the
/// response, the bytes those the body holds if it knows (a full body), or
/// those a `content-length` announces. Made with
/// [`at_body_end`](AccessLog::at_body_end) and registered with
/// [`Router::monitor_body`](crate::Router::monitor_body), it writes when
/// the body has ended: the duration is the time to the last byte, the
/// bytes are those sent, and a body that failed or was cut off says so.
/// Paired the other way round it still writes each request once: at the
/// head.
/// Behind a [`MonitorLayer`](crate::MonitorLayer) there is no pattern and
/// no request header to log.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, monitor::AccessLog};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/users/{id}", || "ada")
///     .monitor_body("/", AccessLog::new().at_body_end().user_agent(false))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/users/7").body(String::new()).unwrap()).await.unwrap();
/// // Logged here: method=GET path=/users/7 pattern=/users/{id} status=200
/// // duration=… bytes=3 body="complete"
/// response.into_body().collect().await.unwrap();
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AccessLog {
    pattern: bool,
    duration: bool,
    bytes: bool,
    user_agent: bool,
    at_body_end: bool,
}

impl Default for AccessLog {
    fn default() -> Self {
        Self::new()
    }
}

impl AccessLog {
    /// An access log with every field.
    pub fn new() -> Self {
        Self {
            pattern: true,
            duration: true,
            bytes: true,
            user_agent: true,
            at_body_end: false,
        }
    }

    /// Writes when the response body has ended rather than when its head
    /// is ready: register it with
    /// [`Router::monitor_body`](crate::Router::monitor_body).
    pub fn at_body_end(mut self) -> Self {
        self.at_body_end = true;
        self
    }

    /// Whether to log the matched route's pattern (default on).
    pub fn pattern(mut self, enabled: bool) -> Self {
        self.pattern = enabled;
        self
    }

    /// Whether to log the duration (default on).
    pub fn duration(mut self, enabled: bool) -> Self {
        self.duration = enabled;
        self
    }

    /// Whether to log the bytes sent (default on).
    pub fn bytes(mut self, enabled: bool) -> Self {
        self.bytes = enabled;
        self
    }

    /// Whether to log the request's `user-agent` (default on).
    pub fn user_agent(mut self, enabled: bool) -> Self {
        self.user_agent = enabled;
        self
    }

    /// Writes the event for `exchange`, unless it waits for the body's end
    /// and this is not it.
    fn write<B: http_body::Body, E: std::fmt::Display>(
        &self,
        exchange: &Exchange<'_, Response<B>, E>,
        request_headers: Option<&HeaderMap>,
    ) {
        if exchange.skips(self.at_body_end) {
            return;
        }
        let end = exchange.body_end();
        let duration = self.duration.then(|| exchange.duration());
        // Else what the response head announces.
        let bytes = self.bytes.then(|| {
            exchange.body_bytes().or_else(|| {
                let announced = exchange.headers()?.get(header::CONTENT_LENGTH)?;
                announced.to_str().ok()?.parse().ok()
            })
        });
        let user_agent = (self.user_agent)
            .then(|| request_headers?.get(header::USER_AGENT)?.to_str().ok())
            .flatten();
        tracing::info!(
            target: "pronghorn::access",
            method = %exchange.method(),
            path = exchange.path(),
            pattern = self.pattern.then(|| exchange.pattern()).flatten(),
            status = exchange.status().map(|status| status.as_u16()),
            duration = duration.map(tracing::field::debug),
            bytes = bytes.flatten(),
            body = end.map(|end| end.ended().as_str()),
            user_agent,
            failure = exchange.error().map(tracing::field::display),
        );
    }
}

impl RouteMonitor<Custom> for AccessLog {
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>> {
        self.write::<Body, Failure>(exchange, exchange.request_headers());
        Step::Ready(())
    }
}

impl<B: http_body::Body, E: std::fmt::Display> MonitorHook<Response<B>, E> for AccessLog {
    type Output = ();
    type Future = Never<()>;

    fn call(&mut self, exchange: &Exchange<'_, Response<B>, E>) -> Step<(), Never<()>> {
        self.write(exchange, exchange.request_headers());
        Step::Ready(())
    }
}
