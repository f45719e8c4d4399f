//! Early answers, replacements, hooks that work in place, and layers
//! returned from functions.

use super::*;

#[tokio::test]
async fn prefix_early_answer_never_calls_the_inner_service() {
    let calls = Arc::new(AtomicUsize::new(0));
    let refuse = |request: Request<String>| {
        if request.uri().path() == "/open" {
            ControlFlow::Continue(request)
        } else {
            ControlFlow::Break(text(StatusCode::FORBIDDEN, "no"))
        }
    };
    let service = Prefix::new(counted(calls.clone()), refuse);

    let future = service.clone().oneshot(request("/closed"));
    let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
        panic!("an early answer must be ready on the first poll");
    };
    assert_eq!(
        (response.status(), response.body().as_str()),
        (StatusCode::FORBIDDEN, "no")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    let response = service.clone().oneshot(request("/open")).await.unwrap();
    assert_eq!(response.body(), "inner");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // The same holds for an asynchronous early answer.
    let later = Prefix::new(counted(calls.clone()), |_: Request<String>| async {
        ControlFlow::<Res, Request<String>>::Break(text(StatusCode::FORBIDDEN, "later"))
    });
    let response = later.oneshot(request("/open")).await.unwrap();
    assert_eq!(response.body(), "later");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_postfix_outside_a_prefix_sees_its_early_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let service = ServiceBuilder::new()
        .layer(PostfixLayer::new(|_: &RequestHead, response: Res| {
            response.map(|b| b + " (seen)")
        }))
        .layer(PrefixLayer::new(|_: Request<String>| {
            ControlFlow::Break(text(StatusCode::IM_A_TEAPOT, "early"))
        }))
        .service(counted(calls.clone()));
    let response = service.oneshot(request("/")).await.unwrap();
    assert_eq!(response.status(), StatusCode::IM_A_TEAPOT);
    assert_eq!(response.body(), "early (seen)");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn postfix_replaces_the_response() {
    let service = Postfix::new(
        counted(Arc::default()),
        |head: &RequestHead, response: Res| {
            if head.path() == "/replace" {
                text(StatusCode::ACCEPTED, "replaced")
            } else {
                response
            }
        },
    );
    let replaced = service.clone().oneshot(request("/replace")).await.unwrap();
    assert_eq!(
        (replaced.status(), replaced.body().as_str()),
        (StatusCode::ACCEPTED, "replaced")
    );
    let kept = service.oneshot(request("/keep")).await.unwrap();
    assert_eq!(
        (kept.status(), kept.body().as_str()),
        (StatusCode::OK, "inner")
    );
}

#[tokio::test]
async fn a_prefix_looks_at_the_request_in_place_and_answers_or_lets_it_through() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    // The inner service answers with what the prefix wrote.
    let inner = service_fn(move |request: Request<String>| {
        seen.fetch_add(1, Ordering::SeqCst);
        let checked = request.headers().get("x-checked").cloned();
        let body = checked.map_or("unchecked".to_owned(), |v| v.to_str().unwrap().to_owned());
        ready(Ok::<_, Infallible>(text(StatusCode::OK, &body)))
    });
    let service = Prefix::new(inner, |request: &mut Request<String>| {
        if request.uri().path() == "/blocked" {
            return ControlFlow::Break(text(StatusCode::FORBIDDEN, "no"));
        }
        request
            .headers_mut()
            .insert("x-checked", HeaderValue::from_static("1"));
        ControlFlow::Continue(())
    });
    let blocked = service.clone().oneshot(request("/blocked")).await.unwrap();
    assert_eq!(
        (blocked.status(), blocked.body().as_str()),
        (StatusCode::FORBIDDEN, "no")
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "an answer skips the inner service"
    );
    let passed = service.oneshot(request("/open")).await.unwrap();
    assert_eq!(
        (passed.status(), passed.body().as_str()),
        (StatusCode::OK, "1")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_postfix_edits_the_response_in_place_and_sees_the_head() {
    let mut service = Postfix::new(
        counted(Arc::default()),
        |head: &RequestHead, response: &mut Res| {
            let value = HeaderValue::from_str(head.path()).unwrap();
            response.headers_mut().insert("x-path", value);
        },
    );
    // Synchronous: ready on the first poll.
    let mut future = pin!(service.call(request("/edited")));
    let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
        panic!("an in-place postfix is synchronous");
    };
    assert_eq!(
        (response.status(), response.body().as_str()),
        (StatusCode::OK, "inner")
    );
    assert_eq!(response.headers()["x-path"], "/edited");
}

#[test]
fn a_postfix_blind_to_the_request_edits_the_response_in_place() {
    let mut service = Postfix::new(counted(Arc::default()), |response: &mut Res| {
        response
            .headers_mut()
            .insert("x-edited", HeaderValue::from_static("yes"));
    });
    let mut future = pin!(service.call(request("/edited")));
    let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
        panic!("a postfix that edits in place is synchronous");
    };
    assert_eq!(response.body(), "inner");
    assert_eq!(response.headers()["x-edited"], "yes");
}

