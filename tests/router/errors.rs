//! Errors: bad routes refused at compile time, panics and invalid answers as 500s.

use super::*;

#[test]
fn an_invalid_nest_base_is_refused_with_or_without_routes_below_it() {
    for (base, expected) in [
        ("x", "route `x`: a pattern must start with `/`"),
        (
            "/:foo",
            "route `/:foo`: `:foo` is not a parameter here; write `{foo}`",
        ),
    ] {
        let empty = Router::new().nest(base, Router::new()).compile();
        assert_eq!(
            empty.unwrap_err().to_string(),
            expected,
            "{base}, nothing below"
        );
        let routed = Router::new()
            .nest(base, Router::new().get("/a", || "a"))
            .compile();
        assert!(routed.is_err(), "{base}, a route below");
        // Nested again, the error is the inner router's.
        let deeper = Router::new()
            .nest("/outer", Router::new().nest(base, Router::new()))
            .compile();
        assert_eq!(
            deeper.unwrap_err().to_string(),
            expected,
            "{base}, nested again"
        );
    }
    // Bases that are patterns, with or without a trailing slash, are fine.
    for base in ["/a", "/a/", "/{version}", "/"] {
        let router = Router::new().nest(base, Router::new()).compile();
        assert!(router.is_ok(), "{base}");
    }
}

