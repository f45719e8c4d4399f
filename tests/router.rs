//! The router's behaviour, rule by rule and example by example, through its
//! public API: patterns, precedence, HEAD/405/OPTIONS, hooks and their
//! order, early answers, replacement, staged headers, failures, monitors.

mod common;

use std::{
    ops::ControlFlow,
    pin::pin,
    task::{Context, Poll},
};

use common::{CountingWaker, Events, Gate, Log, poll_once};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use pronghorn::{
    Body, CompiledRouter, RouteError, Router, Step,
    handler::{Path, RouteParams},
    router::{Failure, Priority, Replace, Route, RouteExchange, Scope},
};
use tower::{Service, ServiceExt};

type Req = Request<String>;

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

async fn send(router: &CompiledRouter<String>, method: Method, path: &str) -> Answer {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .body(String::new())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
    }
}

async fn get(router: &CompiledRouter<String>, path: &str) -> Answer {
    send(router, Method::GET, path).await
}

/// A handler answering `name` and its decoded parameters: `name a=1 b=2`.
fn echo(name: &'static str) -> impl Fn(RouteParams) -> String + Clone + Send + Sync + 'static {
    move |params: RouteParams| {
        let mut out = name.to_owned();
        for (key, value) in params.0 {
            out.push_str(&format!(" {key}={value}"));
        }
        out
    }
}

fn routes(patterns: &[&'static str]) -> CompiledRouter<String> {
    patterns
        .iter()
        .fold(Router::new(), |router, &pattern| {
            router.get(pattern, echo(pattern))
        })
        .compile()
        .unwrap()
}

// ---- patterns and paths ------------------------------------------------

#[tokio::test]
async fn patterns_and_parameters() {
    let router = routes(&[
        "/files/{base}.{ext}",
        "/slug/{slug}.json",
        "/v{major}.{minor}",
        "/f/pre{id}.json",
        "/f/{first}-{second}.tail",
        "/p/p{id}",
        "/cat/{*rest}",
        "/edit/{*path}/edit",
        "/brace/{{x}}",
        "/under/{snake_case_1}",
    ]);
    let cases: &[(&str, Option<&str>)] = &[
        (
            "/files/report.final.json",
            Some("/files/{base}.{ext} base=report ext=final.json"),
        ),
        ("/slug/a.b.json", Some("/slug/{slug}.json slug=a.b")),
        ("/v1.2", Some("/v{major}.{minor} major=1 minor=2")),
        ("/f/prevalue.json", Some("/f/pre{id}.json id=value")),
        (
            "/f/left-right.tail",
            Some("/f/{first}-{second}.tail first=left second=right"),
        ),
        ("/f/value.json", None),
        ("/p/p", None),
        ("/p/px", Some("/p/p{id} id=x")),
        ("/cat/a/b/c", Some("/cat/{*rest} rest=a/b/c")),
        ("/cat", None),
        ("/edit/a/b/edit", Some("/edit/{*path}/edit path=a/b")),
        ("/edit/edit", None),
        ("/brace/{x}", Some("/brace/{{x}}")),
        ("/under/ok", Some("/under/{snake_case_1} snake_case_1=ok")),
    ];
    for &(path, expected) in cases {
        let answer = get(&router, path).await;
        match expected {
            Some(body) => assert_eq!(
                (answer.status, answer.body.as_str()),
                (StatusCode::OK, body),
                "{path}"
            ),
            None => assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}"),
        }
    }
}

#[tokio::test]
async fn paths_match_as_received() {
    let router = Router::new()
        .get("/a/b", || "ab")
        .get("/Case", || "upper")
        .get("/sp ace", || "space")
        .get("/d/{v}", echo("d"))
        .get("/typed/{n}", |Path(n): Path<u32>| format!("n={n}"))
        .get("/files/{*path}", echo("files"))
        .compile()
        .unwrap();
    for path in ["/a/b", "/a/b/", "/a//b", "//a/b//"] {
        assert_eq!(
            get(&router, path).await.body,
            "ab",
            "{path}: empty segments are ignored"
        );
    }
    assert_eq!(
        get(&router, "/case").await.status,
        StatusCode::NOT_FOUND,
        "case-sensitive"
    );
    assert_eq!(
        get(&router, "/sp%20ace").await.status,
        StatusCode::NOT_FOUND,
        "still encoded"
    );
    assert_eq!(
        get(&router, "/a/b?x=1").await.body,
        "ab",
        "the query takes no part"
    );
    assert_eq!(
        get(&router, "/d/a%20b").await.body,
        "d v=a b",
        "decoded on access"
    );
    assert_eq!(get(&router, "/d/caf%C3%A9").await.body, "d v=café");
    let bad = get(&router, "/d/%ZZ").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("`v`"), "{}", bad.body);
    assert_eq!(get(&router, "/typed/%34%32").await.body, "n=42");
    let not_a_number = get(&router, "/typed/abc").await;
    assert_eq!(not_a_number.status, StatusCode::BAD_REQUEST);
    assert!(not_a_number.body.contains("`n`"), "{}", not_a_number.body);
    assert_eq!(
        get(&router, "/files/../etc/passwd").await.body,
        "files path=../etc/passwd",
        "dot segments reach the handler"
    );
}

// ---- which handler answers ---------------------------------------------

#[tokio::test]
async fn precedence_static_dynamic_catch_all_and_backtracking() {
    let router = routes(&[
        "/c/static",
        "/c/{id}",
        "/c/{*path}",
        "/b/{first}/missing",
        "/b/{second}/{third}",
    ]);
    assert_eq!(get(&router, "/c/static").await.body, "/c/static");
    assert_eq!(get(&router, "/c/value").await.body, "/c/{id} id=value");
    assert_eq!(get(&router, "/c/a/b").await.body, "/c/{*path} path=a/b");
    assert_eq!(
        get(&router, "/b/a/b").await.body,
        "/b/{second}/{third} second=a third=b"
    );
    assert_eq!(
        get(&router, "/b/a/missing").await.body,
        "/b/{first}/missing first=a"
    );
    // The same rules on paths with empty segments: each is searched as its
    // normal form would be, and captures are slices of the path as sent.
    let router = routes(&[
        "/e/{x}/edit",
        "/e/{*rest}",
        "/f/{name}.{ext}",
        "/f/{*path}/raw",
    ]);
    assert_eq!(
        get(&router, "/e/x//edit").await.body,
        "/e/{x}/edit x=x",
        "a dynamic route before a catch-all, across `//`"
    );
    assert_eq!(get(&router, "//e//x/edit//").await.body, "/e/{x}/edit x=x");
    assert_eq!(
        get(&router, "/e/x//other/").await.body,
        "/e/{*rest} rest=x//other"
    );
    assert_eq!(
        get(&router, "/f//a.b.json").await.body,
        "/f/{name}.{ext} name=a ext=b.json"
    );
    assert_eq!(
        get(&router, "/f/a//b///raw/").await.body,
        "/f/{*path}/raw path=a//b"
    );
}

