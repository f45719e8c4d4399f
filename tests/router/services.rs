//! Tower services inside the router: `route_service`, `nest_service`,
//! `fallback` and `fallback_service`, with the hooks scoped over them.

use super::*;

use std::{
    convert::Infallible,
    sync::{Arc, Mutex},
};

use pronghorn::handler::{MatchedPath, OriginalUri};

/// A service answering what `answer` reads of each request.
fn answering(
    answer: fn(&Request<Body>) -> String,
) -> impl tower::Service<
    Request<Body>,
    Response = Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
+ Send
+ Sync
+ 'static {
    tower::service_fn(move |request: Request<Body>| async move {
        Ok::<_, Infallible>(Response::new(answer(&request)))
    })
}

/// The method and URI a service sees, and the original URI when the
/// router kept one.
fn echo(request: &Request<Body>) -> String {
    let original = request
        .extensions()
        .get::<OriginalUri>()
        .map(|OriginalUri(uri)| format!(" from {uri}"))
        .unwrap_or_default();
    format!("{} {}{original}", request.method(), request.uri())
}

#[tokio::test]
async fn a_routed_service_answers_its_pattern_for_any_method_and_hooks_run_around_it() {
    let router = Router::new()
        .route_service("/svc/{name}", answering(echo))
        .method_service(Method::GET, "/only-get", answering(echo))
        .postfix("/svc", |_: &Route<'_>, response: &mut Response<Body>| {
            response
                .headers_mut()
                .insert("x-post", HeaderValue::from_static("yes"));
        })
        .compile()
        .unwrap();
    let answer = send(&router, Method::DELETE, "/svc/a?q=1").await;
    assert_eq!(answer.body, "DELETE /svc/a?q=1");
    assert_eq!(answer.headers["x-post"], "yes");
    assert_eq!(get(&router, "/only-get").await.body, "GET /only-get");
    let refused = send(&router, Method::POST, "/only-get").await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_nested_service_sees_the_path_below_its_base_with_its_trailing_slash_behind_a_prefix() {
    let router = Router::new()
        .nest_service("/static", answering(echo))
        .prefix("/static", |request: &mut Req, _: &mut Route<'_>| {
            if request.headers().contains_key("authorization") {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(StatusCode::UNAUTHORIZED)
            }
        })
        .compile()
        .unwrap();
    let ask = |path: &str| {
        Request::get(path)
            .header("authorization", "yes")
            .body(String::new())
            .unwrap()
    };
    let answer = |request| async { router.clone().oneshot(request).await.unwrap() };
    let body = |response: Response<Body>| async {
        String::from_utf8(
            response
                .into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .to_vec(),
        )
        .unwrap()
    };
    assert_eq!(
        body(answer(ask("/static/css/app.css?v=2")).await).await,
        "GET /css/app.css?v=2 from /static/css/app.css?v=2"
    );
    assert_eq!(
        body(answer(ask("/static")).await).await,
        "GET / from /static"
    );
    assert_eq!(
        body(answer(ask("/static/")).await).await,
        "GET / from /static/"
    );
    assert_eq!(
        body(answer(ask("/static/docs/?v=2")).await).await,
        "GET /docs/?v=2 from /static/docs/?v=2",
        "a trailing slash marks a directory to the service: it is kept"
    );
    assert_eq!(
        body(answer(ask("//static//docs//a.css")).await).await,
        "GET /docs//a.css from //static//docs//a.css",
        "the path below starts with one slash"
    );
    assert_eq!(
        get(&router, "/static/app.css").await.status,
        StatusCode::UNAUTHORIZED,
        "the prefix runs before the service"
    );
    assert_eq!(
        get(&router, "/elsewhere").await.status,
        StatusCode::NOT_FOUND
    );
}

