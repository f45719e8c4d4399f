//! Tower layers inside the router: where they wrap (`layer`,
//! `route_layer`, one method, one handler), what they see, how they order
//! with the hooks, their errors made answers, and method routers as
//! values.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use pronghorn::{
    BoxError, HandleErrorLayer,
    handler::{Handler, MatchedPath, RouteMatch},
    router::{MethodFilter, MethodRouter, any, on, post},
};
use tower::ServiceBuilder;
use tower_http::{set_header::SetResponseHeaderLayer, trace::TraceLayer};

use super::*;

/// A layer that marks each response it sees with `x-layer: name`.
fn mark(name: &'static str) -> SetResponseHeaderLayer<HeaderValue> {
    SetResponseHeaderLayer::appending(
        http::HeaderName::from_static("x-layer"),
        HeaderValue::from_static(name),
    )
}

/// The `x-layer` marks of an answer, in the order the layers added them.
fn marks(answer: &Answer) -> Vec<&str> {
    (answer.headers.get_all("x-layer").iter())
        .map(|value| value.to_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_trace_layer_inside_the_router_reads_the_matched_path() {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let seen = spans.clone();
    let router = Router::new()
        .get("/users/{id}", || "ada")
        .nest("/api", Router::new().get("/items/{item}", || "item"))
        .layer(
            TraceLayer::new_for_http().make_span_with(move |request: &Request<Body>| {
                let route = request.extensions().get::<MatchedPath>();
                seen.lock()
                    .unwrap()
                    .push(route.map(|route| route.as_str().to_owned()));
                tracing::info_span!("request")
            }),
        )
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/users/7").await.body, "ada");
    assert_eq!(get(&router, "/api/items/3").await.body, "item");
    // The router's own 404 goes through `layer` too, with no route.
    assert_eq!(get(&router, "/nowhere").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        *spans.lock().unwrap(),
        [
            Some("/users/{id}".to_owned()),
            Some("/api/items/{item}".to_owned()),
            None
        ]
    );
}

#[tokio::test]
async fn a_layer_reads_the_routes_parameters() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let router = Router::new()
        .get(
            "/users/{user}/posts/{post}",
            |Path((user, post)): Path<(u32, u32)>| format!("{user}/{post}"),
        )
        .layer(tower::util::MapRequestLayer::new(
            move |request: Request<Body>| {
                let route = request.extensions().get::<RouteMatch>().unwrap();
                let params: Vec<_> = route
                    .params()
                    .iter_raw()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                log.lock()
                    .unwrap()
                    .push((route.pattern().to_owned(), params));
                request
            },
        ))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/users/7/posts/42").await.body, "7/42");
    assert_eq!(
        *seen.lock().unwrap(),
        [(
            "/users/{user}/posts/{post}".to_owned(),
            vec!["user=7".to_owned(), "post=42".to_owned()]
        )]
    );
}

#[tokio::test]
async fn a_layer_that_rewrites_the_path_leaves_the_handlers_parameters_as_routed() {
    let router = Router::new()
        .get("/users/{id}", |Path(id): Path<u32>, uri: http::Uri| {
            format!("{id} at {uri}")
        })
        .layer(tower::util::MapRequestLayer::new(
            |mut request: Request<Body>| {
                *request.uri_mut() = "/elsewhere".parse().unwrap();
                request
            },
        ))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/users/7").await.body, "7 at /elsewhere");
}

#[tokio::test]
/// `layer` wraps the router's 404 and 405; `route_layer` leaves the 404
/// alone but wraps the 405 of its paths, as axum's does (its guard, not
/// the list of methods, is what a stranger meets).
async fn layer_wraps_404_and_405_and_route_layer_wraps_its_paths_405() {
    let router = Router::new()
        .get("/routed", || "routed")
        .route_layer(mark("route"))
        .layer(mark("router"))
        .compile()
        .unwrap();
    let routed = get(&router, "/routed").await;
    assert_eq!(marks(&routed), ["route", "router"]);
    let missing = get(&router, "/nowhere").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(marks(&missing), ["router"]);
    let other = send(&router, Method::DELETE, "/routed").await;
    assert_eq!(other.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(other.headers[header::ALLOW], "GET, HEAD");
    assert_eq!(marks(&other), ["route", "router"]);

    // `route_layer` alone: the router's own answers are untouched.
    let router = Router::new()
        .get("/routed", || "routed")
        .route_layer(mark("route"))
        .compile()
        .unwrap();
    assert_eq!(marks(&get(&router, "/routed").await), ["route"]);
    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.status, marks(&missing)),
        (StatusCode::NOT_FOUND, vec![])
    );
    let other = send(&router, Method::DELETE, "/routed").await;
    assert_eq!(other.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(marks(&other), ["route"]);
}

#[tokio::test]
async fn layer_wraps_the_routes_before_it_and_a_fallback() {
    let router = Router::new()
        .get("/before", || "before")
        .fallback(|| (StatusCode::NOT_FOUND, "custom"))
        .layer(mark("router"))
        .get("/after", || "after")
        .compile()
        .unwrap();
    assert_eq!(marks(&get(&router, "/before").await), ["router"]);
    assert!(marks(&get(&router, "/after").await).is_empty());
    let missing = get(&router, "/nowhere").await;
    assert_eq!(
        (missing.body.as_str(), marks(&missing)),
        ("custom", vec!["router"])
    );
}

#[tokio::test]
async fn one_routes_layer_does_not_reach_its_neighbours() {
    let router = Router::new()
        .get("/a", (|| "a").layer(mark("a")))
        .get("/b", || "b")
        .route(
            "/c",
            pronghorn::router::get(|| "c get")
                .layer(mark("c"))
                .post(|| "c post"),
        )
        .compile()
        .unwrap();
    assert_eq!(marks(&get(&router, "/a").await), ["a"]);
    assert!(marks(&get(&router, "/b").await).is_empty());
    let c = get(&router, "/c").await;
    assert_eq!((c.body.as_str(), marks(&c)), ("c get", vec!["c"]));
    let c = send(&router, Method::POST, "/c").await;
    assert_eq!((c.body.as_str(), marks(&c)), ("c post", vec![]));
}

#[tokio::test]
async fn layers_run_inside_the_prefixes_and_outside_the_postfixes_in_the_documented_order() {
    let events = Events::default();
    let [prefix, handler, inner, outer, postfix, monitor] = events.handles();
    let layer = |events: Events, name: &'static str| {
        ServiceBuilder::new()
            .map_request(move |request: Request<Body>| {
                events.push(format!("{name} sees {}", request.uri().path()));
                request
            })
            .into_inner()
    };
    let router = Router::new()
        .get(
            "/",
            (move || {
                handler.push("handler");
                StatusCode::CREATED
            })
            .layer(layer(inner, "handler's layer")),
        )
        .layer(layer(outer, "router's layer"))
        .layer(tower::util::MapResponseLayer::new(
            |mut response: Response<Body>| {
                *response.status_mut() = StatusCode::ACCEPTED;
                response
            },
        ))
        .prefix(
            "/",
            move |request: &mut Request<Body>, _: &mut Route<'_>| {
                prefix.push("prefix");
                request
                    .headers_mut()
                    .insert("x-prefix", HeaderValue::from_static("1"));
                ControlFlow::<StatusCode>::Continue(())
            },
        )
        .postfix("/", move |_: &Route<'_>, response: &mut Response<Body>| {
            postfix.push(format!("postfix sees {}", response.status().as_u16()));
        })
        .monitor("/", move |exchange: &RouteExchange<'_>| {
            monitor.push(format!(
                "monitor sees {}",
                exchange.status().unwrap().as_u16()
            ));
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/").await.status, StatusCode::ACCEPTED);
    assert_eq!(
        events.take(),
        [
            "prefix",
            "router's layer sees /",
            "handler's layer sees /",
            "handler",
            "postfix sees 202",
            "monitor sees 202",
        ]
    );
}

