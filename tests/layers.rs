//! Behaviour of the prefix, postfix and monitor layers through their public
//! API: ready-first polling, event order on every sync/async combination,
//! early answers, replacement, monitor isolation, readiness and auto traits.

mod common;

use std::{
    convert::Infallible,
    fmt,
    future::{Future, ready},
    ops::ControlFlow,
    pin::pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
};

use common::{CountingWaker, Events, Gate, poll_once};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use pronghorn::{
    Body, Exchange, IntoResponse, Monitor, MonitorLayer, Postfix, PostfixLayer, Prefix,
    PrefixLayer, RequestHead, Step,
};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

type Res = Response<String>;

fn text(status: StatusCode, body: &str) -> Res {
    let mut response = Response::new(body.to_owned());
    *response.status_mut() = status;
    response
}

/// Which steps answer with a future.
#[derive(Clone, Copy, Debug)]
struct Async {
    prefix: bool,
    handler: bool,
    postfix: bool,
    monitor: bool,
}

/// One gate per step that may wait.
#[derive(Clone, Default)]
struct Gates {
    prefix: Gate,
    handler: Gate,
    postfix: Gate,
    monitor: Gate,
}

impl Gates {
    fn all(&self) -> [(&'static str, &Gate); 4] {
        [
            ("prefix", &self.prefix),
            ("handler", &self.handler),
            ("postfix", &self.postfix),
            ("monitor", &self.monitor),
        ]
    }
}

/// Monitor(Postfix(Prefix(handler))) whose steps answer now or later as
/// `mode` says, through `Step`-answering closures.
fn stepped_stack(
    mode: Async,
    events: &Events,
    gates: &Gates,
) -> impl Service<Request<String>, Response = Res, Error = Infallible, Future: Unpin> + Clone {
    let [e1, e2, e3, e4] = events.handles();
    let (g1, g2, g3, g4) = (
        gates.prefix.clone(),
        gates.handler.clone(),
        gates.postfix.clone(),
        gates.monitor.clone(),
    );
    let prefix = move |mut request: Request<String>| {
        e1.push("prefix");
        request
            .headers_mut()
            .insert("x-prefix", HeaderValue::from_static("seen"));
        if mode.prefix {
            let gate = g1.wait();
            Step::Pending(async move {
                gate.await;
                ControlFlow::Continue(request)
            })
        } else {
            Step::Ready(ControlFlow::Continue(request))
        }
    };
    let handler = service_fn(move |request: Request<String>| {
        e2.push("handler");
        let gate = mode.handler.then(|| g2.wait());
        async move {
            if let Some(gate) = gate {
                gate.await;
            }
            let seen = request.headers()["x-prefix"].to_str().unwrap().to_owned();
            Ok::<_, Infallible>(text(StatusCode::OK, &format!("prefix {seen}")))
        }
    });
    let postfix = move |head: &RequestHead, mut response: Res| {
        e3.push(format!("postfix {}", head.path()));
        response
            .headers_mut()
            .insert("x-postfix", HeaderValue::from_static("yes"));
        if mode.postfix {
            let gate = g3.wait();
            Step::Pending(async move {
                gate.await;
                response
            })
        } else {
            Step::Ready(response)
        }
    };
    let monitor = move |exchange: &Exchange<'_, Res, Infallible>| {
        e4.push(format!("monitor {}", exchange.status().unwrap()));
        if mode.monitor {
            let (gate, events) = (g4.wait(), e4.clone());
            Step::Pending(async move {
                gate.await;
                events.push("monitor done");
            })
        } else {
            Step::Ready(())
        }
    };
    ServiceBuilder::new()
        .layer(MonitorLayer::new(monitor))
        .layer(PostfixLayer::new(postfix))
        .layer(PrefixLayer::new(prefix))
        .service(handler)
        .map_future(Box::pin)
}

fn request(path: &str) -> Request<String> {
    Request::get(path).body(String::new()).unwrap()
}

