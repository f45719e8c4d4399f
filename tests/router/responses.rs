//! Answers composed as axum composes them: response parts before an
//! answer, a status around them, and what happens when a part or the
//! answer could not be built (axum's own response tests, ported).

use http::{Extensions, HeaderMap, Response, StatusCode, Uri, header};
use pronghorn::{
    IntoResponse, Router,
    handler::{
        AppendHeaders, Extension, ForceStatusCode, Html, IntoResponseFailed, IntoResponseParts,
        NoContent, Redirect, ResponseParts,
    },
};

use super::get;

const EXAMPLE_URL: &str = "https://example.com";

/// Every tuple shape axum's own tests compile is a handler's answer here.
#[tokio::test]
async fn every_tuple_shape_axum_accepts_is_an_answer() {
    fn impl_into_response() -> impl IntoResponse {}
    let router = Router::new()
        .get("/status_headermap", || (StatusCode::OK, HeaderMap::new()))
        .get("/status_header_array", || {
            (StatusCode::OK, [("content-type", "text/plain")])
        })
        .get("/status_headermap_body", || {
            (StatusCode::OK, HeaderMap::new(), String::new())
        })
        .get("/status_header_array_impl", || {
            (
                StatusCode::OK,
                [("content-type", "text/plain")],
                impl_into_response(),
            )
        })
        .get("/status_header_array_extension_body", || {
            (
                StatusCode::OK,
                [("content-type", "text/plain")],
                Extension(1),
                String::new(),
            )
        })
        .get("/status_mixed", || {
            (
                StatusCode::OK,
                [("content-type", "text/plain")],
                Extension(1),
                HeaderMap::new(),
                String::new(),
            )
        })
        .get("/headermap", HeaderMap::new)
        .get("/header_array_body", || {
            ([("content-type", "text/plain")], String::new())
        })
        .get("/header_array_extension_mixed_body", || {
            (
                [("content-type", "text/plain")],
                Extension(1),
                HeaderMap::new(),
                String::new(),
            )
        })
        .get("/impl_trait", |uri: Uri| {
            if uri.path() == "/" { Ok(()) } else { Err(()) }
        })
        .compile()
        .unwrap();
    for path in [
        "/status_headermap",
        "/status_header_array",
        "/status_headermap_body",
        "/status_header_array_impl",
        "/status_header_array_extension_body",
        "/status_mixed",
        "/headermap",
        "/header_array_body",
        "/header_array_extension_mixed_body",
        "/impl_trait",
    ] {
        assert_eq!(get(&router, path).await.status, StatusCode::OK, "{path}");
    }
    let answer = get(&router, "/status_mixed").await;
    assert_eq!(answer.headers["content-type"], "text/plain");
}

#[test]
fn a_status_around_an_answer_replaces_its_status_unless_it_failed() {
    assert_eq!(
        (StatusCode::INTERNAL_SERVER_ERROR,)
            .into_response()
            .status(),
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert_eq!(
        (StatusCode::SEE_OTHER, StatusCode::NO_CONTENT)
            .into_response()
            .status(),
        StatusCode::SEE_OTHER
    );
    let res = (
        StatusCode::SEE_OTHER,
        [("location", "foo")],
        StatusCode::NO_CONTENT,
    )
        .into_response();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], "foo");
    assert_eq!(
        (StatusCode::SEE_OTHER, StatusCode::INTERNAL_SERVER_ERROR)
            .into_response()
            .status(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        (
            StatusCode::SEE_OTHER,
            (IntoResponseFailed, StatusCode::INTERNAL_SERVER_ERROR)
        )
            .into_response()
            .status(),
        StatusCode::INTERNAL_SERVER_ERROR
    );
    let res = (
        StatusCode::SEE_OTHER,
        [("location", "foo")],
        (IntoResponseFailed, StatusCode::INTERNAL_SERVER_ERROR),
    )
        .into_response();
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(res.headers().get("location").is_none());
}

/// The parts of the failed answer itself still apply; those around it do
/// not, whichever form the tuple around it takes.
#[test]
fn parts_around_a_failed_answer_are_not_applied_but_its_own_are() {
    fn failed() -> impl IntoResponse {
        (
            [("x-bar", "bar")],
            IntoResponseFailed,
            [("x-foo", "foo")],
            StatusCode::INTERNAL_SERVER_ERROR,
        )
    }
    let answers = [
        (StatusCode::SEE_OTHER, [("location", "foo")], failed()).into_response(),
        ([("location", "foo")], failed()).into_response(),
        (
            Response::new(()).into_parts().0,
            [("location", "foo")],
            failed(),
        )
            .into_response(),
        (Response::new(()), [("location", "foo")], failed()).into_response(),
    ];
    for res in answers {
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(res.headers().get("location").is_none());
        assert_eq!(res.headers()["x-foo"], "foo");
        assert_eq!(res.headers()["x-bar"], "bar");
    }
}

