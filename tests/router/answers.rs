//! The conventions a router answers by: pronghorn's own, and axum's
//! (`Router::answers(Answers::Axum)`), each difference in both.

use pronghorn::router::Answers;

use super::*;

fn users(answers: Option<Answers>) -> CompiledRouter {
    let router = Router::new()
        .route(
            "/users",
            pronghorn::router::get(|| "all").post(|| "created"),
        )
        .get("/dir/", || "directory")
        .get("/a/b", || "a b")
        .get("/files/{*path}", |Path(path): Path<String>| path)
        .nest("/api", Router::new().get("/items", || "items"))
        .nest_service(
            "/static",
            tower::service_fn(|request: Req| async move {
                Ok::<_, std::convert::Infallible>(request.uri().path().to_owned())
            }),
        );
    match answers {
        Some(answers) => router.answers(answers),
        None => router,
    }
    .compile()
    .unwrap()
}

#[tokio::test]
async fn the_routers_own_404_and_405_say_so_by_default_and_are_empty_as_axums() {
    let router = users(None);
    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (StatusCode::NOT_FOUND, "Not Found")
    );
    assert_eq!(
        missing.headers[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    let refused = send(&router, Method::DELETE, "/users").await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(refused.body, "Method Not Allowed");
    assert_eq!(refused.headers[header::ALLOW], "GET, POST, HEAD");

    let router = users(Some(Answers::Axum));
    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (StatusCode::NOT_FOUND, "")
    );
    assert!(!missing.headers.contains_key(header::CONTENT_TYPE));
    let refused = send(&router, Method::DELETE, "/users").await;
    assert_eq!(
        (refused.status, refused.body.as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, "")
    );
    assert!(!refused.headers.contains_key(header::CONTENT_TYPE));
    assert_eq!(refused.headers[header::ALLOW], "GET,HEAD,POST");
}

#[tokio::test]
async fn options_is_answered_204_by_default_and_405_as_axum_answers_it() {
    let router = users(None);
    let options = send(&router, Method::OPTIONS, "/users").await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    assert_eq!(options.headers[header::ALLOW], "GET, POST, HEAD, OPTIONS");

    let router = users(Some(Answers::Axum));
    let options = send(&router, Method::OPTIONS, "/users").await;
    assert_eq!(options.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(options.headers[header::ALLOW], "GET,HEAD,POST");
}

#[tokio::test]
async fn slashes_are_ignored_by_default_and_kept_as_axum_keeps_them() {
    let status =
        |router: CompiledRouter, path: &'static str| async move { get(&router, path).await.status };
    let router = users(None);
    for path in [
        "/users",
        "/users/",
        "/dir",
        "/dir/",
        "/a/b",
        "/a//b",
        "/api/items/",
    ] {
        assert_eq!(status(router.clone(), path).await, StatusCode::OK, "{path}");
    }

    let router = users(Some(Answers::Axum));
    for (path, expected) in [
        ("/users", StatusCode::OK),
        ("/users/", StatusCode::NOT_FOUND),
        ("/dir/", StatusCode::OK),
        ("/dir", StatusCode::NOT_FOUND),
        ("/a/b", StatusCode::OK),
        ("/a//b", StatusCode::NOT_FOUND),
        ("/api/items", StatusCode::OK),
        ("/api/items/", StatusCode::NOT_FOUND),
        // A catch-all takes the rest of the path as it is.
        ("/files/a//b/", StatusCode::OK),
        // A nested service takes its base with or without a slash.
        ("/static", StatusCode::OK),
        ("/static/", StatusCode::OK),
        ("/static/app.css", StatusCode::OK),
    ] {
        assert_eq!(status(router.clone(), path).await, expected, "{path}");
    }
    // A method no route takes at a path the slash keeps from the route is
    // a 404 there, not a 405.
    assert_eq!(
        send(&router, Method::DELETE, "/users/").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_fallback_still_answers_what_the_slashes_keep_from_a_route() {
    let router = Router::new()
        .get("/users", || "all")
        .fallback(|uri: http::Uri| format!("fallback for {uri}"))
        .answers(Answers::Axum)
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/users/").await.body, "fallback for /users/");
}

#[tokio::test]
async fn the_answers_no_route_gives_keep_axums_shape_through_a_layer() {
    let router = Router::new()
        .get("/users", || "all")
        .layer(tower::util::MapResponseLayer::new(
            |response: Response<Body>| response,
        ))
        .answers(Answers::Axum)
        .compile()
        .unwrap();
    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (StatusCode::NOT_FOUND, "")
    );
    let refused = send(&router, Method::POST, "/users").await;
    assert_eq!(
        (refused.status, refused.body.as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, "")
    );
    assert_eq!(refused.headers[header::ALLOW], "GET,HEAD");
}