#[test]
fn sync_stack_is_ready_on_first_poll() {
    let events = Events::default();
    let gates = Gates::default();
    let sync = Async {
        prefix: false,
        handler: false,
        postfix: false,
        monitor: false,
    };
    let mut service = stepped_stack(sync, &events, &gates);
    let future = service.call(request("/sync"));
    let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
        panic!("the sync stack must be ready on its first poll");
    };
    assert_eq!(response.body(), "prefix seen");
    assert_eq!(response.headers()["x-postfix"], "yes");
    assert_eq!(
        events.take(),
        ["prefix", "handler", "postfix /sync", "monitor 200 OK"]
    );
    assert!(gates.all().iter().all(|(_, gate)| gate.polls() == 0));
}

/// Drives the future by hand: every `Pending` must leave exactly one gate
/// waiting, no step is polled again before its gate fires the waker, and
/// the waker of the outer future is what that firing reaches.
fn drive(mode: Async) -> (Res, Vec<String>, usize) {
    let events = Events::default();
    let gates = Gates::default();
    let mut service = stepped_stack(mode, &events, &gates);
    let mut future = service.call(request("/sync"));
    let (counter, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    let mut suspensions = 0;
    loop {
        match std::pin::Pin::new(&mut future).poll(&mut cx) {
            Poll::Ready(result) => {
                let response = result.unwrap();
                return (response, events.take(), suspensions);
            }
            Poll::Pending => {
                suspensions += 1;
                let waiting: Vec<_> = gates
                    .all()
                    .into_iter()
                    .filter(|(_, g)| g.is_waiting())
                    .collect();
                assert_eq!(waiting.len(), 1, "{mode:?}: one step suspends at a time");
                let (name, gate) = waiting[0];
                // A spurious poll does not reach past the waiting step.
                let polls = gate.polls();
                assert!(std::pin::Pin::new(&mut future).poll(&mut cx).is_pending());
                assert_eq!(gate.polls(), polls + 1, "{mode:?}: {name} polled again");
                let wakes = counter.wakes();
                gate.open();
                assert_eq!(
                    counter.wakes(),
                    wakes + 1,
                    "{mode:?}: {name} must wake the outer waker"
                );
            }
        }
    }
}

#[test]
fn every_sync_async_combination_gives_the_same_response_and_order() {
    let (reference, reference_events, none) = drive(Async {
        prefix: false,
        handler: false,
        postfix: false,
        monitor: false,
    });
    assert_eq!(none, 0);
    for bits in 0..16u8 {
        let mode = Async {
            prefix: bits & 1 != 0,
            handler: bits & 2 != 0,
            postfix: bits & 4 != 0,
            monitor: bits & 8 != 0,
        };
        let (response, mut events, suspensions) = drive(mode);
        assert_eq!(
            suspensions,
            bits.count_ones() as usize,
            "{mode:?}: one suspension per async step"
        );
        assert_eq!(response.status(), reference.status(), "{mode:?}");
        assert_eq!(response.body(), reference.body(), "{mode:?}");
        assert_eq!(response.headers(), reference.headers(), "{mode:?}");
        if mode.monitor {
            assert_eq!(events.pop().as_deref(), Some("monitor done"), "{mode:?}");
        }
        assert_eq!(events, reference_events, "{mode:?}");
    }
}

/// The same stack written with plain sync closures and with plain async
/// closures (the `FnSync` and `FnAsync` implementations) agrees.
#[tokio::test]
async fn plain_sync_and_async_closures_agree() {
    let handler = |events: Events| {
        service_fn(move |_: Request<String>| {
            events.push("handler");
            ready(Ok::<_, Infallible>(text(StatusCode::OK, "body")))
        })
    };

    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let sync = ServiceBuilder::new()
        .layer(MonitorLayer::new(
            move |x: &Exchange<'_, Res, Infallible>| {
                e3.push(format!("monitor {}", x.status().unwrap().as_u16()));
            },
        ))
        .layer(PostfixLayer::new(move |_: &RequestHead, response: Res| {
            e2.push("postfix");
            response.map(|body| body + "+postfix")
        }))
        .layer(PrefixLayer::new(move |request: Request<String>| {
            e1.push("prefix");
            ControlFlow::Continue(request)
        }))
        .service(handler(events.clone()));
    let future = sync.clone().oneshot(request("/a"));
    let Poll::Ready(Ok(sync_response)) = poll_once(pin!(future)) else {
        panic!("sync closures must finish in the first poll");
    };
    let sync_events = events.take();

    let [e1, e2, e3] = events.handles();
    let asynchronous = ServiceBuilder::new()
        .layer(MonitorLayer::new(
            move |x: &Exchange<'_, Res, Infallible>| {
                let (events, status) = (e3.clone(), x.status().unwrap().as_u16());
                async move {
                    tokio::task::yield_now().await;
                    events.push(format!("monitor {status}"));
                }
            },
        ))
        .layer(PostfixLayer::new(move |_: &RequestHead, response: Res| {
            let events = e2.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("postfix");
                response.map(|body| body + "+postfix")
            }
        }))
        .layer(PrefixLayer::new(move |request: Request<String>| {
            let events = e1.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("prefix");
                ControlFlow::Continue(request)
            }
        }))
        .service(handler(events.clone()));
    let async_response = asynchronous.oneshot(request("/a")).await.unwrap();

    assert_eq!(sync_response.body(), "body+postfix");
    assert_eq!(async_response.body(), sync_response.body());
    assert_eq!(sync_events, ["prefix", "handler", "postfix", "monitor 200"]);
    assert_eq!(events.take(), sync_events);
}