#[tokio::test]
async fn method_routes_are_searched_before_any_method_routes() {
    let router = Router::new()
        .any("/d/value", || "any")
        .get("/d/{id}", echo("dynamic"))
        .get("/d/value", || "static")
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/d/value").await.body, "static");
    assert_eq!(get(&router, "/d/other").await.body, "dynamic id=other");
    assert_eq!(send(&router, Method::POST, "/d/value").await.body, "any");
}

#[tokio::test]
async fn head_405_404_and_options() {
    let router = Router::new()
        .get("/g", || "twelve bytes")
        .post("/g", || "posted")
        .route(Method::HEAD, "/h", || {
            (StatusCode::ACCEPTED, "explicit head")
        })
        .get("/h", || "get")
        .any("/a", || "any")
        .get("/a", || "get a")
        .delete("/x/{id}", || "deleted")
        .compile()
        .unwrap();
    let head = send(&router, Method::HEAD, "/g").await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(head.body, "");
    assert_eq!(head.headers[header::CONTENT_LENGTH], "12");
    assert_eq!(
        head.headers[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        send(&router, Method::HEAD, "/h").await.status,
        StatusCode::ACCEPTED,
        "explicit HEAD route"
    );
    let head_any = send(&router, Method::HEAD, "/a").await;
    assert_eq!(
        (
            head_any.headers[header::CONTENT_LENGTH].to_str().unwrap(),
            head_any.body.as_str()
        ),
        ("3", ""),
        "ANY before GET"
    );

    let not_allowed = send(&router, Method::PUT, "/g").await;
    assert_eq!(not_allowed.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(not_allowed.headers[header::ALLOW], "GET, POST, HEAD");
    assert_eq!(get(&router, "/x/1").await.headers[header::ALLOW], "DELETE");

    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (StatusCode::NOT_FOUND, "Not Found")
    );
    assert_eq!(
        missing.headers[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );

    let options = send(&router, Method::OPTIONS, "/g").await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    assert_eq!(options.headers[header::ALLOW], "GET, POST, HEAD, OPTIONS");
    assert_eq!(
        send(&router, Method::OPTIONS, "/nowhere").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&router, Method::OPTIONS, "/a").await.body,
        "any",
        "an ANY route answers OPTIONS"
    );
}

#[tokio::test]
async fn a_cors_prefix_answers_a_preflight() {
    let router = Router::new()
        .get("/api/items", || "items")
        .prefix("/api", |request: Req, _: &mut Route<'_>| {
            if request.method() == Method::OPTIONS {
                ControlFlow::Break((
                    [(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")],
                    StatusCode::NO_CONTENT,
                ))
            } else {
                ControlFlow::Continue(request)
            }
        })
        .compile()
        .unwrap();
    let preflight = send(&router, Method::OPTIONS, "/api/items").await;
    assert_eq!(preflight.status, StatusCode::NO_CONTENT);
    assert_eq!(preflight.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    assert!(!preflight.headers.contains_key(header::ALLOW));
}

// ---- hooks --------------------------------------------------------------

/// A prefix that records `name` (and its own parameters) and passes on.
fn mark(
    events: &Events,
    name: &'static str,
) -> impl Fn(Req, &mut Route<'_>) -> Req + Send + Sync + 'static {
    let events = events.clone();
    move |request: Req, route: &mut Route<'_>| {
        let params: Vec<String> = route
            .params()
            .iter_raw()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if params.is_empty() {
            events.push(name);
        } else {
            events.push(format!("{name}:{}", params.join(",")));
        }
        request
    }
}

#[tokio::test]
async fn hooks_cover_their_subtree_and_every_matching_branch() {
    let events = Events::default();
    let router = Router::new()
        .get("/a/b", || "ab")
        .get("/a/{x}/deep", || "deep")
        .get("/other", || "other")
        .prefix("/a/b", mark(&events, "static"))
        .prefix("/a/{x}", mark(&events, "dynamic"))
        .prefix("/a/{*r}", mark(&events, "catch-all"))
        .prefix("/a", mark(&events, "root"))
        .compile()
        .unwrap();
    get(&router, "/a/b").await;
    // Equal priority: shallower first, then registration order.
    assert_eq!(
        events.take(),
        ["root", "static", "dynamic:x=b", "catch-all:r=b"]
    );
    get(&router, "/a/z/deep").await;
    assert_eq!(events.take(), ["root", "dynamic:x=z", "catch-all:r=z/deep"]);
    get(&router, "/other").await;
    assert_eq!(events.take(), Vec::<String>::new());
}

#[tokio::test]
async fn hook_order_priority_then_method_then_depth_then_registration() {
    let events = Events::default();
    let router = Router::new()
        .get("/o/x", || "ok")
        .prefix(Scope::new("/o/x"), mark(&events, "normal deep"))
        .prefix(Scope::new("/o"), mark(&events, "normal any"))
        .prefix(
            Scope::new("/o").method(Method::GET),
            mark(&events, "normal get"),
        )
        .prefix(
            Scope::new("/o/x").priority(Priority::LOWEST),
            mark(&events, "lowest"),
        )
        .prefix(
            Scope::new("/").priority(Priority::HIGHEST),
            mark(&events, "highest"),
        )
        .prefix(
            Scope::new("/o").priority(Priority::HIGH),
            mark(&events, "high 1"),
        )
        .prefix(
            Scope::new("/o").priority(Priority::HIGH),
            mark(&events, "high 2"),
        )
        .prefix(
            Scope::new("/o")
                .priority(Priority::LOW)
                .method(Method::POST),
            mark(&events, "post only"),
        )
        .compile()
        .unwrap();
    get(&router, "/o/x").await;
    assert_eq!(
        events.take(),
        [
            "highest",
            "high 1",
            "high 2",
            "normal get",
            "normal any",
            "normal deep",
            "lowest"
        ]
    );
}

#[tokio::test]
async fn head_served_by_get_runs_get_hooks() {
    let events = Events::default();
    let router = Router::new()
        .get("/secret", || "secret")
        .prefix(
            Scope::new("/secret").method(Method::GET),
            |_: Req, _: &mut Route<'_>| {
                ControlFlow::<StatusCode, Req>::Break(StatusCode::UNAUTHORIZED)
            },
        )
        .prefix(
            Scope::new("/").method(Method::HEAD),
            mark(&events, "head hook"),
        )
        .compile()
        .unwrap();
    let head = send(&router, Method::HEAD, "/secret").await;
    assert_eq!(
        head.status,
        StatusCode::UNAUTHORIZED,
        "HEAD must not bypass a GET prefix"
    );
    assert_eq!(events.take(), ["head hook"]);
    let get = send(&router, Method::GET, "/secret").await;
    assert_eq!(get.status, StatusCode::UNAUTHORIZED);
    assert_eq!(events.take(), Vec::<String>::new(), "a HEAD hook skips GET");
}

#[tokio::test]
async fn on_404_and_405_only_monitors_run() {
    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let router = Router::new()
        .post("/only-post", || "posted")
        .prefix("/", move |r: Req, _: &mut Route<'_>| {
            e1.push("prefix");
            r
        })
        .postfix("/", move |_: &Route<'_>, response: Response<Body>| {
            e2.push("postfix");
            response
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            e3.push(format!(
                "monitor {} {:?}",
                x.status().unwrap().as_u16(),
                x.pattern()
            ));
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/missing").await.status, StatusCode::NOT_FOUND);
    assert_eq!(events.take(), ["monitor 404 None"]);
    assert_eq!(
        get(&router, "/only-post").await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(events.take(), ["monitor 405 None"]);
    assert_eq!(
        send(&router, Method::POST, "/only-post").await.status,
        StatusCode::OK
    );
    assert_eq!(
        events.take(),
        ["prefix", "postfix", "monitor 200 Some(\"/only-post\")"]
    );
}

// ---- one request through the pipeline ---------------------------------

/// Sync hooks: the answer is ready on the first poll.
#[test]
fn a_sync_pipeline_is_ready_on_the_first_poll() {
    let events = Events::default();
    let [e1, e2, e3, e4] = events.handles();
    let router = Router::new()
        .get("/sync", move || {
            e2.push("handler");
            "ok"
        })
        .prefix("/sync", move |r: Req, _: &mut Route<'_>| {
            e1.push("prefix");
            r
        })
        .postfix("/sync", move |_: &Route<'_>, response: Response<Body>| {
            e3.push("postfix");
            response
        })
        .monitor("/sync", move |_: &RouteExchange<'_>| e4.push("monitor"))
        .compile()
        .unwrap();
    let future = router.oneshot(Request::get("/sync").body(String::new()).unwrap());
    let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
        panic!("a sync pipeline must answer in the first poll");
    };
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(events.take(), ["prefix", "handler", "postfix", "monitor"]);
}

/// The same with every step async: the same body, in the same order.
#[tokio::test]
async fn an_async_pipeline_gives_the_same_body_in_the_same_order() {
    let events = Events::default();
    let [e1, e2, e3, e4] = events.handles();
    let router = Router::new()
        .get("/sync", move || {
            let events = e2.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("handler");
                "ok"
            }
        })
        .prefix("/sync", move |r: Req, _: &mut Route<'_>| {
            let events = e1.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("prefix");
                r
            }
        })
        .postfix("/sync", move |_: &Route<'_>, response: Response<Body>| {
            let events = e3.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("postfix");
                response
            }
        })
        .monitor("/sync", move |_: &RouteExchange<'_>| {
            let events = e4.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("monitor");
            }
        })
        .compile()
        .unwrap();
    let answer = get(&router, "/sync").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::OK, "ok")
    );
    assert_eq!(events.take(), ["prefix", "handler", "postfix", "monitor"]);
}

