//! Extractors and bodies, and responses built with axum.

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
    router: &CompiledRouter,
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

fn router() -> CompiledRouter {
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
            |State(name): State<Arc<str>>, method: Method, uri: http::Uri, headers: HeaderMap| {
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
    let wrong_shape = send_body(&router, "/json", Some("application/json"), r#"{"id":"x"}"#).await;
    assert_eq!(
        wrong_shape.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "JSON, but not the value expected"
    );
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

/// axum's head extractors work through `Axum(..)`: axum's own `Query`,
/// one of the user's (as axum-extra's are), their rejections as answers,
/// and one that would await is a logged 500.
#[cfg(feature = "axum")]
#[tokio::test]
async fn axum_head_extractors_are_arguments() {
    use axum::extract::{FromRequestParts, Query};
    use http::request::Parts;
    use pronghorn::handler::Axum;

    /// A cookie, read as axum-extra's `CookieJar` would.
    struct Login(String);

    impl<S: Send + Sync> FromRequestParts<S> for Login {
        type Rejection = (StatusCode, &'static str);

        async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
            let cookie = parts
                .headers
                .get(header::COOKIE)
                .and_then(|v| v.to_str().ok());
            match cookie.and_then(|cookie| cookie.strip_prefix("login=")) {
                Some(login) => Ok(Login(login.to_owned())),
                None => Err((StatusCode::UNAUTHORIZED, "no login")),
            }
        }
    }

    /// An extractor that waits for something.
    struct Slow;

    impl<S: Send + Sync> FromRequestParts<S> for Slow {
        type Rejection = StatusCode;

        async fn from_request_parts(_: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
            tokio::task::yield_now().await;
            Ok(Slow)
        }
    }

    #[derive(serde::Deserialize)]
    struct Page {
        n: u32,
    }

    let router = Router::new()
        .get(
            "/page",
            |Axum(Login(login)): Axum<Login>, Axum(Query(page)): Axum<Query<Page>>| {
                format!("{login} {}", page.n)
            },
        )
        .get("/slow", |_: Axum<Slow>| "never")
        .compile()
        .unwrap();
    let ask = |uri: &str, cookie: Option<&str>| {
        let mut request = Request::get(uri);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        router.clone().oneshot(request.body(String::new()).unwrap())
    };
    let page = ask("/page?n=2", Some("login=ab")).await.unwrap();
    let body = page.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "ab 2");
    let anonymous = ask("/page?n=2", None).await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let body = anonymous.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "no login");
    let unparsed = ask("/page?n=x", Some("login=ab")).await.unwrap();
    assert_eq!(
        unparsed.status(),
        StatusCode::BAD_REQUEST,
        "axum's rejection"
    );

    let log = Log::capture();
    let slow = ask("/slow", None).await.unwrap();
    assert_eq!(slow.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let logged = log.take();
    assert!(
        logged.len() == 1 && logged[0].contains("Slow"),
        "the log names the extractor: {logged:?}"
    );
}

/// `Axum<Option<T>>` follows axum's rule for an optional extractor (absent
/// is `None`, malformed is its rejection); `Option<Axum<T>>` is `None`
/// whenever `T` refuses.
#[cfg(feature = "axum")]
#[tokio::test]
async fn optional_axum_extractors_tell_absent_from_malformed_as_written() {
    use axum::extract::{FromRequestParts, OptionalFromRequestParts};
    use http::request::Parts;
    use pronghorn::handler::Axum;

    /// A number in `x-count`, as axum-extra's `TypedHeader` reads one.
    struct Count(u32);

    impl<S: Send + Sync> FromRequestParts<S> for Count {
        type Rejection = (StatusCode, &'static str);

        async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
            match <Count as OptionalFromRequestParts<S>>::from_request_parts(parts, state).await? {
                Some(count) => Ok(count),
                None => Err((StatusCode::BAD_REQUEST, "no count")),
            }
        }
    }

    impl<S: Send + Sync> OptionalFromRequestParts<S> for Count {
        type Rejection = (StatusCode, &'static str);

        async fn from_request_parts(
            parts: &mut Parts,
            _: &S,
        ) -> Result<Option<Self>, Self::Rejection> {
            let Some(value) = parts.headers.get("x-count") else {
                return Ok(None);
            };
            let count = value.to_str().ok().and_then(|v| v.parse().ok());
            count
                .map(|count| Some(Count(count)))
                .ok_or((StatusCode::BAD_REQUEST, "count is not a number"))
        }
    }

    let describe = |count: Option<Count>| match count {
        Some(Count(n)) => format!("count {n}"),
        None => "no count".to_owned(),
    };
    let router = Router::new()
        .get("/axum-rule", move |Axum(count): Axum<Option<Count>>| {
            describe(count)
        })
        .get("/lenient", move |count: Option<Axum<Count>>| {
            describe(count.map(|Axum(count)| count))
        })
        .compile()
        .unwrap();
    let ask = |uri: &str, count: Option<&str>| {
        let mut request = Request::get(uri);
        if let Some(count) = count {
            request = request.header("x-count", count);
        }
        let router = router.clone();
        async move {
            let response = router
                .oneshot(request.body(String::new()).unwrap())
                .await
                .unwrap();
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8(body.to_vec()).unwrap())
        }
    };
    for uri in ["/axum-rule", "/lenient"] {
        assert_eq!(
            ask(uri, Some("3")).await,
            (StatusCode::OK, "count 3".into())
        );
        assert_eq!(ask(uri, None).await, (StatusCode::OK, "no count".into()));
    }
    assert_eq!(
        ask("/axum-rule", Some("three")).await,
        (StatusCode::BAD_REQUEST, "count is not a number".into())
    );
    assert_eq!(
        ask("/lenient", Some("three")).await,
        (StatusCode::OK, "no count".into())
    );
}

/// `Extension`, `MatchedPath`, `OriginalUri`, `Html` and `Redirect`
/// together; a missing extension and a location that is not header text
/// are 500s whose log names the cause.
#[tokio::test]
async fn request_extensions_matched_path_original_uri_html_and_redirects() {
    use pronghorn::handler::{Extension, Html, MatchedPath, OriginalUri, Redirect};

    #[derive(Clone)]
    struct Tenant(&'static str);

    let items = Router::new().get(
        "/items/{id}",
        |Extension(Tenant(tenant)): Extension<Tenant>,
         path: MatchedPath,
         OriginalUri(uri): OriginalUri| {
            Html(format!("<p>{tenant} {} {uri}</p>", path.as_str()))
        },
    );
    let router = Router::new()
        .nest("/shop", items)
        .get("/old", || Redirect::permanent("/shop/items/1"))
        .get("/bad", || Redirect::to("/\n"))
        .compile()
        .unwrap();

    let mut request = Request::get("/shop/items/7?x=1")
        .body(String::new())
        .unwrap();
    request.extensions_mut().insert(Tenant("acme"));
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/html; charset=utf-8"
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "<p>acme /shop/items/{id} /shop/items/7?x=1</p>");

    let old = get(&router, "/old").await;
    assert_eq!(old.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(old.headers[header::LOCATION], "/shop/items/1");

    let log = Log::capture();
    assert_eq!(
        get(&router, "/shop/items/7").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    let logged = log.take();
    assert!(
        logged.len() == 1 && logged[0].contains("Tenant"),
        "the log names the missing extension: {logged:?}"
    );
    assert_eq!(
        get(&router, "/bad").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert_eq!(log.take().len(), 1, "the bad location is logged");
}

/// A form body is read as a query string is; a streaming body is cut at
/// the body limit with an error, and one that declares more is refused
/// with 413 before it is read.
#[tokio::test]
async fn form_bodies_and_streaming_bodies_keep_to_the_limit() {
    use pronghorn::handler::Form;

    #[derive(serde::Deserialize)]
    struct Search {
        q: String,
        page: u32,
    }

    let app = |limit| {
        Router::new()
            .post("/search", |Form(search): Form<Search>| {
                format!("{} {}", search.q, search.page)
            })
            .post("/stream", |body: Body| async move {
                match body.collect().await {
                    Ok(body) => format!("read {}", body.to_bytes().len()),
                    Err(error) => format!("cut: {error}"),
                }
            })
            .body_limit(limit)
            .compile()
            .unwrap()
    };
    let form = |body: &str| {
        Request::post("/search")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body.to_owned())
            .unwrap()
    };
    let text = |response: Response<Body>| async {
        response.into_body().collect().await.unwrap().to_bytes()
    };
    let found = app(64).oneshot(form("q=a%20b&page=2")).await.unwrap();
    assert_eq!(text(found).await, "a b 2");
    let short = app(64).oneshot(form("q=x")).await.unwrap();
    assert_eq!(
        short.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "no `page`"
    );
    let long = app(8).oneshot(form("q=a%20b&page=2")).await.unwrap();
    assert_eq!(
        long.status(),
        StatusCode::PAYLOAD_TOO_LARGE,
        "14 bytes over 8"
    );

    let stream = |body: Body| Request::post("/stream").body(body).unwrap();
    let read = app(8).oneshot(stream(Body::from("1234"))).await.unwrap();
    assert_eq!(text(read).await, "read 4");
    let declared = app(8)
        .oneshot(stream(Body::from("123456789")))
        .await
        .unwrap();
    assert_eq!(declared.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let chunks = ["12345", "67890"].map(|chunk| Ok::<_, std::io::Error>(Bytes::from(chunk)));
    let body = Body::from_stream(futures_util::stream::iter(chunks));
    let cut = app(8).oneshot(stream(body)).await.unwrap();
    let answer = text(cut).await;
    assert!(answer.starts_with(b"cut: "), "{answer:?}");
}

/// The whole request as the last argument: its head, its extensions with
/// the matched pattern among them, and its body unread, cut at the limit.
#[tokio::test]
async fn the_whole_request_is_a_last_argument_with_its_matched_path() {
    use pronghorn::handler::{MatchedPath, Path};

    #[derive(Clone)]
    struct Tenant(&'static str);

    let router = Router::new()
        .post(
            "/notes/{id}",
            |Path(id): Path<u32>, request: Request<Body>| async move {
                let tenant = request.extensions().get::<Tenant>().unwrap().0;
                let pattern = request.extensions().get::<MatchedPath>().unwrap().clone();
                let (parts, body) = request.into_parts();
                let body = match body.collect().await {
                    Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
                    Err(error) => format!("cut: {error}"),
                };
                format!(
                    "{id} {} {} {tenant} {} {body}",
                    parts.method,
                    parts.headers["x-note"].to_str().unwrap(),
                    pattern.as_str()
                )
            },
        )
        .body_limit(8)
        .compile()
        .unwrap();
    let ask = |body: Body| {
        let mut request = Request::post("/notes/3")
            .header("x-note", "n")
            .body(body)
            .unwrap();
        request.extensions_mut().insert(Tenant("acme"));
        request
    };
    let text = |response: Response<Body>| async {
        response.into_body().collect().await.unwrap().to_bytes()
    };
    let read = router
        .clone()
        .oneshot(ask(Body::from("hello")))
        .await
        .unwrap();
    assert_eq!(text(read).await, "3 POST n acme /notes/{id} hello");
    let declared = router
        .clone()
        .oneshot(ask(Body::from("123456789")))
        .await
        .unwrap();
    assert_eq!(declared.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let chunks = ["12345", "67890"].map(|chunk| Ok::<_, std::io::Error>(Bytes::from(chunk)));
    let streamed = Body::from_stream(futures_util::stream::iter(chunks));
    let cut = router.oneshot(ask(streamed)).await.unwrap();
    let answer = text(cut).await;
    assert!(
        answer.starts_with(b"3 POST n acme /notes/{id} cut:"),
        "{answer:?}"
    );
}

/// A router nested with its own body limit and timeout keeps them for its
/// routes and its fallback; one without them takes the outer router's.
/// (The body timeout is a setting of feature `server`.)
#[cfg(feature = "server")]
#[tokio::test(start_paused = true)]
async fn a_nested_router_s_body_limit_and_timeout_hold_for_its_own_routes() {
    use std::time::Duration;

    let size = |body: Bytes| format!("{} bytes", body.len());
    let uploads = Router::new()
        .post("/", size)
        .nest("/small", Router::new().post("/", size).body_limit(8))
        .fallback(size)
        .body_limit(64)
        .body_timeout(Duration::from_secs(1));
    let router = Router::new()
        .post("/notes", size)
        .nest("/uploads", uploads)
        .nest("/plain", Router::new().post("/", size))
        .body_limit(16)
        .body_timeout(Duration::from_secs(100))
        .compile()
        .unwrap();
    let post = |path: &'static str, length: usize| {
        let router = router.clone();
        async move {
            let request = Request::post(path).body("x".repeat(length)).unwrap();
            router.oneshot(request).await.unwrap().status()
        }
    };
    let cases = [
        ("/notes", 16, StatusCode::OK),
        ("/notes", 17, StatusCode::PAYLOAD_TOO_LARGE),
        ("/uploads", 64, StatusCode::OK),
        ("/uploads", 65, StatusCode::PAYLOAD_TOO_LARGE),
        ("/uploads/elsewhere", 64, StatusCode::OK),
        ("/uploads/small", 8, StatusCode::OK),
        ("/uploads/small", 9, StatusCode::PAYLOAD_TOO_LARGE),
        ("/plain", 17, StatusCode::PAYLOAD_TOO_LARGE),
    ];
    for (path, length, status) in cases {
        assert_eq!(post(path, length).await, status, "{length} bytes to {path}");
    }

    // A body that never comes: cut at the route's timeout.
    let silent = |path: &'static str| {
        let router = router.clone();
        async move {
            let body = http_body_util::StreamBody::new(futures_util::stream::pending::<
                Result<http_body::Frame<Bytes>, std::convert::Infallible>,
            >());
            let started = tokio::time::Instant::now();
            let request = Request::post(path).body(body).unwrap();
            let status = router.oneshot(request).await.unwrap().status();
            (status, started.elapsed())
        }
    };
    assert_eq!(
        silent("/uploads").await,
        (StatusCode::REQUEST_TIMEOUT, Duration::from_secs(1))
    );
    assert_eq!(
        silent("/notes").await,
        (StatusCode::REQUEST_TIMEOUT, Duration::from_secs(100))
    );
}

#[tokio::test]
async fn an_optional_query_or_path_is_none_when_absent_and_400_when_malformed() {
    #[derive(Debug, serde::Deserialize)]
    struct Filter {
        limit: u8,
    }
    let router = Router::new()
        .get("/items", |filter: Option<Query<Filter>>| {
            format!("{:?}", filter.map(|Query(filter)| filter.limit))
        })
        .get("/items/{id}", |id: Option<Path<u32>>| {
            format!("{:?}", id.map(|Path(id)| id))
        })
        .get("/all", |id: Option<Path<u32>>| {
            format!("{:?}", id.map(|Path(id)| id))
        })
        .compile()
        .unwrap();

    for (path, answer) in [
        ("/items?limit=5", "Some(5)"),
        ("/items", "None"),
        ("/items?utm_source=mail", "None"),
        ("/items/7", "Some(7)"),
        ("/all", "None"),
    ] {
        let got = get(&router, path).await;
        assert_eq!(
            (got.status, got.body.as_str()),
            (StatusCode::OK, answer),
            "{path}"
        );
    }
    // Refused, naming the key.
    for (path, key) in [
        ("/items?limit=many", "`limit`"),
        ("/items?limit=300", "`limit`"),
        ("/items/seven", "`id`"),
        ("/items/%FF", "`id`"),
    ] {
        let refused = get(&router, path).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{path}");
        assert!(refused.body.contains(key), "{path}: {}", refused.body);
    }
}

#[tokio::test]
async fn query_and_path_read_pairs_as_key_value_tuples_and_errors_name_the_key() {
    #[derive(serde::Deserialize)]
    struct Tags {
        tag: Vec<String>,
    }
    let router = Router::new()
        .get("/search", |Query(pairs): Query<Vec<(String, String)>>| {
            format!("{pairs:?}")
        })
        .get("/typed", |Query(pairs): Query<Vec<(String, u8)>>| {
            format!("{pairs:?}")
        })
        .get("/p/{a}/{b}", |Path(pairs): Path<Vec<(String, String)>>| {
            format!("{pairs:?}")
        })
        .get("/tags", |Query(tags): Query<Tags>| {
            format!("{:?}", tags.tag)
        })
        .compile()
        .unwrap();

    // Repeated keys are kept, in order, as serde_urlencoded gives them.
    assert_eq!(
        get(&router, "/search?tag=a&tag=b+c&empty").await.body,
        r#"[("tag", "a"), ("tag", "b c"), ("empty", "")]"#
    );
    assert_eq!(
        get(&router, "/p/x%20y/z").await.body,
        r#"[("a", "x y"), ("b", "z")]"#
    );
    let refused = get(&router, "/typed?n=1&m=x").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.body.contains("`m`"), "{}", refused.body);
    // A value that does not fit its field's type names the field.
    let refused = get(&router, "/tags?tag=a").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.body.contains("`tag`"), "{}", refused.body);
}

#[tokio::test]
async fn text_bytes_bodies_and_header_maps_are_answers() {
    use http_body_util::StreamBody;
    use pronghorn::IntoResponse;
    use std::{borrow::Cow, convert::Infallible};

    let text = Some("text/plain; charset=utf-8");
    let octets = Some("application/octet-stream");
    let mut headers = HeaderMap::new();
    headers.insert("x-kind", HeaderValue::from_static("map"));
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/csv"));
    headers.append(header::SET_COOKIE, HeaderValue::from_static("a=1"));
    headers.append(header::SET_COOKIE, HeaderValue::from_static("b=2"));
    let chunks =
        ["a", "b"].map(|chunk| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(chunk))));
    /// What the answer is, its response, and the status, content type and
    /// body expected of it.
    type Case = (
        &'static str,
        Response<Body>,
        StatusCode,
        Option<&'static str>,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            "Box<str>",
            Box::<str>::from("boxed").into_response(),
            StatusCode::OK,
            text,
            "boxed",
        ),
        (
            "borrowed Cow<str>",
            Cow::Borrowed("cow").into_response(),
            StatusCode::OK,
            text,
            "cow",
        ),
        (
            "owned Cow<str>",
            Cow::<str>::Owned("cow".into()).into_response(),
            StatusCode::OK,
            text,
            "cow",
        ),
        (
            "Box<[u8]>",
            Box::<[u8]>::from(&b"raw"[..]).into_response(),
            StatusCode::OK,
            octets,
            "raw",
        ),
        (
            "Cow<[u8]>",
            Cow::Borrowed(&b"raw"[..]).into_response(),
            StatusCode::OK,
            octets,
            "raw",
        ),
        (
            "streamed Body",
            Body::new(StreamBody::new(futures_util::stream::iter(chunks))).into_response(),
            StatusCode::OK,
            None,
            "ab",
        ),
        (
            "HeaderMap",
            headers.clone().into_response(),
            StatusCode::OK,
            Some("text/csv"),
            "",
        ),
        (
            "(HeaderMap, T)",
            (headers.clone(), "a,b").into_response(),
            StatusCode::OK,
            Some("text/csv"),
            "a,b",
        ),
        (
            "(StatusCode, HeaderMap, T)",
            (StatusCode::CREATED, headers, "a,b").into_response(),
            StatusCode::CREATED,
            Some("text/csv"),
            "a,b",
        ),
    ];
    for (case, response, status, content_type, body) in cases {
        assert_eq!(response.status(), status, "{case}");
        let got_type = response.headers().get(header::CONTENT_TYPE);
        assert_eq!(
            got_type.map(|value| value.to_str().unwrap()),
            content_type,
            "{case}"
        );
        if content_type == Some("text/csv") {
            assert_eq!(response.headers()["x-kind"], "map", "{case}");
            let cookies = response.headers().get_all(header::SET_COOKIE);
            assert_eq!(cookies.iter().count(), 2, "{case}: every value of a name");
        }
        let got = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(got, body, "{case}");
    }
}

