//! [`Metrics`]: OpenTelemetry's HTTP server metrics through the `metrics`
//! facade (feature `metrics`).

use std::{
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::{Arc, PoisonError, RwLock},
    task::{Context, Poll},
    time::Duration,
};

use http::{Method, Request, StatusCode};
use metrics::{Gauge, Histogram, Label, Unit};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::{hook::Custom, step::BoxFuture, step::Step};

use super::route::{Failure, RouteExchange, RouteMonitor};

/// The name of the request duration histogram, in seconds.
pub const REQUEST_DURATION: &str = "http.server.request.duration";
/// The name of the response body size histogram, in bytes.
pub const RESPONSE_BODY_SIZE: &str = "http.server.response.body.size";
/// The name of the gauge of requests in progress.
pub const ACTIVE_REQUESTS: &str = "http.server.active_requests";

/// A router monitor that records OpenTelemetry's HTTP server metrics with
/// the [`metrics`] facade, for whatever exporter the application installs
/// (Prometheus, OpenTelemetry, StatsD):
///
/// - `http.server.request.duration`: a histogram of seconds;
/// - `http.server.response.body.size`: a histogram of bytes;
///
/// labelled with `http.request.method` (the standard methods, others as
/// `_OTHER`), `http.route` (the matched pattern, never the raw path: a
/// request no route matched has none), `http.response.status_code` (none
/// for a cancelled request) and `error.type` (the [`Failure`]'s kind, or
/// the status code of a 5xx answered without one).
///
/// The metric handles of each set of labels are made once and kept: a
/// request whose labels were seen before records without an allocation.
/// Every label comes from a bounded set (the router's patterns, nine
/// methods, status codes), so a client cannot grow what is kept.
///
/// Registered with [`Router::monitor`](crate::Router::monitor), it records
/// when the response head is ready (the body size when the body knows
/// it). Made with [`at_body_end`](Metrics::at_body_end) and registered
/// with [`Router::monitor_body`](crate::Router::monitor_body), it records
/// when the body has ended: the duration to the last byte and the bytes
/// sent — what a stream of server-sent events needs. Paired the other way
/// round it still records each request once: at the head.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use metrics_exporter_prometheus::PrometheusBuilder;
/// use pronghorn::{Router, monitor::Metrics};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let recorder = PrometheusBuilder::new().build_recorder();
/// let handle = recorder.handle();
/// let router = Router::new()
///     .get("/users/{id}", || "ada")
///     .monitor_body("/", Metrics::new().at_body_end())
///     .compile()
///     .unwrap();
/// metrics::with_local_recorder(&recorder, || {
///     // A synchronous handler answers inside `call`.
///     let mut response = std::pin::pin!(router.oneshot(Request::get("/users/7").body(String::new()).unwrap()));
///     let cx = &mut std::task::Context::from_waker(std::task::Waker::noop());
///     let std::task::Poll::Ready(Ok(response)) = response.as_mut().poll(cx) else { unreachable!() };
///     let mut body = std::pin::pin!(response.into_body().collect());
///     assert!(body.as_mut().poll(cx).is_ready());
/// });
/// let text = handle.render();
/// assert!(text.contains(r#"http_server_request_duration_count{http_request_method="GET",http_route="/users/{id}",http_response_status_code="200"} 1"#), "{text}");
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    handles: Arc<RwLock<ByRoute>>,
    at_body_end: bool,
}

/// The handles made so far: by route, then by the other labels.
type ByRoute = HashMap<Box<str>, HashMap<Labels, Handles>>;

/// The labels of a request beside its route: each from a bounded set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Labels {
    method: &'static str,
    status: Option<StatusCode>,
    failure: Option<&'static str>,
}

#[derive(Debug)]
struct Handles {
    duration: Histogram,
    body_size: Histogram,
}

impl Metrics {
    /// Metrics recorded when the response head is ready; describes the
    /// two histograms to the installed recorder.
    pub fn new() -> Self {
        metrics::describe_histogram!(
            REQUEST_DURATION,
            Unit::Seconds,
            "Duration of HTTP server requests."
        );
        metrics::describe_histogram!(
            RESPONSE_BODY_SIZE,
            Unit::Bytes,
            "Size of HTTP server response bodies."
        );
        Self::default()
    }

    /// Records when the response body has ended rather than when its head
    /// is ready: register it with
    /// [`Router::monitor_body`](crate::Router::monitor_body).
    pub fn at_body_end(mut self) -> Self {
        self.at_body_end = true;
        self
    }

    fn record(&self, exchange: &RouteExchange<'_>) {
        if exchange.skips(self.at_body_end) {
            return;
        }
        let (duration, body_size) = (exchange.duration(), exchange.body_bytes());
        let route = exchange.pattern().unwrap_or("");
        let labels = Labels {
            method: method_label(exchange.method()),
            status: exchange.status(),
            failure: exchange.error().map(Failure::kind),
        };
        let read = self.handles.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(handles) = read.get(route).and_then(|known| known.get(&labels)) {
            handles.record(duration, body_size);
            return;
        }
        drop(read);
        let mut write = self.handles.write().unwrap_or_else(PoisonError::into_inner);
        let handles = (write.entry(route.into()).or_default())
            .entry(labels)
            .or_insert_with(|| Handles::new(route, labels));
        handles.record(duration, body_size);
    }
}

