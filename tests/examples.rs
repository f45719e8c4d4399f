//! Every example, exercised: the quickstart as the README runs it (a child
//! process, killed by its pid), the others through the `app` each exposes,
//! served on loopback.

mod common;

#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/axum.rs"]
mod axum_example;
#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/hot_reload.rs"]
mod hot_reload;

#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[cfg(feature = "metrics")]
#[path = "../examples/observability.rs"]
mod observability;
#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/quickstart.rs"]
mod quickstart;
#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/static_files.rs"]
mod static_files;
#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/streaming.rs"]
mod streaming;
#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/todos.rs"]
mod todos;
#[allow(
    dead_code,
    reason = "each example is a program; its tests use part of it"
)]
#[path = "../examples/websocket.rs"]
mod websocket;

use std::{
    net::SocketAddr,
    process::Stdio,
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    net::{TcpListener, TcpStream},
};

async fn fetch(
    address: SocketAddr,
    request: http::request::Builder,
    body: &str,
) -> (http::response::Parts, String) {
    let mut sender = common::connect(address).await;
    let request = request
        .header(header::HOST, "localhost")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts, String::from_utf8_lossy(&body).into_owned())
}

async fn get(address: SocketAddr, path: &str) -> (http::response::Parts, String) {
    fetch(address, Request::get(path), "").await
}

/// Kills the child when the test ends, however it ends.
struct Child(tokio::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

#[tokio::test]
async fn quickstart_answers_its_documented_routes() {
    // `cargo test` builds the examples next to the test binaries.
    let binary = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/quickstart");
    assert!(
        binary.exists(),
        "{} is built by `cargo test`",
        binary.display()
    );
    let mut child = Child(
        tokio::process::Command::new(&binary)
            .env("PRONGHORN_ADDR", "127.0.0.1:0")
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let address: SocketAddr = first
        .strip_prefix("listening on http://")
        .expect(&first)
        .parse()
        .unwrap();

    let (parts, body) = get(address, "/").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "Hello from pronghorn\n")
    );
    assert_eq!(parts.headers[header::SERVER], "pronghorn");
    let (parts, body) = get(address, "/users/7").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, r#"{"id":7,"name":"user 7"}"#)
    );
    assert_eq!(parts.headers[header::CONTENT_TYPE], "application/json");
    let post = Request::post("/users").header(header::CONTENT_TYPE, "application/json");
    let (parts, body) = fetch(address, post, r#"{"name":"Ada"}"#).await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::CREATED, r#"{"id":42,"name":"Ada"}"#)
    );
    assert_eq!(
        get(address, "/admin/stats").await.0.status,
        StatusCode::UNAUTHORIZED
    );
    let authorized = Request::get("/admin/stats").header(header::AUTHORIZATION, "Bearer let-me-in");
    let (parts, body) = fetch(address, authorized, "").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "uptime: forever\n")
    );

    // The monitor logged each request, with its route's pattern.
    let log = lines.next_line().await.unwrap().unwrap();
    assert!(log.starts_with("GET / 200 / "), "{log}");
    let log = lines.next_line().await.unwrap().unwrap();
    assert!(log.starts_with("GET /users/7 200 /users/{id} "), "{log}");

    let pid = child.0.id().unwrap();
    child.0.kill().await.unwrap();
    assert!(
        TcpStream::connect(address).await.is_err(),
        "process {pid} is gone"
    );
}

async fn serve_on_loopback<S, B>(service: S) -> SocketAddr
where
    S: tower::Service<Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(pronghorn::serve(listener, service).into_future());
    address
}

#[tokio::test]
async fn streaming_sends_events_one_by_one() {
    let address = serve_on_loopback(streaming::app(Duration::from_millis(20))).await;
    let mut sender = common::connect(address).await;
    let request = Request::get("/ticks")
        .header(header::HOST, "localhost")
        .body(Full::<Bytes>::default())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut body = response.into_body();
    let started = Instant::now();
    for n in 0..5 {
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(frame, format!("event: tick\nid: {n}\ndata: tick {n}\n\n"));
    }
    assert!(body.frame().await.is_none());
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "one event per interval"
    );
}

#[tokio::test]
async fn websocket_echoes_with_a_token_and_refuses_without() {
    let address = serve_on_loopback(websocket::app()).await;
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut socket, _) =
        tokio_tungstenite::client_async(format!("ws://{address}/echo?token=secret"), stream)
            .await
            .unwrap();
    socket
        .send(tokio_tungstenite::tungstenite::Message::text("ping"))
        .await
        .unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap(),
        tokio_tungstenite::tungstenite::Message::text("ping")
    );
    socket.close(None).await.unwrap();

    let stream = TcpStream::connect(address).await.unwrap();
    let refused = tokio_tungstenite::client_async(format!("ws://{address}/echo"), stream).await;
    assert!(
        matches!(refused, Err(tokio_tungstenite::tungstenite::Error::Http(ref r)) if r.status() == StatusCode::UNAUTHORIZED)
    );
}