/// A nested service's redirect to the path it saw with a slash added (as
/// `ServeDir` answers a directory) points at the path the client asked
/// for, base included; its other redirects are left as they are.
#[tokio::test]
async fn a_nested_service_s_trailing_slash_redirect_keeps_the_base() {
    let redirecting = tower::service_fn(|request: Request<Body>| async move {
        let location = match request.uri().path() {
            "/away" => "/login".to_owned(),
            path => match request.uri().query() {
                Some(query) => format!("{path}/?{query}"),
                None => format!("{path}/"),
            },
        };
        let response = Response::builder()
            .status(StatusCode::TEMPORARY_REDIRECT)
            .header(header::LOCATION, location)
            .body(String::new())
            .unwrap();
        Ok::<_, Infallible>(response)
    });
    let router = Router::new()
        .nest_service("/static", redirecting)
        .compile()
        .unwrap();
    for (path, location) in [
        ("/static/docs", "/static/docs/"),
        ("/static/docs?v=2", "/static/docs/?v=2"),
        ("//static//docs", "/static//docs/"),
        ("/static/away", "/login"),
    ] {
        let answer = get(&router, path).await;
        assert_eq!(answer.status, StatusCode::TEMPORARY_REDIRECT, "{path}");
        assert_eq!(answer.headers[header::LOCATION], location, "{path}");
    }
}

#[tokio::test]
async fn a_nested_axum_router_answers_as_a_legacy_module() {
    let legacy = axum::Router::new().route(
        "/users/{id}",
        axum::routing::get(
            |axum::extract::Path(id): axum::extract::Path<u32>| async move {
                format!("legacy user {id}")
            },
        ),
    );
    let router = Router::new()
        .get("/", || "new")
        .nest_service("/v1", legacy)
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/v1/users/7").await.body, "legacy user 7");
    assert_eq!(get(&router, "/").await.body, "new");
}

/// A fallback answers paths no route matches, with the hooks scoped over
/// them; 405 and the automatic OPTIONS stay as they are.
#[tokio::test]
async fn a_fallback_answers_unmatched_paths_and_keeps_405_and_options() {
    let events = Events::default();
    let seen = events.clone();
    let router = Router::new()
        .get("/users", || "users")
        .fallback(|uri: http::Uri| (StatusCode::NOT_FOUND, format!("no page at {uri}")))
        .prefix("/", mark(&events, "prefix"))
        .postfix("/", |_: &Route<'_>, response: &mut Response<Body>| {
            response
                .headers_mut()
                .insert("x-post", HeaderValue::from_static("yes"));
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            seen.push(format!("monitor {:?} {:?}", x.status(), x.pattern()));
        })
        .compile()
        .unwrap();
    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (StatusCode::NOT_FOUND, "no page at /nowhere")
    );
    assert_eq!(missing.headers["x-post"], "yes");
    assert_eq!(
        events.take(),
        ["prefix", "monitor Some(404) None"],
        "hooks run around the fallback"
    );
    let other = send(&router, Method::POST, "/users").await;
    assert_eq!(other.status, StatusCode::METHOD_NOT_ALLOWED);
    let options = send(&router, Method::OPTIONS, "/users").await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    events.take();

    let service = Router::new()
        .fallback_service(answering(echo))
        .compile()
        .unwrap();
    assert_eq!(get(&service, "/any/where").await.body, "GET /any/where");
    let head = send(&service, Method::HEAD, "/x").await;
    assert_eq!((head.status, head.body.as_str()), (StatusCode::OK, ""));
}