#[tokio::test]
async fn a_prefix_that_answers_skips_the_layers() {
    let events = Events::default();
    let [seen] = events.handles();
    let router = Router::new()
        .get("/", || "home")
        .layer(tower::util::MapRequestLayer::new(
            move |request: Request<Body>| {
                seen.push("layer");
                request
            },
        ))
        .prefix("/", |_: &mut Request<Body>, _: &mut Route<'_>| {
            ControlFlow::Break(StatusCode::UNAUTHORIZED)
        })
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/").await.status, StatusCode::UNAUTHORIZED);
    assert!(events.take().is_empty());
}

#[tokio::test]
async fn postfixes_and_monitors_read_the_request_headers_the_layers_took() {
    let seen = Events::default();
    let [postfix, monitor] = seen.handles();
    let router = Router::new()
        .get("/", || "home")
        .layer(mark("router"))
        .postfix("/", move |route: &Route<'_>, _: &mut Response<Body>| {
            postfix.push(format!(
                "postfix {:?}",
                route.headers().unwrap().get("x-token")
            ));
        })
        .monitor("/", move |exchange: &RouteExchange<'_>| {
            let headers = exchange.request_headers().unwrap();
            monitor.push(format!("monitor {:?}", headers.get("x-token")));
        })
        .compile()
        .unwrap();
    let request = Request::get("/")
        .header("x-token", "t")
        .body(String::new())
        .unwrap();
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.headers()["x-layer"], "router");
    assert_eq!(
        seen.take(),
        [r#"postfix Some("t")"#, r#"monitor Some("t")"#]
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_becomes_408_through_the_error_handling_layer() {
    let router = Router::new()
        .get("/slow", || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            "late"
        })
        .get("/fast", || "fast")
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(|error: BoxError| async move {
                    if error.is::<tower::timeout::error::Elapsed>() {
                        Ok(StatusCode::REQUEST_TIMEOUT)
                    } else {
                        Err((StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))
                    }
                }))
                .timeout(Duration::from_secs(10)),
        )
        .compile()
        .unwrap();
    assert_eq!(
        get(&router, "/slow").await.status,
        StatusCode::REQUEST_TIMEOUT
    );
    assert_eq!(get(&router, "/fast").await.body, "fast");
}