/// A handler that takes `Result<E, ERejection>` answers the rejection
/// itself: it sees the status the extractor would answer and its message.
#[tokio::test]
async fn a_result_argument_hands_the_rejection_to_the_handler() {
    use pronghorn::handler::{
        HeaderRejection, JsonRejection, PathRejection, QueryRejection, StringRejection,
    };

    #[derive(serde::Deserialize)]
    struct Page {
        page: u32,
    }
    let told = |status: StatusCode, message: &str| format!("handled {} {message}", status.as_u16());
    let router = Router::new()
        .post(
            "/items",
            move |item: Result<Json<Item>, JsonRejection>| match item {
                Ok(Json(item)) => format!("item {}", item.id),
                Err(rejection) => told(rejection.status(), rejection.message()),
            },
        )
        .get(
            "/pages",
            move |page: Result<Query<Page>, QueryRejection>| match page {
                Ok(Query(page)) => format!("page {}", page.page),
                Err(rejection) => told(rejection.status(), rejection.message()),
            },
        )
        .get(
            "/items/{id}",
            move |id: Result<Path<u32>, PathRejection>| match id {
                Ok(Path(id)) => format!("id {id}"),
                Err(rejection) => told(rejection.status(), rejection.message()),
            },
        )
        .get(
            "/auth",
            move |auth: Result<Header<Authorization>, HeaderRejection>| match auth {
                Ok(_) => "authorized".to_owned(),
                Err(rejection) => told(rejection.status(), rejection.message()),
            },
        )
        .post(
            "/notes",
            move |note: Result<String, StringRejection>| match note {
                Ok(note) => format!("{} bytes", note.len()),
                Err(rejection) => told(rejection.status(), rejection.message()),
            },
        )
        .body_limit(32)
        .compile()
        .unwrap();

    let json = Some("application/json");
    let answer = send_body(&router, "/items", json, r#"{"id":7,"name":"x"}"#).await;
    assert_eq!(answer.body, "item 7");
    let answer = send_body(&router, "/items", json, r#"{"id":"7"}"#).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        answer.body.starts_with("handled 422 invalid JSON body"),
        "{}",
        answer.body
    );
    let answer = send_body(&router, "/items", Some("text/plain"), "{}").await;
    assert!(
        answer.body.starts_with("handled 415 expected"),
        "{}",
        answer.body
    );
    let answer = send_body(&router, "/items", json, &"x".repeat(33)).await;
    assert!(answer.body.starts_with("handled 413"), "{}", answer.body);

    assert_eq!(get(&router, "/pages?page=2").await.body, "page 2");
    let answer = get(&router, "/pages?page=two").await;
    assert!(
        answer.body.starts_with("handled 400 invalid query string"),
        "{}",
        answer.body
    );
    assert_eq!(get(&router, "/items/9").await.body, "id 9");
    let answer = get(&router, "/items/nine").await;
    assert!(
        answer
            .body
            .starts_with("handled 400 invalid route parameters"),
        "{}",
        answer.body
    );
    let answer = get(&router, "/auth").await;
    assert_eq!(
        answer.body,
        "handled 400 missing request header `authorization`"
    );
    let answer = send_body(&router, "/notes", None, "\u{fffd}").await;
    assert_eq!(answer.body, "3 bytes");
    let answer = send_body(&router, "/notes", None, &"x".repeat(33)).await;
    assert!(answer.body.starts_with("handled 413"), "{}", answer.body);
}

/// A rejection the handler takes is axum's enum: the variant names the
/// fault, and its text is worded as the router answers, axum's under
/// `Answers::Axum` (a plain extractor on the same router answers the same
/// words), `WithRejection` included.
#[tokio::test]
async fn a_taken_rejection_is_axum_s_variant_worded_as_the_router_answers() {
    use pronghorn::{
        handler::{
            Form, WithRejection,
            rejection::{FormRejection, JsonRejection, PathRejection, QueryRejection},
        },
        router::{Answers, get as get_route},
    };
    fn json(item: Result<Json<Item>, JsonRejection>) -> String {
        match item {
            Ok(_) => "ok".to_owned(),
            Err(JsonRejection::JsonDataError(error)) => format!("data {}", error.body_text()),
            Err(JsonRejection::JsonSyntaxError(error)) => format!("syntax {}", error.body_text()),
            Err(JsonRejection::MissingJsonContentType(error)) => {
                format!("type {}", error.body_text())
            }
            Err(JsonRejection::BytesRejection(error)) => format!("bytes {}", error.body_text()),
            Err(other) => format!("other {other}"),
        }
    }
    fn form(form: Result<Form<Page>, FormRejection>) -> String {
        match form {
            Ok(_) => "ok".to_owned(),
            Err(FormRejection::InvalidFormContentType(error)) => format!("type {error}"),
            Err(FormRejection::FailedToDeserializeForm(error)) => format!("query {error}"),
            Err(FormRejection::FailedToDeserializeFormBody(error)) => format!("body {error}"),
            Err(other) => format!("other {other}"),
        }
    }
    let app = |answers: Answers| {
        Router::new()
            .post("/json", json)
            .post("/plain", |Json(_): Json<Item>| "ok")
            .route("/form", get_route(form).post(form))
            .get(
                "/query",
                |query: Result<Query<Page>, QueryRejection>| match query {
                    Err(QueryRejection::FailedToDeserializeQueryString(error)) => error.body_text(),
                    _ => "ok".to_owned(),
                },
            )
            .get(
                "/path/{id}",
                |id: Result<Path<u32>, PathRejection>| match id {
                    Err(PathRejection::FailedToDeserializePathParams(error)) => {
                        format!("{} | {}", error.body_text(), error.kind())
                    }
                    _ => "ok".to_owned(),
                },
            )
            .post("/with", |_: WithRejection<Json<Item>, JsonRejection>| "ok")
            .answers(answers)
            .body_limit(64)
            .compile()
            .unwrap()
    };
    let (axum, ours) = (app(Answers::Axum), app(Answers::Pronghorn));
    let ct = Some("application/json");
    let answer = send_body(&axum, "/json", ct, r#"{"id":"7"}"#).await;
    assert!(
        answer.body.starts_with(
            "data Failed to deserialize the JSON body into the target type: id: invalid type"
        ),
        "{}",
        answer.body
    );
    let plain = send_body(&axum, "/plain", ct, r#"{"id":"7"}"#).await;
    assert_eq!(answer.body["data ".len()..], plain.body);
    let answer = send_body(&ours, "/json", ct, r#"{"id":"7"}"#).await;
    assert!(
        answer
            .body
            .starts_with("data invalid JSON body: id: invalid type"),
        "{}",
        answer.body
    );
    let answer = send_body(&axum, "/json", ct, "{").await;
    assert!(
        answer
            .body
            .starts_with("syntax Failed to parse the request body as JSON"),
        "{}",
        answer.body
    );
    let answer = send_body(&axum, "/json", Some("text/plain"), "{}").await;
    assert_eq!(
        answer.body,
        "type Expected request with `Content-Type: application/json`"
    );
    let answer = send_body(&ours, "/json", ct, &"x".repeat(65)).await;
    assert!(
        answer
            .body
            .starts_with("bytes request body larger than the limit"),
        "{}",
        answer.body
    );
    let answer = send_body(&axum, "/json", ct, &"x".repeat(65)).await;
    assert_eq!(
        answer.body,
        "bytes Failed to buffer the request body: length limit exceeded"
    );

    let answer = send_body(&axum, "/form", Some("text/plain"), "page=1").await;
    assert_eq!(
        answer.body,
        "type Form requests must have `Content-Type: application/x-www-form-urlencoded`"
    );
    let form_type = Some("application/x-www-form-urlencoded");
    let answer = send_body(&axum, "/form", form_type, "page=x").await;
    assert!(
        answer
            .body
            .starts_with("body Failed to deserialize form body: page: invalid digit"),
        "{}",
        answer.body
    );
    let answer = get(&axum, "/form?page=x").await;
    assert!(
        answer
            .body
            .starts_with("query Failed to deserialize form: page: invalid digit"),
        "{}",
        answer.body
    );
    let answer = get(&ours, "/form?page=x").await;
    assert!(
        answer.body.starts_with("query invalid form body"),
        "{}",
        answer.body
    );

    let answer = get(&axum, "/query?page=x").await;
    assert!(
        answer
            .body
            .starts_with("Failed to deserialize query string: page: invalid digit"),
        "{}",
        answer.body
    );
    let answer = get(&ours, "/query?page=x").await;
    assert!(
        answer.body.starts_with("invalid query string"),
        "{}",
        answer.body
    );
    let answer = get(&axum, "/path/x").await;
    assert_eq!(
        answer.body,
        "Invalid URL: Cannot parse `x` to a `u32` | Cannot parse `x` to a `u32`"
    );
    let answer = get(&ours, "/path/x").await;
    assert!(
        answer.body.starts_with("invalid route parameters"),
        "{}",
        answer.body
    );

    // The rejection `WithRejection` hands its type is worded as axum's.
    let answer = send_body(&axum, "/with", ct, r#"{"id":"7"}"#).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer
            .body
            .starts_with("Failed to deserialize the JSON body"),
        "{}",
        answer.body
    );
}

/// `String` and `Bytes` taken with their rejections are axum's enums: a
/// body over the limit is `FailedToBufferBody::LengthLimitError` (413), a
/// body that is not UTF-8 `StringRejection::InvalidUtf8` (400), and a
/// `Json` body over the limit `JsonRejection::BytesRejection` holding the
/// same; each worded as the router answers.
#[tokio::test]
async fn body_rejections_are_axum_s_string_and_bytes_variants() {
    use pronghorn::{
        handler::rejection::{BytesRejection, FailedToBufferBody, JsonRejection, StringRejection},
        router::Answers,
    };

    fn text(body: Result<String, StringRejection>) -> String {
        match body {
            Ok(text) => format!("text {text}"),
            Err(StringRejection::InvalidUtf8(error)) => {
                format!("utf8 {} {}", error.status().as_u16(), error.body_text())
            }
            Err(StringRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(
                error,
            ))) => format!("limit {} {error}", error.status().as_u16()),
            Err(other) => format!("other {other}"),
        }
    }
    fn bytes(body: Result<Bytes, BytesRejection>) -> String {
        match body {
            Ok(bytes) => format!("{} bytes", bytes.len()),
            Err(BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(
                error,
            ))) => format!("limit {} {error}", error.status().as_u16()),
            Err(other) => format!("other {other}"),
        }
    }
    fn json(body: Result<Json<Item>, JsonRejection>) -> String {
        match body {
            Err(JsonRejection::BytesRejection(BytesRejection::FailedToBufferBody(
                FailedToBufferBody::LengthLimitError(error),
            ))) => format!("limit {}", error.body_text()),
            Err(other) => format!("other {other}"),
            Ok(_) => "ok".to_owned(),
        }
    }
    let app = |answers: Answers| {
        Router::new()
            .post("/text", text)
            .post("/bytes", bytes)
            .post("/json", json)
            .answers(answers)
            .body_limit(8)
            .compile()
            .unwrap()
    };
    let (axum, ours) = (app(Answers::Axum), app(Answers::Pronghorn));
    let send_raw = |router: &CompiledRouter, body: &'static [u8]| {
        let request = Request::post("/text")
            .body(http_body_util::Full::new(Bytes::from_static(body)))
            .unwrap();
        let router = router.clone();
        async move {
            let response = router.oneshot(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            String::from_utf8(body.to_vec()).unwrap()
        }
    };

    assert_eq!(send_raw(&ours, b"fine").await, "text fine");
    let told = send_raw(&ours, b"\xff\xfe").await;
    assert!(
        told.starts_with("utf8 400 request body is not UTF-8"),
        "{told}"
    );
    let told = send_raw(&axum, b"\xff\xfe").await;
    assert!(
        told.starts_with("utf8 400 Request body didn't contain valid UTF-8"),
        "{told}"
    );
    let told = send_body(&ours, "/text", None, "123456789").await.body;
    assert_eq!(
        told,
        "limit 413 request body larger than the limit of 8 bytes"
    );
    let told = send_body(&axum, "/text", None, "123456789").await.body;
    assert_eq!(
        told,
        "limit 413 Failed to buffer the request body: length limit exceeded"
    );
    let told = send_body(&ours, "/bytes", None, "123456789").await.body;
    assert_eq!(
        told,
        "limit 413 request body larger than the limit of 8 bytes"
    );
    assert_eq!(
        send_body(&ours, "/bytes", None, "12345678").await.body,
        "8 bytes"
    );
    let json_type = Some("application/json");
    let told = send_body(&axum, "/json", json_type, "123456789").await.body;
    assert_eq!(
        told,
        "limit Failed to buffer the request body: length limit exceeded"
    );
}

/// `Extension`, `NestedPath` and `RawForm` hand their rejections over as
/// axum's `ExtensionRejection`, `NestedPathRejection` and
/// `RawFormRejection`, worded as the router answers; `WithRejection`
/// takes them too.
#[tokio::test]
async fn extension_nested_path_and_raw_form_rejections_are_axum_s_types() {
    use pronghorn::{
        handler::{
            Extension, NestedPath, RawForm, WithRejection,
            rejection::{ExtensionRejection, NestedPathRejection, RawFormRejection},
        },
        router::Answers,
    };
    #[derive(Clone)]
    struct User;
    fn extension(user: Result<Extension<User>, ExtensionRejection>) -> (StatusCode, String) {
        match user {
            Ok(_) => (StatusCode::OK, "user".to_owned()),
            Err(ExtensionRejection::MissingExtension(missing)) => (
                missing.status(),
                format!("missing: {}", missing.body_text()),
            ),
            Err(other) => (other.status(), other.body_text()),
        }
    }
    fn raw_form(form: Result<RawForm, RawFormRejection>) -> String {
        match form {
            Ok(RawForm(bytes)) => format!("form {}", String::from_utf8_lossy(&bytes)),
            Err(RawFormRejection::InvalidFormContentType(error)) => format!("type {error}"),
            Err(RawFormRejection::BytesRejection(error)) => format!("bytes {error}"),
            Err(other) => format!("other {other}"),
        }
    }
    let app = |answers: Answers| {
        Router::new()
            .get("/extension", extension)
            .get(
                "/nested",
                |nested: Result<NestedPath, NestedPathRejection>| match nested {
                    Ok(path) => format!("nested at {}", path.as_str()),
                    Err(rejection) => format!("{} {}", rejection.status(), rejection.body_text()),
                },
            )
            .post("/form", raw_form)
            .post("/with", |_: WithRejection<RawForm, RawFormRejection>| "ok")
            .answers(answers)
            .body_limit(16)
            .compile()
            .unwrap()
    };
    let (axum, ours) = (app(Answers::Axum), app(Answers::Pronghorn));

    let answer = get(&axum, "/extension").await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(
        answer
            .body
            .starts_with("missing: Missing request extension: Extension of type `"),
        "{}",
        answer.body
    );
    let answer = get(&ours, "/extension").await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(answer.body, "missing: Internal Server Error");

    assert_eq!(
        get(&axum, "/nested").await.body,
        "500 Internal Server Error The matched route is not nested"
    );
    assert_eq!(
        get(&ours, "/nested").await.body,
        "500 Internal Server Error Internal Server Error"
    );

    let form = Some("application/x-www-form-urlencoded");
    assert_eq!(
        send_body(&ours, "/form", form, "a=1").await.body,
        "form a=1"
    );
    let answer = send_body(&axum, "/form", Some("text/plain"), "a=1").await;
    assert_eq!(
        answer.body,
        "type Form requests must have `Content-Type: application/x-www-form-urlencoded`"
    );
    let answer = send_body(&axum, "/form", form, &"a".repeat(17)).await;
    assert_eq!(
        answer.body,
        "bytes Failed to buffer the request body: length limit exceeded"
    );
    let answer = send_body(&ours, "/with", Some("text/plain"), "a=1").await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

/// `Router::rejection` answers every rejection of the router's extractors
/// in one shape — a custom extractor's too, through `RequestContext::reject`
/// — and a nested router keeps it unless it sets its own.
#[tokio::test]
async fn a_router_shapes_every_rejection_and_nested_routers_inherit_it() {
    use pronghorn::handler::{FromRequestHead, Rejection, RequestContext};

    struct Tenant;
    impl FromRequestHead for Tenant {
        fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
            match context.headers().contains_key("x-tenant") {
                true => Ok(Tenant),
                false => Err(context.reject(Rejection::new(
                    "Tenant",
                    StatusCode::BAD_REQUEST,
                    "missing header `x-tenant`",
                ))),
            }
        }
    }
    let as_json = |rejection: Rejection| {
        let body = serde_json::json!({
            "error": rejection.message(),
            "extractor": rejection.extractor(),
        });
        (rejection.status(), Json(body))
    };
    let api = Router::new()
        .post("/items", |Json(item): Json<Item>| item.name)
        .get("/items/{id}", |Path(id): Path<u32>| format!("{id}"))
        .get("/tenant", |_: Tenant| "tenant");
    let plain = Router::new()
        .get("/items/{id}", |Path(id): Path<u32>| format!("{id}"))
        .rejection(|rejection: Rejection| (rejection.status(), "plain"));
    let router = Router::new()
        .get("/pages", |Query(_): Query<Vec<(u32, u32)>>| "pages")
        .post("/notes", |note: String| note)
        .body_limit(8)
        .nest("/api", api)
        .nest("/plain", plain)
        .rejection(as_json)
        .compile()
        .unwrap();

    let shaped = |answer: &Answer, status: StatusCode, extractor: &str| {
        assert_eq!(answer.status, status, "{}", answer.body);
        assert_eq!(answer.headers[header::CONTENT_TYPE], "application/json");
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["extractor"], extractor, "{body}");
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{body}"
        );
    };
    let json = Some("application/json");
    let answer = send_body(&router, "/api/items", json, "{").await;
    shaped(&answer, StatusCode::BAD_REQUEST, "Json");
    let answer = send_body(&router, "/api/items", None, "{}").await;
    shaped(&answer, StatusCode::UNSUPPORTED_MEDIA_TYPE, "Json");
    shaped(
        &get(&router, "/api/items/x").await,
        StatusCode::BAD_REQUEST,
        "Path",
    );
    shaped(
        &get(&router, "/api/tenant").await,
        StatusCode::BAD_REQUEST,
        "Tenant",
    );
    shaped(
        &get(&router, "/pages?a=b").await,
        StatusCode::BAD_REQUEST,
        "Query",
    );
    let answer = send_body(&router, "/notes", None, "123456789").await;
    shaped(&answer, StatusCode::PAYLOAD_TOO_LARGE, "body");
    // The nested router's own shape wins for its routes.
    let answer = get(&router, "/plain/items/x").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::BAD_REQUEST, "plain")
    );
    // A request that reads is not touched.
    assert_eq!(get(&router, "/api/items/3").await.body, "3");
}

