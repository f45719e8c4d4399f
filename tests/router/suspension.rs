//! Steps that suspend: when the response future is ready, and who is woken.

use super::*;

/// Sync hooks: the answer is ready on the first poll.
#[test]
fn a_sync_pipeline_is_ready_on_the_first_poll() {
    let events = Events::default();
    let [e1, e2, e3, e4] = events.handles();
    let router = Router::new()
        .get("/sync", move || {
            e2.push("handler");
            "ok"
        })
        .prefix("/sync", move |r: Req, _: &mut Route<'_>| {
            e1.push("prefix");
            r
        })
        .postfix("/sync", move |_: &Route<'_>, response: Response<Body>| {
            e3.push("postfix");
            response
        })
        .monitor("/sync", move |_: &RouteExchange<'_>| e4.push("monitor"))
        .compile()
        .unwrap();
    let future = router.oneshot(Request::get("/sync").body(String::new()).unwrap());
    let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
        panic!("a sync pipeline must answer in the first poll");
    };
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(events.take(), ["prefix", "handler", "postfix", "monitor"]);
}

/// The same with every step async: the same body, in the same order.
#[tokio::test]
async fn an_async_pipeline_gives_the_same_body_in_the_same_order() {
    let events = Events::default();
    let [e1, e2, e3, e4] = events.handles();
    let router = Router::new()
        .get("/sync", move || {
            let events = e2.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("handler");
                "ok"
            }
        })
        .prefix("/sync", move |r: Req, _: &mut Route<'_>| {
            let events = e1.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("prefix");
                r
            }
        })
        .postfix("/sync", move |_: &Route<'_>, response: Response<Body>| {
            let events = e3.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("postfix");
                response
            }
        })
        .monitor("/sync", move |_: &RouteExchange<'_>| {
            let events = e4.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("monitor");
            }
        })
        .compile()
        .unwrap();
    let answer = get(&router, "/sync").await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (StatusCode::OK, "ok")
    );
    assert_eq!(events.take(), ["prefix", "handler", "postfix", "monitor"]);
}

#[tokio::test]
async fn a_step_answering_handler_and_prefix_switch_per_request() {
    let router = Router::new()
        .get("/n/{n}", |Path(n): Path<u32>| {
            if n % 2 == 0 {
                Step::Ready(format!("now {n}"))
            } else {
                Step::Pending(async move { format!("later {n}") })
            }
        })
        .compile()
        .unwrap();
    let now = router
        .clone()
        .oneshot(Request::get("/n/2").body(String::new()).unwrap());
    assert!(poll_once(pin!(now)).is_ready());
    assert_eq!(get(&router, "/n/2").await.body, "now 2");
    assert_eq!(get(&router, "/n/3").await.body, "later 3");
}

/// A body still arriving is polled once inside `call`, where it is read in
/// place, and next at the response future's first poll, with the caller's
/// waker, which its arrival then wakes: nothing polls it in between.
#[test]
fn a_body_still_arriving_is_polled_once_in_call_then_with_the_callers_waker() {
    let gate = Gate::default();
    let arriving = gate.clone();
    let body = http_body_util::StreamBody::new(futures_util::stream::once(async move {
        arriving.wait().await;
        Ok::<_, std::convert::Infallible>(http_body::Frame::data(bytes::Bytes::from_static(
            b"hello",
        )))
    }))
    .boxed();
    let mut router = Router::new()
        .post("/echo", |body: bytes::Bytes| body)
        .compile()
        .unwrap();
    let mut future = pin!(router.call(Request::post("/echo").body(body).unwrap()));
    assert_eq!(gate.polls(), 1, "the body is read in place inside `call`");
    let (wakes, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(gate.polls(), 2, "polled again at the future's first poll");
    gate.open();
    assert_eq!(wakes.wakes(), 1, "the arrival wakes the caller's task");
    let Poll::Ready(Ok(response)) = future.as_mut().poll(&mut cx) else {
        panic!("the answer is ready once the body has arrived");
    };
    assert_eq!(gate.polls(), 3);
    assert_eq!(response.status(), StatusCode::OK);
    let Poll::Ready(Ok(body)) = poll_once(pin!(response.into_body().collect())) else {
        panic!("the echoed body is complete");
    };
    assert_eq!(body.to_bytes(), "hello");
}

/// After a prefix that suspended, the handler runs in the response future:
/// its future is polled once there, with the caller's waker, and the
/// handler's answer comes when that waker is woken.
#[test]
fn a_handler_after_a_suspended_prefix_is_polled_once_per_wake() {
    let (prefix_gate, handler_gate) = (Gate::default(), Gate::default());
    let (prefix_wait, handler_wait) = (prefix_gate.clone(), handler_gate.clone());
    let mut router = Router::new()
        .get("/slow", move || {
            let gate = handler_wait.clone();
            async move {
                gate.wait().await;
                "ok"
            }
        })
        .prefix("/slow", move |request: Req, _: &mut Route<'_>| {
            let gate = prefix_wait.clone();
            async move {
                gate.wait().await;
                request
            }
        })
        .compile()
        .unwrap();
    let mut future = pin!(router.call(Request::get("/slow").body(String::new()).unwrap()));
    let (wakes, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(handler_gate.polls(), 0, "the prefix has not answered");
    prefix_gate.open();
    assert_eq!(wakes.wakes(), 1);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        handler_gate.polls(),
        1,
        "the handler's future is polled once"
    );
    handler_gate.open();
    assert_eq!(
        wakes.wakes(),
        2,
        "the handler's wait wakes the caller's task"
    );
    let Poll::Ready(Ok(response)) = future.as_mut().poll(&mut cx) else {
        panic!("the handler has answered");
    };
    assert_eq!(handler_gate.polls(), 2);
    assert_eq!(response.status(), StatusCode::OK);
}