#[test]
fn a_synchronous_error_answer_is_ready_on_the_first_poll() {
    let mut router = Router::new()
        .get("/", || "home")
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(|error: BoxError| {
                    (StatusCode::SERVICE_UNAVAILABLE, error.to_string())
                }))
                .map_result(|_: Result<Response<Body>, std::convert::Infallible>| {
                    Err::<Response<Body>, BoxError>("shed".into())
                }),
        )
        .compile()
        .unwrap();
    let request = Request::get("/").body(String::new()).unwrap();
    let Poll::Ready(Ok(response)) = poll_once(pin!(router.call(request))) else {
        panic!("a synchronous answer is ready on the first poll");
    };
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[test]
fn a_route_with_ready_first_layers_is_answered_on_the_first_poll() {
    let mut router = Router::new()
        .get("/users/{id}", |Path(id): Path<u32>| format!("user {id}"))
        .route_layer(pronghorn::PrefixLayer::new(
            |request: &mut Request<Body>| match request.headers().contains_key("x-token") {
                true => ControlFlow::Continue(()),
                false => ControlFlow::Break(StatusCode::UNAUTHORIZED.into_response()),
            },
        ))
        .route_layer(pronghorn::PostfixLayer::new(
            |response: &mut Response<Body>| {
                response
                    .headers_mut()
                    .insert("server", HeaderValue::from_static("pronghorn"));
            },
        ))
        .compile()
        .unwrap();
    for (token, status) in [(true, StatusCode::OK), (false, StatusCode::UNAUTHORIZED)] {
        let mut request = Request::get("/users/7").body(String::new()).unwrap();
        if token {
            request
                .headers_mut()
                .insert("x-token", HeaderValue::from_static("t"));
        }
        let Poll::Ready(Ok(response)) = poll_once(pin!(router.call(request))) else {
            panic!("a synchronous layered route is answered on the first poll");
        };
        assert_eq!(response.status(), status);
        assert_eq!(response.headers()["server"], "pronghorn");
    }
}

