//! What monitors see: error values told from panics, and cancelled requests.

use super::*;

use std::{future::Future, time::Duration};

/// A handler that answers "done" once `gate` opens.
fn waits_for(
    gate: &Gate,
) -> impl Fn() -> std::pin::Pin<Box<dyn Future<Output = &'static str> + Send>>
+ Clone
+ Send
+ Sync
+ 'static {
    let gate = gate.clone();
    move || {
        let wait = gate.wait();
        Box::pin(async move {
            wait.await;
            "done"
        })
    }
}

/// A step's error value: a failure of its own kind, naming the step, the
/// error's type and, when the type offers one, its message; the response
/// goes out with the error's status.
#[tokio::test]
async fn monitors_tell_an_error_value_from_a_panic() {
    struct Conflict;

    impl pronghorn::IntoResponse for Conflict {
        fn into_response(self) -> Response<Body> {
            (StatusCode::CONFLICT, "conflict").into_response()
        }

        fn error_message(&self) -> Option<String> {
            Some("row 7 is locked".to_owned())
        }
    }

    let seen = Events::default();
    let record = seen.clone();
    let router = Router::new()
        .get("/handler", || Err::<&str, _>(Conflict))
        .get("/async", || async { Err::<&str, _>(StatusCode::GONE) })
        .get("/prefix", || "never")
        .get("/postfix", || "replaced")
        .get("/panic", || -> &'static str { panic!("boom") })
        .get("/ok", || "ok")
        .prefix("/prefix", |_: Req, _: &mut Route<'_>| {
            Err::<Req, _>(StatusCode::UNAUTHORIZED)
        })
        .postfix("/postfix", |_: &Route<'_>, _: Response<Body>| {
            Err::<Response<Body>, _>((StatusCode::BAD_GATEWAY, "upstream"))
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            let status = x.status().unwrap().as_u16();
            record.push(match x.error() {
                Some(Failure::Error {
                    step,
                    type_name,
                    message,
                }) => format!("{status} error in {step}: {type_name} {message:?}"),
                Some(Failure::Panic { step, .. }) => format!("{status} panic in {step}"),
                Some(other) => format!("{status} {other}"),
                None => format!("{status}"),
            });
        })
        .compile()
        .unwrap();
    let statuses = [
        ("/handler", StatusCode::CONFLICT),
        ("/async", StatusCode::GONE),
        ("/prefix", StatusCode::UNAUTHORIZED),
        ("/postfix", StatusCode::BAD_GATEWAY),
        ("/panic", StatusCode::INTERNAL_SERVER_ERROR),
        ("/ok", StatusCode::OK),
    ];
    let log = Log::capture();
    for (path, status) in statuses {
        assert_eq!(get(&router, path).await.status, status, "{path}");
    }
    drop(log);
    let conflict = std::any::type_name::<Conflict>();
    assert_eq!(
        seen.take(),
        [
            format!(r#"409 error in handler: {conflict} Some("row 7 is locked")"#),
            "410 error in handler: http::status::StatusCode None".to_owned(),
            "401 error in prefix: http::status::StatusCode None".to_owned(),
            "502 error in postfix: (http::status::StatusCode, &str) None".to_owned(),
            "500 panic in handler".to_owned(),
            "200".to_owned(),
        ]
    );
}

/// A request whose response future an outer timeout drops is seen by the
/// monitors once, cancelled, with no status; one answered in time is seen
/// as answered.
#[tokio::test(start_paused = true)]
async fn an_outer_timeout_is_seen_by_monitors_as_a_cancellation() {
    let seen = Events::default();
    let record = seen.clone();
    let router = Router::new()
        .get("/slow", || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            "late"
        })
        .get("/fast", || async { "fast" })
        .monitor("/", move |x: &RouteExchange<'_>| {
            record.push(format!(
                "{} {:?} cancelled={} {}",
                x.path(),
                x.status(),
                x.is_cancelled(),
                x.error().map_or(String::new(), ToString::to_string)
            ));
        })
        .compile()
        .unwrap();
    let service = tower::ServiceBuilder::new()
        .layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(1)))
        .service(router);
    let ask = |path: &str| {
        service
            .clone()
            .oneshot(Request::get(path).body(String::new()).unwrap())
    };
    assert!(ask("/slow").await.is_err(), "the timeout fired");
    assert!(ask("/fast").await.is_ok());
    assert_eq!(
        seen.take(),
        [
            "/slow None cancelled=true the request was cancelled before it was answered",
            "/fast Some(200) cancelled=false ",
        ]
    );
}