/// Priorities, and an early answer from the highest.
#[tokio::test]
async fn a_high_priority_prefix_answers_early_and_the_others_are_skipped() {
    let events = Events::default();
    let [e1, e2, e3, e4] = events.handles();
    let router = Router::new()
        .get("/priority/{id}", move || {
            e3.push("handler");
            "handler"
        })
        .prefix(
            Scope::new("/priority/{id}")
                .method(Method::GET)
                .priority(Priority::LOW),
            move |r: Req, _: &mut Route<'_>| {
                e1.push("low");
                r
            },
        )
        .prefix(
            Scope::new("/priority/{id}")
                .method(Method::GET)
                .priority(Priority::HIGH),
            move |_: Req, route: &mut Route<'_>| {
                e2.push(format!("high:{}", route.params().get_raw("id").unwrap()));
                ControlFlow::<_, Req>::Break((StatusCode::ACCEPTED, "early"))
            },
        )
        .postfix("/", |_: &Route<'_>, _: Response<Body>| -> Response<Body> {
            panic!("postfixes are skipped")
        })
        .monitor("/priority/{id}", move |_: &RouteExchange<'_>| {
            e4.push("monitor")
        })
        .compile()
        .unwrap();
    let answer = get(&router, "/priority/42").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::ACCEPTED, "early")
    );
    assert_eq!(events.take(), ["high:42", "monitor"]);
}

#[tokio::test]
async fn parameters_inside_segments_are_matched_by_prefix_and_suffix() {
    let router = routes(&["/f/pre{id}.json", "/f/{first}-{second}.tail"]);
    assert_eq!(
        get(&router, "/f/prevalue.json").await.body,
        "/f/pre{id}.json id=value"
    );
    assert_eq!(
        get(&router, "/f/left-right.tail").await.body,
        "/f/{first}-{second}.tail first=left second=right"
    );
    assert_eq!(
        get(&router, "/f/value.json").await.status,
        StatusCode::NOT_FOUND
    );
}

/// Monitors that panic when called and inside their future change
/// nothing, and the later one still runs.
#[tokio::test]
async fn monitor_panics_are_isolated() {
    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let router = Router::new()
        .get("/m", || "fine")
        .monitor(
            Scope::new("/m").priority(Priority::HIGH),
            move |_: &RouteExchange<'_>| -> () {
                e1.push("high");
                panic!("monitor panics when called")
            },
        )
        .monitor(Scope::new("/m"), move |_: &RouteExchange<'_>| {
            e2.push("normal");
            async {
                let fail = true;
                if fail {
                    panic!("monitor future panics");
                }
            }
        })
        .monitor(
            Scope::new("/m").priority(Priority::LOW),
            move |x: &RouteExchange<'_>| {
                e3.push(format!("low {}", x.status().unwrap().as_u16()));
            },
        )
        .compile()
        .unwrap();
    let log = Log::capture();
    for _ in 0..2 {
        let answer = get(&router, "/m").await;
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (StatusCode::OK, "fine")
        );
        assert_eq!(events.take(), ["high", "normal", "low 200"]);
        // Both panics are logged, each with its message.
        let logged = log.take();
        assert!(
            logged.len() == 2
                && logged[0].contains("panic=\"monitor panics when called\"")
                && logged[1].contains("panic=\"monitor future panics\""),
            "{logged:?}"
        );
    }
}

