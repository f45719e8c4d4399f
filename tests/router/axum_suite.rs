//! axum's own routing tests (`axum/src/routing/tests/`: nest, merge,
//! fallback), ported with their assertions as axum writes them, every
//! router answering as axum does.

use super::*;

use std::{collections::HashMap, convert::Infallible};

use pronghorn::{
    handler::{NestedPath, OriginalUri, Path, State},
    middleware::Next,
    router::{Answers, get},
};

/// axum's `TestClient`: the app compiled to answer as axum does.
struct Client(CompiledRouter);

impl Client {
    fn new(app: Router) -> Self {
        Self(app.answers(Answers::Axum).compile().unwrap())
    }

    async fn get(&self, path: &str) -> Answer {
        send(&self.0, Method::GET, path).await
    }

    async fn post(&self, path: &str) -> Answer {
        send(&self.0, Method::POST, path).await
    }

    async fn patch(&self, path: &str) -> Answer {
        send(&self.0, Method::PATCH, path).await
    }
}

async fn all_the_uris(uri: http::Uri, OriginalUri(original): OriginalUri, req: Req) -> String {
    format!("{uri} {} {original}", req.uri())
}

#[tokio::test]
async fn nesting_apps() {
    let show = |what: &'static str| {
        move |params: Path<HashMap<String, String>>| {
            format!("{}: {what} ({})", params["version"], params["id"])
        }
    };
    let api_routes = Router::new()
        .route(
            "/users",
            get(|| async { "users#index" }).post(|| async { "users#create" }),
        )
        .route("/users/{id}", get(show("users#show")))
        .route("/games/{id}", get(show("games#show")));
    let app = Router::new()
        .route("/", get(|| async { "hi" }))
        .nest("/{version}/api", api_routes);
    let client = Client::new(app);

    let res = client.get("/").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "hi");
    assert_eq!(client.get("/v0/api/users").await.body, "users#index");
    assert_eq!(
        client.get("/v0/api/users/123").await.body,
        "v0: users#show (123)"
    );
    assert_eq!(
        client.get("/v0/api/games/123").await.body,
        "v0: games#show (123)"
    );
}

#[tokio::test]
async fn wrong_method_nest() {
    let nested_app = Router::new().route("/", get(|| async {}));
    let client = Client::new(Router::new().nest("/foo", nested_app));

    assert_eq!(client.get("/foo").await.status, StatusCode::OK);
    let res = client.post("/foo").await;
    assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.headers[header::ALLOW], "GET,HEAD");
    assert_eq!(client.patch("/foo/bar").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn nested_url_extractor() {
    let app = Router::new().nest(
        "/foo",
        Router::new().nest(
            "/bar",
            Router::new()
                .route("/baz", get(|uri: http::Uri| async move { uri.to_string() }))
                .route("/qux", get(|req: Req| async move { req.uri().to_string() })),
        ),
    );
    let client = Client::new(app);

    let res = client.get("/foo/bar/baz").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "/baz");
    let res = client.get("/foo/bar/qux").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "/qux");
}

#[tokio::test]
async fn nested_url_original_extractor() {
    let app = Router::new().nest(
        "/foo",
        Router::new().nest(
            "/bar",
            Router::new().route(
                "/baz",
                get(|OriginalUri(uri): OriginalUri| async move { uri.to_string() }),
            ),
        ),
    );
    let res = Client::new(app).get("/foo/bar/baz").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "/foo/bar/baz");
}

#[tokio::test]
async fn nested_service_sees_stripped_uri() {
    let app = Router::new().nest(
        "/foo",
        Router::new().nest(
            "/bar",
            Router::new().route_service(
                "/baz",
                tower::service_fn(|req: Req| async move {
                    Ok::<_, Infallible>(Response::new(Body::from(req.uri().to_string())))
                }),
            ),
        ),
    );
    let res = Client::new(app).get("/foo/bar/baz").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "/baz");
}

#[tokio::test]
async fn outer_middleware_still_see_whole_url() {
    #[derive(Clone)]
    struct SeenUri(http::Uri);

    async fn handler(req: Req) -> String {
        req.extensions().get::<SeenUri>().unwrap().0.to_string()
    }

    let app = Router::new()
        .route("/", get(handler))
        .route("/foo", get(handler))
        .route("/foo/bar", get(handler))
        .nest("/one", Router::new().route("/two", get(handler)))
        .fallback(handler)
        .layer(tower::util::MapRequestLayer::new(|mut req: Req| {
            let uri = SeenUri(req.uri().clone());
            req.extensions_mut().insert(uri);
            req
        }));
    let client = Client::new(app);

    assert_eq!(client.get("/").await.body, "/");
    assert_eq!(client.get("/foo").await.body, "/foo");
    assert_eq!(client.get("/foo/bar").await.body, "/foo/bar");
    assert_eq!(client.get("/not-found").await.body, "/not-found");
    assert_eq!(client.get("/one/two").await.body, "/one/two");
}

#[tokio::test]
async fn nest_at_capture() {
    let api_routes = Router::new().route(
        "/{b}",
        get(|Path((a, b)): Path<(String, String)>| async move { format!("a={a} b={b}") }),
    );
    let res = Client::new(Router::new().nest("/{a}", api_routes))
        .get("/foo/bar")
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "a=foo b=bar");
}

#[tokio::test]
async fn nesting_with_root_inner_router() {
    let app = Router::new()
        .nest_service("/service", Router::new().route("/", get(|| async {})))
        .nest("/router", Router::new().route("/", get(|| async {})))
        .nest("/router-slash/", Router::new().route("/", get(|| async {})));
    let client = Client::new(app);

    assert_eq!(client.get("/service").await.status, StatusCode::OK);
    assert_eq!(client.get("/service/").await.status, StatusCode::OK);
    assert_eq!(client.get("/router").await.status, StatusCode::OK);
    assert_eq!(client.get("/router/").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        client.get("/router-slash").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(client.get("/router-slash/").await.status, StatusCode::OK);
}

/// axum's `nested_route_test!` cases (tokio-rs/axum#714).
#[tokio::test]
async fn nested_routes_join_their_base_as_axum_does() {
    for (nest, route, expected) in [
        ("/a", "/", "/a"),
        ("/a", "/a", "/a/a"),
        ("/a", "/a/", "/a/a/"),
        ("/a/", "/", "/a/"),
        ("/a/", "/a", "/a/a"),
        ("/a/", "/a/", "/a/a/"),
    ] {
        let inner = Router::new().route(route, get(|| async {}));
        let client = Client::new(Router::new().nest(nest, inner));
        let status = client.get(expected).await.status;
        assert_eq!(
            status,
            StatusCode::OK,
            "nest {nest}, route {route}, get {expected}"
        );
    }
}

#[tokio::test]
async fn nest_service_router_sees_the_base_parameters() {
    let inner = Router::new().route(
        "/users/{id}",
        get(|Path(params): Path<HashMap<String, String>>| async move {
            format!("{} {}", params["version"], params["id"])
        }),
    );
    let client = Client::new(Router::new().nest_service("/{version}/api", inner));
    let res = client.get("/v1/api/users/7").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "v1 7");
}