#[tokio::test]
async fn hot_reload_changes_routes_while_serving() {
    let app = hot_reload::app();
    let address = serve_on_loopback(app.clone()).await;
    assert_eq!(get(address, "/time").await.1, "tick 0\n");
    for n in 1..4 {
        hot_reload::tick(&app, n);
        assert_eq!(get(address, "/time").await.1, format!("tick {n}\n"));
    }
    assert_eq!(app.modules(), ["clock"]);
    assert_eq!(get(address, "/").await.0.status, StatusCode::OK);
}

#[tokio::test]
async fn axum_app_with_pronghorn_inside_and_around() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, axum_example::app()).await });

    let (parts, body) = get(address, "/axum").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "axum route")
    );
    assert_eq!(parts.headers["x-served-by"], "axum+pronghorn");
    let (parts, body) = get(address, "/axum/private").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::FORBIDDEN, "denied")
    );
    assert_eq!(
        parts.headers["x-served-by"], "axum+pronghorn",
        "the postfix sees the prefix's answer"
    );
    let (parts, body) = get(address, "/api/users/7").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "pronghorn user 7"),
        "nest_service"
    );
    let (parts, body) = get(address, "/somewhere/else").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::NOT_FOUND, "no page at /somewhere/else"),
        "fallback_service"
    );
    let gzip = Request::builder()
        .method(Method::GET)
        .uri("/api/report")
        .header(header::ACCEPT_ENCODING, "gzip");
    let (parts, _) = fetch(address, gzip, "").await;
    assert_eq!(
        parts.headers[header::CONTENT_ENCODING],
        "gzip",
        "tower-http compression around pronghorn"
    );
}

#[tokio::test]
async fn static_files_serves_a_directory_behind_a_token_and_a_legacy_module() {
    let address = serve_on_loopback(static_files::app()).await;
    let with_token =
        |path: &str| Request::get(path).header(header::AUTHORIZATION, "Bearer let-me-in");
    let index = std::fs::read_to_string(format!("{}/index.html", static_files::FILES)).unwrap();
    let (parts, body) = fetch(address, with_token("/static/"), "").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, index.as_str())
    );
    assert_eq!(parts.headers[header::CONTENT_TYPE], "text/html");
    let (parts, body) = fetch(address, with_token("/static/app.css"), "").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers[header::CONTENT_TYPE], "text/css");
    assert!(body.contains("font-family"), "{body}");
    // A directory asked for with its trailing slash gets its index.
    let (parts, body) = fetch(address, with_token("/static/docs/"), "").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert!(body.contains("A directory's index."), "{body}");
    // Without it, a redirect to it, below the base.
    let (parts, _) = fetch(address, with_token("/static/docs"), "").await;
    assert_eq!(parts.status, StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(parts.headers[header::LOCATION], "/static/docs/");
    assert_eq!(
        get(address, "/static/app.css").await.0.status,
        StatusCode::UNAUTHORIZED,
        "the token prefix runs before ServeDir"
    );
    assert_eq!(
        fetch(address, with_token("/static/missing.css"), "")
            .await
            .0
            .status,
        StatusCode::NOT_FOUND
    );
    let (parts, body) = get(address, "/legacy/hello").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "hello from the legacy axum module\n")
    );
    let (parts, body) = get(address, "/elsewhere?x=1").await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::NOT_FOUND, "nothing at /elsewhere?x=1\n")
    );
}