/// A service that counts its calls.
fn counted(
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<String>, Response = Res, Error = Infallible> + Clone {
    service_fn(move |_: Request<String>| {
        calls.fetch_add(1, Ordering::SeqCst);
        ready(Ok::<_, Infallible>(text(StatusCode::OK, "inner")))
    })
}

#[tokio::test]
async fn prefix_early_answer_never_calls_the_inner_service() {
    let calls = Arc::new(AtomicUsize::new(0));
    let refuse = |request: Request<String>| {
        if request.uri().path() == "/open" {
            ControlFlow::Continue(request)
        } else {
            ControlFlow::Break(text(StatusCode::FORBIDDEN, "no"))
        }
    };
    let service = Prefix::new(counted(calls.clone()), refuse);

    let future = service.clone().oneshot(request("/closed"));
    let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
        panic!("an early answer must be ready on the first poll");
    };
    assert_eq!(
        (response.status(), response.body().as_str()),
        (StatusCode::FORBIDDEN, "no")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    let response = service.clone().oneshot(request("/open")).await.unwrap();
    assert_eq!(response.body(), "inner");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // The same holds for an asynchronous early answer.
    let later = Prefix::new(counted(calls.clone()), |_: Request<String>| async {
        ControlFlow::<Res, Request<String>>::Break(text(StatusCode::FORBIDDEN, "later"))
    });
    let response = later.oneshot(request("/open")).await.unwrap();
    assert_eq!(response.body(), "later");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_postfix_outside_a_prefix_sees_its_early_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let service = ServiceBuilder::new()
        .layer(PostfixLayer::new(|_: &RequestHead, response: Res| {
            response.map(|b| b + " (seen)")
        }))
        .layer(PrefixLayer::new(|_: Request<String>| {
            ControlFlow::Break(text(StatusCode::IM_A_TEAPOT, "early"))
        }))
        .service(counted(calls.clone()));
    let response = service.oneshot(request("/")).await.unwrap();
    assert_eq!(response.status(), StatusCode::IM_A_TEAPOT);
    assert_eq!(response.body(), "early (seen)");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn postfix_replaces_the_response() {
    let service = Postfix::new(
        counted(Arc::default()),
        |head: &RequestHead, response: Res| {
            if head.path() == "/replace" {
                text(StatusCode::ACCEPTED, "replaced")
            } else {
                response
            }
        },
    );
    let replaced = service.clone().oneshot(request("/replace")).await.unwrap();
    assert_eq!(
        (replaced.status(), replaced.body().as_str()),
        (StatusCode::ACCEPTED, "replaced")
    );
    let kept = service.oneshot(request("/keep")).await.unwrap();
    assert_eq!(
        (kept.status(), kept.body().as_str()),
        (StatusCode::OK, "inner")
    );
}

#[tokio::test]
async fn a_prefix_looks_at_the_request_in_place_and_answers_or_lets_it_through() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    // The inner service answers with what the prefix wrote.
    let inner = service_fn(move |request: Request<String>| {
        seen.fetch_add(1, Ordering::SeqCst);
        let checked = request.headers().get("x-checked").cloned();
        let body = checked.map_or("unchecked".to_owned(), |v| v.to_str().unwrap().to_owned());
        ready(Ok::<_, Infallible>(text(StatusCode::OK, &body)))
    });
    let service = Prefix::new(inner, |request: &mut Request<String>| {
        if request.uri().path() == "/blocked" {
            return ControlFlow::Break(text(StatusCode::FORBIDDEN, "no"));
        }
        request
            .headers_mut()
            .insert("x-checked", HeaderValue::from_static("1"));
        ControlFlow::Continue(())
    });
    let blocked = service.clone().oneshot(request("/blocked")).await.unwrap();
    assert_eq!(
        (blocked.status(), blocked.body().as_str()),
        (StatusCode::FORBIDDEN, "no")
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "an answer skips the inner service"
    );
    let passed = service.oneshot(request("/open")).await.unwrap();
    assert_eq!(
        (passed.status(), passed.body().as_str()),
        (StatusCode::OK, "1")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_postfix_edits_the_response_in_place_and_sees_the_head() {
    let mut service = Postfix::new(
        counted(Arc::default()),
        |head: &RequestHead, response: &mut Res| {
            let value = HeaderValue::from_str(head.path()).unwrap();
            response.headers_mut().insert("x-path", value);
        },
    );
    // Synchronous: ready on the first poll.
    let mut future = pin!(service.call(request("/edited")));
    let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
        panic!("an in-place postfix is synchronous");
    };
    assert_eq!(
        (response.status(), response.body().as_str()),
        (StatusCode::OK, "inner")
    );
    assert_eq!(response.headers()["x-path"], "/edited");
}

#[test]
fn a_postfix_blind_to_the_request_edits_the_response_in_place() {
    let mut service = Postfix::new(counted(Arc::default()), |response: &mut Res| {
        response
            .headers_mut()
            .insert("x-edited", HeaderValue::from_static("yes"));
    });
    let mut future = pin!(service.call(request("/edited")));
    let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
        panic!("a postfix that edits in place is synchronous");
    };
    assert_eq!(response.body(), "inner");
    assert_eq!(response.headers()["x-edited"], "yes");
}

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

// Layers returned from functions: the usual form of each layer is its
// default marker, so the signatures name none.
fn deny_without_token() -> PrefixLayer<impl FnMut(&mut Request<String>) -> ControlFlow<Res> + Clone>
{
    PrefixLayer::new(|request: &mut Request<String>| {
        match request.headers().contains_key("authorization") {
            true => ControlFlow::Continue(()),
            false => ControlFlow::Break(text(StatusCode::UNAUTHORIZED, "who are you?")),
        }
    })
}

fn served_by() -> PostfixLayer<impl FnMut(&mut Res) + Clone> {
    PostfixLayer::new(|response: &mut Res| {
        response
            .headers_mut()
            .insert("x-served-by", HeaderValue::from_static("pronghorn"));
    })
}

fn log_into(
    lines: Arc<Mutex<Vec<String>>>,
) -> MonitorLayer<impl FnMut(&Exchange<'_, Res, Infallible>) + Clone> {
    MonitorLayer::new(move |x: &Exchange<'_, Res, Infallible>| {
        let status = x.status().map(|status| status.as_u16());
        lines
            .lock()
            .unwrap()
            .push(format!("{} {status:?}", x.path()));
    })
}