/// Postfixes and monitors read the request's headers as the handler
/// received them (after the prefixes), and monitors their own parameters;
/// an early answer and a 404 keep the headers too.
#[tokio::test]
async fn postfixes_and_monitors_read_the_request_headers_and_monitors_their_parameters() {
    let seen = Events::default();
    let record = seen.clone();
    let router = Router::new()
        .get("/teams/{team}/members/{id}", || "member")
        .prefix("/", |request: &mut Req, _: &mut Route<'_>| {
            if request.headers().contains_key("x-deny") {
                return ControlFlow::Break(StatusCode::FORBIDDEN);
            }
            let id = HeaderValue::from_static("req-1");
            request.headers_mut().insert("x-request-id", id);
            ControlFlow::Continue(())
        })
        .postfix("/", |route: &Route<'_>, response: &mut Response<Body>| {
            // A CORS postfix echoes the origin.
            if let Some(origin) = route.headers().and_then(|h| h.get(header::ORIGIN)) {
                let origin = origin.clone();
                response
                    .headers_mut()
                    .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            }
        })
        .monitor("/teams/{team}", move |x: &RouteExchange<'_>| {
            let headers = x.request_headers().unwrap();
            let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
            record.push(format!(
                "{} {:?} team={:?}/{:?} ua={:?} id={:?}",
                x.status().unwrap().as_u16(),
                x.pattern(),
                x.params().get_raw("team"),
                x.params().get("team").map(Result::unwrap),
                header("user-agent"),
                header("x-request-id"),
            ));
        })
        .compile()
        .unwrap();
    let ask = |path: &str, deny: bool| {
        let mut request = Request::get(path)
            .header(header::USER_AGENT, "curl/8")
            .header(header::ORIGIN, "https://example.com");
        if deny {
            request = request.header("x-deny", "1");
        }
        router.clone().oneshot(request.body(String::new()).unwrap())
    };
    let member = ask("/teams/a%20b/members/7", false).await.unwrap();
    assert_eq!(
        member.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://example.com"
    );
    ask("/teams/a%20b/members/7", true).await.unwrap();
    ask("/teams/x/nothing", false).await.unwrap();
    assert_eq!(
        seen.take(),
        [
            r#"200 Some("/teams/{team}/members/{id}") team=Some("a%20b")/Some("a b") ua=Some("curl/8") id=Some("req-1")"#,
            r#"403 Some("/teams/{team}/members/{id}") team=Some("a%20b")/Some("a b") ua=Some("curl/8") id=None"#,
            r#"404 None team=Some("x")/Some("x") ua=Some("curl/8") id=None"#,
        ]
    );
}

/// A prefix that takes the request by value and answers in its stead,
/// synchronously or from a future, does not hide the request's headers
/// from the monitors.
#[tokio::test]
async fn monitors_see_the_headers_of_a_request_a_prefix_took_and_kept() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let router = Router::new()
        .get("/async", || "async")
        .get("/sync", || "sync")
        .prefix(
            "/async",
            |request: Request<Body>, _: &mut Route<'_>| async move {
                if request.headers().contains_key("x-deny") {
                    return Err(StatusCode::FORBIDDEN);
                }
                Ok(request)
            },
        )
        .prefix("/sync", |request: Request<Body>, _: &mut Route<'_>| {
            if request.headers().contains_key("x-refuse") {
                return Err(StatusCode::UNAUTHORIZED);
            }
            Ok(request)
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            let agent = (x.request_headers())
                .and_then(|headers| headers.get(header::USER_AGENT))
                .map(|agent| agent.to_str().unwrap().to_owned());
            record
                .lock()
                .unwrap()
                .push((x.status().map(|s| s.as_u16()), agent));
        })
        .compile()
        .unwrap();
    let cases = [
        ("/async", None),
        ("/async", Some("x-deny")),
        ("/sync", None),
        ("/sync", Some("x-refuse")),
    ];
    for (path, refusal) in cases {
        let mut request = Request::get(path).header(header::USER_AGENT, "curl/8");
        if let Some(name) = refusal {
            request = request.header(name, "1");
        }
        router
            .clone()
            .oneshot(request.body(String::new()).unwrap())
            .await
            .unwrap();
    }
    let agent = Some("curl/8".to_owned());
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (Some(200), agent.clone()),
            (Some(403), agent.clone()),
            (Some(200), agent.clone()),
            (Some(401), agent)
        ]
    );
}