impl Handles {
    /// The handles of one set of labels: made once, with its labels'
    /// text.
    fn new(route: &str, labels: Labels) -> Self {
        let mut set = vec![Label::new("http.request.method", labels.method)];
        if !route.is_empty() {
            set.push(Label::new("http.route", route.to_owned()));
        }
        if let Some(status) = labels.status {
            set.push(Label::new(
                "http.response.status_code",
                status.as_u16().to_string(),
            ));
        }
        let error = match (labels.failure, labels.status) {
            (Some(kind), _) => Some(kind.to_owned()),
            (None, Some(status)) if status.is_server_error() => Some(status.as_u16().to_string()),
            (None, _) => None,
        };
        if let Some(error) = error {
            set.push(Label::new("error.type", error));
        }
        Self {
            duration: metrics::histogram!(REQUEST_DURATION, set.clone()),
            body_size: metrics::histogram!(RESPONSE_BODY_SIZE, set),
        }
    }

    fn record(&self, duration: Duration, body_size: Option<u64>) {
        self.duration.record(duration.as_secs_f64());
        if let Some(size) = body_size {
            self.body_size.record(size as f64);
        }
    }
}

/// The methods OpenTelemetry names; any other is `_OTHER`.
const METHODS: [Method; 9] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::CONNECT,
    Method::OPTIONS,
    Method::TRACE,
    Method::PATCH,
];

/// The label of each of [`METHODS`], and last `_OTHER`.
const METHOD_LABELS: [&str; 10] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "_OTHER",
];

/// Where `method`'s label is in [`METHOD_LABELS`].
fn method_index(method: &Method) -> usize {
    (METHODS.iter().position(|known| known == method)).unwrap_or(METHODS.len())
}

/// The method as OpenTelemetry labels it: a standard method's name, or
/// `_OTHER`, so that clients cannot make labels up.
fn method_label(method: &Method) -> &'static str {
    METHOD_LABELS[method_index(method)]
}

/// A tower layer that counts the requests in progress in the gauge
/// `http.server.active_requests`, labelled with `http.request.method`
/// (feature `metrics`): one more when a request reaches the service, one
/// less when its response future completes or is dropped. Put it around
/// the router, beside [`Metrics`]: only a layer sees a request arrive.
///
/// A request counts until its response head is ready; a body streamed
/// after it (server-sent events) does not keep it counted. The gauges are
/// made when the layer is: a request costs two atomic additions.
///
/// ```
/// use http::Request;
/// use metrics_exporter_prometheus::PrometheusBuilder;
/// use pronghorn::{Router, monitor::ActiveRequestsLayer};
/// use tower::{Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let recorder = PrometheusBuilder::new().build_recorder();
/// let handle = recorder.handle();
/// let layer = metrics::with_local_recorder(&recorder, ActiveRequestsLayer::new);
/// let app = layer.layer(Router::new().get("/", || "hello").compile().unwrap());
/// app.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert!(handle.render().contains(r#"http_server_active_requests{http_request_method="GET"} 0"#));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ActiveRequestsLayer {
    gauges: Arc<[Gauge; 10]>,
}

impl Default for ActiveRequestsLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl ActiveRequestsLayer {
    /// The layer, with its gauges made in the installed recorder.
    pub fn new() -> Self {
        metrics::describe_gauge!(
            ACTIVE_REQUESTS,
            Unit::Count,
            "Number of active HTTP server requests."
        );
        Self {
            gauges: Arc::new(
                METHOD_LABELS.map(
                    |method| metrics::gauge!(ACTIVE_REQUESTS, "http.request.method" => method),
                ),
            ),
        }
    }
}

impl<S> Layer<S> for ActiveRequestsLayer {
    type Service = ActiveRequests<S>;

    fn layer(&self, inner: S) -> ActiveRequests<S> {
        ActiveRequests {
            inner,
            gauges: Arc::clone(&self.gauges),
        }
    }
}

/// The service of an [`ActiveRequestsLayer`].
#[derive(Clone, Debug)]
pub struct ActiveRequests<S> {
    inner: S,
    gauges: Arc<[Gauge; 10]>,
}

impl<S, B> Service<Request<B>> for ActiveRequests<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ActiveFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let gauge = self.gauges[method_index(request.method())].clone();
        gauge.increment(1.0);
        ActiveFuture {
            inner: self.inner.call(request),
            active: Active(gauge),
        }
    }
}

/// One request counted as active until dropped.
#[derive(Debug)]
struct Active(Gauge);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

pin_project! {
    /// The response future of [`ActiveRequests`]: the inner one, the
    /// request counted while it lives.
    #[derive(Debug)]
    pub struct ActiveFuture<F> {
        #[pin]
        inner: F,
        active: Active,
    }
}

impl<F: Future> Future for ActiveFuture<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().inner.poll(cx)
    }
}

impl RouteMonitor<Custom> for Metrics {
    fn call(&self, exchange: &RouteExchange<'_>) -> Step<(), BoxFuture<()>> {
        self.record(exchange);
        Step::Ready(())
    }
}
