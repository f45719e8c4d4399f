//! The router's behaviour through its public API, a file per topic.

mod answers;
mod axum_suite;
#[path = "../common/mod.rs"]
mod common;
mod errors;
#[cfg(feature = "json")]
mod extractors;
mod hooks;
mod layers;
mod methods;
mod monitors;
mod patterns;
mod precedence;
mod responses;
mod services;
mod suspension;

use std::{
    ops::ControlFlow,
    pin::pin,
    task::{Context, Poll},
};

use common::{CountingWaker, Events, Gate, Log, poll_once};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use pronghorn::{
    Body, CompiledRouter, IntoResponse, RouteError, Router, Step,
    handler::{Path, RouteParams},
    router::{Failure, Priority, Replace, Route, RouteExchange, Scope},
};
use tower::{Service, ServiceExt};

type Req = Request<Body>;

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

async fn send(router: &CompiledRouter, method: Method, path: &str) -> Answer {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .body(String::new())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
    }
}

async fn get(router: &CompiledRouter, path: &str) -> Answer {
    send(router, Method::GET, path).await
}

/// A handler answering `name` and its decoded parameters: `name a=1 b=2`.
fn echo(name: &'static str) -> impl Fn(RouteParams) -> String + Clone + Send + Sync + 'static {
    move |params: RouteParams| {
        let mut out = name.to_owned();
        for (key, value) in params.0 {
            out.push_str(&format!(" {key}={value}"));
        }
        out
    }
}

fn routes(patterns: &[&'static str]) -> CompiledRouter {
    patterns
        .iter()
        .fold(Router::new(), |router, &pattern| {
            router.get(pattern, echo(pattern))
        })
        .compile()
        .unwrap()
}

/// A prefix that records `name` (and its own parameters) and passes on.
fn mark(
    events: &Events,
    name: &'static str,
) -> impl Fn(Req, &mut Route<'_>) -> Req + Send + Sync + 'static {
    let events = events.clone();
    move |request: Req, route: &mut Route<'_>| {
        let params: Vec<String> = route
            .params()
            .iter_raw()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if params.is_empty() {
            events.push(name);
        } else {
            events.push(format!("{name}:{}", params.join(",")));
        }
        request
    }
}

/// Whether the query of `uri` names `step` (`?a&b`).
fn asks(uri: &http::Uri, step: &str) -> bool {
    uri.query()
        .is_some_and(|query| query.split('&').any(|asked| asked == step))
}

/// Pending on its first two polls: the router polls a suspended step once
/// more inside `call`, and this one is still pending on the first poll of
/// the response future.
async fn suspend() {
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

/// A step's answer `value`, recording `event` as it answers: at once, or,
/// when `asked`, after suspending.
fn step_answer<T>(
    asked: bool,
    events: &Events,
    event: String,
    value: T,
) -> Step<T, impl Future<Output = T> + use<T>> {
    let events = events.clone();
    if asked {
        Step::Pending(async move {
            suspend().await;
            events.push(event);
            value
        })
    } else {
        events.push(event);
        Step::Ready(value)
    }
}