#[test]
fn every_route_error_names_the_pattern_and_the_problem() {
    fn error(pattern: &str) -> RouteError {
        Router::new().get(pattern, || "x").compile().unwrap_err()
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
            "/users/:id",
            "route `/users/:id`: `:id` is not a parameter here; write `{id}`",
        ),
        (
            "/files/*path",
            "route `/files/*path`: `*path` is not a parameter here; write `{*path}`",
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
        (
            "/search?q={q}",
            "route `/search?q={q}`: a path holds no `?`, the query string takes no part in matching (read it with `Query`)",
        ),
        (
            "/docs#intro",
            "route `/docs#intro`: a path holds no `#`, clients do not send the fragment",
        ),
        (
            "/my files",
            "route `/my files`: a path holds no ' ' (byte 3); write it percent-encoded, as `%20`",
        ),
        (
            "/a\tb",
            "route `/a\tb`: a path holds no '\\t' (byte 2); write it percent-encoded, as `%09`",
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

    let twice = Router::new()
        .get("/u/{id}", || "1")
        .get("/u/{id}", || "2")
        .compile()
        .unwrap_err();
    assert_eq!(twice.to_string(), "route `GET /u/{id}` is registered twice");
    let renamed = Router::new()
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
    let any_twice = Router::new()
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
        Router::new()
            .get("/u", || "1")
            .post("/u", || "2")
            .any("/u", || "3")
            .compile()
            .is_ok()
    );

    let bad_hook = Router::new()
        .prefix("/a/{", |r: Req, _: &mut Route<'_>| r)
        .compile()
        .unwrap_err();
    assert!(
        matches!(bad_hook, RouteError::UnbalancedBrace { ref pattern, at: 3 } if pattern == "/a/{")
    );
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

/// Only a sigil followed by a name reads as another router's parameter:
/// `*.txt`, `:` and `a:b` stay static segments.
#[test]
fn segments_with_a_colon_or_star_that_name_nothing_stay_static() {
    for pattern in ["/files/*.txt", "/time/:", "/ns/a:b", "/x/**"] {
        assert!(
            Router::new().get(pattern, || "x").compile().is_ok(),
            "{pattern}"
        );
    }
}

/// State is checked when the table compiles: a handler's `State<T>` that no
/// router holds, and two states of one type given by one router (or by two
/// reloadable modules), are errors naming the type.
#[test]
fn missing_and_duplicate_state_are_compile_errors_naming_the_type() {
    use pronghorn::{handler::State, router::Reloadable};

    let missing = Router::new()
        .get("/count", |State(n): State<u64>| n.to_string())
        .compile()
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "route `/count`: its handler takes `State<u64>`, and no router holds a `u64` (give one with `Router::state`)"
    );
    // Given by a nested router, it is held.
    let nested = Router::new()
        .nest(
            "/api",
            Router::new().get("/count", |State(n): State<u64>| n.to_string()),
        )
        .merge(Router::new().state(7u64));
    assert!(nested.compile().is_ok());

    let twice = Router::new().state(1u64).state(2u64).compile().unwrap_err();
    assert_eq!(
        twice.to_string(),
        "two states of type `u64`: give each a type of its own (a newtype), so that handlers can tell them apart"
    );
    // Twice by one router nested in another, likewise.
    let nested_twice = Router::new()
        .nest("/m", Router::new().state(1u64).state(2u64))
        .compile();
    assert!(matches!(
        nested_twice,
        Err(RouteError::DuplicateState { name: "u64" })
    ));

    let app = Reloadable::new(Router::new().state(1u64)).unwrap();
    let module = Router::new().state(2u64);
    assert!(matches!(
        app.register("m", module),
        Err(RouteError::DuplicateState { .. })
    ));
}

/// A `Path` that cannot read its route's parameters whatever the path (a
/// tuple of another length, one value from two parameters, a struct field
/// no parameter names) would fail every request: it is an error of
/// `compile`, naming the route, the type and what does not fit.
#[test]
#[allow(dead_code, reason = "read only through `Deserialize`")]
fn a_path_extractor_that_cannot_read_its_route_s_parameters_is_a_compile_error() {
    use std::collections::HashMap;

    #[derive(serde::Deserialize)]
    struct Id(u64);
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Open,
    }
    #[derive(serde::Deserialize)]
    struct Member {
        team: String,
        user_id: u64,
    }
    #[derive(serde::Deserialize)]
    struct Optional {
        team: String,
        page: Option<u32>,
        #[serde(default)]
        size: u32,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        team: String,
    }
    #[derive(serde::Deserialize)]
    struct Flagged {
        flag: bool,
        missing: u64,
    }
    #[derive(serde::Deserialize)]
    struct Kinded {
        kind: Kind,
        missing: u64,
    }
    #[derive(serde::Deserialize)]
    struct Addressed {
        address: std::net::IpAddr,
        missing: u64,
    }
    /// A type whose `Deserialize` panics, whatever it is given.
    struct Touchy;
    impl<'de> serde::Deserialize<'de> for Touchy {
        fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
            panic!("touchy")
        }
    }

    let error = Router::new()
        .get("/teams/{team}/members/{id}", |Path(id): Path<u64>| {
            id.to_string()
        })
        .compile()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "route `/teams/{team}/members/{id}`: its handler takes `Path<u64>`, which cannot read its route's parameters: expected 1 value, found 2 (a tuple takes them in order, a struct by name, `RouteParams` any)"
    );
    let error = Router::new()
        .get("/teams/{team}/members/{id}", |_: Path<Member>| "")
        .compile()
        .unwrap_err();
    assert!(
        matches!(&error, RouteError::PathParameters { reason, .. } if reason == "missing field `user_id`"),
        "{error}"
    );

    let error = Router::new()
        .fallback(|_: Path<u64>| "")
        .compile()
        .unwrap_err();
    assert!(
        error.to_string().starts_with(
            "the fallback: its handler takes `Path<u64>`, which cannot read its route's parameters: expected 1 value, found 0"
        ),
        "{error}"
    );

    // Each case: does the route compile?
    let cases: [(&str, Router, bool); 20] = [
        (
            "tuple longer than the pattern",
            Router::new().get("/{a}", |_: Path<(u64, u64)>| ""),
            false,
        ),
        (
            "one value, no parameter",
            Router::new().get("/", |_: Path<String>| ""),
            false,
        ),
        (
            "newtype of one value, two parameters",
            Router::new().get("/{a}/{b}", |_: Path<Id>| ""),
            false,
        ),
        (
            "enum, two parameters",
            Router::new().get("/{a}/{b}", |_: Path<Kind>| ""),
            false,
        ),
        (
            "a nest base's parameters count",
            Router::new().nest(
                "/teams/{team}",
                Router::new().get("/{id}", |_: Path<u64>| ""),
            ),
            false,
        ),
        (
            "an unknown parameter, unknown fields denied",
            Router::new().get("/{team}/{id}", |_: Path<Strict>| ""),
            false,
        ),
        (
            "tuple of the pattern's length",
            Router::new().get("/{a}/{b}", |_: Path<(String, u64)>| ""),
            true,
        ),
        (
            "newtype of one value",
            Router::new().get("/{id}", |_: Path<Id>| ""),
            true,
        ),
        (
            "struct whose fields the parameters name",
            Router::new().get("/{team}/{user_id}", |_: Path<Member>| ""),
            true,
        ),
        (
            "a nest base's parameter fills a field",
            Router::new().nest(
                "/teams/{team}",
                Router::new().get("/{user_id}", |_: Path<Member>| ""),
            ),
            true,
        ),
        (
            "optional and default fields no parameter names",
            Router::new().get("/{team}", |_: Path<Optional>| ""),
            true,
        ),
        (
            "a parameter no field names",
            Router::new().get("/{team}/{id}", |_: Path<Optional>| ""),
            true,
        ),
        (
            "a bool field does not hide a field no parameter names",
            Router::new().get("/{flag}", |_: Path<Flagged>| ""),
            false,
        ),
        (
            "an enum field does not hide a field no parameter names",
            Router::new().get("/{kind}", |_: Path<Kinded>| ""),
            false,
        ),
        (
            "bool and enum fields the parameters name",
            Router::new().get("/{kind}/{flag}", |_: Path<(Kind, bool)>| ""),
            true,
        ),
        (
            "a value the check cannot make (`0` is no IP address) settles nothing",
            Router::new().get("/{address}", |_: Path<Addressed>| ""),
            true,
        ),
        (
            "a Deserialize that panics settles nothing",
            Router::new().get("/{a}", |_: Path<Touchy>| ""),
            true,
        ),
        (
            "map",
            Router::new().get("/{a}/{b}/{c}", |_: Path<HashMap<String, String>>| ""),
            true,
        ),
        (
            "sequence",
            Router::new().get("/{a}/{b}", |_: Path<Vec<String>>| ""),
            true,
        ),
        (
            "an optional Path is not checked",
            Router::new().get("/{a}/{b}", |_: Option<Path<u64>>| ""),
            true,
        ),
    ];
    for (case, router, compiles) in cases {
        match router.compile() {
            Ok(_) => assert!(compiles, "{case}: compiled"),
            Err(error) => {
                assert!(!compiles, "{case}: {error}");
                assert!(
                    matches!(error, RouteError::PathParameters { .. }),
                    "{case}: {error}"
                );
            }
        }
    }

    // A WebSocket handler's extractors are checked as a handler's are.
    #[cfg(feature = "ws")]
    {
        let socket = Router::new().websocket(
            "/rooms/{room}/{seat}",
            |_: pronghorn::ws::WebSocket, _: Path<String>| async {},
        );
        assert!(matches!(
            socket.compile(),
            Err(RouteError::PathParameters { .. })
        ));
    }
}