#[tokio::test]
async fn todos_creates_lists_updates_and_deletes_over_loopback() {
    let address = serve_on_loopback(todos::app()).await;
    let json = |method: Method, path: &str| {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
    };
    let (parts, created) = fetch(address, json(Method::POST, "/todos"), r#"{"text":"a"}"#).await;
    assert_eq!(parts.status, StatusCode::CREATED);
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    assert_eq!(
        (created["text"].as_str(), created["completed"].as_bool()),
        (Some("a"), Some(false))
    );
    let id = created["id"].as_u64().unwrap();
    fetch(address, json(Method::POST, "/todos"), r#"{"text":"b"}"#).await;

    let (parts, page) = get(address, "/todos?offset=1&limit=5").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Vec<serde_json::Value>>(&page)
            .unwrap()
            .len(),
        1
    );

    let path = format!("/todos/{id}");
    let (parts, updated) =
        fetch(address, json(Method::PATCH, &path), r#"{"completed":true}"#).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert!(updated.contains(r#""completed":true"#), "{updated}");
    let (parts, _) = fetch(address, Request::delete(&path), "").await;
    assert_eq!(parts.status, StatusCode::NO_CONTENT);
    let (parts, _) = fetch(address, Request::delete(&path), "").await;
    assert_eq!(parts.status, StatusCode::NOT_FOUND);
    // A path parameter that is not an id is refused by the extractor.
    let (parts, _) = fetch(address, json(Method::PATCH, "/todos/x"), "{}").await;
    assert_eq!(parts.status, StatusCode::BAD_REQUEST);
}

// ---- each example's app, in-process: `oneshot` with a `String` body ----

/// Answers `request` in-process, with its status and body text.
async fn oneshot<S, B>(service: S, request: Request<String>) -> (http::response::Parts, String)
where
    S: tower::Service<Request<String>, Response = http::Response<B>>,
    S::Error: std::fmt::Debug,
    B: http_body::Body,
    B::Error: std::fmt::Debug,
{
    use tower::ServiceExt;
    let response = service.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn quickstart_app_answers_in_process() {
    let app = quickstart::app();
    let (parts, body) = oneshot(app.clone(), Request::get("/").body(String::new()).unwrap()).await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "Hello from pronghorn\n")
    );
    assert_eq!(parts.headers[header::SERVER], "pronghorn");
    let post = Request::post("/users")
        .header(header::CONTENT_TYPE, "application/json")
        .body(r#"{"name":"Ada"}"#.to_owned())
        .unwrap();
    let (parts, body) = oneshot(app.clone(), post).await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::CREATED, r#"{"id":42,"name":"Ada"}"#)
    );
    let anonymous = Request::get("/admin/stats").body(String::new()).unwrap();
    assert_eq!(
        oneshot(app, anonymous).await.0.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn websocket_app_refuses_a_request_without_its_token_in_process() {
    let request = Request::get("/echo")
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "websocket")
        .header(header::SEC_WEBSOCKET_VERSION, "13")
        .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
        .body(String::new())
        .unwrap();
    assert_eq!(
        oneshot(websocket::app(), request).await.0.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn streaming_app_sends_its_events_in_process() {
    let request = Request::get("/ticks").body(String::new()).unwrap();
    let (parts, body) = oneshot(streaming::app(Duration::ZERO), request).await;
    assert_eq!(parts.headers[header::CONTENT_TYPE], "text/event-stream");
    assert_eq!(body.matches("event: tick").count(), 5, "{body}");
}

#[tokio::test]
async fn hot_reload_app_changes_routes_in_process() {
    let app = hot_reload::app();
    let time = || Request::get("/time").body(String::new()).unwrap();
    assert_eq!(oneshot(app.clone(), time()).await.1, "tick 0\n");
    hot_reload::tick(&app, 1);
    assert_eq!(oneshot(app, time()).await.1, "tick 1\n");
}

#[tokio::test]
async fn static_files_app_answers_in_process() {
    let request = |path: &str| {
        Request::get(path)
            .header(header::AUTHORIZATION, "Bearer let-me-in")
            .body(String::new())
            .unwrap()
    };
    let (parts, body) = oneshot(static_files::app(), request("/static/docs/")).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert!(body.contains("A directory's index."), "{body}");
    let (parts, _) = oneshot(static_files::app(), request("/legacy/hello")).await;
    assert_eq!(parts.status, StatusCode::OK);
}

#[tokio::test]
async fn axum_app_answers_in_process() {
    let request = |path: &str| Request::get(path).body(axum::body::Body::empty()).unwrap();
    let (parts, body) = oneshot_axum(axum_example::app(), request("/api/users/7")).await;
    assert_eq!(
        (parts.status, body.as_str()),
        (StatusCode::OK, "pronghorn user 7")
    );
    let (parts, _) = oneshot_axum(axum_example::app(), request("/axum/private")).await;
    assert_eq!(parts.status, StatusCode::FORBIDDEN);
}

async fn oneshot_axum(
    app: axum::Router,
    request: Request<axum::body::Body>,
) -> (http::response::Parts, String) {
    use tower::ServiceExt;
    let response = app.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts, String::from_utf8_lossy(&body).into_owned())
}

/// The observability example, in-process: each request is measured once
/// its body has ended, the stream of events too, and `/metrics` shows it.
#[cfg(feature = "metrics")]
#[tokio::test]
async fn observability_measures_each_request_and_serves_the_metrics() {
    use tower::ServiceExt;

    // The one recorder of this test binary.
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .unwrap();
    let app = observability::app(handle);
    let fetch = |path: &'static str| {
        let app = app.clone();
        async move {
            let request = Request::get(path).body(String::new()).unwrap();
            let response = app.oneshot(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            String::from_utf8_lossy(&body).into_owned()
        }
    };
    assert_eq!(fetch("/users/7").await, "user 7\n");
    assert_eq!(fetch("/events").await, "data: 1\n\ndata: 2\n\ndata: 3\n\n");
    let metrics = fetch("/metrics").await;
    for expected in [
        r#"http_server_request_duration_count{http_request_method="GET",http_route="/users/{id}",http_response_status_code="200"} 1"#,
        r#"http_server_response_body_size_sum{http_request_method="GET",http_route="/events",http_response_status_code="200"} 27"#,
    ] {
        assert!(metrics.contains(expected), "{expected} in:\n{metrics}");
    }
}