/// A nested router keeps its fallback for the paths below its base: the
/// deepest base covering a path answers it, with the base's parameters,
/// the root's the rest; two fallbacks for one base are an error naming it.
#[tokio::test]
async fn a_nested_router_s_fallback_answers_only_below_its_base() {
    let json_404 =
        |OriginalUri(uri): OriginalUri| (StatusCode::NOT_FOUND, format!("api: no {uri}"));
    let v2 = Router::new()
        .get("/users", || "v2 users")
        .fallback(|| (StatusCode::GONE, "v2 is gone"));
    let api = Router::new()
        .get("/users", || "users")
        .nest("/v2", v2)
        .fallback(json_404);
    let teams =
        Router::new().fallback(|Path(team): Path<u32>| format!("no such page for team {team}"));
    let router = Router::new()
        .get("/", || "home")
        .nest("/api", api)
        .nest("/teams/{team}", teams)
        .fallback(|| (StatusCode::NOT_FOUND, "site: not found"))
        .compile()
        .unwrap();
    let answer = |path: &'static str| {
        let router = router.clone();
        async move {
            let answer = get(&router, path).await;
            (answer.status, answer.body)
        }
    };
    assert_eq!(answer("/api/users").await, (StatusCode::OK, "users".into()));
    assert_eq!(
        answer("/api/nope?x=1").await,
        (StatusCode::NOT_FOUND, "api: no /api/nope?x=1".into())
    );
    assert_eq!(
        answer("/api").await,
        (StatusCode::NOT_FOUND, "api: no /api".into()),
        "the base itself is below it"
    );
    assert_eq!(
        answer("/api/v2/nope").await,
        (StatusCode::GONE, "v2 is gone".into()),
        "the deepest base answers"
    );
    assert_eq!(
        answer("/teams/7/x").await,
        (StatusCode::OK, "no such page for team 7".into())
    );
    assert_eq!(
        answer("/apis").await,
        (StatusCode::NOT_FOUND, "site: not found".into())
    );
    assert_eq!(
        answer("/teams").await,
        (StatusCode::NOT_FOUND, "site: not found".into())
    );
    assert_eq!(
        send(&router, Method::POST, "/api/users").await.status,
        StatusCode::METHOD_NOT_ALLOWED,
        "a routed path asked with another method is still 405"
    );

    // Without a root fallback, paths outside every base are 404.
    let router = Router::new()
        .nest("/api", Router::new().fallback(json_404))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/api/x").await.body, "api: no /api/x");
    let outside = get(&router, "/x").await;
    assert_eq!(
        (outside.status, outside.body.as_str()),
        (StatusCode::NOT_FOUND, "Not Found")
    );

    for (case, router, base) in [
        (
            "merged",
            Router::new()
                .fallback(|| "a")
                .merge(Router::new().fallback(|| "b")),
            "/",
        ),
        (
            "nested twice at one base",
            Router::new()
                .nest("/api", Router::new().fallback(|| "a"))
                .nest("/api/", Router::new().fallback(|| "b")),
            "/api",
        ),
    ] {
        let error = router.compile().unwrap_err();
        assert_eq!(
            error,
            RouteError::DuplicateFallback { base: base.into() },
            "{case}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "two fallbacks for the paths below `{base}`: keep one (a router nested or merged there has one of its own)"
            ),
            "{case}"
        );
    }
}

/// The `MatchedPath` among the request's extensions, or `none`.
fn matched_path(request: &Request<Body>) -> String {
    let pattern = request.extensions().get::<MatchedPath>();
    pattern.map_or("none", MatchedPath::as_str).to_owned()
}

/// A mounted service finds the pattern of its route among the request's
/// extensions: the pattern for a routed one, the base for a nested one;
/// a fallback service finds none.
#[tokio::test]
async fn a_mounted_service_reads_the_matched_path_from_the_request() {
    let router = Router::new()
        .route_service("/svc/{name}", answering(matched_path))
        .nest_service("/static", answering(matched_path))
        .nest(
            "/api",
            Router::new().nest_service("/v1", answering(matched_path)),
        )
        .fallback_service(answering(matched_path))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/svc/a").await.body, "/svc/{name}");
    assert_eq!(get(&router, "/static/css/app.css").await.body, "/static");
    assert_eq!(get(&router, "/static").await.body, "/static");
    assert_eq!(get(&router, "/api/v1/users").await.body, "/api/v1");
    assert_eq!(get(&router, "/elsewhere").await.body, "none");
}