/// The access log writes one event per request: at the head with what it
/// knows then, or at the body's end with the bytes sent and how it ended;
/// its fields can be left out.
#[tokio::test]
async fn the_access_log_writes_one_event_per_request() {
    use pronghorn::monitor::AccessLog;

    let router = |log: AccessLog, at_end: bool| {
        let router = Router::new().get("/users/{id}", || "ada");
        let router = if at_end {
            router.monitor_body("/", log)
        } else {
            router.monitor("/", log)
        };
        router.compile().unwrap()
    };
    let ask = |router: CompiledRouter, path: &'static str| async move {
        let request = Request::get(path)
            .header(header::USER_AGENT, "curl/8")
            .body(String::new())
            .unwrap();
        let response = router.oneshot(request).await.unwrap();
        response.into_body().collect().await.unwrap();
    };

    let log = Log::capture();
    ask(router(AccessLog::new(), false), "/users/7").await;
    ask(router(AccessLog::new().at_body_end(), true), "/users/7").await;
    ask(
        router(AccessLog::new().user_agent(false).pattern(false), false),
        "/nowhere",
    )
    .await;
    // Paired the other way round, each still writes once: at the head
    // when no body's end is to follow, at the head alone when one is.
    ask(router(AccessLog::new().at_body_end(), false), "/users/8").await;
    ask(router(AccessLog::new(), true), "/users/9").await;
    let lines = log.take();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[3].contains("path=\"/users/8\"") && !lines[3].contains("body="));
    assert!(lines[4].contains("path=\"/users/9\"") && !lines[4].contains("body="));
    for (line, expected) in lines.iter().zip([
        &[
            "method=GET",
            "path=\"/users/7\"",
            "pattern=\"/users/{id}\"",
            "status=200",
            "duration=",
            "bytes=3",
            "user_agent=\"curl/8\"",
        ][..],
        &["status=200", "bytes=3", "body=\"complete\"", "duration="],
        &["path=\"/nowhere\"", "status=404", "bytes=9"],
    ]) {
        for field in expected {
            assert!(line.contains(field), "{field} in {line}");
        }
    }
    assert!(
        !lines[0].contains("body="),
        "no body end at the head: {}",
        lines[0]
    );
    assert!(
        !lines[2].contains("user_agent") && !lines[2].contains("pattern"),
        "fields left out: {}",
        lines[2]
    );
}