// Layers returned from functions: the usual form of each layer is its
// default marker, so the signatures name none.
fn deny_without_token() -> PrefixLayer<impl FnMut(&mut Request<String>) -> ControlFlow<Res> + Clone>
{
    PrefixLayer::new(|request: &mut Request<String>| {
        match request.headers().contains_key("authorization") {
            true => ControlFlow::Continue(()),
            false => ControlFlow::Break(text(StatusCode::UNAUTHORIZED, "who are you?")),
        }
    })
}

fn served_by() -> PostfixLayer<impl FnMut(&mut Res) + Clone> {
    PostfixLayer::new(|response: &mut Res| {
        response
            .headers_mut()
            .insert("x-served-by", HeaderValue::from_static("pronghorn"));
    })
}

fn log_into(
    lines: Arc<Mutex<Vec<String>>>,
) -> MonitorLayer<impl FnMut(&Exchange<'_, Res, Infallible>) + Clone> {
    MonitorLayer::new(move |x: &Exchange<'_, Res, Infallible>| {
        let status = x.status().map(|status| status.as_u16());
        lines
            .lock()
            .unwrap()
            .push(format!("{} {status:?}", x.path()));
    })
}

#[tokio::test]
async fn layers_returned_from_functions_name_no_marker() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let service = ServiceBuilder::new()
        .layer(log_into(lines.clone()))
        .layer(served_by())
        .layer(deny_without_token())
        .service(counted(Arc::default()));

    let denied = service.clone().oneshot(request("/private")).await.unwrap();
    assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(denied.headers()["x-served-by"], "pronghorn");
    let mut with_token = request("/private");
    with_token
        .headers_mut()
        .insert("authorization", HeaderValue::from_static("Bearer t"));
    let allowed = service.oneshot(with_token).await.unwrap();
    assert_eq!(allowed.body(), "inner");
    assert_eq!(
        *lines.lock().unwrap(),
        ["/private Some(401)", "/private Some(200)"]
    );
}

/// Why a request is refused: an error type of the application.
enum Denied {
    NoToken,
    BadToken,
}

impl IntoResponse for Denied {
    fn into_response(self) -> Response<Body> {
        match self {
            Denied::NoToken => (StatusCode::UNAUTHORIZED, "no token").into_response(),
            Denied::BadToken => (StatusCode::FORBIDDEN, "bad token").into_response(),
        }
    }
}

/// A prefix that checks the request in place and answers `Result<(), E>`
/// refuses with any `IntoResponse`, `?` included, in front of a service
/// that answers pronghorn's `Body`; it is synchronous.
#[tokio::test]
async fn a_checking_prefix_answers_any_into_response_and_takes_question_marks() {
    let inner = service_fn(|request: Request<Body>| {
        let checked = request.extensions().get::<&str>().copied().unwrap_or("no");
        ready(Ok::<_, Infallible>(
            format!("checked: {checked}").into_response(),
        ))
    });
    let mut service = Prefix::new(inner, |request: &mut Request<Body>| -> Result<(), Denied> {
        let token = request
            .headers()
            .get("authorization")
            .ok_or(Denied::NoToken)?;
        if token != "Bearer t" {
            return Err(Denied::BadToken);
        }
        request.extensions_mut().insert("yes");
        Ok(())
    });
    let mut answers = Vec::new();
    for token in [None, Some("Bearer x"), Some("Bearer t")] {
        let mut request = Request::get("/").body(Body::empty()).unwrap();
        if let Some(token) = token {
            request
                .headers_mut()
                .insert("authorization", HeaderValue::from_static(token));
        }
        let mut future = pin!(service.call(request));
        let Poll::Ready(Ok(response)) = poll_once(future.as_mut()) else {
            panic!("a checking prefix is synchronous");
        };
        let status = response.status();
        let body = http_body_util::BodyExt::collect(response.into_body()).await;
        answers.push((status, body.unwrap().to_bytes()));
    }
    assert_eq!(
        answers,
        [
            (StatusCode::UNAUTHORIZED, "no token".into()),
            (StatusCode::FORBIDDEN, "bad token".into()),
            (StatusCode::OK, "checked: yes".into()),
        ]
    );
}