#[tokio::test]
async fn layers_returned_from_functions_name_no_marker() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let service = ServiceBuilder::new()
        .layer(log_into(lines.clone()))
        .layer(served_by())
        .layer(deny_without_token())
        .service(counted(Arc::default()));

    let denied = service.clone().oneshot(request("/private")).await.unwrap();
    assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(denied.headers()["x-served-by"], "pronghorn");
    let mut with_token = request("/private");
    with_token
        .headers_mut()
        .insert("authorization", HeaderValue::from_static("Bearer t"));
    let allowed = service.oneshot(with_token).await.unwrap();
    assert_eq!(allowed.body(), "inner");
    assert_eq!(
        *lines.lock().unwrap(),
        ["/private Some(401)", "/private Some(200)"]
    );
}

/// Why a request is refused: an error type of the application.
enum Denied {
    NoToken,
    BadToken,
}

impl IntoResponse for Denied {
    fn into_response(self) -> Response<Body> {
        match self {
            Denied::NoToken => (StatusCode::UNAUTHORIZED, "no token").into_response(),
            Denied::BadToken => (StatusCode::FORBIDDEN, "bad token").into_response(),
        }
    }
}

/// A prefix that checks the request in place and answers `Result<(), E>`
/// refuses with any `IntoResponse`, `?` included, in front of a service
/// that answers pronghorn's `Body`; it is synchronous.
#[tokio::test]
async fn a_checking_prefix_answers_any_into_response_and_takes_question_marks() {
    let inner = service_fn(|request: Request<Body>| {
        let checked = request.extensions().get::<&str>().copied().unwrap_or("no");
        ready(Ok::<_, Infallible>(
            format!("checked: {checked}").into_response(),
        ))
    });
    let mut service = Prefix::new(inner, |request: &mut Request<Body>| -> Result<(), Denied> {
        let token = request
            .headers()
            .get("authorization")
            .ok_or(Denied::NoToken)?;
        if token != "Bearer t" {
            return Err(Denied::BadToken);
        }
        request.extensions_mut().insert("yes");
        Ok(())
    });
    let mut answers = Vec::new();
    for token in [None, Some("Bearer x"), Some("Bearer t")] {
        let mut request = Request::get("/").body(Body::empty()).unwrap();
        if let Some(token) = token {
            request
                .headers_mut()
                .insert("authorization", HeaderValue::from_static(token));
        }
        let mut future = pin!(service.call(request));
        let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
            panic!("a checking prefix is synchronous");
        };
        let status = response.status();
        let body = http_body_util::BodyExt::collect(response.into_body()).await;
        answers.push((status, body.unwrap().to_bytes()));
    }
    assert_eq!(
        answers,
        [
            (StatusCode::UNAUTHORIZED, "no token".into()),
            (StatusCode::FORBIDDEN, "bad token".into()),
            (StatusCode::OK, "checked: yes".into()),
        ]
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

/// A hook type that answers now for one request and later for the next.
#[derive(Clone, Default)]
struct EveryOther(Arc<AtomicUsize>);

impl pronghorn::PrefixHook<String, Res> for EveryOther {
    type Future = std::future::Ready<ControlFlow<Res, Request<String>>>;

    fn call(
        &mut self,
        request: Request<String>,
    ) -> Step<ControlFlow<Res, Request<String>>, Self::Future> {
        if self.0.fetch_add(1, Ordering::SeqCst) % 2 == 0 {
            Step::Ready(ControlFlow::Continue(request))
        } else {
            Step::Pending(ready(ControlFlow::Continue(request)))
        }
    }
}

#[tokio::test]
async fn a_custom_hook_switches_between_ready_and_pending() {
    let hook = EveryOther::default();
    let mut service = Prefix::new(counted(Arc::default()), hook.clone());
    for n in 0..4 {
        let future = service.ready().await.unwrap().call(request("/"));
        // A `Ready` answer finishes in the first poll; a `Pending` one is
        // polled (here it is ready as soon as it is polled, too).
        let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
            panic!("request {n} must finish");
        };
        assert_eq!(response.body(), "inner");
    }
    assert_eq!(hook.0.load(Ordering::SeqCst), 4);
}