#[tokio::test]
async fn method_routers_are_values_registered_with_route() {
    fn items() -> MethodRouter {
        pronghorn::router::get(|| "list").post(|body: String| format!("created {body}"))
    }
    let purge = Method::from_bytes(b"PURGE").unwrap();
    let router = Router::new()
        .route("/items", items())
        .route(
            "/items/{id}",
            on(MethodFilter::PUT.or(MethodFilter::PATCH), || "stored"),
        )
        .route("/cache", on(purge.clone(), || "purged"))
        .route(
            "/echo",
            post(|| "posted").put_service(tower::service_fn(|_: Request<Body>| async {
                Ok::<_, std::convert::Infallible>("put by a service")
            })),
        )
        .route("/any", any(|| "anything").get(|| "got"))
        .compile()
        .unwrap();
    assert_eq!(get(&router, "/items").await.body, "list");
    assert_eq!(send(&router, Method::POST, "/items").await.body, "created ");
    let refused = send(&router, Method::DELETE, "/items").await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(refused.headers[header::ALLOW], "GET, POST, HEAD");
    assert_eq!(
        send(&router, Method::PATCH, "/items/1").await.body,
        "stored"
    );
    assert_eq!(send(&router, Method::PUT, "/items/1").await.body, "stored");
    assert_eq!(send(&router, purge, "/cache").await.body, "purged");
    assert_eq!(
        send(&router, Method::PUT, "/echo").await.body,
        "put by a service"
    );
    assert_eq!(send(&router, Method::DELETE, "/any").await.body, "anything");
    assert_eq!(get(&router, "/any").await.body, "got");

    // A method given twice for one path is an error of `compile`.
    let twice = Router::new()
        .route("/x", pronghorn::router::get(|| "1"))
        .get("/x", || "2");
    assert!(matches!(
        twice.compile(),
        Err(RouteError::DuplicateRoute { .. })
    ));
}