/// pronghorn's logs carry no request of their own: they are logged inside
/// the service's `call` or its response future's poll, so the span of a
/// tracing middleware around the router — tower-http's `TraceLayer` here —
/// tells which request it was: for a request answered in `call` and one
/// that suspends, for monitors that fail at once or in their future, and
/// for a panic.
#[tokio::test]
async fn logs_fall_in_the_span_of_a_trace_layer() {
    let router = Router::new()
        .get("/now", || "fine")
        .get("/later", || async {
            tokio::task::yield_now().await;
            "fine"
        })
        .get("/panic", || -> &'static str { panic!("handler boom") })
        .monitor("/", |x: &RouteExchange<'_>| -> Result<(), String> {
            Err(format!("sync monitor failed, {}", x.status().unwrap()))
        })
        .monitor("/", |_: &RouteExchange<'_>| async {
            tokio::task::yield_now().await;
            Err::<(), _>("async monitor failed")
        })
        .compile()
        .unwrap();
    let service = tower::ServiceBuilder::new()
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .service(router);
    let log = Log::capture();
    for (path, status) in [
        ("/now?x=1", "200 OK"),
        ("/later", "200 OK"),
        ("/panic", "500 Internal Server Error"),
    ] {
        let request = Request::get(path).body(String::new()).unwrap();
        service.clone().oneshot(request).await.unwrap();
        let mut expected = vec![
            format!("sync monitor failed, {status}"),
            "async monitor failed".to_owned(),
        ];
        if path == "/panic" {
            expected.insert(0, "panic=handler boom".to_owned());
        }
        let ours: Vec<String> = log
            .take()
            .into_iter()
            .filter(|line| line.contains("pronghorn:"))
            .collect();
        assert_eq!(ours.len(), expected.len(), "{path}: {ours:?}");
        for (line, expected) in ours.iter().zip(&expected) {
            assert!(
                line.starts_with(&format!("in method=GET uri={path} ")) && line.contains(expected),
                "{path}: {line}"
            );
        }
    }
}

/// Every monitor of a request reads the same elapsed time, and it covers
/// the handler's own time.
#[tokio::test]
async fn monitors_share_one_elapsed_time_that_covers_the_handler() {
    use std::{
        sync::{Arc, Mutex},
        time::Duration,
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (first, second) = (seen.clone(), seen.clone());
    let router = Router::new()
        .get("/slow", || async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            "done"
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            first.lock().unwrap().push(x.elapsed());
        })
        .monitor("/slow", move |x: &RouteExchange<'_>| {
            // Some work between the two readings.
            std::hint::black_box((0..10_000u64).sum::<u64>());
            second.lock().unwrap().push(x.elapsed());
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/slow").await.body, "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1]);
    assert!(seen[0] >= Duration::from_millis(20), "{seen:?}");
}

/// Staged headers go out on every answer; a panic is a 500 with a generic
/// body, seen by monitors.
#[tokio::test]
async fn staged_headers_go_out_on_every_answer_and_a_panic_is_a_500_seen_by_monitors() {
    let failures = Events::default();
    let seen = failures.clone();
    let router = Router::new()
        .get("/fail", || -> &'static str { panic!("secret detail") })
        .get("/error", || {
            Err::<&str, _>((StatusCode::CONFLICT, "conflict"))
        })
        .get("/ok", || ([("x-prefix", "handler")], "ok"))
        .get("/early", || "unreachable")
        .get("/async-fail", || async {
            let fail = true;
            if fail {
                panic!("async detail");
            }
            "never"
        })
        .prefix("/", |request: Req, route: &mut Route<'_>| {
            route.stage_header(
                header::HeaderName::from_static("x-prefix"),
                HeaderValue::from_static("kept"),
            );
            if request.uri().path() == "/early" {
                ControlFlow::Break(StatusCode::FORBIDDEN)
            } else {
                ControlFlow::Continue(request)
            }
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            if let Some(Failure::Panic { step, message }) = x.error() {
                seen.push(format!(
                    "{} {step}: {message}",
                    x.status().unwrap().as_u16()
                ));
            }
        })
        .compile()
        .unwrap();

    let failed = get(&router, "/fail").await;
    assert_eq!(
        (failed.status, failed.body.as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
    );
    assert_eq!(failed.headers["x-prefix"], "kept");
    assert!(!failed.body.contains("secret"));
    let async_failed = get(&router, "/async-fail").await;
    assert_eq!(async_failed.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        failures.take(),
        ["500 handler: secret detail", "500 handler: async detail"]
    );

    let error = get(&router, "/error").await;
    assert_eq!(
        (error.status, error.body.as_str()),
        (StatusCode::CONFLICT, "conflict")
    );
    assert_eq!(error.headers["x-prefix"], "kept");
    let ok = get(&router, "/ok").await;
    assert_eq!(ok.headers["x-prefix"], "kept", "a staged header wins");
    let early = get(&router, "/early").await;
    assert_eq!(
        (early.status, early.headers["x-prefix"].to_str().unwrap()),
        (StatusCode::FORBIDDEN, "kept")
    );
    assert_eq!(
        get(&router, "/ok").await.status,
        StatusCode::OK,
        "the router keeps serving"
    );
}

#[tokio::test]
async fn a_prefix_in_place_edits_the_request_or_answers() {
    let router = Router::new()
        .get("/r/{id}", |headers: HeaderMap| {
            headers["x-user"].to_str().unwrap().to_owned()
        })
        .prefix("/r/{id}", |request: &mut Req, route: &mut Route<'_>| {
            let id = route.params().get("id").unwrap().unwrap().into_owned();
            if id == "0" {
                return ControlFlow::Break((StatusCode::FORBIDDEN, "no"));
            }
            let value = HeaderValue::from_str(&format!("user {id}")).unwrap();
            request.headers_mut().insert("x-user", value);
            ControlFlow::Continue(())
        })
        .compile()
        .unwrap();
    let passed = get(&router, "/r/7").await;
    assert_eq!(
        (passed.status, passed.body.as_str()),
        (StatusCode::OK, "user 7")
    );
    let refused = get(&router, "/r/0").await;
    assert_eq!(
        (refused.status, refused.body.as_str()),
        (StatusCode::FORBIDDEN, "no")
    );
}

#[tokio::test]
async fn postfix_replacement_skips_later_postfixes() {
    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let router = Router::new()
        .get("/r", || "original")
        .get("/m", || "original")
        .postfix(
            Scope::new("/r").priority(Priority::HIGH),
            move |_: &Route<'_>, _: Response<Body>| {
                e1.push("replace");
                Replace((StatusCode::CREATED, "replaced"))
            },
        )
        .postfix(
            "/",
            move |route: &Route<'_>, mut response: Response<Body>| {
                e2.push(format!("modify {}", route.pattern().unwrap()));
                response
                    .headers_mut()
                    .insert("x-modified", HeaderValue::from_static("1"));
                response
            },
        )
        // In place, and after the one above (deeper): sees its edit.
        .postfix(
            "/m",
            move |route: &Route<'_>, response: &mut Response<Body>| {
                e3.push(format!("edit {}", route.path()));
                let seen = response.headers().contains_key("x-modified");
                let value = HeaderValue::from_static(if seen { "after" } else { "before" });
                response.headers_mut().insert("x-edited", value);
            },
        )
        .compile()
        .unwrap();
    let replaced = get(&router, "/r").await;
    assert_eq!(
        (replaced.status, replaced.body.as_str()),
        (StatusCode::CREATED, "replaced")
    );
    assert!(!replaced.headers.contains_key("x-modified"));
    assert_eq!(events.take(), ["replace"]);
    let modified = get(&router, "/m").await;
    assert_eq!(modified.headers["x-modified"], "1");
    assert_eq!(modified.headers["x-edited"], "after");
    assert_eq!(modified.body, "original");
    assert_eq!(events.take(), ["modify /m", "edit /m"]);
}