/// A service that is ready only once told so.
#[derive(Clone, Debug, Default)]
struct Gated(Arc<Mutex<bool>>);

impl Service<Request<String>> for Gated {
    type Response = Res;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Res, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if *self.0.lock().unwrap() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    fn call(&mut self, _: Request<String>) -> Self::Future {
        ready(Ok(text(StatusCode::OK, "ready")))
    }
}

#[test]
fn poll_ready_is_forwarded() {
    let gated = Gated::default();
    let mut service = ServiceBuilder::new()
        .layer(MonitorLayer::new(|_: &Exchange<'_, Res, Infallible>| {}))
        .layer(PostfixLayer::new(|_: &RequestHead, response: Res| response))
        .layer(PrefixLayer::new(|request: Request<String>| {
            ControlFlow::Continue(request)
        }))
        .service(gated.clone());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_pending());
    *gated.0.lock().unwrap() = true;
    assert!(matches!(service.poll_ready(&mut cx), Poll::Ready(Ok(()))));
}

fn assert_send_sync_clone<T: Send + Sync + Clone + fmt::Debug>(_: &T) {}
fn assert_send<T: Send>(_: &T) {}

#[test]
fn services_layers_and_futures_are_send_sync_clone_and_debug() {
    let prefix =
        PrefixLayer::new(|request: Request<String>| ControlFlow::<Res, _>::Continue(request));
    let postfix = PostfixLayer::new(|_: &RequestHead, response: Res| async { response });
    let monitor = MonitorLayer::new(|_: &Exchange<'_, Res, Infallible>| {});
    assert_send_sync_clone(&prefix);
    assert_send_sync_clone(&postfix);
    assert_send_sync_clone(&monitor);
    let mut service = ServiceBuilder::new()
        .layer(monitor)
        .layer(postfix)
        .layer(prefix)
        .service(Gated(Arc::new(Mutex::new(true))));
    assert_send_sync_clone(&service);
    let future = service.call(request("/"));
    assert_send(&future);
    let debug = format!("{service:?}");
    assert!(
        debug.starts_with("Monitor { inner: Postfix { inner: Prefix {"),
        "{debug}"
    );
    assert!(format!("{future:?}").starts_with("ResponseFuture"));
    assert!(service.get_ref().get_ref().get_ref().0.lock().is_ok());

    // The forms that keep nothing of the request.
    let mut blind = ServiceBuilder::new()
        .layer(MonitorLayer::new(|_: Option<Result<&Res, &Infallible>>| {}))
        .layer(PostfixLayer::new(|_: &mut Res| {}))
        .service(Gated(Arc::new(Mutex::new(true))));
    assert_send_sync_clone(&blind);
    assert_send(&blind.call(request("/")));
}

#[test]
fn the_head_keeps_the_method_and_the_uri_in_every_form() {
    let forms = [
        (Method::GET, "/users/7?full=1"),
        (Method::GET, "/"),
        (Method::OPTIONS, "*"),
        (Method::GET, "http://example.com/x?y=1"),
        (Method::GET, "https://example.com"),
        (Method::CONNECT, "example.com:443"),
    ];
    for (method, uri) in forms {
        let request = Request::builder()
            .method(method.clone())
            .uri(uri)
            .version(Version::HTTP_10)
            .body(())
            .unwrap();
        let head = RequestHead::of(&request);
        assert_eq!(head.method(), method, "{uri}");
        assert_eq!(head.uri(), request.uri(), "{uri}");
        assert_eq!(head.uri().to_string(), request.uri().to_string());
        assert_eq!(head.uri().authority(), request.uri().authority(), "{uri}");
        assert_eq!(head.path(), request.uri().path(), "{uri}");
        assert_eq!(head.uri().query(), request.uri().query(), "{uri}");
        assert_eq!(head.version(), Version::HTTP_10);
    }
}

/// A synchronous prefix runs over a service that is not `Clone` (tower's
/// `RateLimit`, say): only a hook that may suspend needs a clone of it.
#[tokio::test]
async fn a_synchronous_prefix_needs_no_clone_of_the_inner_service() {
    /// A service that cannot be cloned.
    struct Single;

    impl Service<Request<String>> for Single {
        type Response = Res;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Res, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<String>) -> Self::Future {
            ready(Ok(text(StatusCode::OK, "inner")))
        }
    }

    let by_value = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: Request<String>| {
            if request.uri().path() == "/denied" {
                ControlFlow::Break(text(StatusCode::FORBIDDEN, "denied"))
            } else {
                ControlFlow::Continue(request)
            }
        }))
        .service(Single);
    let in_place = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: &mut Request<String>| {
            request
                .headers_mut()
                .insert("x-seen", HeaderValue::from_static("1"));
            ControlFlow::<Res>::Continue(())
        }))
        .service(Single);
    let denied = by_value.oneshot(request("/denied")).await.unwrap();
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);
    let passed = in_place.oneshot(request("/")).await.unwrap();
    assert_eq!(passed.body(), "inner");
}
