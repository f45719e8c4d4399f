//! What monitor layers see: responses, errors, cancellations, panics.

use super::*;

/// A monitor that reads the outcome alone is told of a response, of the
/// inner service's error and, with `None`, of a cancellation.
#[tokio::test(start_paused = true)]
async fn a_monitor_blind_to_the_request_sees_responses_errors_and_cancellations() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let inner = service_fn(|request: Request<String>| async move {
        match request.uri().path() {
            "/fail" => Err(Broken("database down")),
            "/slow" => {
                tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                Ok(text(StatusCode::OK, "late"))
            }
            _ => Ok(text(StatusCode::CREATED, "made")),
        }
    });
    let service = ServiceBuilder::new()
        .layer(tower::timeout::TimeoutLayer::new(
            std::time::Duration::from_secs(1),
        ))
        .layer(MonitorLayer::new(
            move |outcome: Option<Result<&Res, &Broken>>| {
                record.lock().unwrap().push(match outcome {
                    Some(Ok(response)) => response.status().to_string(),
                    Some(Err(error)) => error.to_string(),
                    None => "cancelled".to_owned(),
                });
            },
        ))
        .service(inner);
    for path in ["/make", "/fail", "/slow"] {
        let _ = service.clone().oneshot(request(path)).await;
    }
    assert_eq!(
        *seen.lock().unwrap(),
        ["201 Created", "database down", "cancelled"]
    );
}

#[derive(Debug, PartialEq)]
struct Broken(&'static str);

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Broken {}

#[tokio::test]
async fn monitor_sees_status_headers_elapsed_and_the_inner_error() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let inner = service_fn(|request: Request<String>| async move {
        if request.uri().path() == "/fail" {
            Err(Broken("database down"))
        } else {
            let mut response = text(StatusCode::CREATED, "made");
            response
                .headers_mut()
                .insert("x-id", HeaderValue::from_static("7"));
            Ok(response)
        }
    });
    let service = Monitor::new(inner, move |x: &Exchange<'_, Res, Broken>| {
        let line = match x.outcome() {
            Some(Ok(response)) => format!(
                "{} {} {} x-id={}",
                x.method(),
                x.path(),
                response.status().as_u16(),
                x.headers().unwrap()["x-id"].to_str().unwrap()
            ),
            Some(Err(error)) => format!("{} {} error={error}", x.method(), x.uri()),
            None => format!("{} {} cancelled", x.method(), x.uri()),
        };
        assert!(x.elapsed() < std::time::Duration::from_secs(60));
        log.lock().unwrap().push(line);
    });

    let ok = service
        .clone()
        .oneshot(Request::post("/make").body(String::new()).unwrap())
        .await;
    assert_eq!(ok.unwrap().status(), StatusCode::CREATED);
    let failed = service.oneshot(request("/fail")).await;
    assert_eq!(
        failed.unwrap_err(),
        Broken("database down"),
        "the inner error type is kept"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        ["POST /make 201 x-id=7", "GET /fail error=database down"]
    );
}

/// Monitors that panic when called and inside their future change nothing, and the later monitors still run.
/// Dropped before the inner service answered (an outer timeout fired),
/// the monitor layer's future runs its hook once, with neither a response
/// nor an error.
#[tokio::test(start_paused = true)]
async fn a_monitor_layer_sees_an_outer_timeout_as_a_cancellation() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let inner = tower::service_fn(|request: Request<String>| async move {
        if request.uri().path() == "/slow" {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        }
        Ok::<_, Infallible>(Response::new(String::new()))
    });
    let service = tower::ServiceBuilder::new()
        .layer(tower::timeout::TimeoutLayer::new(
            std::time::Duration::from_secs(1),
        ))
        .layer(MonitorLayer::new(
            move |x: &Exchange<'_, Response<String>, Infallible>| {
                record.lock().unwrap().push(format!(
                    "{} {:?} {} {}",
                    x.path(),
                    x.status(),
                    x.is_cancelled(),
                    x.outcome().is_none()
                ));
            },
        ))
        .service(inner);
    assert!(service.clone().oneshot(request("/slow")).await.is_err());
    assert!(service.oneshot(request("/fast")).await.is_ok());
    assert_eq!(
        *seen.lock().unwrap(),
        ["/slow None true true", "/fast Some(200) false false"]
    );
}

/// A monitor layer made with `to_body_end` sees a cancellation too.
#[tokio::test(start_paused = true)]
async fn a_body_monitor_layer_sees_an_outer_timeout_as_a_cancellation() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let inner = tower::service_fn(|_: Request<String>| async move {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        Ok::<_, Infallible>(Response::new(String::new()))
    });
    let monitor = MonitorLayer::new(
        move |x: &Exchange<'_, Response<pronghorn::Body>, Infallible>| {
            record.lock().unwrap().push((x.is_cancelled(), x.status()));
        },
    );
    let service = tower::ServiceBuilder::new()
        .layer(tower::timeout::TimeoutLayer::new(
            std::time::Duration::from_secs(1),
        ))
        .layer(monitor.to_body_end())
        .service(inner);
    assert!(service.oneshot(request("/slow")).await.is_err());
    assert_eq!(*seen.lock().unwrap(), [(true, None)]);
}

#[tokio::test]
async fn monitor_panics_and_failures_are_isolated() {
    let events = Events::default();
    let [e1, e2, e3, e4] = events.handles();
    let service = ServiceBuilder::new()
        // Outermost runs last.
        .layer(MonitorLayer::new(
            move |x: &Exchange<'_, Res, Infallible>| {
                e4.push(format!("low {}", x.status().unwrap().as_u16()));
            },
        ))
        .layer(MonitorLayer::new(
            move |_: &Exchange<'_, Res, Infallible>| {
                e3.push("failing");
                Err::<(), _>(Broken("metrics sink unreachable"))
            },
        ))
        .layer(MonitorLayer::new(
            move |_: &Exchange<'_, Res, Infallible>| {
                e2.push("normal");
                async {
                    tokio::task::yield_now().await;
                    let fail = true;
                    if fail {
                        panic!("monitor future panics");
                    }
                }
            },
        ))
        .layer(MonitorLayer::new(
            move |_: &Exchange<'_, Res, Infallible>| -> () {
                e1.push("high");
                panic!("monitor panics when called");
            },
        ))
        .service(counted(Arc::default()));

    for _ in 0..3 {
        let response = service.clone().oneshot(request("/")).await.unwrap();
        assert_eq!(
            (response.status(), response.body().as_str()),
            (StatusCode::OK, "inner")
        );
        assert_eq!(events.take(), ["high", "normal", "failing", "low 200"]);
    }
}