/// A fallback matches no route: `Option<MatchedPath>` is `None` there (and
/// `Some` in a route sharing the handler), and a fallback taking
/// `MatchedPath` is refused by `compile`, naming its base.
#[tokio::test]
async fn a_fallback_has_no_matched_path() {
    let label = |path: Option<MatchedPath>| match path {
        Some(path) => path.as_str().to_owned(),
        None => "no route".to_owned(),
    };
    let router = Router::new()
        .get("/users/{id}", label)
        .fallback(label)
        .nest("/api", Router::new().fallback(label))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/users/7").await.body, "/users/{id}");
    assert_eq!(get(&router, "/elsewhere").await.body, "no route");
    assert_eq!(get(&router, "/api/elsewhere").await.body, "no route");

    for (router, base) in [
        (Router::new().fallback(|_: MatchedPath| ""), "/"),
        (
            Router::new().nest("/api/{v}", Router::new().fallback(|_: MatchedPath| "")),
            "/api/{v}",
        ),
    ] {
        let error = router.compile().unwrap_err();
        assert_eq!(
            error,
            RouteError::FallbackMatchedPath {
                base: base.to_owned()
            }
        );
        assert_eq!(
            error.to_string(),
            format!(
                "the fallback below `{base}`: its handler takes `MatchedPath`, and no route matches the paths it answers (take `Option<MatchedPath>`, which is `None` there)"
            )
        );
    }
}

/// A router mounted with `nest_service` reports its routes' matched paths
/// below its base, however deep, to its handlers, to the services it
/// mounts and to the layers outside; a router mounted with
/// `route_service` sees the whole path and adds nothing.
#[tokio::test]
async fn a_router_nested_as_a_service_reports_matched_paths_below_its_base() {
    let inner = Router::new()
        .get("/", |path: MatchedPath| path.as_str().to_owned())
        .get("/users/{id}", |path: MatchedPath| path.as_str().to_owned())
        .post("/echo", |request: Request<Body>| {
            request
                .extensions()
                .get::<MatchedPath>()
                .unwrap()
                .as_str()
                .to_owned()
        })
        .route_service("/svc", answering(matched_path))
        .nest_service("/deep", answering(matched_path))
        .compile()
        .unwrap();
    let middle = Router::new()
        .nest_service("/b", inner.clone())
        .compile()
        .unwrap();
    let router = Router::new()
        .nest_service("/a", inner)
        .nest_service("/m", middle)
        .route_service(
            "/x/{id}",
            Router::new()
                .get("/x/{id}", |path: MatchedPath| path.as_str().to_owned())
                .compile()
                .unwrap(),
        )
        .compile()
        .unwrap();
    let cases = [
        ("/a", "/a"),
        ("/a/", "/a"),
        ("/a/users/7", "/a/users/{id}"),
        ("/a/svc", "/a/svc"),
        ("/a/deep/file.css", "/a/deep"),
        ("/m/b/users/7", "/m/b/users/{id}"),
        ("/m/b/deep/x", "/m/b/deep"),
        ("/x/1", "/x/{id}"),
    ];
    for (path, expected) in cases {
        assert_eq!(get(&router, path).await.body, expected, "GET {path}");
    }
    assert_eq!(
        send(&router, Method::POST, "/m/b/echo").await.body,
        "/m/b/echo"
    );
}

/// With `matched_path_in_response`, the layers outside a router see the
/// matched path of the router nested below it as a service, when that one
/// gives it.
#[tokio::test]
async fn outer_layers_read_the_matched_path_of_a_router_nested_as_a_service() {
    let inner = |exposed| {
        Router::new()
            .get("/users/{id}", || "ada")
            .matched_path_in_response(exposed)
            .compile()
            .unwrap()
    };
    let router = Router::new()
        .nest_service("/exposed", inner(true))
        .nest_service("/quiet", inner(false))
        .matched_path_in_response(true)
        .compile()
        .unwrap();
    let route = |path| matched_path_of(&router, path);
    assert_eq!(
        route("/exposed/users/7").await.as_deref(),
        Some("/exposed/users/{id}")
    );
    assert_eq!(route("/quiet/users/7").await.as_deref(), Some("/quiet"));
}