#[test]
fn a_part_that_fails_answers_its_error_marked_failed() {
    struct Fail;
    impl IntoResponseParts for Fail {
        type Error = (StatusCode, &'static str);
        fn into_response_parts(self, _: ResponseParts) -> Result<ResponseParts, Self::Error> {
            Err((StatusCode::UNPROCESSABLE_ENTITY, "nope"))
        }
    }
    let answers = [
        (Fail, ()).into_response(),
        (StatusCode::CREATED, Fail, ()).into_response(),
        (Response::new(()).into_parts().0, Fail, ()).into_response(),
        (Response::new(()), Fail, ()).into_response(),
    ];
    for res in answers {
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert!(res.extensions().get::<IntoResponseFailed>().is_some());
    }
}

#[test]
fn a_failed_mark_at_the_same_level_keeps_the_given_parts() {
    assert_eq!(
        (StatusCode::INTERNAL_SERVER_ERROR, IntoResponseFailed, ())
            .into_response()
            .status(),
        StatusCode::INTERNAL_SERVER_ERROR,
    );
    #[derive(Clone)]
    struct Thing;
    let template = Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .header("x-foo", "foo")
        .extension(Thing)
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let res = (template, IntoResponseFailed, ()).into_response();
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(res.headers()["x-foo"], "foo");
    assert!(res.extensions().get::<Thing>().is_some());
    assert_eq!(
        (IntoResponseFailed, ()).into_response().status(),
        StatusCode::OK
    );
}

#[test]
fn force_status_code_sets_the_status_even_over_a_failure() {
    let teapot = StatusCode::IM_A_TEAPOT;
    assert_eq!(ForceStatusCode(teapot).into_response().status(), teapot);
    assert_eq!((ForceStatusCode(teapot),).into_response().status(), teapot);
    assert_eq!(
        (ForceStatusCode(teapot), ()).into_response().status(),
        teapot
    );
    assert_eq!(
        (
            ForceStatusCode(teapot),
            IntoResponseFailed,
            StatusCode::INTERNAL_SERVER_ERROR
        )
            .into_response()
            .status(),
        teapot
    );
}

/// A JSON answer that cannot be serialised stays 500 under a status, and
/// `ForceStatusCode` still overrides it.
#[cfg(feature = "json")]
#[tokio::test]
async fn a_status_does_not_override_json_that_failed_to_serialise() {
    let router = Router::new()
        .get("/", || {
            let not_json_compatible = std::collections::HashMap::from([(vec![1, 2, 3], 123)]);
            (
                StatusCode::IM_A_TEAPOT,
                pronghorn::handler::Json(not_json_compatible),
            )
        })
        .get("/two", || {
            let not_json_compatible = std::collections::HashMap::from([(vec![1, 2, 3], 123)]);
            (
                ForceStatusCode(StatusCode::IM_A_TEAPOT),
                pronghorn::handler::Json(not_json_compatible),
            )
        })
        .compile()
        .unwrap();
    assert_eq!(
        get(&router, "/").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert_eq!(get(&router, "/two").await.status, StatusCode::IM_A_TEAPOT);
}

/// A `Form` answer is its value as a form body, read back by `Form` as
/// axum's own test reads it (`None` fields left out); a value with nested
/// fields answers 500, under a status too.
#[tokio::test]
async fn a_form_answer_is_a_form_body_that_form_reads_back() {
    use pronghorn::handler::Form;

    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Pagination {
        size: Option<u64>,
        page: Option<u64>,
    }
    #[derive(serde::Serialize)]
    struct Nested {
        inner: Pagination,
    }
    let cases = [
        (
            Pagination {
                size: None,
                page: None,
            },
            "",
        ),
        (
            Pagination {
                size: Some(10),
                page: None,
            },
            "size=10",
        ),
        (
            Pagination {
                size: Some(10),
                page: Some(20),
            },
            "size=10&page=20",
        ),
    ];
    for (value, body) in cases {
        let given = value.clone();
        let router = Router::new()
            .get("/", move || Form(given.clone()))
            .post("/", |Form(read): Form<Pagination>| format!("{read:?}"))
            .get("/nested", || {
                let inner = Pagination {
                    size: None,
                    page: None,
                };
                (StatusCode::CREATED, Form(Nested { inner }))
            })
            .compile()
            .unwrap();
        let answer = get(&router, "/").await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(
            answer.headers[header::CONTENT_TYPE],
            "application/x-www-form-urlencoded"
        );
        assert_eq!(answer.body, body);
        let request = http::Request::post("/")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(answer.body)
            .unwrap();
        let read = tower::ServiceExt::oneshot(router.clone(), request)
            .await
            .unwrap();
        let read = http_body_util::BodyExt::collect(read.into_body())
            .await
            .unwrap();
        assert_eq!(read.to_bytes(), format!("{value:?}"));
        let nested = get(&router, "/nested").await;
        assert_eq!(nested.status, StatusCode::INTERNAL_SERVER_ERROR);
    }
}

#[test]
fn no_content_is_an_empty_204() {
    assert_eq!(NoContent.into_response().status(), StatusCode::NO_CONTENT);
}

#[test]
fn a_redirect_tells_its_status_and_location() {
    assert_eq!(
        Redirect::to(EXAMPLE_URL).status_code(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        Redirect::temporary(EXAMPLE_URL).status_code(),
        StatusCode::TEMPORARY_REDIRECT
    );
    assert_eq!(
        Redirect::permanent(EXAMPLE_URL).status_code(),
        StatusCode::PERMANENT_REDIRECT
    );
    assert_eq!(Redirect::permanent(EXAMPLE_URL).location(), EXAMPLE_URL);
    assert_eq!(Redirect::permanent("/redirect").location(), "/redirect");
    let response = Redirect::permanent("newlines aren't allowed\n").into_response();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
}

/// A redirect before a body sets its status and location on it; a status
/// before both wins; a location that is not header text answers 500.
#[tokio::test]
async fn a_redirect_composes_with_a_body() {
    let router = Router::new()
        .get("/see-other", || {
            (Redirect::to(EXAMPLE_URL), Html("<a>there</a>"))
        })
        .get("/permanent", || (Redirect::permanent(EXAMPLE_URL), "body"))
        .get("/explicit", || {
            (
                StatusCode::TEMPORARY_REDIRECT,
                Redirect::to(EXAMPLE_URL),
                "body",
            )
        })
        .get("/invalid", || {
            (Redirect::permanent("invalid\nlocation"), "body")
        })
        .compile()
        .unwrap();
    let answer = get(&router, "/see-other").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(answer.headers[header::LOCATION], EXAMPLE_URL);
    assert_eq!(
        answer.headers[header::CONTENT_TYPE],
        "text/html; charset=utf-8"
    );
    assert_eq!(answer.body, "<a>there</a>");
    let answer = get(&router, "/permanent").await;
    assert_eq!(answer.status, StatusCode::PERMANENT_REDIRECT);
    let answer = get(&router, "/explicit").await;
    assert_eq!(answer.status, StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(answer.headers[header::LOCATION], EXAMPLE_URL);
    assert_eq!(
        get(&router, "/invalid").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
}

#[test]
fn append_headers_keep_every_value_and_extensions_reach_the_response() {
    let res = (
        AppendHeaders([(header::SET_COOKIE, "a=1"), (header::SET_COOKIE, "b=2")]),
        [(header::SET_COOKIE, "c=3")],
        "hi",
    )
        .into_response();
    // The array replaces: the values of the same name before it are gone.
    let cookies: Vec<_> = res.headers().get_all(header::SET_COOKIE).iter().collect();
    assert_eq!(cookies, ["c=3"]);
    let res = (
        [(header::SET_COOKIE, "c=3")],
        AppendHeaders([(header::SET_COOKIE, "a=1")]),
        "hi",
    )
        .into_response();
    assert_eq!(res.headers().get_all(header::SET_COOKIE).iter().count(), 2);

    let mut extensions = Extensions::new();
    extensions.insert(5u8);
    let res = (
        extensions,
        Extension("x"),
        Some([("x-some", "1")]),
        None::<HeaderMap>,
        (),
    )
        .into_response();
    assert_eq!(res.extensions().get::<u8>(), Some(&5));
    assert_eq!(res.extensions().get::<&str>(), Some(&"x"));
    assert_eq!(res.headers()["x-some"], "1");
}

/// axum's `response::Result`: a handler's `?` turns any error that is an
/// answer into the `ErrorResponse` that answers the request.
#[tokio::test]
async fn a_result_with_error_response_answers_the_error_s_answer() {
    use pronghorn::handler::{ErrorResponse, Result};
    fn find(id: &str) -> Result<String> {
        let id: u32 = id
            .parse()
            .map_err(|_| (StatusCode::BAD_REQUEST, "not a number"))?;
        match id {
            7 => Ok("ada".to_owned()),
            _ => Err(StatusCode::NOT_FOUND)?,
        }
    }
    let router = Router::new()
        .get(
            "/users/{id}",
            |pronghorn::handler::Path(id): pronghorn::handler::Path<String>| find(&id),
        )
        .compile()
        .unwrap();
    let answer = get(&router, "/users/7").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::OK, "ada")
    );
    let answer = get(&router, "/users/8").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let answer = get(&router, "/users/x").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::BAD_REQUEST, "not a number")
    );
    let error: ErrorResponse = StatusCode::IM_A_TEAPOT.into();
    let response = Err::<(), _>(error).into_response();
    assert_eq!(response.status(), StatusCode::IM_A_TEAPOT);
}
