//! HEAD, 405 with `Allow`, 404, and OPTIONS (automatic, or answered by a prefix).

use super::*;

#[tokio::test]
async fn head_405_404_and_options() {
    let router = Router::new()
        .get("/g", || "twelve bytes")
        .post("/g", || "posted")
        .route(
            "/h",
            pronghorn::router::head(|| (StatusCode::ACCEPTED, "explicit head")),
        )
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

/// OPTIONS on a path no route serves runs the prefixes over it, so that a
/// preflight there is answered; 404 only if none answers.
#[tokio::test]
async fn options_on_a_path_no_route_serves_runs_the_prefixes_over_it() {
    let router = Router::new()
        .get("/api/items", || "items")
        .prefix(
            Scope::new("/api").method(Method::OPTIONS),
            |request: Req, _: &mut Route<'_>| {
                if request.headers().contains_key(header::ORIGIN) {
                    ControlFlow::Break((
                        [(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")],
                        StatusCode::NO_CONTENT,
                    ))
                } else {
                    ControlFlow::Continue(request)
                }
            },
        )
        .compile()
        .unwrap();
    let ask = |origin: bool| {
        let mut request = Request::options("/api/unrouted");
        if origin {
            request = request.header(header::ORIGIN, "https://example.com");
        }
        router.clone().oneshot(request.body(String::new()).unwrap())
    };
    let preflight = ask(true).await.unwrap();
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        preflight.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "*"
    );
    let plain = ask(false).await.unwrap();
    assert_eq!(plain.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        send(&router, Method::OPTIONS, "/elsewhere").await.status,
        StatusCode::NOT_FOUND,
        "no prefix covers it"
    );
}

/// A monitor that records each request's status and pattern in `seen`.
fn status_and_pattern(seen: &Events) -> impl Fn(&RouteExchange<'_>) + Send + Sync + 'static {
    let seen = seen.clone();
    move |exchange: &RouteExchange<'_>| {
        seen.push(format!(
            "{} {:?}",
            exchange.status().unwrap().as_u16(),
            exchange.pattern()
        ));
    }
}

/// Monitors are told the pattern the path matched for an automatic
/// OPTIONS answer, none for 405 and 404.
#[tokio::test]
async fn monitors_see_the_pattern_of_an_automatic_options_answer() {
    let seen = Events::default();
    let router = Router::new()
        .get("/items/{id}", || "item")
        .monitor("/", status_and_pattern(&seen))
        .compile()
        .unwrap();
    send(&router, Method::OPTIONS, "/items/7").await;
    send(&router, Method::POST, "/items/7").await;
    send(&router, Method::GET, "/nowhere").await;
    assert_eq!(
        seen.take(),
        [r#"204 Some("/items/{id}")"#, "405 None", "404 None"]
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

/// A plain GET to a WebSocket route is 426, and monitors are told the
/// route's pattern.
#[cfg(feature = "ws")]
#[tokio::test]
async fn monitors_see_the_pattern_of_a_426() {
    let seen = Events::default();
    let router = Router::new()
        .websocket("/chat/{room}", |_: pronghorn::ws::WebSocket| async {})
        .monitor("/", status_and_pattern(&seen))
        .compile()
        .unwrap();
    send(&router, Method::GET, "/chat/lobby").await;
    assert_eq!(seen.take(), [r#"426 Some("/chat/{room}")"#]);
}

/// A request target that is not a path, `OPTIONS *` or a CONNECT's
/// `host:port`, names no route, not even a catch-all at the root: 404, and
/// for OPTIONS the prefixes over the root still run first.
#[tokio::test]
async fn a_request_target_that_is_not_a_path_matches_no_route() {
    let router = Router::new()
        .any("/", || "root")
        .any("/{*rest}", |Path(rest): Path<String>| rest)
        .compile()
        .unwrap();
    for (method, target) in [(Method::OPTIONS, "*"), (Method::CONNECT, "example.com:443")] {
        let answer = send(&router, method.clone(), target).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method} {target}");
        assert!(router.at(&method, target).is_none(), "{method} {target}");
    }

    let answering = Router::new()
        .any("/{*rest}", |Path(rest): Path<String>| rest)
        .prefix((Method::OPTIONS, "/"), |_: &mut Req, _: &mut Route<'_>| {
            ControlFlow::Break(StatusCode::NO_CONTENT)
        })
        .compile()
        .unwrap();
    let answer = send(&answering, Method::OPTIONS, "*").await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
}

/// `method_not_allowed` answers in the 405's stead, with the router's
/// `Allow` and the hooks over the path around it; OPTIONS keeps its
/// automatic answer; two are an error, in one router or in a
/// `Reloadable`'s modules.
#[tokio::test]
async fn a_method_not_allowed_handler_answers_the_405s() {
    use pronghorn::router::Reloadable;
    let answer = || (StatusCode::METHOD_NOT_ALLOWED, "try another method");
    let router = Router::new()
        .get("/items", || "items")
        .method_not_allowed(answer)
        .prefix("/", |_: &mut Request<Body>, route: &mut Route<'_>| {
            route.stage_header(
                http::HeaderName::from_static("x-seen"),
                HeaderValue::from_static("1"),
            );
        })
        .compile()
        .unwrap();
    let refused = send(&router, Method::DELETE, "/items").await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(refused.body, "try another method");
    assert_eq!(refused.headers[header::ALLOW], "GET, HEAD");
    assert_eq!(refused.headers["x-seen"], "1");
    let options = send(&router, Method::OPTIONS, "/items").await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    assert_eq!(get(&router, "/nowhere").await.status, StatusCode::NOT_FOUND);

    let twice = Router::new()
        .method_not_allowed(answer)
        .merge(Router::new().method_not_allowed(answer))
        .compile()
        .unwrap_err();
    assert!(
        matches!(twice, RouteError::DuplicateMethodNotAllowed),
        "{twice}"
    );

    let app = Reloadable::new(Router::new().get("/items", || "items")).unwrap();
    app.register("405", Router::new().method_not_allowed(answer))
        .unwrap();
    let again = app.register("other", Router::new().method_not_allowed(answer));
    assert!(matches!(again, Err(RouteError::DuplicateMethodNotAllowed)));
    let live = app.current();
    assert_eq!(
        send(&live, Method::DELETE, "/items").await.body,
        "try another method"
    );
    app.unregister("405").unwrap();
    let fixed = send(&app.current(), Method::DELETE, "/items").await;
    assert_eq!(fixed.body, "Method Not Allowed");
}

/// A value that is its own answer is a handler, as in axum: each request
/// gets a clone of it, whatever the path's parameters.
#[tokio::test]
async fn a_value_that_is_an_answer_is_a_handler() {
    let router = Router::new()
        .route(
            "/items",
            pronghorn::router::post((StatusCode::CREATED, "made")).get("all items"),
        )
        .get(
            "/users/{id}",
            ([(header::CACHE_CONTROL, "no-store")], "a user"),
        )
        .compile()
        .unwrap();
    for _ in 0..2 {
        let made = router
            .clone()
            .oneshot(Request::post("/items").body(String::new()).unwrap())
            .await
            .unwrap();
        assert_eq!(made.status(), StatusCode::CREATED);
        assert_eq!(made.into_body().collect().await.unwrap().to_bytes(), "made");
    }
    let all = router
        .clone()
        .oneshot(Request::get("/items").body(String::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(
        all.into_body().collect().await.unwrap().to_bytes(),
        "all items"
    );
    let user = router
        .oneshot(Request::get("/users/7").body(String::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(user.headers()[header::CACHE_CONTROL], "no-store");
    assert_eq!(
        user.into_body().collect().await.unwrap().to_bytes(),
        "a user"
    );
}

/// axum's `MethodRouter` as a value of its own: a fallback, a service
/// called with `oneshot`, with its own fallback and state.
#[tokio::test]
async fn a_method_router_is_a_fallback_a_service_and_has_its_own_fallback_and_state() {
    use pronghorn::{handler::State, router::get};

    // axum's `fallback::two`.
    let app = Router::new()
        .route("/first", get(|| async {}))
        .route("/second", get(|| async {}))
        .fallback(get(|| async { "fallback" }))
        .compile()
        .unwrap();
    let res = get_path(&app, "/does-not-exist").await;
    assert_eq!(
        (res.status, res.body.as_str()),
        (StatusCode::OK, "fallback")
    );
    let refused = send(&app, Method::POST, "/does-not-exist").await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);

    // A method router called as a service, on any path.
    let service = get(|| async { "hi" });
    let request = Request::get("/a/b").body(String::new()).unwrap();
    assert_eq!(
        service.clone().oneshot(request).await.unwrap().status(),
        StatusCode::OK
    );
    let request = Request::delete("/").body(String::new()).unwrap();
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()[header::ALLOW], "GET, HEAD");

    // Its own fallback, and its own state.
    let app = Router::new()
        .route(
            "/",
            get(|State(name): State<&'static str>| async move { name })
                .fallback(|| async { "index fallback" })
                .state("ada"),
        )
        .compile()
        .unwrap();
    assert_eq!(get_path(&app, "/").await.body, "ada");
    assert_eq!(send(&app, Method::POST, "/").await.body, "index fallback");
}

async fn get_path(router: &CompiledRouter, path: &str) -> Answer {
    send(router, Method::GET, path).await
}

/// axum's `method_routing` tests of a method router served as a service:
/// `accessing_state`, `fallback_accessing_state`, `merge_accessing_state`
/// and `method_filter`, with their assertions.
mod as_axum_s {
    use std::convert::Infallible;

    use pronghorn::{
        Body,
        handler::State,
        router::{MethodFilter, MethodRouter, any, get, post},
    };
    use tower::Service;

    use super::*;

    async fn call<S>(method: Method, svc: &mut S) -> (StatusCode, HeaderMap, String)
    where
        S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
    {
        let request = Request::builder()
            .uri("/")
            .method(method)
            .body(Body::empty())
            .unwrap();
        let response = svc.ready().await.unwrap().call(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap();
        (parts.status, parts.headers, body)
    }

    #[tokio::test]
    async fn accessing_state() {
        let mut svc = MethodRouter::new()
            .get(|State(state): State<&'static str>| async move { state })
            .with_state("state");

        let (status, _, text) = call(Method::GET, &mut svc).await;

        assert_eq!(status, StatusCode::OK);
        assert_eq!(text, "state");
    }

    #[tokio::test]
    async fn fallback_accessing_state() {
        let mut svc = MethodRouter::new()
            .fallback(|State(state): State<&'static str>| async move { state })
            .with_state("state");

        let (status, _, text) = call(Method::GET, &mut svc).await;

        assert_eq!(status, StatusCode::OK);
        assert_eq!(text, "state");
    }

    #[tokio::test]
    async fn merge_accessing_state() {
        let one = get(|State(state): State<&'static str>| async move { state });
        let two = post(|State(state): State<&'static str>| async move { state });

        let mut svc = one.merge(two).with_state("state");

        let (status, _, text) = call(Method::GET, &mut svc).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(text, "state");

        let (status, _, text) = call(Method::POST, &mut svc).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(text, "state");
    }

    #[test]
    fn method_filter() {
        let router: MethodRouter = get(|| async {});
        assert_eq!(router.method_filter(), Some(MethodFilter::GET));

        let router: MethodRouter = get(|| async {}).head(|| async {}).post(|| async {});
        assert_eq!(
            router.method_filter(),
            Some(
                MethodFilter::GET
                    .or(MethodFilter::HEAD)
                    .or(MethodFilter::POST)
            )
        );

        let router: MethodRouter = any(|| async {});
        assert_eq!(router.method_filter(), None);
    }

    #[tokio::test]
    async fn a_fallback_service_answers_the_methods_no_handler_takes() {
        let teapot = tower::service_fn(|_: Request<Body>| async {
            Ok::<_, Infallible>((StatusCode::IM_A_TEAPOT, "teapot").into_response())
        });
        let mut svc: MethodRouter = get(|| async { "got" }).fallback_service(teapot);

        assert_eq!(call(Method::GET, &mut svc).await.2, "got");
        let (status, _, text) = call(Method::DELETE, &mut svc).await;
        assert_eq!((status, text.as_str()), (StatusCode::IM_A_TEAPOT, "teapot"));
    }

    #[tokio::test]
    async fn methods_merged_twice_are_refused_where_they_are_routed() {
        let twice = get(|| async { "one" }).merge(get(|| async { "two" }));
        let error = Router::new().route("/", twice).compile().unwrap_err();
        assert!(
            matches!(error, pronghorn::RouteError::DuplicateRoute { .. }),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_router_resets_its_fallback_reports_its_routes_and_lends_itself_as_a_service() {
        let mut app: Router = Router::new()
            .route("/", get(|| async { "home" }))
            .fallback(|| async { "anything" })
            .reset_fallback();
        assert!(app.has_routes());
        assert!(!Router::<pronghorn::handler::ByType>::new().has_routes());

        assert_eq!(call(Method::GET, &mut app.as_service()).await.2, "home");
        let request = Request::get("/nowhere").body(Body::empty()).unwrap();
        let response = app
            .as_service()
            .ready()
            .await
            .unwrap()
            .call(request)
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }
}