/// A `Handler` implemented by hand that answers with a future it has not
/// polled: the router polls it inside `call` and again with the caller's
/// waker, so its wake-up is not lost.
#[test]
fn a_hand_written_handler_that_does_not_poll_its_future_is_woken() {
    use pronghorn::handler::{BoxFuture, Handler, RouteContext};

    #[derive(Clone)]
    struct Waits(Gate);

    impl Handler<()> for Waits {
        fn call(
            &self,
            _: &mut Req,
            _: RouteContext<'_>,
            _: &mut Context<'_>,
        ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
            let wait = self.0.wait();
            Step::Pending(Box::pin(async move {
                wait.await;
                Response::new(Body::from("late"))
            }))
        }
    }

    let gate = Gate::default();
    let mut router = Router::new()
        .get("/hand", Waits(gate.clone()))
        .compile()
        .unwrap();
    let mut future = pin!(router.call(Request::get("/hand").body(String::new()).unwrap()));
    assert_eq!(gate.polls(), 1, "polled by the router inside `call`");
    let (wakes, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    gate.open();
    assert_eq!(wakes.wakes(), 1, "the caller's waker was registered");
    assert!(future.as_mut().poll(&mut cx).is_ready());
}

#[test]
fn the_router_and_its_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<CompiledRouter>();
    send_sync::<pronghorn::router::Reloadable>();
    send::<pronghorn::router::ResponseFuture>();
    send_sync::<RouteError>();
    send_sync::<Failure>();
}

/// Steps that suspend, wherever they are: the request is answered the
/// same, its steps run in the same order, and staged headers still go out,
/// as when every step answers at once (which answers on the first poll).
#[tokio::test]
async fn suspending_steps_anywhere_give_the_same_answer_and_order() {
    use http::Uri;

    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let mut router = Router::new()
        .get("/steps", move |uri: Uri| {
            step_answer(asks(&uri, "handler"), &e1, "handler".into(), "ok")
        })
        .prefix("/", |_: &mut Req, route: &mut Route<'_>| {
            route.stage_header(
                header::HeaderName::from_static("x-staged"),
                HeaderValue::from_static("yes"),
            );
            ControlFlow::<StatusCode>::Continue(())
        });
    for name in ["prefix-1", "prefix-2"] {
        let events = e2.clone();
        router = router.prefix("/steps", move |request: Req, route: &mut Route<'_>| {
            step_answer(asks(route.uri(), name), &events, name.into(), request)
        });
    }
    for name in ["postfix-1", "postfix-2"] {
        let events = e3.clone();
        router = router.postfix(
            "/steps",
            move |route: &Route<'_>, mut response: Response<Body>| {
                response
                    .headers_mut()
                    .insert(name, HeaderValue::from_static("ran"));
                step_answer(asks(route.uri(), name), &events, name.into(), response)
            },
        );
    }
    for name in ["monitor-1", "monitor-2"] {
        let events = events.clone();
        router = router.monitor("/steps", move |x: &RouteExchange<'_>| {
            let seen = format!("{name} {}", x.status().unwrap().as_u16());
            step_answer(asks(x.uri(), name), &events, seen, ())
        });
    }
    let router = router.compile().unwrap();

    let cases = [
        "",
        "prefix-1",
        "prefix-2",
        "handler",
        "postfix-1",
        "postfix-2",
        "monitor-1",
        "monitor-2",
        // A step after a handler that waited suspends too.
        "handler&postfix-2",
        "handler&monitor-1",
        "prefix-1&handler&postfix-1&monitor-2",
    ];
    for case in cases {
        let path = format!("/steps?{case}");
        let call = router
            .clone()
            .oneshot(Request::get(path.as_str()).body(String::new()).unwrap());
        assert_eq!(
            poll_once(pin!(call)).is_ready(),
            case.is_empty(),
            "{case}: only a synchronous request answers on the first poll"
        );
        events.take();
        let answer = get(&router, &path).await;
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (StatusCode::OK, "ok"),
            "{case}"
        );
        for name in ["x-staged", "postfix-1", "postfix-2"] {
            assert!(answer.headers.contains_key(name), "{case}: {name}");
        }
        assert_eq!(
            events.take(),
            [
                "prefix-1",
                "prefix-2",
                "handler",
                "postfix-1",
                "postfix-2",
                "monitor-1 200",
                "monitor-2 200"
            ],
            "{case}"
        );
    }
}