#[tokio::test]
async fn a_step_answering_handler_and_prefix_switch_per_request() {
    let router = Router::new()
        .get("/n/{n}", |Path(n): Path<u32>| {
            if n % 2 == 0 {
                Step::Ready(format!("now {n}"))
            } else {
                Step::Pending(async move { format!("later {n}") })
            }
        })
        .compile()
        .unwrap();
    let now = router
        .clone()
        .oneshot(Request::get("/n/2").body(String::new()).unwrap());
    assert!(poll_once(pin!(now)).is_ready());
    assert_eq!(get(&router, "/n/2").await.body, "now 2");
    assert_eq!(get(&router, "/n/3").await.body, "later 3");
}

#[tokio::test]
async fn nest_and_merge_compose_routers() {
    let events = Events::default();
    let api = Router::new()
        .get("/users/{id}", echo("user"))
        .prefix("/users", mark(&events, "api prefix"));
    let router = Router::new()
        .get("/", || "home")
        .nest("/api", api)
        .merge(Router::new().get("/about", || "about"))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/api/users/7").await.body, "user id=7");
    assert_eq!(events.take(), ["api prefix"]);
    assert_eq!(get(&router, "/about").await.body, "about");
    assert_eq!(get(&router, "/").await.body, "home");
    let conflict = Router::<String>::new()
        .get("/a", || "1")
        .merge(Router::new().get("/a", || "2"))
        .compile();
    assert!(matches!(conflict, Err(RouteError::DuplicateRoute { .. })));
}

// ---- errors -------------------------------------------------------------