#[tokio::test]
async fn nest_service_router_follows_the_outer_answers() {
    let inner = Router::new().route("/users", get(|| async {}));
    let client = Client::new(Router::new().nest_service("/api", inner));
    let res = client.post("/api/users").await;
    assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.headers[header::ALLOW], "GET,HEAD");
    assert_eq!(res.body, "");
}

#[tokio::test]
async fn nest_service_router_that_does_not_compile_fails_the_app() {
    let inner = Router::new().route("/{a}/{b}", get(|Path(a): Path<String>| async move { a }));
    let app = Router::new().nest_service("/api", inner);
    assert!(app.compile().is_err());
}

#[tokio::test]
async fn nesting_and_seeing_the_right_uri() {
    let one = Router::new().nest("/foo/", Router::new().route("/bar", get(all_the_uris)));
    let two = Router::new().route("/foo", get(all_the_uris));
    let client = Client::new(one.merge(two));

    let res = client.get("/foo/bar").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "/bar /bar /foo/bar");
    let res = client.get("/foo").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "/foo /foo /foo");
}

#[tokio::test]
async fn nesting_and_seeing_the_right_uri_at_more_levels_of_nesting() {
    let one = Router::new().nest(
        "/foo/",
        Router::new().nest("/bar", Router::new().route("/baz", get(all_the_uris))),
    );
    let two = Router::new().route("/foo", get(all_the_uris));
    let client = Client::new(one.merge(two));

    assert_eq!(
        client.get("/foo/bar/baz").await.body,
        "/baz /baz /foo/bar/baz"
    );
    assert_eq!(client.get("/foo").await.body, "/foo /foo /foo");
}

#[tokio::test]
async fn nesting_and_seeing_the_right_uri_ors_with_nesting() {
    let one = Router::new().nest(
        "/one",
        Router::new().nest("/bar", Router::new().route("/baz", get(all_the_uris))),
    );
    let two = Router::new().nest("/two", Router::new().route("/qux", get(all_the_uris)));
    let three = Router::new().route("/three", get(all_the_uris));
    let client = Client::new(one.merge(two).merge(three));

    assert_eq!(
        client.get("/one/bar/baz").await.body,
        "/baz /baz /one/bar/baz"
    );
    assert_eq!(client.get("/two/qux").await.body, "/qux /qux /two/qux");
    assert_eq!(client.get("/three").await.body, "/three /three /three");
}

#[tokio::test]
async fn nesting_and_seeing_the_right_uri_ors_with_multi_segment_uris() {
    let one = Router::new().nest(
        "/one",
        Router::new().nest("/foo", Router::new().route("/bar", get(all_the_uris))),
    );
    let two = Router::new().route("/two/foo", get(all_the_uris));
    let client = Client::new(one.merge(two));

    assert_eq!(
        client.get("/one/foo/bar").await.body,
        "/bar /bar /one/foo/bar"
    );
    assert_eq!(
        client.get("/two/foo").await.body,
        "/two/foo /two/foo /two/foo"
    );
}

#[tokio::test]
async fn nested_layers_see_the_stripped_uri_and_outer_layers_the_whole() {
    #[derive(Clone)]
    struct Inner(String);
    #[derive(Clone)]
    struct Outer(String);

    let inner = Router::new()
        .route(
            "/b",
            get(|req: Req| async move {
                let inner = &req.extensions().get::<Inner>().unwrap().0;
                let outer = &req.extensions().get::<Outer>().unwrap().0;
                format!("{outer} {inner} {}", req.uri())
            }),
        )
        .layer(tower::util::MapRequestLayer::new(|mut req: Req| {
            let seen = Inner(req.uri().to_string());
            req.extensions_mut().insert(seen);
            req
        }));
    let app = Router::new()
        .nest("/a", inner)
        .layer(tower::util::MapRequestLayer::new(|mut req: Req| {
            let seen = Outer(req.uri().to_string());
            req.extensions_mut().insert(seen);
            req
        }));
    assert_eq!(Client::new(app).get("/a/b").await.body, "/a/b /b /b");
}

/// axum's `ValidateRequestHeaderLayer::bearer("password")`: 401 unless the
/// request carries `Authorization: Bearer password`.
// tower-http's validation answers its refusal as an `Err`.
#[allow(clippy::result_large_err)]
fn bearer_password() -> tower_http::validate_request::ValidateRequestHeaderLayer<
    impl FnMut(&mut Req) -> Result<(), Response<Body>> + Clone,
> {
    tower_http::validate_request::ValidateRequestHeaderLayer::custom(|req: &mut Req| {
        match req.headers().get(header::AUTHORIZATION) {
            Some(value) if value == "Bearer password" => Ok(()),
            _ => Err(StatusCode::UNAUTHORIZED.into_response()),
        }
    })
}

/// A GET of `path` that `bearer_password` lets through.
fn authorized(path: &str) -> Request<String> {
    Request::get(path)
        .header("authorization", "Bearer password")
        .body(String::new())
        .unwrap()
}

#[tokio::test]
async fn middleware_that_return_early() {
    let bearer = bearer_password();
    let private = Router::new().route("/", get(|| async {})).layer(bearer);
    let public = Router::new().route("/public", get(|| async {}));
    let client = Client::new(private.merge(public));

    assert_eq!(client.get("/").await.status, StatusCode::UNAUTHORIZED);
    let res = client.0.clone().oneshot(authorized("/")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        client.get("/doesnt-exist").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(client.get("/public").await.status, StatusCode::OK);
}

async fn inner_fallback() -> impl IntoResponse {
    (StatusCode::NOT_FOUND, "inner")
}

async fn outer_fallback() -> impl IntoResponse {
    (StatusCode::NOT_FOUND, "outer")
}

#[tokio::test]
async fn nested_router_inherits_fallback() {
    let app = Router::new()
        .nest("/foo", Router::new())
        .fallback(outer_fallback);
    let res = Client::new(app).get("/foo/bar").await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.body, "outer");
}

#[tokio::test]
async fn doesnt_inherit_fallback_if_overridden() {
    let inner = Router::new().fallback(inner_fallback);
    let app = Router::new().nest("/foo", inner).fallback(outer_fallback);
    let client = Client::new(app);
    assert_eq!(client.get("/foo/bar").await.body, "inner");
    assert_eq!(client.get("/").await.body, "outer");
}

#[tokio::test]
async fn issue_2072() {
    let nested_routes = Router::new().fallback(inner_fallback);
    let app = Router::new()
        .nest("/nested", nested_routes)
        .merge(Router::new());
    let client = Client::new(app);

    let res = client.get("/nested/does-not-exist").await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.body, "inner");
    let res = client.get("/does-not-exist").await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.body, "");
}

#[tokio::test]
async fn merge_router_with_fallback_into_nested_router_with_fallback() {
    let nested_routes = Router::new().fallback(inner_fallback);
    let app = Router::new()
        .nest("/nested", nested_routes)
        .merge(Router::new().fallback(outer_fallback));
    let client = Client::new(app);
    assert_eq!(client.get("/nested/does-not-exist").await.body, "inner");
    assert_eq!(client.get("/does-not-exist").await.body, "outer");
}

