//! Hooks: the subtree they cover, their order, early answers, replacement and isolation of monitors.

use super::*;

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

/// An asynchronous prefix reads its parameters before its await and
/// stages headers after it with `Staged`, letting the request through or
/// answering; a synchronous prefix may answer `Staged` too.
#[tokio::test]
async fn an_asynchronous_prefix_stages_headers_after_its_await() {
    use pronghorn::router::Staged;

    let header = |value: &'static str| {
        (
            header::HeaderName::from_static("x-staged"),
            HeaderValue::from_static(value),
        )
    };
    let router = Router::new()
        .get("/async/{id}", || "through")
        .get("/sync", || "through")
        .prefix("/async/{id}", move |request: Req, route: &mut Route<'_>| {
            let id = route.params().get_raw("id").unwrap_or_default().to_owned();
            async move {
                tokio::task::yield_now().await;
                let (name, value) = header(if id == "7" { "seven" } else { "other" });
                if id == "0" {
                    return Staged::new(ControlFlow::Break(StatusCode::FORBIDDEN))
                        .header(name, value);
                }
                Staged::new(ControlFlow::Continue(request)).header(name, value)
            }
        })
        .prefix("/sync", move |request: Req, _: &mut Route<'_>| {
            let (name, value) = header("sync");
            Staged::new(request).header(name, value)
        })
        .compile()
        .unwrap();
    let seven = get(&router, "/async/7").await;
    assert_eq!(
        (seven.status, seven.body.as_str()),
        (StatusCode::OK, "through")
    );
    assert_eq!(seven.headers["x-staged"], "seven");
    let denied = get(&router, "/async/0").await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    assert_eq!(denied.headers["x-staged"], "other");
    assert_eq!(get(&router, "/sync").await.headers["x-staged"], "sync");
}

/// A prefix that looks at the request where it lies answers `()` to let
/// it through, or a `Result` whose error answers in the handler's stead.
#[tokio::test]
async fn a_prefix_in_place_answers_unit_or_a_result() {
    let router = Router::new()
        .get("/admin", |headers: http::HeaderMap| {
            headers["x-seen"].to_str().unwrap().to_owned()
        })
        .prefix("/", |request: &mut Request<Body>, _: &mut Route<'_>| {
            (request.headers_mut()).insert("x-seen", http::HeaderValue::from_static("yes"));
        })
        .prefix(
            "/admin",
            |request: &mut Request<Body>, _: &mut Route<'_>| match request
                .headers()
                .contains_key("x-admin")
            {
                true => Ok(()),
                false => Err(StatusCode::FORBIDDEN),
            },
        )
        .compile()
        .unwrap();
    let ask = |admin: bool| {
        let mut request = Request::get("/admin");
        if admin {
            request = request.header("x-admin", "1");
        }
        router.clone().oneshot(request.body(String::new()).unwrap())
    };
    let allowed = ask(true).await.unwrap();
    assert_eq!(allowed.status(), StatusCode::OK);
    let body = allowed.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "yes");
    assert_eq!(ask(false).await.unwrap().status(), StatusCode::FORBIDDEN);
}

/// A scope of several methods runs its hook for each of them (a GET among
/// them for HEAD too), and for no other.
#[tokio::test]
async fn a_scope_of_several_methods_covers_each_of_them() {
    let events = Events::default();
    let router = Router::new()
        .get("/items", || "list")
        .post("/items", || "made")
        .delete("/items", || "gone")
        .put("/items", || "kept")
        .prefix(
            Scope::new("/items").methods([Method::POST, Method::DELETE]),
            mark(&events, "writes"),
        )
        .prefix(
            Scope::new("/items").method(Method::GET).method(Method::PUT),
            mark(&events, "get or put"),
        )
        .compile()
        .unwrap();
    for method in [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
    ] {
        assert_eq!(send(&router, method, "/items").await.status, StatusCode::OK);
    }
    assert_eq!(
        events.take(),
        ["get or put", "get or put", "writes", "get or put", "writes"]
    );
}

/// A prefix may take head extractors as a handler does: the router's
/// state, the query, a header, its own parameters; one that refuses
/// answers the request, in the router's shape of rejections.
#[tokio::test]
async fn a_prefix_takes_head_extractors_as_a_handler_does() {
    use pronghorn::handler::{Query, Rejection, State};

    #[derive(serde::Deserialize)]
    struct Token {
        token: String,
    }
    #[derive(Clone)]
    struct Secret(&'static str);
    let router = Router::new()
        .get("/teams/{team}/report", || "report")
        .state(Secret("s3cret"))
        .prefix(
            "/teams/{team}",
            |State(secret): State<Secret>, Query(query): Query<Token>, Path(team): Path<String>| {
                match query.token == secret.0 && team != "closed" {
                    true => Ok(()),
                    false => Err(StatusCode::FORBIDDEN),
                }
            },
        )
        .rejection(|rejection: Rejection| (rejection.status(), "shaped"))
        .compile()
        .unwrap();
    let answer = get(&router, "/teams/blue/report?token=s3cret").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::OK, "report")
    );
    let wrong = get(&router, "/teams/blue/report?token=guess").await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    let closed = get(&router, "/teams/closed/report?token=s3cret").await;
    assert_eq!(closed.status, StatusCode::FORBIDDEN);
    let missing = get(&router, "/teams/blue/report").await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (StatusCode::BAD_REQUEST, "shaped")
    );
}