/// The metrics monitor records OpenTelemetry's HTTP server histograms,
/// labelled with the method (unknown ones as `_OTHER`), the route (never
/// the raw path), the status and the error type.
#[cfg(feature = "metrics")]
#[test]
fn metrics_are_labelled_by_route_status_and_error() {
    use metrics_exporter_prometheus::PrometheusBuilder;
    use pronghorn::monitor::Metrics;

    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let router = Router::new()
        .get("/users/{id}", || "ada")
        .any("/any", || "any")
        .get("/panic", || -> &'static str { panic!("boom") })
        .get("/gone", || Err::<&str, _>(StatusCode::GONE))
        .monitor_body("/", Metrics::new().at_body_end())
        .compile()
        .unwrap();
    let log = Log::capture();
    metrics::with_local_recorder(&recorder, || {
        let ask = |method: &str, path: &str| {
            let request = Request::builder()
                .method(method)
                .uri(path)
                .body(String::new())
                .unwrap();
            let Poll::Ready(Ok(response)) = poll_once(pin!(router.clone().oneshot(request))) else {
                panic!("a synchronous request answers at once");
            };
            let Poll::Ready(Ok(_)) = poll_once(pin!(response.into_body().collect())) else {
                panic!("a full body is read at once");
            };
        };
        ask("GET", "/users/7");
        ask("GET", "/users/8");
        ask("BREW", "/any");
        ask("GET", "/panic");
        ask("GET", "/gone");
        ask("GET", "/nowhere");
    });
    drop(log);
    let text = handle.render();
    for expected in [
        r#"http_server_request_duration_count{http_request_method="GET",http_route="/users/{id}",http_response_status_code="200"} 2"#,
        r#"http_server_response_body_size_sum{http_request_method="GET",http_route="/users/{id}",http_response_status_code="200"} 6"#,
        r#"http_server_request_duration_count{http_request_method="_OTHER",http_route="/any",http_response_status_code="200"} 1"#,
        r#"http_server_request_duration_count{http_request_method="GET",http_route="/panic",http_response_status_code="500",error_type="panic"} 1"#,
        r#"http_server_request_duration_count{http_request_method="GET",http_route="/gone",http_response_status_code="410",error_type="http::status::StatusCode"} 1"#,
        r#"http_server_request_duration_count{http_request_method="GET",http_response_status_code="404"} 1"#,
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
    assert!(!text.contains("/users/7"), "never the raw path");
}

/// The metrics monitor records each request once however it is paired:
/// made for the body's end but registered with `monitor`, it records at
/// the head; made for the head but registered with `monitor_body`, it
/// records at the head only.
#[cfg(feature = "metrics")]
#[test]
fn metrics_record_each_request_once_whatever_the_registration() {
    use metrics_exporter_prometheus::PrometheusBuilder;
    use pronghorn::monitor::Metrics;

    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let router = Router::new()
        .get("/head", || "a")
        .get("/end", || "b")
        .monitor("/head", Metrics::new().at_body_end())
        .monitor_body("/end", Metrics::new())
        .compile()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        for path in ["/head", "/end"] {
            let request = Request::get(path).body(String::new()).unwrap();
            let Poll::Ready(Ok(response)) = poll_once(pin!(router.clone().oneshot(request))) else {
                panic!("a synchronous request answers at once");
            };
            let Poll::Ready(Ok(_)) = poll_once(pin!(response.into_body().collect())) else {
                panic!("a full body is read at once");
            };
        }
    });
    let text = handle.render();
    for route in ["/head", "/end"] {
        let expected = format!(
            r#"http_server_request_duration_count{{http_request_method="GET",http_route="{route}",http_response_status_code="200"}} 1"#
        );
        assert!(text.contains(&expected), "{expected} in:\n{text}");
    }
}

/// The active requests gauge counts a request from its call until its
/// response future completes or is dropped.
#[cfg(feature = "metrics")]
#[test]
fn the_active_requests_gauge_counts_requests_in_progress() {
    use metrics_exporter_prometheus::PrometheusBuilder;
    use pronghorn::monitor::ActiveRequestsLayer;
    use tower::Layer;

    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let gate = Gate::default();
    let router = Router::new()
        .get("/wait", waits_for(&gate))
        .compile()
        .unwrap();
    let active = |text: &str| {
        let line = text
            .lines()
            .find(|line| {
                line.starts_with("http_server_active_requests{http_request_method=\"GET\"}")
            })
            .unwrap_or_default()
            .to_owned();
        line.rsplit(' ').next().unwrap_or_default().to_owned()
    };
    let mut service =
        metrics::with_local_recorder(&recorder, || ActiveRequestsLayer::new().layer(router));
    let request = || Request::get("/wait").body(String::new()).unwrap();
    let mut first = Box::pin(service.call(request()));
    let second = Box::pin(service.call(request()));
    assert!(poll_once(first.as_mut()).is_pending());
    assert_eq!(active(&handle.render()), "2");
    drop(second);
    assert_eq!(active(&handle.render()), "1", "a dropped request is over");
    gate.open();
    assert!(poll_once(first.as_mut()).is_ready());
    drop(first);
    assert_eq!(active(&handle.render()), "0");
}

/// A response future dropped while a panic unwinds runs no monitor: one
/// that panicked in turn would abort the process.
#[test]
fn a_future_dropped_while_a_panic_unwinds_runs_no_monitor() {
    let seen = Events::default();
    let record = seen.clone();
    let gate = Gate::default();
    let router = Router::new()
        .get("/wait", waits_for(&gate))
        .monitor("/", move |_: &RouteExchange<'_>| -> () {
            record.push("monitor");
            panic!("a monitor that panics");
        })
        .compile()
        .unwrap();
    let mut future = Box::pin(router.oneshot(Request::get("/wait").body(String::new()).unwrap()));
    assert!(poll_once(future.as_mut()).is_pending());
    let log = Log::capture();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _held = future;
        panic!("the caller panics");
    }));
    assert!(unwound.is_err());
    drop(log);
    assert!(seen.take().is_empty());
}