#[tokio::test]
async fn merging_nested_router_with_fallback_into_router_with_fallback() {
    let nested_routes = Router::new().fallback(inner_fallback);
    let app = Router::new()
        .fallback(outer_fallback)
        .merge(Router::new().nest("/nested", nested_routes));
    let client = Client::new(app);
    assert_eq!(client.get("/nested/does-not-exist").await.body, "inner");
    assert_eq!(client.get("/does-not-exist").await.body, "outer");
}

#[tokio::test]
async fn nested_fallback_uri_is_stripped() {
    let inner = Router::new().fallback(|uri: http::Uri| async move { uri.to_string() });
    let res = Client::new(Router::new().nest("/foo", inner))
        .get("/foo/bar")
        .await;
    assert_eq!(res.body, "/bar");
}

#[tokio::test]
async fn the_answer_set_is_the_top_router_s_for_every_nested_router() {
    let number = |Path(n): Path<u32>| async move { n.to_string() };
    let nested = Router::new()
        .route("/{n}", get(number))
        .answers(Answers::Pronghorn);
    let app = Router::new()
        .route("/top/{n}", get(number))
        .nest("/nested", nested.clone())
        .nest_service("/service", nested);
    let client = Client::new(app);
    let top = client.get("/top/x").await;
    assert_eq!(top.status, StatusCode::BAD_REQUEST);
    for path in ["/nested/x", "/service/x"] {
        let nested = client.get(path).await;
        assert_eq!(
            (nested.status, &nested.body),
            (top.status, &top.body),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_nested_route_s_uri_is_stripped_in_both_answer_sets() {
    let app = || Router::new().nest("/api", Router::new().route("/users", get(all_the_uris)));
    let pronghorn = app().compile().unwrap();
    assert_eq!(
        send(&pronghorn, Method::GET, "/api/users?a=1").await.body,
        "/users?a=1 /users?a=1 /api/users?a=1"
    );
    let axum = Client::new(app());
    assert_eq!(
        axum.get("/api/users?a=1").await.body,
        "/users?a=1 /users?a=1 /api/users?a=1"
    );
}

#[tokio::test]
async fn not_found_for_extra_trailing_slash() {
    let client = Client::new(Router::new().route("/foo", get(|| async {})));
    assert_eq!(client.get("/foo/").await.status, StatusCode::NOT_FOUND);
    assert_eq!(client.get("/foo").await.status, StatusCode::OK);
}

#[tokio::test]
async fn not_found_for_missing_trailing_slash() {
    let client = Client::new(Router::new().route("/foo/", get(|| async {})));
    assert_eq!(client.get("/foo").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn with_and_without_trailing_slash() {
    let app = Router::new()
        .route("/foo", get(|| async { "without tsr" }))
        .route("/foo/", get(|| async { "with tsr" }));
    let client = Client::new(app);

    let res = client.get("/foo/").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "with tsr");
    let res = client.get("/foo").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "without tsr");
}

#[tokio::test]
async fn wildcard_doesnt_match_just_trailing_slash() {
    let app = Router::new().route(
        "/x/{*path}",
        get(|Path(path): Path<String>| async move { path }),
    );
    let client = Client::new(app);
    assert_eq!(client.get("/x").await.status, StatusCode::NOT_FOUND);
    assert_eq!(client.get("/x/").await.status, StatusCode::NOT_FOUND);
    let res = client.get("/x/foo/bar").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "foo/bar");
}

#[tokio::test]
async fn what_matches_wildcard() {
    let app = Router::new()
        .route("/{*key}", get(|| async { "root" }))
        .route("/x/{*key}", get(|| async { "x" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    for (path, body) in [
        ("/", "fallback"),
        ("/a", "root"),
        ("/a/", "root"),
        ("/a/b", "root"),
        ("/a/b/", "root"),
        ("/x", "root"),
        ("/x/", "root"),
        ("/x/a", "x"),
        ("/x/a/", "x"),
        ("/x/a/b", "x"),
        ("/x/a/b/", "x"),
    ] {
        assert_eq!(client.get(path).await.body, body, "{path}");
    }
}

#[tokio::test]
async fn prefix_match() {
    let app = Router::new()
        .route("/{picture}.png", get(|| async { "picture" }))
        .route("/{picture}.txt", get(|| async { "text" }))
        .route("/logo.svg", get(|| async { "logo" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    for (path, body) in [
        ("/", "fallback"),
        ("/a/b.png", "fallback"),
        ("/a.png/", "fallback"),
        ("//a.png", "fallback"),
        ("/.png", "fallback"),
        ("/..png", "picture"),
        ("/a.png", "picture"),
        ("/b.png", "picture"),
        ("/.txt", "fallback"),
        ("/..txt", "text"),
        ("/a.txt", "text"),
        ("/b.txt", "text"),
        ("/logo.svg", "logo"),
    ] {
        assert_eq!(client.get(path).await.body, body, "{path}");
    }
}

#[tokio::test]
async fn suffix_match() {
    let app = Router::new()
        .route("/new-{id}", get(|| async { "new" }))
        .route("/old-{id}", get(|| async { "old" }))
        .route("/any", get(|| async { "any" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    for (path, body) in [
        ("/", "fallback"),
        ("/a/new-1", "fallback"),
        ("/new-1/", "fallback"),
        ("//new-1/", "fallback"),
        ("/new-", "fallback"),
        ("/new-1", "new"),
        ("/old-", "fallback"),
        ("/old-1", "old"),
        ("/any", "any"),
    ] {
        assert_eq!(client.get(path).await.body, body, "{path}");
    }
}

#[tokio::test]
async fn prefix_suffix_match() {
    let app = Router::new()
        .route("/start-{regex}-end", get(|| async { "regex" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    for (path, body) in [
        ("/", "fallback"),
        ("/start--end", "fallback"),
        ("/start-regex-end", "regex"),
        ("/foo/start-regex-end", "fallback"),
    ] {
        assert_eq!(client.get(path).await.body, body, "{path}");
    }
}

#[tokio::test]
async fn prefix_suffix_nested_match() {
    let app = Router::new()
        .route("/{a}/a", get(|| async { "a" }))
        .route("/{b}/b", get(|| async { "b" }))
        .route("/a{c}c/a", get(|| async { "c" }))
        .route("/a{d}c/{*anything}", get(|| async { "d" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    for (path, body) in [
        ("/ac/a", "a"),
        ("/ac/b", "b"),
        ("/abc/a", "c"),
        ("/abc/b", "d"),
    ] {
        assert_eq!(client.get(path).await.body, body, "{path}");
    }
}

#[tokio::test]
async fn colliding_wildcard_with_fallback() {
    let app = Router::new()
        .route("/{*wild}", get(|| async { "wildcard" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    assert_eq!(client.get("/").await.body, "fallback");
    assert_eq!(client.get("/x").await.body, "wildcard");
}

#[tokio::test]
async fn colliding_root_with_fallback() {
    let app = Router::new()
        .route("/", get(|| async { "root" }))
        .fallback(|| async { "fallback" });
    let client = Client::new(app);
    assert_eq!(client.get("/").await.body, "root");
    assert_eq!(client.get("/x").await.body, "fallback");
}

#[tokio::test]
async fn static_and_dynamic_paths() {
    let app = Router::new()
        .route(
            "/{key}",
            get(|Path(key): Path<String>| async move { format!("dynamic: {key}") }),
        )
        .route("/foo", get(|| async { "static" }));
    let client = Client::new(app);
    assert_eq!(client.get("/bar").await.body, "dynamic: bar");
    assert_eq!(client.get("/foo").await.body, "static");
}

#[tokio::test]
async fn the_most_specific_path_wins_before_the_method() {
    let app = Router::new()
        .route("/{*path}", get(|| async { "a" }))
        .route("/admin", pronghorn::router::any(|| async { "b" }))
        .route("/users", pronghorn::router::post(|| async { "c" }));
    let client = Client::new(app);
    assert_eq!(client.get("/admin").await.body, "b");
    assert_eq!(client.get("/other").await.body, "a");
    // The path `/users` is routed: a GET there is its 405, not the catch-all's.
    let res = client.get("/users").await;
    assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.headers[header::ALLOW], "POST");
}

#[tokio::test]
async fn nesting_router_with_fallback() {
    let nested = Router::new().fallback(|| async { "nested" });
    let router = Router::new().route("/{x}/{y}", get(|| async { "two segments" }));
    let client = Client::new(router.nest("/nest", nested));
    assert_eq!(client.get("/a/b").await.body, "two segments");
    assert_eq!(client.get("/nest/b").await.body, "nested");
}

#[tokio::test]
async fn defining_missing_routes_in_nested_router() {
    let router = Router::new()
        .route("/nest/before", get(|| async { "before" }))
        .nest(
            "/nest",
            Router::new()
                .route("/mid", get(|| async { "nested mid" }))
                .fallback(|| async { "nested fallback" }),
        )
        .route("/nest/after", get(|| async { "after" }));
    let client = Client::new(router);
    assert_eq!(client.get("/nest/before").await.body, "before");
    assert_eq!(client.get("/nest/after").await.body, "after");
    assert_eq!(client.get("/nest/mid").await.body, "nested mid");
    assert_eq!(client.get("/nest/fallback").await.body, "nested fallback");
}

#[tokio::test]
async fn route_layer() {
    let bearer = bearer_password();
    let app = Router::new()
        .route("/foo", get(|| async {}))
        .route_layer(bearer);
    let client = Client::new(app);

    let res = client.0.clone().oneshot(authorized("/foo")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(client.get("/foo").await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(client.get("/not-found").await.status, StatusCode::NOT_FOUND);
    assert_eq!(client.post("/foo").await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn mna_fallback_not_405() {
    let app = Router::new()
        .route("/path", get(|| async { "path" }))
        .method_not_allowed_fallback(|| async { (StatusCode::NOT_FOUND, "Not Found") });
    let res = Client::new(app).post("/path").await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.headers.get(header::ALLOW), None);
    assert_eq!(res.body, "Not Found");
}

#[tokio::test]
async fn mna_fallback_with_state() {
    let app = Router::new()
        .route("/", get(|| async { "index" }))
        .method_not_allowed_fallback(|State(state): State<&'static str>| async move { state })
        .with_state("state");
    let res = Client::new(app).post("/").await;
    assert_eq!(res.body, "state");
}

#[tokio::test]
async fn mna_fallback_with_unused_state() {
    let app = Router::new()
        .route("/", get(|| async { "index" }))
        .with_state(())
        .method_not_allowed_fallback(|| async move { "bla" });
    let res = Client::new(app).post("/").await;
    assert_eq!(res.body, "bla");
}

#[tokio::test]
async fn a_guard_in_route_layer_answers_a_stranger_s_other_method() {
    // axum-login's `login_required!` in `route_layer`: a redirect, not a 405
    // naming the path's methods.
    let guard = tower::util::MapRequestLayer::new(|req: Req| req);
    let login =
        pronghorn::middleware::from_fn(|req: Req, next: pronghorn::middleware::Next| async move {
            match req.headers().contains_key(header::COOKIE) {
                true => next.run(req).await,
                false => (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, "/login")],
                )
                    .into_response(),
            }
        });
    let app = Router::new()
        .route("/", get(|| async { "home" }))
        .route_layer(login)
        .route_layer(guard)
        .route("/login", get(|| async { "login" }));
    let client = Client::new(app);
    for res in [client.get("/").await, client.post("/").await] {
        assert_eq!(res.status, StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(res.headers[header::LOCATION], "/login");
        assert_eq!(res.headers.get(header::ALLOW), None);
    }
    assert_eq!(
        client.post("/login").await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    let signed_in = Request::post("/")
        .header(header::COOKIE, "sid=1")
        .body(String::new())
        .unwrap();
    let res = client.0.clone().oneshot(signed_in).await.unwrap();
    assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.headers()[header::ALLOW], "GET,HEAD");
}

// axum's `middleware` tests: `from_fn`, `map_request`, `map_response`.

#[tokio::test]
async fn from_fn_basic() {
    use pronghorn::middleware::from_fn;
    async fn insert_header(mut req: Req, next: Next) -> impl IntoResponse {
        req.headers_mut()
            .insert("x-axum-test", "ok".parse().unwrap());
        next.run(req).await
    }
    async fn handle(headers: HeaderMap) -> String {
        headers["x-axum-test"].to_str().unwrap().to_owned()
    }
    let app = Router::new()
        .route("/", get(handle))
        .layer(from_fn(insert_header));
    let res = Client::new(app).get("/").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, "ok");
}

#[tokio::test]
async fn map_request_works() {
    use pronghorn::middleware::map_request;
    async fn add_header<B>(mut req: Request<B>) -> Request<B> {
        req.headers_mut().insert("x-foo", "foo".parse().unwrap());
        req
    }
    async fn handler(headers: HeaderMap) -> Response<Body> {
        headers["x-foo"]
            .to_str()
            .unwrap()
            .to_owned()
            .into_response()
    }
    let app = Router::new()
        .route("/", get(handler))
        .layer(map_request(add_header));
    assert_eq!(Client::new(app).get("/").await.body, "foo");
}

#[tokio::test]
async fn map_request_works_for_short_circutting() {
    use pronghorn::middleware::map_request;
    async fn add_header<B>(_req: Request<B>) -> Result<Request<B>, (StatusCode, &'static str)> {
        Err((StatusCode::INTERNAL_SERVER_ERROR, "something went wrong"))
    }
    async fn handler(_headers: HeaderMap) -> Response<Body> {
        unreachable!()
    }
    let app = Router::new()
        .route("/", get(handler))
        .layer(map_request(add_header));
    let res = Client::new(app).get("/").await;
    assert_eq!(res.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(res.body, "something went wrong");
}

#[tokio::test]
async fn map_response_works() {
    use pronghorn::middleware::map_response;
    async fn add_header<B>(mut res: Response<B>) -> Response<B> {
        res.headers_mut().insert("x-foo", "foo".parse().unwrap());
        res
    }
    let app = Router::new().layer(map_response(add_header));
    let res = Client::new(app).get("/").await;
    assert_eq!(res.headers["x-foo"], "foo");
}

#[tokio::test]
async fn with_middleware_on_inner_fallback() {
    use pronghorn::middleware::map_request;
    async fn never_called<B>(_: Request<B>) -> Request<B> {
        panic!("should never be called")
    }
    let inner = Router::new().layer(map_request(never_called));
    let app = Router::new().nest("/foo", inner).fallback(outer_fallback);
    let res = Client::new(app).get("/foo/bar").await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.body, "outer");
}

#[tokio::test]
async fn also_inherits_default_layered_fallback() {
    use pronghorn::middleware::map_response;
    async fn set_header<B>(mut res: Response<B>) -> Response<B> {
        res.headers_mut()
            .insert("x-from-fallback", "1".parse().unwrap());
        res
    }
    let app = Router::new()
        .nest("/foo", Router::new())
        .fallback(outer_fallback)
        .layer(map_response(set_header));
    let res = Client::new(app).get("/foo/bar").await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.headers["x-from-fallback"], "1");
    assert_eq!(res.body, "outer");
}

#[derive(Clone)]
struct Greeting(&'static str);

#[tokio::test]
async fn the_with_state_forms_hand_their_state_to_the_function_s_extractors() {
    use pronghorn::{
        handler::State,
        middleware::{Next, from_fn_with_state, map_request_with_state, map_response_with_state},
    };
    async fn greet(State(greeting): State<Greeting>, mut req: Req, next: Next) -> Response<Body> {
        req.headers_mut()
            .insert("x-greeting", greeting.0.parse().unwrap());
        next.run(req).await
    }
    async fn name(State(greeting): State<Greeting>, mut req: Req) -> Req {
        req.headers_mut()
            .insert("x-name", greeting.0.parse().unwrap());
        req
    }
    async fn sign(State(greeting): State<Greeting>, mut res: Response<Body>) -> Response<Body> {
        res.headers_mut()
            .insert("x-signed", greeting.0.parse().unwrap());
        res
    }
    let app = Router::new()
        .route(
            "/",
            get(|headers: HeaderMap| async move {
                format!(
                    "{} {}",
                    headers["x-greeting"].to_str().unwrap(),
                    headers["x-name"].to_str().unwrap()
                )
            }),
        )
        .layer(map_request_with_state(Greeting("ada"), name))
        .layer(from_fn_with_state(Greeting("hello"), greet))
        .layer(map_response_with_state(Greeting("bye"), sign));
    let res = Client::new(app).get("/").await;
    assert_eq!(res.body, "hello ada");
    assert_eq!(res.headers["x-signed"], "bye");
}

#[test]
fn map_request_and_map_response_answer_in_the_first_poll_when_they_complete_at_once() {
    use pronghorn::middleware::{map_request, map_response};
    let router = Router::new()
        .route("/", get(|| async { "ready" }))
        .layer(map_request(|req: Req| async move { req }))
        .layer(map_response(|res: Response<Body>| async move { res }))
        .compile()
        .unwrap();
    let mut service = router.clone();
    let request = Request::get("/").body(Body::empty()).unwrap();
    let mut future = std::pin::pin!(service.call(request));
    let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
        panic!("a synchronous stack answers in its first poll");
    };
    assert_eq!(response.status(), StatusCode::OK);
}

async fn post_body(client: &Client, path: &str, body: String) -> StatusCode {
    let request = Request::post(path).body(body).unwrap();
    client.0.clone().oneshot(request).await.unwrap().status()
}

#[tokio::test]
async fn disabling_the_default_limit() {
    use pronghorn::handler::DefaultBodyLimit;
    let app = Router::new()
        .route("/", pronghorn::router::post(|_: bytes::Bytes| async {}))
        .layer(DefaultBodyLimit::disable());
    let client = Client::new(app);
    // The default limit is 2 MiB: a body larger than that.
    assert_eq!(
        post_body(&client, "/", "a".repeat(3_000_000)).await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn changing_the_default_limit() {
    use pronghorn::handler::DefaultBodyLimit;
    let new_limit = 2;
    let app = Router::new()
        .route("/", pronghorn::router::post(|_: bytes::Bytes| async {}))
        .layer(DefaultBodyLimit::max(new_limit));
    let client = Client::new(app);
    assert_eq!(
        post_body(&client, "/", "a".repeat(new_limit)).await,
        StatusCode::OK
    );
    assert_eq!(
        post_body(&client, "/", "a".repeat(new_limit + 1)).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
}

#[tokio::test]
async fn changing_the_default_limit_differently_on_different_routes() {
    use pronghorn::{handler::DefaultBodyLimit, router::post};
    let (limit1, limit2) = (2, 10);
    let app = Router::new()
        .route(
            "/limit1",
            post(|_: bytes::Bytes| async {}).layer(DefaultBodyLimit::max(limit1)),
        )
        .route(
            "/limit2",
            post(|_: bytes::Bytes| async {}).layer(DefaultBodyLimit::max(limit2)),
        )
        .route("/default", post(|_: bytes::Bytes| async {}));
    let client = Client::new(app);
    for (path, size, status) in [
        ("/limit1", limit1, StatusCode::OK),
        ("/limit1", limit2, StatusCode::PAYLOAD_TOO_LARGE),
        ("/limit2", limit1, StatusCode::OK),
        ("/limit2", limit2, StatusCode::OK),
        ("/limit2", limit1 + limit2, StatusCode::PAYLOAD_TOO_LARGE),
        ("/default", limit1 + limit2, StatusCode::OK),
        ("/default", 3_000_000, StatusCode::PAYLOAD_TOO_LARGE),
    ] {
        assert_eq!(
            post_body(&client, path, "a".repeat(size)).await,
            status,
            "{path} {size}"
        );
    }
}

#[tokio::test]
async fn the_body_limit_layer_nearest_the_handler_wins() {
    use pronghorn::handler::DefaultBodyLimit;
    let app = Router::new()
        .route("/", pronghorn::router::post(|_: bytes::Bytes| async {}))
        .layer(DefaultBodyLimit::max(100))
        .layer(DefaultBodyLimit::max(2));
    let client = Client::new(app);
    assert_eq!(
        post_body(&client, "/", "a".repeat(50)).await,
        StatusCode::OK
    );
}

// axum's extractors and calls that were missing.

#[tokio::test]
async fn an_empty_method_router_answers_405_with_an_empty_allow() {
    let client = Client::new(Router::new().route("/", pronghorn::router::MethodRouter::new()));
    let res = client.get("/").await;
    assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.headers[header::ALLOW], "");
}

#[tokio::test]
async fn extension_is_a_layer_and_its_absence_is_axum_s_500() {
    use pronghorn::handler::Extension;
    #[derive(Clone)]
    struct Pool(&'static str);
    let app = Router::new()
        .route(
            "/",
            get(|Extension(Pool(name)): Extension<Pool>| async move { name }),
        )
        .layer(Extension(Pool("main")))
        .route(
            "/missing",
            get(|Extension(Pool(name)): Extension<Pool>| async move { name }),
        );
    let client = Client::new(app);
    assert_eq!(client.get("/").await.body, "main");
    let res = client.get("/missing").await;
    assert_eq!(res.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(
        res.body
            .starts_with("Missing request extension: Extension of type `"),
        "{}",
        res.body
    );
}

#[tokio::test]
async fn parts_and_raw_form_extract_as_axum_s() {
    use http::request::Parts;
    use pronghorn::handler::RawForm;
    let app = Router::new()
        .route(
            "/api/parts",
            get(|parts: Parts| async move { format!("{} {}", parts.method, parts.uri) }),
        )
        .route(
            "/form",
            get(|RawForm(form): RawForm| async move { form })
                .post(|RawForm(form): RawForm| async move { form }),
        );
    let client = Client::new(Router::new().nest("/n", app));
    assert_eq!(
        client.get("/n/api/parts?x=1").await.body,
        "GET /api/parts?x=1"
    );
    assert_eq!(client.get("/n/form?a=1&b=2").await.body, "a=1&b=2");
    let form = Request::post("/n/form")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body("c=3".to_owned())
        .unwrap();
    let res = client.0.clone().oneshot(form).await.unwrap();
    assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "c=3");
    let not_form = Request::post("/n/form").body("c=3".to_owned()).unwrap();
    let res = client.0.clone().oneshot(not_form).await.unwrap();
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[test]
fn response_is_axum_s_alias() {
    let response: pronghorn::Response = StatusCode::OK.into_response();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn query_and_form_read_malformed_escapes_leniently_as_axum_does() {
    use pronghorn::handler::{Form, Query};
    #[derive(serde::Deserialize)]
    struct Next {
        next: Option<String>,
    }
    let app = Router::new()
        .route(
            "/login",
            get(|Query(q): Query<Next>| async move { q.next.unwrap_or_default() }),
        )
        .route(
            "/form",
            pronghorn::router::post(
                |Form(f): Form<Next>| async move { f.next.unwrap_or_default() },
            ),
        );
    for answers in [Answers::Pronghorn, Answers::Axum] {
        let router = app.clone().answers(answers).compile().unwrap();
        assert_eq!(
            send(&router, Method::GET, "/login?next=%ZZ").await.body,
            "%ZZ"
        );
        assert_eq!(
            send(&router, Method::GET, "/login?junk=%ZZ&next=%2Fhome")
                .await
                .body,
            "/home"
        );
        assert_eq!(
            send(&router, Method::GET, "/login?next=a%FFb").await.body,
            "a\u{FFFD}b"
        );
        let form = Request::post("/form")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body("next=%Z1+x".to_owned())
            .unwrap();
        let res = router.clone().oneshot(form).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "%Z1 x");
    }
}

// axum's `extract::nested_path` tests.

fn nested_path_is(
    expected: &'static str,
) -> impl Fn(NestedPath) -> StatusCode + Clone + Send + Sync + 'static {
    move |nested_path: NestedPath| {
        assert_eq!(nested_path.as_str(), expected);
        StatusCode::OK
    }
}

#[tokio::test]
async fn nested_path_one_level_of_nesting() {
    let api = Router::new().route("/users", get(nested_path_is("/api")));
    let client = Client::new(Router::new().nest("/api", api));
    assert_eq!(client.get("/api/users").await.status, StatusCode::OK);
}

#[tokio::test]
async fn nested_path_one_level_of_nesting_with_trailing_slash() {
    let api = Router::new().route("/users", get(nested_path_is("/api/")));
    let client = Client::new(Router::new().nest("/api/", api));
    assert_eq!(client.get("/api/users").await.status, StatusCode::OK);
}

#[tokio::test]
async fn nested_path_two_levels_of_nesting() {
    let api = Router::new().route("/users", get(nested_path_is("/api/v2")));
    let client = Client::new(Router::new().nest("/api", Router::new().nest("/v2", api)));
    assert_eq!(client.get("/api/v2/users").await.status, StatusCode::OK);
}

#[tokio::test]
async fn nested_path_two_levels_of_nesting_with_trailing_slash() {
    let api = Router::new().route("/users", get(nested_path_is("/api/v2")));
    let client = Client::new(Router::new().nest("/api/", Router::new().nest("/v2", api)));
    assert_eq!(client.get("/api/v2/users").await.status, StatusCode::OK);
}

#[tokio::test]
async fn nested_path_in_fallbacks() {
    let api = Router::new().fallback(get(nested_path_is("/api")));
    let client = Client::new(Router::new().nest("/api", api));
    assert_eq!(client.get("/api/doesnt-exist").await.status, StatusCode::OK);
}

#[tokio::test]
async fn nested_path_in_middleware() {
    async fn middleware(nested_path: NestedPath, req: Req, next: Next) -> Response<Body> {
        assert_eq!(nested_path.as_str(), "/api");
        next.run(req).await
    }
    let api = Router::new()
        .route("/users", get(|| async {}))
        .layer(pronghorn::middleware::from_fn(middleware));
    let client = Client::new(Router::new().nest("/api", api));
    assert_eq!(client.get("/api/users").await.status, StatusCode::OK);
}

/// Not in axum's tests: a route not nested has none, a 500 in axum's
/// words, and `Option<NestedPath>` is `None`; a base's parameter is kept
/// as its pattern.
#[tokio::test]
async fn nested_path_of_a_route_not_nested_is_a_500_or_none() {
    let client = Client::new(
        Router::new()
            .route("/top", get(nested_path_is("never")))
            .route(
                "/maybe",
                get(|path: Option<NestedPath>| format!("{path:?}")),
            )
            .nest(
                "/{version}/api",
                Router::new().route("/users", get(nested_path_is("/{version}/api"))),
            ),
    );
    let answer = client.get("/top").await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(answer.body, "The matched route is not nested");
    assert_eq!(client.get("/maybe").await.body, "None");
    assert_eq!(client.get("/v1/api/users").await.status, StatusCode::OK);
}

// axum's `extract::path` tests on how values are decoded.

/// A route's one parameter read as any type is its value, not a map.
#[tokio::test]
async fn path_single_value_read_as_any_is_the_value() {
    let client = Client::new(Router::new().route(
        "/{a}",
        get(|Path(value): Path<serde_json::Value>| value.to_string()),
    ));
    assert_eq!(client.get("/abc").await.body, r#""abc""#);
    assert_eq!(client.get("/a%20c").await.body, r#""a c""#);
}

/// A type that borrows its text reads a value whether or not it was
/// percent-decoded.
#[tokio::test]
async fn path_values_are_borrowed_strings_decoded_or_not() {
    struct Borrowing(String);
    impl<'de> serde::Deserialize<'de> for Borrowing {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text: &str = serde::Deserialize::deserialize(deserializer)?;
            Ok(Borrowing(text.to_owned()))
        }
    }
    let client = Client::new(Router::new().route(
        "/{a}/{b}",
        get(|Path((a, b)): Path<(Borrowing, Borrowing)>| format!("{}|{}", a.0, b.0)),
    ));
    let answer = client.get("/foo%20bar/baz").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::OK, "foo bar|baz")
    );
    assert_eq!(client.get("/plain/text").await.body, "plain|text");
}

#[tokio::test]
async fn path_regression_3038() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct MoreChars {
        first_two: [char; 2],
        second_two: [char; 2],
        crate_name: String,
    }
    let client = Client::new(Router::new().route(
        "/{first_two}/{second_two}/{crate_name}",
        get(|Path(_): Path<MoreChars>| async move {}),
    ));
    let answer = client.get("/te/st/_thing").await;
    assert_eq!(answer.body, "Invalid URL: array types are not supported");
}

/// An axum app's `axum::http::…` imports read as `pronghorn::http::…`.
#[tokio::test]
async fn the_http_crate_is_named_through_pronghorn_as_through_axum() {
    use pronghorn::http::{StatusCode as Status, header::CONTENT_TYPE};
    let app = Router::new().route(
        "/",
        get(|| async { (Status::CREATED, [(CONTENT_TYPE, "text/x-made")], "made") }),
    );
    let res = Client::new(app).get("/").await;
    assert_eq!(res.status, Status::CREATED);
    assert_eq!(res.headers[CONTENT_TYPE], "text/x-made");
}

/// axum 0.8's middleware signature, `async fn(Request, Next) -> Response`,
/// reads as written with pronghorn's `Request` and `Response`.
#[tokio::test]
async fn a_middleware_function_takes_request_and_answers_response_as_axum_s() {
    use pronghorn::{Response, handler::Request, middleware::from_fn};
    async fn tag(request: Request, next: Next) -> Response {
        let mut response = next.run(request).await;
        response
            .headers_mut()
            .insert("x-tagged", http::HeaderValue::from_static("yes"));
        response
    }
    let app = Router::new()
        .route("/", get(|| async { "hi" }))
        .layer(from_fn(tag));
    let res = Client::new(app).get("/").await;
    assert_eq!(res.headers["x-tagged"], "yes");
    assert_eq!(res.body, "hi");
}

/// axum's tests read an answer with `body::to_bytes(body, limit)`: the
/// same, from `pronghorn::body`.
#[tokio::test]
async fn an_answer_is_read_with_body_to_bytes_as_in_axum_s_tests() {
    use pronghorn::body::{Bytes, to_bytes};
    let app = Router::new()
        .route("/", get(|| async { "hello" }))
        .answers(Answers::Axum)
        .compile()
        .unwrap();
    let response = app
        .oneshot(Request::get("/").body(String::new()).unwrap())
        .await
        .unwrap();
    let body: Bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    assert_eq!(body, "hello");
}

/// axum's `test_from_extractor`: an extractor as a layer on a handler,
/// reading the state it is given; the handler runs only when it extracts.
#[tokio::test]
async fn test_from_extractor() {
    use pronghorn::{
        Body,
        handler::{FromRequestHead, Handler, RequestContext},
        middleware::from_extractor_with_state,
    };
    #[derive(Clone)]
    struct Secret(&'static str);

    struct RequireAuth;

    impl FromRequestHead for RequireAuth {
        fn from_head(context: &RequestContext<'_>) -> Result<Self, http::Response<Body>> {
            let Some(Secret(secret)) = context.state::<Secret>() else {
                return Err(StatusCode::INTERNAL_SERVER_ERROR.into_response());
            };
            match context.headers().get(header::AUTHORIZATION) {
                Some(auth) if auth == secret => Ok(Self),
                _ => Err(StatusCode::UNAUTHORIZED.into_response()),
            }
        }
    }

    static CALLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    async fn handler() {
        CALLED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    let state = Secret("secret");
    let app = Router::new().route(
        "/",
        get(handler.layer(from_extractor_with_state::<RequireAuth, _>(state))),
    );
    let client = Client::new(app);

    let res = client.get("/").await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert_eq!(CALLED.load(std::sync::atomic::Ordering::SeqCst), 0);

    let mut request = Request::get("/").body(String::new()).unwrap();
    request.headers_mut().insert(
        header::AUTHORIZATION,
        http::HeaderValue::from_static("secret"),
    );
    let res = client.0.clone().oneshot(request).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(CALLED.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// axum's `works_with_request_body_limit`: an extractor layer under
/// tower-http's body limit, which hands it another body type.
#[tokio::test]
async fn from_extractor_works_with_request_body_limit() {
    use pronghorn::middleware::from_extractor;
    use tower_http::limit::RequestBodyLimitLayer;
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .layer(from_extractor::<http::Method>())
        .layer(RequestBodyLimitLayer::new(1));
    assert_eq!(Client::new(app).get("/").await.body, "ok");
}

// State written for one type, its parts read with `FromRef` (axum's
// `routing/tests/mod.rs`: extract_state, explicitly_set_state,
// method_router_fallback_with_state, state_isnt_cloned_too_much,
// state_isnt_cloned_too_much_in_layer).

mod states {
    use std::sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    };

    use pronghorn::{
        handler::{FromRef, Handler, State},
        middleware::{Next, from_fn_with_state},
        router::get,
    };

    use super::{Client, Req};
    use crate::*;

    /// axum's `CountingCloneableState`: counts the clones made once
    /// `setup_done` is called.
    struct CountingCloneableState(Arc<(AtomicBool, AtomicUsize)>);

    impl CountingCloneableState {
        fn new() -> Self {
            Self(Arc::new((AtomicBool::new(false), AtomicUsize::new(0))))
        }

        fn setup_done(&self) {
            self.0.0.store(true, Ordering::SeqCst);
        }

        fn count(&self) -> usize {
            self.0.1.load(Ordering::SeqCst)
        }
    }

    impl Clone for CountingCloneableState {
        fn clone(&self) -> Self {
            if self.0.0.load(Ordering::SeqCst) {
                self.0.1.fetch_add(1, Ordering::SeqCst);
            }
            Self(Arc::clone(&self.0))
        }
    }

    #[tokio::test]
    async fn extract_state() {
        #[derive(Clone)]
        struct AppState {
            value: i32,
            inner: InnerState,
        }

        #[derive(Clone)]
        struct InnerState {
            value: i32,
        }

        impl FromRef<AppState> for InnerState {
            fn from_ref(state: &AppState) -> Self {
                state.inner.clone()
            }
        }

        async fn handler(State(outer): State<AppState>, State(inner): State<InnerState>) -> String {
            format!("{} {}", outer.value, inner.value)
        }

        let state = AppState {
            value: 1,
            inner: InnerState { value: 2 },
        };
        let app = Router::new().route("/", get(handler)).with_state(state);
        let res = Client::new(app).get("/").await;
        assert_eq!(res.status, StatusCode::OK);
        assert_eq!(res.body, "1 2");
    }

    #[tokio::test]
    async fn explicitly_set_state() {
        let app = Router::new()
            .route_service(
                "/",
                get(|State(state): State<&'static str>| async move { state }).with_state("foo"),
            )
            .with_state("...");
        assert_eq!(Client::new(app).get("/").await.body, "foo");
    }

    /// As axum's: a method router reading the state as a fallback is a
    /// handler of the router written for that state.
    #[test]
    fn method_router_fallback_with_state() {
        async fn fallback(_: State<&'static str>) {}

        async fn not_found(_: State<&'static str>) {}

        let state = "foo";

        let _: Router = Router::new()
            .fallback(get(fallback).fallback(not_found))
            .with_state(state);
    }

    #[tokio::test]
    async fn a_method_router_as_a_fallback_reads_the_state_of_its_router() {
        async fn fallback(State(state): State<&'static str>) -> String {
            format!("{state}: fallback")
        }

        async fn not_found(State(state): State<&'static str>) -> String {
            format!("{state}: not found")
        }

        let app: Router = Router::new()
            .fallback(get(fallback).fallback(not_found))
            .with_state("foo");
        let client = Client::new(app);
        assert_eq!(client.get("/anywhere").await.body, "foo: fallback");
        assert_eq!(client.post("/anywhere").await.body, "foo: not found");

        // Found by type, and its own state read first.
        let app = Router::new()
            .fallback(
                get(fallback)
                    .post(|State(n): State<u8>| async move { n.to_string() })
                    .state(7_u8),
            )
            .state("bar");
        let client = Client::new(app);
        assert_eq!(client.get("/anywhere").await.body, "bar: fallback");
        assert_eq!(client.post("/anywhere").await.body, "7");
    }

    #[test]
    fn a_method_router_as_a_fallback_reading_state_no_router_holds_does_not_compile() {
        let app = Router::new().fallback(get(|State(n): State<u8>| async move { n.to_string() }));
        let error = app.compile().unwrap_err();
        assert!(
            matches!(error, pronghorn::RouteError::MissingState { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("u8"), "{error}");
    }

    #[tokio::test]
    async fn state_isnt_cloned_too_much() {
        let state = CountingCloneableState::new();
        let app = Router::new()
            .route("/", get(|_: State<CountingCloneableState>| async {}))
            .with_state(state.clone());
        let client = Client::new(app);
        state.setup_done();

        client.get("/").await;
        // axum's bound is 3; one clone is the value the handler takes.
        assert_eq!(state.count(), 1);
    }

    #[tokio::test]
    async fn state_isnt_cloned_too_much_in_layer() {
        async fn layer(
            State(_): State<CountingCloneableState>,
            req: Req,
            next: Next,
        ) -> pronghorn::Response {
            next.run(req).await
        }

        let state = CountingCloneableState::new();
        let app = Router::new()
            .route("/", get(|| async {}))
            .layer(from_fn_with_state(state.clone(), layer));
        let client = Client::new(app);
        state.setup_done();

        client.get("/").await;
        assert_eq!(state.count(), 1);
    }

    #[derive(Clone)]
    struct AppState {
        greeting: Greeting,
        users: Arc<Vec<&'static str>>,
    }

    #[derive(Clone)]
    struct Greeting(&'static str);

    impl FromRef<AppState> for Greeting {
        fn from_ref(state: &AppState) -> Self {
            state.greeting.clone()
        }
    }

    impl FromRef<AppState> for Arc<Vec<&'static str>> {
        fn from_ref(state: &AppState) -> Self {
            Arc::clone(&state.users)
        }
    }

    fn app_state() -> AppState {
        AppState {
            greeting: Greeting("hello"),
            users: Arc::new(vec!["ada", "grace"]),
        }
    }

    /// The routes of an app written for `AppState`, as axum apps split
    /// them: a function returning `Router<AppState>`.
    fn users() -> Router<AppState> {
        Router::new()
            .route(
                "/",
                get(|State(users): State<Arc<Vec<&'static str>>>| async move { users.join(",") }),
            )
            .route(
                "/{id}",
                get(
                    |State(Greeting(greeting)): State<Greeting>, Path(id): Path<usize>| async move {
                        format!("{greeting} #{id}")
                    },
                ),
            )
    }

    #[tokio::test]
    async fn routers_written_for_one_state_nest_and_merge_then_take_it_once() {
        let app = Router::new()
            .nest("/users", users())
            .merge(Router::new().route(
                "/state",
                get(|State(state): State<AppState>| async move { state.greeting.0 }),
            ))
            .fallback(|State(Greeting(greeting)): State<Greeting>| async move {
                (StatusCode::NOT_FOUND, format!("{greeting}, nobody here"))
            })
            .with_state(app_state());
        let client = Client::new(app);

        assert_eq!(client.get("/users").await.body, "ada,grace");
        assert_eq!(client.get("/users/7").await.body, "hello #7");
        assert_eq!(client.get("/state").await.body, "hello");
        let res = client.get("/nowhere").await;
        assert_eq!(res.status, StatusCode::NOT_FOUND);
        assert_eq!(res.body, "hello, nobody here");
    }

    #[tokio::test]
    async fn a_router_given_its_state_joins_an_app_whose_states_are_found_by_type() {
        let app = Router::new()
            .get("/count", |State(count): State<u32>| count.to_string())
            .state(3_u32)
            .nest("/users", users().with_state(app_state()));
        let client = Client::new(app);

        assert_eq!(client.get("/count").await.body, "3");
        assert_eq!(client.get("/users/1").await.body, "hello #1");
    }

    #[tokio::test]
    async fn a_layered_handler_and_a_middleware_function_read_parts_of_their_states() {
        async fn stamp(
            State(Greeting(greeting)): State<Greeting>,
            req: Req,
            next: Next,
        ) -> pronghorn::Response {
            let mut res = next.run(req).await;
            res.headers_mut()
                .insert("x-greeting", http::HeaderValue::from_static(greeting));
            res
        }

        let greet = |State(Greeting(greeting)): State<Greeting>| async move { greeting };
        let state = app_state();
        let app = Router::new()
            .route(
                "/",
                get(greet.layer(from_fn_with_state(state.clone(), stamp))),
            )
            .with_state(state);
        let res = Client::new(app).get("/").await;
        assert_eq!(res.body, "hello");
        assert_eq!(res.headers["x-greeting"], "hello");
    }

    #[cfg(feature = "macros")]
    #[tokio::test]
    async fn debug_handler_checks_a_handler_against_the_state_it_names() {
        #[pronghorn::debug_handler(state = AppState)]
        async fn greet(State(Greeting(greeting)): State<Greeting>, Path(id): Path<u32>) -> String {
            format!("{greeting} {id}")
        }

        let app = Router::new()
            .route("/{id}", get(greet))
            .with_state(app_state());
        assert_eq!(Client::new(app).get("/5").await.body, "hello 5");
    }

    #[cfg(feature = "macros")]
    #[tokio::test]
    async fn derived_from_ref_reads_each_field_but_the_skipped() {
        #[derive(Clone, pronghorn::handler::FromRef)]
        struct AppState {
            auth_token: String,
            #[from_ref(skip)]
            #[expect(dead_code, reason = "skipped: the same type as `auth_token`")]
            also_string: String,
            limit: u16,
        }

        async fn handler(State(token): State<String>, State(limit): State<u16>) -> String {
            format!("{token} {limit}")
        }

        let state = AppState {
            auth_token: "secret".to_owned(),
            also_string: "other".to_owned(),
            limit: 10,
        };
        let app = Router::new().route("/", get(handler)).with_state(state);
        assert_eq!(Client::new(app).get("/").await.body, "secret 10");
    }
}