#[tokio::test]
async fn a_test_names_its_request_type_once_through_into_service() {
    let mut app = Router::new()
        .get("/", || "home")
        .compile()
        .unwrap()
        .into_service();
    let request = Request::get("/").body(Body::empty()).unwrap();
    let response = app.ready().await.unwrap().call(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let request = Request::get("/").body(Body::empty()).unwrap();
    let response = ServiceExt::<Request<Body>>::ready(&mut app)
        .await
        .unwrap()
        .call(request)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_router_is_a_service_as_it_is_and_serves_a_change_made_after() {
    let mut router = Router::new().get("/", || "home");
    for _ in 0..2 {
        let request = Request::get("/").body(String::new()).unwrap();
        let response = router.call(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    // A change made after it was served is served too.
    let changed = router.get("/more", || "more");
    let request = Request::get("/more").body(String::new()).unwrap();
    assert_eq!(
        changed.oneshot(request).await.unwrap().status(),
        StatusCode::OK
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_router_served_as_it_is_that_does_not_compile_logs_once_and_answers_500() {
    let log = Log::capture();
    let router = Router::new()
        .get("/", || "home")
        .get("/users/:id", || "one");
    for path in ["/users/7", "/", "/elsewhere", "/users/8"] {
        let request = Request::get(path).body(String::new()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::INTERNAL_SERVER_ERROR,
            "{path}"
        );
    }
    let logged = log.take();
    assert_eq!(logged.len(), 1, "said once, not per request: {logged:?}");
    assert!(
        logged[0].contains("route `/users/:id`: `:id` is not a parameter here"),
        "{logged:?}"
    );
}

/// Layers whose service hands the handler another body type than
/// pronghorn's are taken as axum takes them: tower-http's body limit
/// (a `Limited` body) and request decompression (a `DecompressionBody`).
#[tokio::test]
async fn tower_http_layers_that_change_the_request_body_wrap_routes_as_written() {
    use tower_http::{decompression::RequestDecompressionLayer, limit::RequestBodyLimitLayer};
    let router = Router::new()
        .post("/echo", |body: String| body)
        .layer(RequestBodyLimitLayer::new(16))
        .layer(RequestDecompressionLayer::new())
        .compile()
        .unwrap();
    let post = |body: Vec<u8>, gzip: bool| {
        let mut request = Request::post("/echo");
        if gzip {
            request = request.header(header::CONTENT_ENCODING, "gzip");
        }
        router.clone().oneshot(
            request
                .body(http_body_util::Full::new(bytes::Bytes::from(body)))
                .unwrap(),
        )
    };
    let plain = post(b"hello".to_vec(), false).await.unwrap();
    assert_eq!(plain.status(), StatusCode::OK);
    assert_eq!(
        plain.into_body().collect().await.unwrap().to_bytes(),
        "hello"
    );
    // Decompressed before the handler reads it.
    let gzipped = post(gzip(b"compressed hello").await, true).await.unwrap();
    assert_eq!(gzipped.status(), StatusCode::OK);
    assert_eq!(
        gzipped.into_body().collect().await.unwrap().to_bytes(),
        "compressed hello"
    );
    // Past the limit, by its declared length, then once decompressed.
    let large = post(vec![b'x'; 17], false).await.unwrap();
    assert_eq!(large.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let inflated = post(gzip(&[b'x'; 64]).await, true).await.unwrap();
    assert_eq!(inflated.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// `bytes` gzipped, as a client sends them with `Content-Encoding: gzip`:
/// by tower-http's own encoder, answering them to a client that takes
/// gzip.
async fn gzip(bytes: &[u8]) -> Vec<u8> {
    use tower_http::compression::CompressionLayer;
    let bytes = bytes::Bytes::copy_from_slice(bytes);
    let always = |_: StatusCode, _: http::Version, _: &HeaderMap, _: &http::Extensions| true;
    let service = tower::ServiceBuilder::new()
        .layer(CompressionLayer::new().gzip(true).compress_when(always))
        .service_fn(move |_: Request<String>| {
            let body = http_body_util::Full::new(bytes.clone());
            async move { Ok::<_, std::convert::Infallible>(Response::new(body)) }
        });
    let request = Request::get("/")
        .header(header::ACCEPT_ENCODING, "gzip")
        .body(String::new())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
    response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec()
}

/// axum's `middleware::from_fn`, the guard the ecosystem builds on it
/// (axum-login's `login_required!` is one), in `route_layer` as written.
#[tokio::test]
async fn a_from_fn_guard_in_route_layer_answers_strangers_and_hands_members_on() {
    use pronghorn::middleware::{Next, from_fn};
    async fn login_required(method: Method, request: Request<Body>, next: Next) -> Response<Body> {
        match request.headers().contains_key(header::COOKIE) {
            true => next.run(request).await,
            false => {
                let to = format!("/login?next={}&method={method}", request.uri().path());
                let mut response = Response::new(Body::empty());
                *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
                response
                    .headers_mut()
                    .insert(header::LOCATION, to.parse().unwrap());
                response
            }
        }
    }
    let router = Router::new()
        .get("/admin", || "secret")
        .post("/admin", || "posted")
        .route_layer(from_fn(login_required))
        .get("/login", || "log in")
        .compile()
        .unwrap();
    let send = |method: Method, path: &str, cookie: bool| {
        let mut request = Request::builder().method(method).uri(path);
        if cookie {
            request = request.header(header::COOKIE, "sid=1");
        }
        router.clone().oneshot(request.body(String::new()).unwrap())
    };
    let stranger = send(Method::GET, "/admin", false).await.unwrap();
    assert_eq!(stranger.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(
        stranger.headers()[header::LOCATION],
        "/login?next=/admin&method=GET"
    );
    let member = send(Method::POST, "/admin", true).await.unwrap();
    assert_eq!(member.status(), StatusCode::OK);
    assert_eq!(
        member.into_body().collect().await.unwrap().to_bytes(),
        "posted"
    );
    // Routes added after `route_layer` are not guarded.
    let login = send(Method::GET, "/login", false).await.unwrap();
    assert_eq!(login.status(), StatusCode::OK);
}

/// A `from_fn` function reads the route through pronghorn's extractors,
/// an extractor's rejection answers for it, and a synchronous route
/// behind a function that completes at once is answered in the first
/// poll, with layers of its own under the function or not.
#[tokio::test]
async fn from_fn_reads_extractors_and_answers_in_the_first_poll() {
    use pronghorn::{
        handler::{MatchedPath, Path as RoutePath},
        middleware::{Next, from_fn},
    };
    use tower_http::set_header::SetResponseHeaderLayer;
    async fn tag(
        path: MatchedPath,
        RoutePath(id): RoutePath<u32>,
        request: Request<Body>,
        next: Next,
    ) -> Response<Body> {
        let mut response = next.run(request).await;
        let tag = format!("{} {id}", path.as_str());
        response.headers_mut().insert("x-tag", tag.parse().unwrap());
        response
    }
    let inner = SetResponseHeaderLayer::overriding(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    let router = Router::new()
        .get("/a/{id}", |RoutePath(id): RoutePath<u32>| format!("a {id}"))
        .route_layer(from_fn(tag))
        .get("/b/{id}", |RoutePath(id): RoutePath<u32>| format!("b {id}"))
        .route_layer(inner)
        .compile()
        .unwrap();
    for (path, tag, body, cached) in [
        ("/a/7", "/a/{id} 7", "a 7", true),
        ("/b/8", "", "b 8", true),
    ] {
        let mut service = router.clone();
        let request = Request::get(path).body(String::new()).unwrap();
        let mut future = std::pin::pin!(service.call(request));
        let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
            panic!("{path}: not answered in the first poll");
        };
        let got = response
            .headers()
            .get("x-tag")
            .map_or("", |v| v.to_str().unwrap());
        assert_eq!(got, tag, "{path}");
        assert_eq!(
            response.headers().contains_key(header::CACHE_CONTROL),
            cached,
            "{path}"
        );
        assert_eq!(
            response.into_body().collect().await.unwrap().to_bytes(),
            body
        );
    }
    // Its extractor's rejection is its answer.
    let request = Request::get("/a/x").body(String::new()).unwrap();
    let rejected = router.clone().oneshot(request).await.unwrap();
    assert_eq!(rejected.status(), StatusCode::BAD_REQUEST);

    // Around another layer of the route's own (the rest of the stack is
    // then boxed), still answered at once.
    let outer = Router::new()
        .get("/c/{id}", |RoutePath(id): RoutePath<u32>| format!("c {id}"))
        .route_layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-store"),
        ))
        .route_layer(from_fn(tag))
        .compile()
        .unwrap();
    let mut service = outer.clone();
    let mut future =
        std::pin::pin!(service.call(Request::get("/c/9").body(String::new()).unwrap()));
    let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
        panic!("not answered in the first poll");
    };
    assert_eq!(response.headers()["x-tag"], "/c/{id} 9");
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
}

/// axum-login's `login_required!`, written as it expands: axum's own
/// `from_fn` with an axum extractor, given to `route_layer` as it is.
#[cfg(feature = "axum")]
macro_rules! login_required {
    (login_url = $login_url:expr) => {
        axum::middleware::from_fn(
            |user: SignedIn, req, next: axum::middleware::Next| async move {
                use axum::response::IntoResponse;
                if user.0.is_some() {
                    next.run(req).await
                } else {
                    axum::response::Redirect::temporary($login_url).into_response()
                }
            },
        )
    };
}

/// The signed-in user, if any, read by an axum extractor from a cookie.
#[cfg(feature = "axum")]
struct SignedIn(Option<String>);

#[cfg(feature = "axum")]
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for SignedIn {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        let cookie = parts.headers.get(header::COOKIE);
        Ok(SignedIn(
            cookie.and_then(|v| v.to_str().ok()).map(str::to_owned),
        ))
    }
}

#[cfg(feature = "axum")]
#[tokio::test]
async fn axum_s_own_from_fn_guards_a_route_layer_as_written() {
    let router = Router::new()
        .route("/", pronghorn::router::get(|| async { "protected" }))
        .route_layer(login_required!(login_url = "/login"))
        .route("/login", pronghorn::router::get(|| async { "log in" }))
        .compile()
        .unwrap();
    for method in [Method::GET, Method::POST] {
        let stranger = send(&router, method, "/").await;
        assert_eq!(stranger.status, StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(stranger.headers[header::LOCATION], "/login");
    }
    assert_eq!(get(&router, "/login").await.body, "log in");
    let signed_in = Request::get("/")
        .header(header::COOKIE, "sid=1")
        .body(String::new())
        .unwrap();
    let response = router.clone().oneshot(signed_in).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "protected");
}

#[cfg(feature = "axum")]
#[tokio::test]
async fn axum_s_map_response_and_pronghorn_s_map_request_wrap_routes_as_written() {
    async fn tag<B>(mut req: Request<B>) -> Request<B> {
        req.headers_mut()
            .insert("x-tag", HeaderValue::from_static("axum"));
        req
    }
    async fn sign<B>(mut res: Response<B>) -> Response<B> {
        res.headers_mut()
            .insert("x-signed", HeaderValue::from_static("yes"));
        res
    }
    let router = Router::new()
        .route(
            "/",
            pronghorn::router::get(|headers: HeaderMap| async move {
                headers["x-tag"].to_str().unwrap().to_owned()
            })
            .layer(pronghorn::middleware::map_request(tag)),
        )
        .layer(axum::middleware::map_response(sign))
        .compile()
        .unwrap();
    let answer = get(&router, "/").await;
    assert_eq!(answer.body, "axum");
    assert_eq!(answer.headers["x-signed"], "yes");
}