/// Monitors tell the base of a nested service from the paths below it.
#[tokio::test]
async fn monitors_see_a_nested_service_s_base_and_the_pattern_below_it() {
    let patterns = Arc::new(Mutex::new(Vec::new()));
    let seen = patterns.clone();
    let router = Router::new()
        .nest_service("/static", answering(echo))
        .monitor("/", move |exchange: &RouteExchange<'_>| {
            seen.lock()
                .unwrap()
                .push(exchange.pattern().map(str::to_owned));
        })
        .compile()
        .unwrap();
    get(&router, "/static").await;
    get(&router, "/static/css/app.css").await;
    assert_eq!(
        *patterns.lock().unwrap(),
        [
            Some("/static".to_owned()),
            Some("/static/{*nested_path}".to_owned())
        ]
    );
}

/// The `MatchedPath` the response to a GET of `path` carries, if any.
async fn matched_path_of(router: &CompiledRouter, path: &str) -> Option<String> {
    let request = Request::get(path).body(String::new()).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    (response.extensions().get::<MatchedPath>()).map(|path| path.as_str().to_owned())
}

/// With `matched_path_in_response`, the layers outside the router read
/// the route of each routed response; a 404 has none.
#[tokio::test]
async fn outer_layers_read_the_matched_path_from_the_response() {
    let router = Router::new()
        .get("/users/{id}", || "ada")
        .nest_service("/static", answering(echo))
        .matched_path_in_response(true)
        .compile()
        .unwrap();
    let route = |path| matched_path_of(&router, path);
    assert_eq!(route("/users/7").await.as_deref(), Some("/users/{id}"));
    assert_eq!(route("/static/app.css").await.as_deref(), Some("/static"));
    assert_eq!(route("/nowhere").await, None);

    // Set on a nested router, it holds for that router's routes.
    let api = Router::new()
        .get("/users/{id}", || "ada")
        .matched_path_in_response(true);
    let router = Router::new()
        .get("/", || "home")
        .nest("/api", api)
        .compile()
        .unwrap();
    let route = |path| matched_path_of(&router, path);
    assert_eq!(
        route("/api/users/7").await.as_deref(),
        Some("/api/users/{id}")
    );
    assert_eq!(route("/").await, None);
}

#[test]
fn a_service_nested_below_a_catch_all_is_refused_naming_its_base() {
    for base in ["/files/{*path}", "/files/{*path}/raw"] {
        let error = Router::new()
            .nest_service(base, answering(echo))
            .compile()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "nested service at `{base}`: a catch-all leaves no path below the base for the service (mount it with `route_service`)"
            )
        );
    }
    // A route of the user's own that ends as a nested one does is no nested
    // service.
    let own = Router::new()
        .get("/a/{*rest}/b/{*nested_path}", || "")
        .compile()
        .unwrap_err();
    assert!(matches!(own, RouteError::AfterCatchAll { .. }), "{own}");
    // A catch-all inside the nested service's own routes is its own business.
    let legacy = axum::Router::new().route("/{*rest}", axum::routing::get(|| async { "any" }));
    assert!(
        Router::new()
            .nest_service("/legacy", legacy)
            .compile()
            .is_ok()
    );
}

/// A handler as a service of its own answers every method and path, and
/// takes state as a router does.
#[tokio::test]
async fn a_handler_made_a_service_answers_every_request_with_its_state() {
    use pronghorn::{handler::State, router::HandlerWithoutStateExt};
    let service = (|State(greeting): State<&'static str>, method: Method, uri: http::Uri| {
        format!("{greeting} {method} {}", uri.path())
    })
    .into_service()
    .state("hello");
    for (method, path) in [
        (Method::GET, "/"),
        (Method::DELETE, "/a/b/c"),
        (Method::POST, "/x"),
    ] {
        let request = Request::builder()
            .method(method.clone())
            .uri(path)
            .body(String::new())
            .unwrap();
        let response = service.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, format!("hello {method} {path}"));
    }
}
