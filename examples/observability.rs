//! Observability: an access log line and OpenTelemetry's HTTP metrics for
//! every request, the metrics served to Prometheus on `/metrics`.
//!
//! ```text
//! cargo run --release --example observability --features metrics
//! curl -i http://127.0.0.1:3000/users/7
//! curl -N http://127.0.0.1:3000/events
//! curl http://127.0.0.1:3000/metrics
//! ```
//!
//! Both monitors are registered with `monitor_body`: they hear of each
//! request when its body has ended, so that the stream of events on
//! `/events` is logged and measured once it is over, with its bytes and its
//! whole duration. Set `PRONGHORN_ADDR` to listen elsewhere.

use std::{convert::Infallible, time::Duration};

use futures_util::stream;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use pronghorn::{
    CompiledRouter, Router,
    handler::Path,
    monitor::{AccessLog, ActiveRequestsLayer, Metrics},
    serve,
    sse::{Event, Sse},
};
use tower_layer::Layer;

/// The application, exporting to `metrics`: also used by the examples'
/// test.
pub fn app(metrics: PrometheusHandle) -> CompiledRouter {
    Router::new()
        .get("/users/{id}", |Path(id): Path<u64>| format!("user {id}\n"))
        // A short stream of server-sent events.
        .get("/events", || {
            let events =
                (1..=3).map(|n| Ok::<_, Infallible>(Event::default().data(&n.to_string())));
            Sse::new(stream::iter(events))
        })
        .get("/metrics", move || metrics.render())
        .monitor_body("/", AccessLog::new().at_body_end())
        .monitor_body("/", Metrics::new().at_body_end())
        .compile()
        .expect("the routes are valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // Access log lines go to standard output.
    tracing_subscriber::fmt().init();
    let metrics = PrometheusBuilder::new()
        .install_recorder()
        .expect("no other metrics recorder is installed");
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    // Only a layer around the router sees a request arrive: it counts
    // those in progress.
    let service = ActiveRequestsLayer::new().layer(app(metrics));
    serve(listener, service)
        .shutdown_timeout(Duration::from_secs(5))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
