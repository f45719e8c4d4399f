//! Which route answers when several match, and routers composed with `nest` and `merge`.

use super::*;

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
    // normal form would be, and a catch-all's value leaves the empty
    // segments out.
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
        "/e/{*rest} rest=x/other"
    );
    assert_eq!(
        get(&router, "/f//a.b.json").await.body,
        "/f/{name}.{ext} name=a ext=b.json"
    );
    assert_eq!(
        get(&router, "/f/a//b///raw/").await.body,
        "/f/{*path}/raw path=a/b"
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
    let conflict = Router::new()
        .get("/a", || "1")
        .merge(Router::new().get("/a", || "2"))
        .compile();
    assert!(matches!(conflict, Err(RouteError::DuplicateRoute { .. })));
}
