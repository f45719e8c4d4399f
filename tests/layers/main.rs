//! Behaviour of the prefix, postfix and monitor layers through their public
//! API, a file per topic: ready-first polling and event order (`order`),
//! early answers and replacement (`answers`), what monitors see
//! (`monitors`), readiness and auto traits (`services`).

mod answers;
#[path = "../common/mod.rs"]
mod common;
mod monitors;
mod order;
mod services;

use std::{
    convert::Infallible,
    fmt,
    future::{Future, ready},
    ops::ControlFlow,
    pin::pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
};

use common::{CountingWaker, Events, Gate, poll_once};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use pronghorn::{
    Body, Exchange, IntoResponse, Monitor, MonitorLayer, Postfix, PostfixLayer, Prefix,
    PrefixLayer, RequestHead, Step,
};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

type Res = Response<String>;

fn text(status: StatusCode, body: &str) -> Res {
    let mut response = Response::new(body.to_owned());
    *response.status_mut() = status;
    response
}

/// Which steps answer with a future.
#[derive(Clone, Copy, Debug)]
struct Async {
    prefix: bool,
    handler: bool,
    postfix: bool,
    monitor: bool,
}

/// One gate per step that may wait.
#[derive(Clone, Default)]
struct Gates {
    prefix: Gate,
    handler: Gate,
    postfix: Gate,
    monitor: Gate,
}

impl Gates {
    fn all(&self) -> [(&'static str, &Gate); 4] {
        [
            ("prefix", &self.prefix),
            ("handler", &self.handler),
            ("postfix", &self.postfix),
            ("monitor", &self.monitor),
        ]
    }
}

/// Monitor(Postfix(Prefix(handler))) whose steps answer now or later as
/// `mode` says, through `Step`-answering closures.
fn stepped_stack(
    mode: Async,
    events: &Events,
    gates: &Gates,
) -> impl Service<Request<String>, Response = Res, Error = Infallible, Future: Unpin> + Clone {
    let [e1, e2, e3, e4] = events.handles();
    let (g1, g2, g3, g4) = (
        gates.prefix.clone(),
        gates.handler.clone(),
        gates.postfix.clone(),
        gates.monitor.clone(),
    );
    let prefix = move |mut request: Request<String>| {
        e1.push("prefix");
        request
            .headers_mut()
            .insert("x-prefix", HeaderValue::from_static("seen"));
        if mode.prefix {
            let gate = g1.wait();
            Step::Pending(async move {
                gate.await;
                ControlFlow::Continue(request)
            })
        } else {
            Step::Ready(ControlFlow::Continue(request))
        }
    };
    let handler = service_fn(move |request: Request<String>| {
        e2.push("handler");
        let gate = mode.handler.then(|| g2.wait());
        async move {
            if let Some(gate) = gate {
                gate.await;
            }
            let seen = request.headers()["x-prefix"].to_str().unwrap().to_owned();
            Ok::<_, Infallible>(text(StatusCode::OK, &format!("prefix {seen}")))
        }
    });
    let postfix = move |head: &RequestHead, mut response: Res| {
        e3.push(format!("postfix {}", head.path()));
        response
            .headers_mut()
            .insert("x-postfix", HeaderValue::from_static("yes"));
        if mode.postfix {
            let gate = g3.wait();
            Step::Pending(async move {
                gate.await;
                response
            })
        } else {
            Step::Ready(response)
        }
    };
    let monitor = move |exchange: &Exchange<'_, Res, Infallible>| {
        e4.push(format!("monitor {}", exchange.status().unwrap()));
        if mode.monitor {
            let (gate, events) = (g4.wait(), e4.clone());
            Step::Pending(async move {
                gate.await;
                events.push("monitor done");
            })
        } else {
            Step::Ready(())
        }
    };
    ServiceBuilder::new()
        .layer(MonitorLayer::new(monitor))
        .layer(PostfixLayer::new(postfix))
        .layer(PrefixLayer::new(prefix))
        .service(handler)
        .map_future(Box::pin)
}

fn request(path: &str) -> Request<String> {
    Request::get(path).body(String::new()).unwrap()
}

/// A service that counts its calls.
fn counted(
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<String>, Response = Res, Error = Infallible> + Clone {
    service_fn(move |_: Request<String>| {
        calls.fetch_add(1, Ordering::SeqCst);
        ready(Ok::<_, Infallible>(text(StatusCode::OK, "inner")))
    })
}