/// Errors name types as they are written in code, without the paths of
/// their modules (`Arc<RwLock<Db>>`, not
/// `alloc::sync::Arc<std::sync::poison::rwlock::RwLock<…>>`).
#[test]
fn errors_name_types_without_their_module_paths() {
    use pronghorn::handler::{Path, State};
    use std::sync::{Arc, RwLock};

    #[derive(Clone)]
    struct Db;
    let missing = Router::new()
        .get("/users", |_: State<Arc<RwLock<Db>>>| "all")
        .compile()
        .unwrap_err()
        .to_string();
    assert!(missing.contains("`State<Arc<RwLock<Db>>>`"), "{missing}");
    let twice = Router::new()
        .state(Arc::new(RwLock::new(Db)))
        .state(Arc::new(RwLock::new(Db)))
        .compile()
        .unwrap_err()
        .to_string();
    assert!(twice.contains("`Arc<RwLock<Db>>`"), "{twice}");
    let path = Router::new()
        .get("/users/{id}", |_: Path<(u32, String)>| "one")
        .compile()
        .unwrap_err()
        .to_string();
    assert!(path.contains("`Path<(u32, String)>`"), "{path}");
    for message in [missing, twice, path] {
        assert!(
            !message.contains("alloc::") && !message.contains("std::"),
            "{message}"
        );
    }
}