/// `Option<Json<T>>` is `None` for a request without a content type, and
/// otherwise reads JSON as `Json<T>` does, refusals included.
#[tokio::test]
async fn an_optional_json_body_is_none_without_a_content_type() {
    let router = Router::new()
        .post("/items", |item: Option<Json<Item>>| match item {
            Some(Json(item)) => format!("item {}", item.id),
            None => "no item".to_owned(),
        })
        .compile()
        .unwrap();
    let json = Some("application/json");
    assert_eq!(send_body(&router, "/items", None, "").await.body, "no item");
    let answer = send_body(&router, "/items", json, r#"{"id":3,"name":"x"}"#).await;
    assert_eq!(answer.body, "item 3");
    let answer = send_body(&router, "/items", json, "{").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let answer = send_body(&router, "/items", Some("text/plain"), "{}").await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

/// A handler written by hand may change its request's URI before it reads
/// the route's parameters: they are still those of the path as received,
/// with hooks on the route or without.
#[tokio::test]
async fn a_hand_written_handler_that_rewrites_the_uri_reads_the_parameters_as_received() {
    use pronghorn::handler::{BoxFuture, Handler, RouteContext};
    use std::task::Context;

    #[derive(Clone)]
    struct Rewrites;

    impl Handler<()> for Rewrites {
        fn call(
            &self,
            request: &mut Req,
            route: RouteContext<'_>,
            _: &mut Context<'_>,
        ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
            *request.uri_mut() = http::Uri::from_static("/elsewhere/entirely/x");
            let context = route.with_request(request);
            let name = context.params().get_raw("name").unwrap_or("none");
            Step::Ready(Response::new(Body::from(name.to_owned())))
        }
    }

    let bare = Router::new().get("/users/{name}", Rewrites);
    let hooked = bare
        .clone()
        .postfix("/", |_: &Route<'_>, _: &mut Response<Body>| {});
    for router in [bare, hooked] {
        let answer = send(&router.compile().unwrap(), Method::GET, "/users/ada").await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.body, "ada");
    }
}

#[tokio::test]
async fn extractors_deref_to_the_values_they_wrap() {
    let router = Router::new()
        .get("/page", |page: Query<Page>| {
            format!("{} {}", page.page, page.q.as_deref().unwrap_or("-"))
        })
        .get("/files/{name}.{ext}", |file: Path<File>| {
            format!("{}|{}", file.name, file.ext)
        })
        .post("/items", |mut item: Json<Item>| {
            item.id += 1;
            format!("{} {}", item.id, item.name)
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/page?page=2&q=x").await.body, "2 x");
    assert_eq!(get(&router, "/files/a.tar.gz").await.body, "a|tar.gz");
    let item = send_body(
        &router,
        "/items",
        Some("application/json"),
        r#"{"id":1,"name":"n"}"#,
    )
    .await;
    assert_eq!(item.body, "2 n");
}

#[tokio::test]
async fn a_form_on_get_and_head_reads_the_query_string() {
    use pronghorn::handler::Form;
    let router = Router::new()
        .route(
            "/search",
            pronghorn::router::get(|Form(page): Form<Page>| format!("page {}", page.page))
                .post(|Form(page): Form<Page>| format!("posted {}", page.page)),
        )
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/search?page=3").await.body, "page 3");
    let head = send(&router, Method::HEAD, "/search?page=3").await;
    assert_eq!((head.status, head.body.as_str()), (StatusCode::OK, ""));
    // A GET whose query does not fit is refused as a query is: 400.
    assert_eq!(
        get(&router, "/search?page=x").await.status,
        StatusCode::BAD_REQUEST
    );
    // Other methods read the body, of the form's content type.
    let form = "application/x-www-form-urlencoded";
    let posted = send_body(&router, "/search?page=9", Some(form), "page=4").await;
    assert_eq!(posted.body, "posted 4");
    let untyped = send_body(&router, "/search", None, "page=4").await;
    assert_eq!(untyped.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn mock_connect_info_stands_in_for_the_servers() {
    use pronghorn::handler::{ConnectInfo, MockConnectInfo};
    use std::net::SocketAddr;
    let peer = SocketAddr::from(([192, 0, 2, 7], 4000));
    let router = Router::new()
        .get("/ip", |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
            peer.to_string()
        })
        .layer(MockConnectInfo(peer))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/ip").await.body, "192.0.2.7:4000");
    // The server's own, where there is one, is kept.
    let mut request = Request::get("/ip").body(String::new()).unwrap();
    let real = SocketAddr::from(([198, 51, 100, 1], 5000));
    request.extensions_mut().insert(ConnectInfo(real));
    let response = router.oneshot(request).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "198.51.100.1:5000");
}

/// A router with one route per extractor that can refuse, answering as
/// `answers` says.
fn refusing(answers: pronghorn::router::Answers) -> CompiledRouter {
    use pronghorn::handler::{Form, headers::UserAgent};
    #[derive(serde::Deserialize)]
    struct Order {
        #[allow(dead_code, reason = "read for its shape")]
        items: Vec<Item>,
    }
    Router::new()
        .post("/json", |_: Json<Order>| "ok")
        .post("/form", |_: Form<Page>| "ok")
        .get("/query", |_: Query<Page>| "ok")
        .get("/one/{id}", |_: Path<u32>| "ok")
        .get("/two/{a}/{b}", |_: Path<(u32, u32)>| "ok")
        .get("/named/{name}.{ext}", |_: Path<Named>| "ok")
        .get("/header", |_: Header<UserAgent>| "ok")
        .post("/text", |_: String| "ok")
        .body_limit(64)
        .answers(answers)
        .compile()
        .unwrap()
}

#[derive(serde::Deserialize)]
struct Named {
    #[allow(dead_code, reason = "read for its shape")]
    name: String,
    #[allow(dead_code, reason = "read for its shape")]
    ext: u8,
}

/// Each refusal, as `(status, text)`.
async fn refusals(router: &CompiledRouter) -> Vec<(u16, String)> {
    let mut answers = Vec::new();
    let json = Some("application/json");
    let form = Some("application/x-www-form-urlencoded");
    for (path, content_type, body) in [
        (
            "/json",
            json,
            r#"{"items":[{"id":1,"name":"a"},{"id":"x","name":"b"}]}"#,
        ),
        ("/json", json, r#"{"items":["#),
        ("/json", None, "{}"),
        ("/form", form, "page=x"),
        ("/form", None, "page=1"),
    ] {
        let answer = send_body(router, path, content_type, body).await;
        answers.push((answer.status.as_u16(), answer.body));
    }
    let large = send_body(router, "/text", None, &"x".repeat(65)).await;
    answers.push((large.status.as_u16(), large.body));
    for path in [
        "/query?page=x",
        "/one/x",
        "/two/1/x",
        "/named/a.x",
        "/header",
    ] {
        let answer = get(router, path).await;
        answers.push((answer.status.as_u16(), answer.body));
    }
    answers
}

#[tokio::test]
async fn text_after_a_json_value_is_malformed_json_and_a_nested_field_is_named() {
    let router = router();
    let trailing = send_body(
        &router,
        "/json",
        Some("application/json"),
        r#"{"id":1,"name":"a"} x"#,
    )
    .await;
    assert_eq!(
        (trailing.status, trailing.body.as_str()),
        (
            StatusCode::BAD_REQUEST,
            "invalid JSON body: trailing characters at line 1 column 21"
        )
    );
    let missing = send_body(&router, "/json", Some("application/json"), r#"{"id":1}"#).await;
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid JSON body: missing field `name` at line 1 column 8"
        )
    );
}

#[tokio::test]
async fn rejections_name_the_field_at_fault_in_pronghorns_words_and_in_axums() {
    use pronghorn::router::Answers;
    let ours = refusals(&refusing(Answers::Pronghorn)).await;
    let expected: Vec<(u16, &str)> = vec![
        (
            422,
            "invalid JSON body: items[1].id: invalid type: string \"x\", expected u32 at line 1 column 39",
        ),
        (
            400,
            "invalid JSON body: items: EOF while parsing a list at line 1 column 10",
        ),
        (
            415,
            "expected a request with `content-type: application/json`",
        ),
        (
            422,
            "invalid form body: `page`: cannot parse `x` as u32: invalid digit found in string",
        ),
        (
            415,
            "expected a request with `content-type: application/x-www-form-urlencoded`",
        ),
        (413, "request body larger than the limit of 64 bytes"),
        (
            400,
            "invalid query string: `page`: cannot parse `x` as u32: invalid digit found in string",
        ),
        (
            400,
            "invalid route parameters: `id`: cannot parse `x` as u32: invalid digit found in string",
        ),
        (
            400,
            "invalid route parameters: `b`: cannot parse `x` as u32: invalid digit found in string",
        ),
        (
            400,
            "invalid route parameters: `ext`: cannot parse `x` as u8: invalid digit found in string",
        ),
        (400, "missing request header `user-agent`"),
    ];
    let ours: Vec<(u16, &str)> = ours.iter().map(|(s, t)| (*s, t.as_str())).collect();
    assert_eq!(ours, expected);

    let axums = refusals(&refusing(Answers::Axum)).await;
    let expected: Vec<(u16, &str)> = vec![
        (
            422,
            "Failed to deserialize the JSON body into the target type: items[1].id: invalid type: string \"x\", expected u32 at line 1 column 39",
        ),
        (
            400,
            "Failed to parse the request body as JSON: items: EOF while parsing a list at line 1 column 10",
        ),
        (
            415,
            "Expected request with `Content-Type: application/json`",
        ),
        (
            422,
            "Failed to deserialize form body: page: invalid digit found in string",
        ),
        (
            415,
            "Form requests must have `Content-Type: application/x-www-form-urlencoded`",
        ),
        (
            413,
            "Failed to buffer the request body: length limit exceeded",
        ),
        (
            400,
            "Failed to deserialize query string: page: invalid digit found in string",
        ),
        (400, "Invalid URL: Cannot parse `x` to a `u32`"),
        (
            400,
            "Invalid URL: Cannot parse value at index 1 with value `x` to a `u32`",
        ),
        (
            400,
            "Invalid URL: Cannot parse `ext` with value `x` to a `u8`",
        ),
        (400, "Header of type `user-agent` was missing"),
    ];
    let axums: Vec<(u16, &str)> = axums.iter().map(|(s, t)| (*s, t.as_str())).collect();
    assert_eq!(axums, expected);
}

#[tokio::test]
async fn a_path_rejection_tells_its_kind() {
    use pronghorn::handler::{PathErrorKind, PathRejection};
    let router = Router::new()
        .get(
            "/{a}/{b}",
            |path: Result<Path<(u32, u32)>, PathRejection>| match path {
                Ok(Path((a, b))) => format!("{a} {b}"),
                Err(rejection) => format!("{:?}", rejection.kind()),
            },
        )
        .compile()
        .unwrap();
    let kind = PathErrorKind::ParseErrorAtIndex {
        index: 0,
        value: "x".to_owned(),
        expected_type: "u32",
    };
    assert_eq!(get(&router, "/x/2").await.body, format!("{kind:?}"));
    assert_eq!(
        kind.to_string(),
        "Cannot parse value at index 0 with value `x` to a `u32`"
    );
}

#[cfg(feature = "typed-header")]
#[tokio::test]
async fn typed_headers_decode_as_the_headers_crate_types_them() {
    use headers::{ContentLength, UserAgent};
    use pronghorn::{handler::TypedHeader, router::Answers};
    let router = |answers| {
        Router::new()
            .get("/", |TypedHeader(agent): TypedHeader<UserAgent>| {
                agent.to_string()
            })
            .get("/length", |length: Option<TypedHeader<ContentLength>>| {
                length.map_or("none".to_owned(), |length| length.0.0.to_string())
            })
            .answers(answers)
            .compile()
            .unwrap()
    };
    let request = |path: &str, header: Option<(&str, &str)>| {
        let mut request = Request::get(path);
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        request.body(String::new()).unwrap()
    };
    let text = |response: Response<Body>| async move {
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    };
    let ours = router(Answers::Pronghorn);
    let answer = ours
        .clone()
        .oneshot(request("/", Some(("user-agent", "curl/8"))))
        .await;
    assert_eq!(
        text(answer.unwrap()).await,
        (StatusCode::OK, "curl/8".to_owned())
    );
    let answer = ours.clone().oneshot(request("/", None)).await.unwrap();
    let missing = (
        StatusCode::BAD_REQUEST,
        "missing request header `user-agent`".to_owned(),
    );
    assert_eq!(text(answer).await, missing);
    let answer = ours
        .clone()
        .oneshot(request("/length", None))
        .await
        .unwrap();
    assert_eq!(text(answer).await, (StatusCode::OK, "none".to_owned()));
    let answer = ours
        .oneshot(request("/length", Some(("content-length", "x"))))
        .await;
    assert_eq!(text(answer.unwrap()).await.0, StatusCode::BAD_REQUEST);

    let axum = router(Answers::Axum);
    let answer = axum.oneshot(request("/", None)).await.unwrap();
    let missing = (
        StatusCode::BAD_REQUEST,
        "Header of type `user-agent` was missing".to_owned(),
    );
    assert_eq!(text(answer).await, missing);
}

/// A handler that takes `Result<TypedHeader<T>, TypedHeaderRejection>`
/// gets axum-extra's rejection: the header's name, and whether it was
/// missing or did not decode, worded as the router answers.
#[cfg(feature = "typed-header")]
#[tokio::test]
async fn a_taken_typed_header_rejection_names_the_header_and_the_reason() {
    use headers::ContentLength;
    use pronghorn::{
        handler::{TypedHeader, TypedHeaderRejection, TypedHeaderRejectionReason},
        router::Answers,
    };
    let app = |answers| {
        Router::new()
            .get(
                "/",
                |length: Result<TypedHeader<ContentLength>, TypedHeaderRejection>| match length {
                    Ok(TypedHeader(ContentLength(length))) => format!("length {length}"),
                    Err(rejection) => match rejection.reason() {
                        TypedHeaderRejectionReason::Missing => {
                            format!("missing {}: {}", rejection.name(), rejection.body_text())
                        }
                        TypedHeaderRejectionReason::Error(_) => {
                            format!("{} {}", rejection.status(), rejection.body_text())
                        }
                        _ => "other".to_owned(),
                    },
                },
            )
            .answers(answers)
            .compile()
            .unwrap()
    };
    let with = |value: &str| {
        Request::get("/")
            .header("content-length", value)
            .body(String::new())
            .unwrap()
    };
    let (ours, axum) = (app(Answers::Pronghorn), app(Answers::Axum));
    assert_eq!(
        get(&ours, "/").await.body,
        "missing content-length: missing request header `content-length`"
    );
    assert_eq!(
        get(&axum, "/").await.body,
        "missing content-length: Header of type `content-length` was missing"
    );
    let answer = ours.clone().oneshot(with("12")).await.unwrap();
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "length 12");
    let answer = axum.oneshot(with("x")).await.unwrap();
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "400 Bad Request invalid HTTP header (content-length)");
}

#[tokio::test]
async fn with_rejection_answers_an_extractors_refusal_in_the_apps_own_type() {
    use pronghorn::handler::{PathRejection, WithRejection};

    struct ApiError(StatusCode, String);
    impl From<PathRejection> for ApiError {
        fn from(rejection: PathRejection) -> Self {
            ApiError(
                StatusCode::NOT_FOUND,
                format!("no item: {}", rejection.kind()),
            )
        }
    }
    impl From<pronghorn::handler::JsonRejection> for ApiError {
        fn from(rejection: pronghorn::handler::JsonRejection) -> Self {
            ApiError(rejection.status(), "bad item".to_owned())
        }
    }
    impl pronghorn::IntoResponse for ApiError {
        fn into_response(self) -> Response<Body> {
            (self.0, self.1).into_response()
        }
    }
    let router = Router::new()
        .get(
            "/items/{id}",
            |WithRejection(Path(id), _): WithRejection<Path<u32>, ApiError>| format!("item {id}"),
        )
        .post("/items", |item: WithRejection<Json<Item>, ApiError>| {
            item.name.clone()
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/items/7").await.body, "item 7");
    let missing = get(&router, "/items/x").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.body, "no item: Cannot parse `x` to a `u32`");
    let json = Some("application/json");
    let posted = send_body(&router, "/items", json, r#"{"id":1,"name":"n"}"#).await;
    assert_eq!(posted.body, "n");
    let refused = send_body(&router, "/items", json, "{").await;
    assert_eq!(
        (refused.status, refused.body.as_str()),
        (StatusCode::BAD_REQUEST, "bad item")
    );
}

#[cfg(feature = "multipart")]
#[tokio::test]
async fn multipart_reads_fields_and_files_within_the_body_limit() {
    use pronghorn::handler::{Multipart, MultipartError};
    let router = Router::new()
        .post("/upload", |mut multipart: Multipart| async move {
            let mut seen = Vec::new();
            while let Some(field) = multipart.next_field().await? {
                let name = field.name().unwrap_or("").to_owned();
                let file = field.file_name().map(str::to_owned);
                let kind = field.content_type().map(str::to_owned);
                let text = field.text().await?;
                seen.push(format!("{name} {file:?} {kind:?} {text}"));
            }
            Ok::<_, MultipartError>(seen.join("\n"))
        })
        .body_limit(200)
        .compile()
        .unwrap();
    let body = concat!(
        "--B\r\ncontent-disposition: form-data; name=\"title\"\r\n\r\nnotes\r\n",
        "--B\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n",
        "content-type: text/plain\r\n\r\none\ntwo\r\n--B--\r\n",
    );
    let form = Some("multipart/form-data; boundary=B");
    let answer = send_body(&router, "/upload", form, body).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.body,
        "title None None notes\nfile Some(\"a.txt\") Some(\"text/plain\") one\ntwo"
    );
    let large = format!(
        "--B\r\ncontent-disposition: form-data; name=\"big\"\r\n\r\n{}\r\n--B--\r\n",
        "x".repeat(300)
    );
    let answer = send_body(&router, "/upload", form, &large).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    let answer = send_body(&router, "/upload", Some("text/plain"), body).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
}

/// axum's `optional_multipart` and `body_too_large` tests: a request that
/// is not multipart is `None`; over the limit, axum's words.
#[cfg(feature = "multipart")]
#[tokio::test]
async fn optional_multipart_is_none_for_a_request_that_is_not_multipart() {
    use pronghorn::handler::{Multipart, MultipartError};
    async fn handle(multipart: Option<Multipart>) -> Result<StatusCode, MultipartError> {
        if let Some(mut multipart) = multipart {
            while let Some(field) = multipart.next_field().await? {
                field.bytes().await?;
            }
            Ok(StatusCode::OK)
        } else {
            Ok(StatusCode::NO_CONTENT)
        }
    }
    let router = Router::new()
        .post("/", handle)
        .body_limit(128)
        .answers(pronghorn::router::Answers::Axum)
        .compile()
        .unwrap();
    let form = Some("multipart/form-data; boundary=B");
    let body = "--B\r\ncontent-disposition: form-data; name=\"file\"\r\n\r\n<title>🦀</title>\r\n--B--\r\n";
    assert_eq!(
        send_body(&router, "/", form, body).await.status,
        StatusCode::OK
    );
    assert_eq!(
        send_body(&router, "/", None, "").await.status,
        StatusCode::NO_CONTENT
    );
    let json = Some("application/json");
    assert_eq!(
        send_body(&router, "/", json, "{}").await.status,
        StatusCode::NO_CONTENT
    );
    let no_boundary = Some("multipart/form-data");
    assert_eq!(
        send_body(&router, "/", no_boundary, body).await.status,
        StatusCode::BAD_REQUEST
    );
    let large = format!(
        "--B\r\ncontent-disposition: form-data; name=\"file\"\r\n\r\n{}\r\n--B--\r\n",
        "x".repeat(200)
    );
    let answer = send_body(&router, "/", form, &large).await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "Request payload is too large"
        )
    );
}

/// A `FromRequest` delegates to pronghorn's own extractors as axum's
/// examples write theirs (`Json::<T>::from_request(req, state)`): with
/// the route's parameters, state, body limit and wording; and the same
/// extractors run on a request no router handed, with the defaults.
#[tokio::test]
async fn a_from_request_runs_pronghorn_s_extractors_with_its_route() {
    use pronghorn::{
        handler::{FromRequest, RequestExt, rejection::JsonRejection},
        router::Answers,
    };

    /// axum's `customize-extractor-error` example: `Json`, its rejection
    /// the app's own, with the route's parameter and state beside it.
    struct Tagged(String);

    impl FromRequest for Tagged {
        type Rejection = (StatusCode, String);

        async fn from_request(request: Req) -> Result<Self, Self::Rejection> {
            let Path(tag) = request
                .extract_parts::<Path<String>>()
                .map_err(|r| (r.status(), "path".to_owned()))?;
            let State(prefix) = request
                .extract_parts::<State<&'static str>>()
                .map_err(|r| (r.status(), "state".to_owned()))?;
            match request.extract::<Result<Json<Item>, JsonRejection>>().await {
                Ok(Ok(Json(item))) => Ok(Tagged(format!("{prefix}{tag}:{}", item.id))),
                Ok(Err(rejection)) => Err((StatusCode::BAD_REQUEST, rejection.body_text())),
                Err(response) => Err((response.status(), "refused".to_owned())),
            }
        }
    }

    let app = |answers: Answers| {
        Router::new()
            .nest(
                "/api",
                Router::new().post("/tags/{tag}", |Tagged(tag): Tagged| tag),
            )
            .state("#")
            .answers(answers)
            .body_limit(64)
            .compile()
            .unwrap()
    };
    let (axum, ours) = (app(Answers::Axum), app(Answers::Pronghorn));
    let json = Some("application/json");
    let answer = send_body(&ours, "/api/tags/red", json, r#"{"id":7,"name":"x"}"#).await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::OK, "#red:7")
    );
    let answer = send_body(&ours, "/api/tags/red", json, r#"{"id":"7"}"#).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.body.starts_with("invalid JSON body: id:"),
        "{}",
        answer.body
    );
    let answer = send_body(&axum, "/api/tags/red", json, r#"{"id":"7"}"#).await;
    assert!(
        answer
            .body
            .starts_with("Failed to deserialize the JSON body into the target type: id:"),
        "{}",
        answer.body
    );
    let answer = send_body(&ours, "/api/tags/red", json, &"x".repeat(65)).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);

    // Outside any router: the defaults, no parameters, no state.
    let request = Request::post("/")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(r#"{"id":3,"name":"y"}"#))
        .unwrap();
    let Json(item) = request.extract::<Json<Item>>().await.unwrap();
    assert_eq!(item.id, 3);
    let request = Request::get("/?page=2").body(Body::empty()).unwrap();
    let Query(page) = request.extract_parts::<Query<Page>>().unwrap();
    assert_eq!((page.page, page.q), (2, None));
    let missing = request.extract_parts::<State<&'static str>>().unwrap_err();
    assert_eq!(missing.status(), StatusCode::INTERNAL_SERVER_ERROR);
}

/// `RawQuery` hands over the query string as it came, `None` without
/// one; `RawPathParams` the route's parameters by name, decoded, and
/// answers 400 on one that is not UTF-8 once decoded, in the router's
/// words, or hands its `RawPathParamsRejection` to the handler.
#[tokio::test]
async fn raw_query_and_raw_path_params_read_as_axum_s() {
    use pronghorn::{
        handler::{RawPathParams, RawQuery, rejection::RawPathParamsRejection},
        router::Answers,
    };
    let app = |answers: Answers| {
        Router::new()
            .get("/query", |RawQuery(query): RawQuery| {
                query.unwrap_or_else(|| "none".to_owned())
            })
            .get("/params/{user}/{team}", |params: RawPathParams| {
                (&params)
                    .into_iter()
                    .map(|(key, value)| format!("{key}={value}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .get(
                "/taken/{user}",
                |params: Result<RawPathParams, RawPathParamsRejection>| match params {
                    Ok(_) => "ok".to_owned(),
                    Err(RawPathParamsRejection::InvalidUtf8InPathParam(error)) => {
                        format!("{} {}", error.status(), error.body_text())
                    }
                    Err(other) => other.body_text(),
                },
            )
            .answers(answers)
            .compile()
            .unwrap()
    };
    let (axum, ours) = (app(Answers::Axum), app(Answers::Pronghorn));
    assert_eq!(get(&ours, "/query?a=%20&b").await.body, "a=%20&b");
    assert_eq!(get(&ours, "/query").await.body, "none");
    assert_eq!(
        get(&ours, "/params/ada%20l/7").await.body,
        "user=ada l team=7"
    );
    let answer = get(&axum, "/params/%FF/7").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.body, "Invalid UTF-8 in `user`");
    let answer = get(&ours, "/params/%FF/7").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer.body,
        "route parameter `user` is not UTF-8 once decoded"
    );
    assert_eq!(
        get(&axum, "/taken/%FF").await.body,
        "400 Bad Request Invalid UTF-8 in `user`"
    );
}

/// `Result<MatchedPath, MatchedPathRejection>` is axum's: a route's
/// handler gets its pattern, and a fallback (which `compile` refuses a
/// plain `MatchedPath`) gets `MatchedPathMissing`, worded as the router
/// answers.
#[tokio::test]
async fn a_fallback_may_take_a_matched_path_rejection() {
    use pronghorn::{
        handler::{MatchedPath, rejection::MatchedPathRejection},
        router::Answers,
    };
    fn seen(path: Result<MatchedPath, MatchedPathRejection>) -> String {
        match path {
            Ok(path) => format!("matched {}", path.as_str()),
            Err(MatchedPathRejection::MatchedPathMissing(missing)) => {
                format!("{} {}", missing.status(), missing.body_text())
            }
            Err(other) => other.body_text(),
        }
    }
    let app = |answers| {
        Router::new()
            .get("/users/{id}", seen)
            .fallback(seen)
            .answers(answers)
            .compile()
            .unwrap()
    };
    let (ours, axum) = (app(Answers::Pronghorn), app(Answers::Axum));
    assert_eq!(get(&ours, "/users/7").await.body, "matched /users/{id}");
    assert_eq!(
        get(&ours, "/nowhere").await.body,
        "500 Internal Server Error Internal Server Error"
    );
    assert_eq!(
        get(&axum, "/nowhere").await.body,
        "500 Internal Server Error No matched path found"
    );
}
