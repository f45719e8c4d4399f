//! Ready-first polling and the order of events on every combination of
//! synchronous and asynchronous hooks.

use super::*;

#[test]
fn sync_stack_is_ready_on_first_poll() {
    let events = Events::default();
    let gates = Gates::default();
    let sync = Async {
        prefix: false,
        handler: false,
        postfix: false,
        monitor: false,
    };
    let mut service = stepped_stack(sync, &events, &gates);
    let future = service.call(request("/sync"));
    let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
        panic!("the sync stack must be ready on its first poll");
    };
    assert_eq!(response.body(), "prefix seen");
    assert_eq!(response.headers()["x-postfix"], "yes");
    assert_eq!(
        events.take(),
        ["prefix", "handler", "postfix /sync", "monitor 200 OK"]
    );
    assert!(gates.all().iter().all(|(_, gate)| gate.polls() == 0));
}

/// Drives the future by hand: every `Pending` must leave exactly one gate
/// waiting, no step is polled again before its gate fires the waker, and
/// the waker of the outer future is what that firing reaches.
fn drive(mode: Async) -> (Res, Vec<String>, usize) {
    let events = Events::default();
    let gates = Gates::default();
    let mut service = stepped_stack(mode, &events, &gates);
    let mut future = service.call(request("/sync"));
    let (counter, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    let mut suspensions = 0;
    loop {
        match std::pin::Pin::new(&mut future).poll(&mut cx) {
            Poll::Ready(result) => {
                let response = result.unwrap();
                return (response, events.take(), suspensions);
            }
            Poll::Pending => {
                suspensions += 1;
                let waiting: Vec<_> = gates
                    .all()
                    .into_iter()
                    .filter(|(_, g)| g.is_waiting())
                    .collect();
                assert_eq!(waiting.len(), 1, "{mode:?}: one step suspends at a time");
                let (name, gate) = waiting[0];
                // A spurious poll does not reach past the waiting step.
                let polls = gate.polls();
                assert!(std::pin::Pin::new(&mut future).poll(&mut cx).is_pending());
                assert_eq!(gate.polls(), polls + 1, "{mode:?}: {name} polled again");
                let wakes = counter.wakes();
                gate.open();
                assert_eq!(
                    counter.wakes(),
                    wakes + 1,
                    "{mode:?}: {name} must wake the outer waker"
                );
            }
        }
    }
}

#[test]
fn every_sync_async_combination_gives_the_same_response_and_order() {
    let (reference, reference_events, none) = drive(Async {
        prefix: false,
        handler: false,
        postfix: false,
        monitor: false,
    });
    assert_eq!(none, 0);
    for bits in 0..16u8 {
        let mode = Async {
            prefix: bits & 1 != 0,
            handler: bits & 2 != 0,
            postfix: bits & 4 != 0,
            monitor: bits & 8 != 0,
        };
        let (response, mut events, suspensions) = drive(mode);
        assert_eq!(
            suspensions,
            bits.count_ones() as usize,
            "{mode:?}: one suspension per async step"
        );
        assert_eq!(response.status(), reference.status(), "{mode:?}");
        assert_eq!(response.body(), reference.body(), "{mode:?}");
        assert_eq!(response.headers(), reference.headers(), "{mode:?}");
        if mode.monitor {
            assert_eq!(events.pop().as_deref(), Some("monitor done"), "{mode:?}");
        }
        assert_eq!(events, reference_events, "{mode:?}");
    }
}

/// The same stack written with plain sync closures and with plain async
/// closures (the `FnSync` and `FnAsync` implementations) agrees.
#[tokio::test]
async fn plain_sync_and_async_closures_agree() {
    let handler = |events: Events| {
        service_fn(move |_: Request<String>| {
            events.push("handler");
            ready(Ok::<_, Infallible>(text(StatusCode::OK, "body")))
        })
    };

    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let sync = ServiceBuilder::new()
        .layer(MonitorLayer::new(
            move |x: &Exchange<'_, Res, Infallible>| {
                e3.push(format!("monitor {}", x.status().unwrap().as_u16()));
            },
        ))
        .layer(PostfixLayer::new(move |_: &RequestHead, response: Res| {
            e2.push("postfix");
            response.map(|body| body + "+postfix")
        }))
        .layer(PrefixLayer::new(move |request: Request<String>| {
            e1.push("prefix");
            ControlFlow::Continue(request)
        }))
        .service(handler(events.clone()));
    let future = sync.clone().oneshot(request("/a"));
    let Poll::Ready(Ok(sync_response)) = poll_once(pin!(future)) else {
        panic!("sync closures must finish in the first poll");
    };
    let sync_events = events.take();

    let [e1, e2, e3] = events.handles();
    let asynchronous = ServiceBuilder::new()
        .layer(MonitorLayer::new(
            move |x: &Exchange<'_, Res, Infallible>| {
                let (events, status) = (e3.clone(), x.status().unwrap().as_u16());
                async move {
                    tokio::task::yield_now().await;
                    events.push(format!("monitor {status}"));
                }
            },
        ))
        .layer(PostfixLayer::new(move |_: &RequestHead, response: Res| {
            let events = e2.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("postfix");
                response.map(|body| body + "+postfix")
            }
        }))
        .layer(PrefixLayer::new(move |request: Request<String>| {
            let events = e1.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("prefix");
                ControlFlow::Continue(request)
            }
        }))
        .service(handler(events.clone()));
    let async_response = asynchronous.oneshot(request("/a")).await.unwrap();

    assert_eq!(sync_response.body(), "body+postfix");
    assert_eq!(async_response.body(), sync_response.body());
    assert_eq!(sync_events, ["prefix", "handler", "postfix", "monitor 200"]);
    assert_eq!(events.take(), sync_events);
}