/// Each router holds its own state: two routers nested in one may hold a
/// value of one type each, and each route reads its own router's, else
/// that of the router it is nested in; a route whose routers hold none
/// reads one another router gave, the outer's first.
#[tokio::test]
async fn each_nested_router_reads_its_own_state() {
    use pronghorn::handler::State;

    #[derive(Clone)]
    struct Name(&'static str);
    let module = |name: &'static str| {
        Router::new()
            .get("/", |State(Name(name)): State<Name>| name)
            .state(Name(name))
    };
    let router = Router::new()
        .get("/", |State(Name(name)): State<Name>| name)
        .nest("/a", module("a"))
        .nest(
            "/b",
            module("b").nest(
                "/inner",
                Router::new().get("/", |State(Name(n)): State<Name>| n),
            ),
        )
        .nest(
            "/c",
            Router::new().get("/", |State(Name(n)): State<Name>| n),
        )
        .state(Name("root"))
        .compile()
        .unwrap();
    for (path, expected) in [
        ("/", "root"),
        ("/a", "a"),
        ("/b", "b"),
        ("/b/inner", "b"),
        ("/c", "root"),
    ] {
        assert_eq!(get(&router, path).await.body, expected, "{path}");
    }
    // A hook reads its own router's state too.
    let hooked = Router::new()
        .nest(
            "/a",
            module("a").prefix("/", |State(Name(name)): State<Name>| match name {
                "a" => Err(StatusCode::IM_A_TEAPOT),
                _ => Ok(()),
            }),
        )
        .state(Name("root"))
        .compile()
        .unwrap();
    assert_eq!(get(&hooked, "/a").await.status, StatusCode::IM_A_TEAPOT);
    // A module that gives a state its sibling reads, as before.
    let sibling = Router::new()
        .nest(
            "/api",
            Router::new().get("/count", |State(n): State<u64>| n.to_string()),
        )
        .merge(Router::new().state(7u64))
        .compile()
        .unwrap();
    assert_eq!(get(&sibling, "/api/count").await.body, "7");
}

/// An answer that could not be built is a 500 whatever status a tuple
/// puts around it: the client is not told "201 Internal Server Error".
#[tokio::test]
async fn a_status_around_an_answer_that_could_not_be_built_stays_500() {
    let router = Router::new()
        .get("/header", || (StatusCode::CREATED, [("\n", "\n")], ()))
        .get("/nested", || {
            (
                StatusCode::ACCEPTED,
                (StatusCode::CREATED, [("x", "\u{0}")], "made"),
            )
        })
        .get("/fine", || {
            (StatusCode::CREATED, [("x-made", "yes")], "made")
        })
        .compile()
        .unwrap();
    for path in ["/header", "/nested"] {
        let answer = get(&router, path).await;
        assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
    }
    let fine = get(&router, "/fine").await;
    assert_eq!(fine.status, StatusCode::CREATED);
    assert_eq!(fine.headers["x-made"], "yes");
}

/// Headers alone are an answer, as in axum: an empty 200 that carries
/// them.
#[tokio::test]
async fn headers_alone_are_an_empty_answer_that_carries_them() {
    let router = Router::new()
        .get("/", || {
            [(header::CACHE_CONTROL, "no-store"), (header::ETAG, "\"1\"")]
        })
        .compile()
        .unwrap();
    let answer = get(&router, "/").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.headers[header::CACHE_CONTROL], "no-store");
    assert_eq!(answer.headers[header::ETAG], "\"1\"");
    assert_eq!(answer.body, "");
}