#[test]
fn every_route_error_names_the_pattern_and_the_problem() {
    fn error(pattern: &str) -> RouteError {
        Router::<String>::new()
            .get(pattern, || "x")
            .compile()
            .unwrap_err()
    }
    let cases: &[(&str, &str)] = &[
        ("users", "route `users`: a pattern must start with `/`"),
        (
            "/a/{id",
            "route `/a/{id`: unbalanced brace at byte 3 (write `{{` or `}}` for a literal brace)",
        ),
        (
            "/a/id}",
            "route `/a/id}`: unbalanced brace at byte 5 (write `{{` or `}}` for a literal brace)",
        ),
        (
            "/a/{}",
            "route `/a/{}`: a parameter needs a name, as in `{id}`",
        ),
        (
            "/a/{*}",
            "route `/a/{*}`: a parameter needs a name, as in `{id}`",
        ),
        (
            "/a/{1x}",
            "route `/a/{1x}`: `1x` is not a valid parameter name (letters, digits and `_`, not starting with a digit)",
        ),
        (
            "/a/{a}{b}",
            "route `/a/{a}{b}`: parameters in segment `{a}{b}` need literal text between them",
        ),
        (
            "/a/{x}/{x}",
            "route `/a/{x}/{x}`: parameter `x` is named twice",
        ),
        (
            "/a/x{*rest}",
            "route `/a/x{*rest}`: a catch-all `{*name}` must fill its whole segment",
        ),
        (
            "/a/{*rest}/{id}",
            "route `/a/{*rest}/{id}`: only static segments may follow a catch-all, found `{id}`",
        ),
        (
            "/a/{*rest}/{*more}",
            "route `/a/{*rest}/{*more}`: only static segments may follow a catch-all, found `{*more}`",
        ),
    ];
    for &(pattern, message) in cases {
        assert_eq!(error(pattern).to_string(), message, "{pattern}");
    }
    let many: String = (0..17).map(|i| format!("/{{p{i}}}")).collect();
    assert!(matches!(error(&many), RouteError::TooManyParameters { .. }));
    assert_eq!(
        error(&many).to_string(),
        format!("route `{many}`: more than 16 parameters")
    );

    let twice = Router::<String>::new()
        .get("/u/{id}", || "1")
        .get("/u/{id}", || "2")
        .compile()
        .unwrap_err();
    assert_eq!(twice.to_string(), "route `GET /u/{id}` is registered twice");
    let renamed = Router::<String>::new()
        .get("/u/{id}", || "1")
        .get("/u/{name}", || "2")
        .compile()
        .unwrap_err();
    assert_eq!(
        renamed,
        RouteError::DuplicateRoute {
            method: "GET".into(),
            first: "/u/{id}".into(),
            second: "/u/{name}".into()
        }
    );
    assert_eq!(
        renamed.to_string(),
        "route `GET /u/{name}` conflicts with `GET /u/{id}`, registered before: they match the same paths"
    );
    let any_twice = Router::<String>::new()
        .any("/x", || "1")
        .any("/x/", || "2")
        .compile()
        .unwrap_err();
    assert!(
        any_twice
            .to_string()
            .starts_with("route `* /x/` conflicts with `* /x`")
    );
    // Same pattern, other methods: no conflict.
    assert!(
        Router::<String>::new()
            .get("/u", || "1")
            .post("/u", || "2")
            .any("/u", || "3")
            .compile()
            .is_ok()
    );

    let bad_hook = Router::<String>::new()
        .prefix("/a/{", |r: Req, _: &mut Route<'_>| r)
        .compile()
        .unwrap_err();
    assert!(
        matches!(bad_hook, RouteError::UnbalancedBrace { ref pattern, at: 3 } if pattern == "/a/{")
    );
}

// ---- extractors and bodies ----------------------------------------------

#[cfg(feature = "json")]
mod extractors {
    use super::*;
    use bytes::Bytes;
    use pronghorn::handler::{Header, Json, Query, State, headers::Authorization};
    use std::sync::Arc;

    #[derive(serde::Deserialize)]
    struct File {
        name: String,
        ext: String,
    }

    #[derive(serde::Deserialize)]
    struct Page {
        page: u32,
        q: Option<String>,
    }

    #[derive(serde::Deserialize, serde::Serialize)]
    struct Item {
        id: u32,
        name: String,
    }

    async fn send_body(
        router: &CompiledRouter<String>,
        path: &str,
        content_type: Option<&str>,
        body: &str,
    ) -> Answer {
        let mut request = Request::post(path);
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let response = router
            .clone()
            .oneshot(request.body(body.to_owned()).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        Answer {
            status: parts.status,
            headers: parts.headers,
            body: String::from_utf8(body.to_vec()).unwrap(),
        }
    }

    fn router() -> CompiledRouter<String> {
        Router::new()
            .get("/one/{id}", |Path(id): Path<u64>| format!("id={id}"))
            .get("/two/{a}/{b}", |Path((a, b)): Path<(String, i32)>| {
                format!("a={a} b={b}")
            })
            .get("/file/{name}.{ext}", |Path(file): Path<File>| {
                format!("{}|{}", file.name, file.ext)
            })
            .get("/page", |Query(page): Query<Page>| {
                format!("page={} q={:?}", page.page, page.q)
            })
            .get("/auth", |Header(value, _): Header<Authorization>| {
                format!("auth={}", value.to_str().unwrap())
            })
            .get("/maybe", |auth: Option<Header<Authorization>>| {
                format!("present={}", auth.is_some())
            })
            .get(
                "/state",
                |State(name): State<Arc<str>>,
                 method: Method,
                 uri: http::Uri,
                 headers: HeaderMap| {
                    format!("{name} {method} {} {}", uri.path(), headers.len())
                },
            )
            .post("/json", |Path(()): Path<()>, Json(item): Json<Item>| {
                Json(Item {
                    id: item.id + 1,
                    name: item.name,
                })
            })
            .post("/text", |text: String| {
                format!("{} chars", text.chars().count())
            })
            .post("/bytes", |bytes: Bytes| format!("{} bytes", bytes.len()))
            .get("/no-state", |State(n): State<u64>| n.to_string())
            .state(Arc::<str>::from("shared"))
            .body_limit(64)
            .compile()
            .unwrap()
    }

    #[tokio::test]
    async fn head_extractors() {
        let router = router();
        assert_eq!(get(&router, "/one/7").await.body, "id=7");
        assert_eq!(get(&router, "/two/x%20y/-3").await.body, "a=x y b=-3");
        assert_eq!(
            get(&router, "/file/report.tar.gz").await.body,
            "report|tar.gz"
        );
        let bad = get(&router, "/one/seven").await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert!(
            bad.body.contains("`id`") && bad.body.contains("seven"),
            "{}",
            bad.body
        );
        assert_eq!(
            get(&router, "/page?page=2&q=a+b%21").await.body,
            "page=2 q=Some(\"a b!\")"
        );
        assert_eq!(get(&router, "/page?page=3").await.body, "page=3 q=None");
        let missing = get(&router, "/page").await;
        assert_eq!(missing.status, StatusCode::BAD_REQUEST);
        assert!(missing.body.contains("page"), "{}", missing.body);
        let request = Request::get("/auth")
            .header(header::AUTHORIZATION, "Bearer t")
            .body(String::new())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(
            response.into_body().collect().await.unwrap().to_bytes(),
            "auth=Bearer t"
        );
        let no_auth = get(&router, "/auth").await;
        assert_eq!(no_auth.status, StatusCode::BAD_REQUEST);
        assert!(no_auth.body.contains("authorization"), "{}", no_auth.body);
        assert_eq!(get(&router, "/maybe").await.body, "present=false");
        assert_eq!(get(&router, "/state").await.body, "shared GET /state 0");
        // State the router was not given: a fault of the application, 500,
        // and the log names the type asked for.
        let log = Log::capture();
        let no_state = get(&router, "/no-state").await;
        assert_eq!(no_state.status, StatusCode::INTERNAL_SERVER_ERROR);
        let logged = log.take();
        assert!(
            logged.len() == 1 && logged[0].contains("state=\"u64\""),
            "{logged:?}"
        );
    }

    #[tokio::test]
    async fn body_extractors_limits_and_content_types() {
        let router = router();
        let good = send_body(
            &router,
            "/json",
            Some("application/json"),
            r#"{"id":1,"name":"a"}"#,
        )
        .await;
        assert_eq!(
            (good.status, good.body.as_str()),
            (StatusCode::OK, r#"{"id":2,"name":"a"}"#)
        );
        assert_eq!(good.headers[header::CONTENT_TYPE], "application/json");
        let vendor = send_body(
            &router,
            "/json",
            Some("application/vnd.x+json; charset=utf-8"),
            r#"{"id":1,"name":"a"}"#,
        )
        .await;
        assert_eq!(vendor.status, StatusCode::OK);
        let upper = send_body(
            &router,
            "/json",
            Some("Application/JSON"),
            r#"{"id":1,"name":"a"}"#,
        )
        .await;
        assert_eq!(
            upper.status,
            StatusCode::OK,
            "media types are case-insensitive"
        );
        let almost = send_body(
            &router,
            "/json",
            Some("application/jsonx"),
            r#"{"id":1,"name":"a"}"#,
        )
        .await;
        assert_eq!(almost.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let malformed = send_body(&router, "/json", Some("application/json"), r#"{"id":1,"#).await;
        assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
        assert!(
            malformed
                .body
                .starts_with("invalid JSON body: EOF while parsing"),
            "{}",
            malformed.body
        );
        let wrong_shape =
            send_body(&router, "/json", Some("application/json"), r#"{"id":"x"}"#).await;
        assert_eq!(wrong_shape.status, StatusCode::BAD_REQUEST);
        assert!(
            wrong_shape.body.contains("invalid type"),
            "{}",
            wrong_shape.body
        );
        let wrong_type = send_body(
            &router,
            "/json",
            Some("text/plain"),
            r#"{"id":1,"name":"a"}"#,
        )
        .await;
        assert_eq!(wrong_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let no_type = send_body(&router, "/json", None, r#"{"id":1,"name":"a"}"#).await;
        assert_eq!(no_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let big = format!(r#"{{"id":1,"name":"{}"}}"#, "x".repeat(100));
        let too_large = send_body(&router, "/json", Some("application/json"), &big).await;
        assert_eq!(too_large.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(too_large.body.contains("64 bytes"), "{}", too_large.body);
        assert_eq!(
            send_body(&router, "/text", None, "héllo").await.body,
            "5 chars"
        );
        assert_eq!(
            send_body(&router, "/bytes", None, "héllo").await.body,
            "6 bytes"
        );
        assert_eq!(
            send_body(&router, "/bytes", None, &"x".repeat(65))
                .await
                .status,
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }

    async fn json_body<T: serde::Serialize>(value: T) -> (Option<HeaderValue>, Bytes) {
        let response = pronghorn::IntoResponse::into_response(Json(value));
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (content_type, body)
    }

    /// Serialises as the JSON text of `Json(self.0)` answered as a response:
    /// a JSON answer made while another is being made.
    struct Nested(Vec<u32>);

    impl serde::Serialize for Nested {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let inner = pronghorn::IntoResponse::into_response(Json(&self.0));
            let body = futures_util::FutureExt::now_or_never(inner.into_body().collect())
                .expect("a JSON body is ready at once")
                .unwrap()
                .to_bytes();
            serializer.serialize_str(std::str::from_utf8(&body).unwrap())
        }
    }

    #[tokio::test]
    async fn json_answers_whatever_came_before_and_inside_them() {
        let item = Item {
            id: 7,
            name: "é\"\n".into(),
        };
        let (content_type, body) = json_body(&item).await;
        assert_eq!(content_type.unwrap(), "application/json");
        assert_eq!(body, serde_json::to_vec(&item).unwrap());
        // A large answer, then a small one, each whole.
        let large: Vec<String> = (0..20_000).map(|i| format!("item {i}")).collect();
        let (_, body) = json_body(&large).await;
        assert_eq!(body, serde_json::to_vec(&large).unwrap());
        assert_eq!(json_body([1, 2]).await.1, "[1,2]");
        // An answer made inside another's serialisation.
        let nested = json_body(vec![Nested(vec![1, 2]), Nested(vec![])]).await.1;
        assert_eq!(nested, r#"["[1,2]","[]"]"#);
        assert_eq!(json_body(Nested(vec![3])).await.1, r#""[3]""#);
        // An answer that fails to serialise is a 500, and the next is whole.
        let mut bad = std::collections::HashMap::new();
        bad.insert(vec![1u8], 1);
        let failed = pronghorn::IntoResponse::into_response(Json(bad));
        assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(json_body("ok").await.1, r#""ok""#);
    }
}

/// A body still arriving is polled once inside `call`, where it is read in
/// place, and next at the response future's first poll, with the caller's
/// waker, which its arrival then wakes: nothing polls it in between.
#[test]
fn a_body_still_arriving_is_polled_once_in_call_then_with_the_callers_waker() {
    let gate = Gate::default();
    let arriving = gate.clone();
    let body = http_body_util::StreamBody::new(futures_util::stream::once(async move {
        arriving.wait().await;
        Ok::<_, std::convert::Infallible>(http_body::Frame::data(bytes::Bytes::from_static(
            b"hello",
        )))
    }))
    .boxed();
    let mut router = Router::new()
        .post("/echo", |body: bytes::Bytes| body)
        .compile()
        .unwrap();
    let mut future = pin!(router.call(Request::post("/echo").body(body).unwrap()));
    assert_eq!(gate.polls(), 1, "the body is read in place inside `call`");
    let (wakes, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(gate.polls(), 2, "polled again at the future's first poll");
    gate.open();
    assert_eq!(wakes.wakes(), 1, "the arrival wakes the caller's task");
    let Poll::Ready(Ok(response)) = future.as_mut().poll(&mut cx) else {
        panic!("the answer is ready once the body has arrived");
    };
    assert_eq!(gate.polls(), 3);
    assert_eq!(response.status(), StatusCode::OK);
    let Poll::Ready(Ok(body)) = poll_once(pin!(response.into_body().collect())) else {
        panic!("the echoed body is complete");
    };
    assert_eq!(body.to_bytes(), "hello");
}

/// After a prefix that suspended, the handler runs in the response future:
/// its future is polled once there, with the caller's waker, and the
/// handler's answer comes when that waker is woken.
#[test]
fn a_handler_after_a_suspended_prefix_is_polled_once_per_wake() {
    let (prefix_gate, handler_gate) = (Gate::default(), Gate::default());
    let (prefix_wait, handler_wait) = (prefix_gate.clone(), handler_gate.clone());
    let mut router = Router::new()
        .get("/slow", move || {
            let gate = handler_wait.clone();
            async move {
                gate.wait().await;
                "ok"
            }
        })
        .prefix("/slow", move |request: Req, _: &mut Route<'_>| {
            let gate = prefix_wait.clone();
            async move {
                gate.wait().await;
                request
            }
        })
        .compile()
        .unwrap();
    let mut future = pin!(router.call(Request::get("/slow").body(String::new()).unwrap()));
    let (wakes, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(handler_gate.polls(), 0, "the prefix has not answered");
    prefix_gate.open();
    assert_eq!(wakes.wakes(), 1);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        handler_gate.polls(),
        1,
        "the handler's future is polled once"
    );
    handler_gate.open();
    assert_eq!(
        wakes.wakes(),
        2,
        "the handler's wait wakes the caller's task"
    );
    let Poll::Ready(Ok(response)) = future.as_mut().poll(&mut cx) else {
        panic!("the handler has answered");
    };
    assert_eq!(handler_gate.polls(), 2);
    assert_eq!(response.status(), StatusCode::OK);
}

/// A `Handler` implemented by hand that answers with a future it has not
/// polled: the router polls it inside `call` and again with the caller's
/// waker, so its wake-up is not lost.
#[test]
fn a_hand_written_handler_that_does_not_poll_its_future_is_woken() {
    use pronghorn::handler::{BoxFuture, Handler, RouteContext};

    #[derive(Clone)]
    struct Waits(Gate);

    impl Handler<String, ()> for Waits {
        fn call(
            &self,
            _: Req,
            _: RouteContext<'_>,
            _: &mut Context<'_>,
        ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
            let wait = self.0.wait();
            Step::Pending(Box::pin(async move {
                wait.await;
                Response::new(Body::from("late"))
            }))
        }
    }

    let gate = Gate::default();
    let mut router = Router::new()
        .get("/hand", Waits(gate.clone()))
        .compile()
        .unwrap();
    let mut future = pin!(router.call(Request::get("/hand").body(String::new()).unwrap()));
    assert_eq!(gate.polls(), 1, "polled by the router inside `call`");
    let (wakes, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    gate.open();
    assert_eq!(wakes.wakes(), 1, "the caller's waker was registered");
    assert!(future.as_mut().poll(&mut cx).is_ready());
}

#[tokio::test]
async fn hooks_read_raw_parameters_where_decoding_fails() {
    let events = Events::default();
    let seen = events.clone();
    let router = Router::new()
        .get("/d/{v}", || "handler")
        .prefix("/d/{v}", move |request: Req, route: &mut Route<'_>| {
            let params = route.params();
            seen.push(format!(
                "raw={} decoded={:?}",
                params.get_raw("v").unwrap(),
                params.get("v").unwrap().is_ok()
            ));
            request
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/d/%ZZ").await.body, "handler");
    assert_eq!(events.take(), ["raw=%ZZ decoded=false"]);
}

#[test]
fn the_router_and_its_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<CompiledRouter<String>>();
    send_sync::<CompiledRouter<hyper::body::Incoming>>();
    send::<pronghorn::router::ResponseFuture<String>>();
    send::<pronghorn::router::ResponseFuture<hyper::body::Incoming>>();
    send_sync::<RouteError>();
    send_sync::<Failure>();
}

#[cfg(feature = "axum")]
#[tokio::test]
async fn axum_responses_are_accepted() {
    use pronghorn::handler::Axum;
    let router = Router::new()
        .get("/response", || {
            axum::response::IntoResponse::into_response((StatusCode::CREATED, "from axum"))
        })
        .get("/json", || {
            Axum(axum::Json(serde_json::json!({"ok": true})))
        })
        .get("/redirect", || Axum(axum::response::Redirect::to("/json")))
        .compile()
        .unwrap();
    let created = get(&router, "/response").await;
    assert_eq!(
        (created.status, created.body.as_str()),
        (StatusCode::CREATED, "from axum")
    );
    let json = get(&router, "/json").await;
    assert_eq!(
        (json.status, json.body.as_str()),
        (StatusCode::OK, r#"{"ok":true}"#)
    );
    assert_eq!(json.headers[header::CONTENT_TYPE], "application/json");
    let redirect = get(&router, "/redirect").await;
    assert_eq!(
        (
            redirect.status,
            redirect.headers[header::LOCATION].to_str().unwrap()
        ),
        (StatusCode::SEE_OTHER, "/json")
    );
}

/// Whether the query of `uri` names `step` (`?a&b`).
fn asks(uri: &http::Uri, step: &str) -> bool {
    uri.query()
        .is_some_and(|query| query.split('&').any(|asked| asked == step))
}

/// Pending on its first two polls: the router polls a suspended step once
/// more inside `call`, and this one is still pending on the first poll of
/// the response future.
async fn suspend() {
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

/// A step's answer `value`, recording `event` as it answers: at once, or,
/// when `asked`, after suspending.
fn step_answer<T>(
    asked: bool,
    events: &Events,
    event: String,
    value: T,
) -> Step<T, impl Future<Output = T> + use<T>> {
    let events = events.clone();
    if asked {
        Step::Pending(async move {
            suspend().await;
            events.push(event);
            value
        })
    } else {
        events.push(event);
        Step::Ready(value)
    }
}

/// Steps that suspend, wherever they are: the request is answered the
/// same, its steps run in the same order, and staged headers still go out,
/// as when every step answers at once (which answers on the first poll).
#[tokio::test]
async fn suspending_steps_anywhere_give_the_same_answer_and_order() {
    use http::Uri;

    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let mut router = Router::new()
        .get("/steps", move |uri: Uri| {
            step_answer(asks(&uri, "handler"), &e1, "handler".into(), "ok")
        })
        .prefix("/", |_: &mut Req, route: &mut Route<'_>| {
            route.stage_header(
                header::HeaderName::from_static("x-staged"),
                HeaderValue::from_static("yes"),
            );
            ControlFlow::<StatusCode>::Continue(())
        });
    for name in ["prefix-1", "prefix-2"] {
        let events = e2.clone();
        router = router.prefix("/steps", move |request: Req, route: &mut Route<'_>| {
            step_answer(asks(route.uri(), name), &events, name.into(), request)
        });
    }
    for name in ["postfix-1", "postfix-2"] {
        let events = e3.clone();
        router = router.postfix(
            "/steps",
            move |route: &Route<'_>, mut response: Response<Body>| {
                response
                    .headers_mut()
                    .insert(name, HeaderValue::from_static("ran"));
                step_answer(asks(route.uri(), name), &events, name.into(), response)
            },
        );
    }
    for name in ["monitor-1", "monitor-2"] {
        let events = events.clone();
        router = router.monitor("/steps", move |x: &RouteExchange<'_>| {
            let seen = format!("{name} {}", x.status().unwrap().as_u16());
            step_answer(asks(x.uri(), name), &events, seen, ())
        });
    }
    let router = router.compile().unwrap();

    let cases = [
        "",
        "prefix-1",
        "prefix-2",
        "handler",
        "postfix-1",
        "postfix-2",
        "monitor-1",
        "monitor-2",
        // A step after a handler that waited suspends too.
        "handler&postfix-2",
        "handler&monitor-1",
        "prefix-1&handler&postfix-1&monitor-2",
    ];
    for case in cases {
        let path = format!("/steps?{case}");
        let call = router
            .clone()
            .oneshot(Request::get(path.as_str()).body(String::new()).unwrap());
        assert_eq!(
            poll_once(pin!(call)).is_ready(),
            case.is_empty(),
            "{case}: only a synchronous request answers on the first poll"
        );
        events.take();
        let answer = get(&router, &path).await;
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (StatusCode::OK, "ok"),
            "{case}"
        );
        for name in ["x-staged", "postfix-1", "postfix-2"] {
            assert!(answer.headers.contains_key(name), "{case}: {name}");
        }
        assert_eq!(
            events.take(),
            [
                "prefix-1",
                "prefix-2",
                "handler",
                "postfix-1",
                "postfix-2",
                "monitor-1 200",
                "monitor-2 200"
            ],
            "{case}"
        );
    }
}

/// A panic in a prefix, the handler or a postfix answers 500, names its
/// step to the monitors, and keeps the staged headers; the same after a
/// handler that waited.
#[tokio::test]
async fn a_panic_names_its_step_and_keeps_the_staged_headers() {
    let failures = Events::default();
    let seen = failures.clone();
    let router = Router::new()
        .get("/p", |uri: http::Uri| {
            let fails = asks(&uri, "handler");
            if asks(&uri, "wait") {
                Step::Pending(async move {
                    suspend().await;
                    assert!(!fails, "handler boom");
                    "ok"
                })
            } else {
                assert!(!fails, "handler boom");
                Step::Ready("ok")
            }
        })
        .prefix("/", |request: &mut Req, route: &mut Route<'_>| {
            route.stage_header(
                header::HeaderName::from_static("x-staged"),
                HeaderValue::from_static("yes"),
            );
            assert!(!asks(request.uri(), "prefix"), "prefix boom");
            ControlFlow::<StatusCode>::Continue(())
        })
        .postfix("/", |route: &Route<'_>, _: &mut Response<Body>| {
            assert!(!asks(route.uri(), "postfix"), "postfix boom");
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            let failure = match x.error() {
                Some(Failure::Panic { step, message }) => format!("{step}: {message}"),
                Some(other) => other.to_string(),
                None => "none".to_owned(),
            };
            seen.push(format!("{} {failure}", x.status().unwrap().as_u16()));
        })
        .compile()
        .unwrap();
    let log = Log::capture();
    for wait in ["", "&wait"] {
        for step in ["prefix", "handler", "postfix"] {
            let answer = get(&router, &format!("/p?{step}{wait}")).await;
            assert_eq!(
                answer.status,
                StatusCode::INTERNAL_SERVER_ERROR,
                "{step}{wait}"
            );
            assert_eq!(answer.headers["x-staged"], "yes", "{step}{wait}");
            assert_eq!(failures.take(), [format!("500 {step}: {step} boom")]);
            // The log names the step and the panic's message too.
            let logged = log.take();
            let named = format!("step=\"{step}\" panic={step} boom");
            assert!(
                logged.len() == 1 && logged[0].contains(&named),
                "{step}{wait}: {logged:?}"
            );
        }
        assert_eq!(get(&router, &format!("/p?{wait}")).await.body, "ok");
        assert_eq!(failures.take(), ["200 none"]);
    }
}

/// A header that is not valid in a handler's answer gives 500, and the log
/// says which header, and whether its name or its value.
#[tokio::test]
async fn an_invalid_answer_header_is_a_500_whose_log_names_it() {
    let router = Router::new()
        .get("/value", || {
            ([("x-fine", "yes"), ("x-bad", "two\nlines")], "body")
        })
        .get("/name", || ([("bad name", "value")], "body"))
        .compile()
        .unwrap();
    let log = Log::capture();
    for (path, said) in [
        ("/value", "the value of response header 1 (of 2"),
        ("/name", "the name of response header 0 (of 1"),
    ] {
        let answer = get(&router, path).await;
        assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
        assert!(!answer.headers.contains_key("x-fine"), "{path}");
        let logged = log.take();
        assert!(
            logged.len() == 1 && logged[0].contains(said),
            "{path}: {logged:?}"
        );
    }
}
