//! The same request work done four ways, side by side in one run:
//!
//! - a bare `service_fn` doing every step inline (the floor);
//! - pronghorn: prefix + handler + postfix + monitor, all synchronous;
//! - pronghorn with the three hooks written as `async` closures;
//! - axum: a `Router` with the three steps as `from_fn` middleware.
//!
//! The work: refuse a request without a token (prefix), answer a JSON body
//! for `/users/42` (handler), add a `server` header (postfix), count the
//! status (monitor). Each iteration builds the request the way hyper's
//! parser does, runs it, and collects the body.
//!
//! Run: `cargo bench --bench pipeline`.

use std::{
    convert::Infallible,
    future::{Future, Ready, ready},
    hint::black_box,
    ops::ControlFlow,
    pin::pin,
    sync::atomic::{AtomicU64, Ordering},
    task::{Context, Poll, Waker},
};

use axum::{extract::Request as AxumRequest, middleware::Next, response::IntoResponse};
use bytes::{Bytes, BytesMut};
use criterion::{Criterion, criterion_group, criterion_main};
use http::{HeaderValue, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Empty, Full};
use pronghorn::{Exchange, MonitorLayer, PostfixLayer, PrefixLayer, RequestHead};
use tower::{Service, ServiceBuilder, service_fn};

type Res = Response<Full<Bytes>>;
const JSON: &[u8] = br#"{"id":42,"name":"pronghorn"}"#;

static OK: AtomicU64 = AtomicU64::new(0);

/// Polls a future that completes without outside events to its end.
fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// A request as hyper's HTTP/1 parser hands it over: the URI shares the
/// connection's read buffer.
fn request() -> Request<Empty<Bytes>> {
    let mut buffer = BytesMut::from(&b"/users/42 HTTP/1.1\r\n"[..]);
    let line = buffer.split_to(buffer.len()).freeze();
    Request::get(Uri::from_maybe_shared(line.slice(0..9)).unwrap())
        .header(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"))
        .body(Empty::new())
        .unwrap()
}

fn json(status: StatusCode, body: &'static [u8]) -> Res {
    let mut response = Response::new(Full::new(Bytes::from_static(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn handler(request: Request<Empty<Bytes>>) -> Ready<Result<Res, Infallible>> {
    ready(Ok(match request.uri().path() {
        "/users/42" => json(StatusCode::OK, JSON),
        _ => json(StatusCode::NOT_FOUND, b"{}"),
    }))
}

fn bare(request: Request<Empty<Bytes>>) -> Ready<Result<Res, Infallible>> {
    let mut response = if request.headers().contains_key(header::AUTHORIZATION) {
        match handler(request).into_inner() {
            Ok(response) => response,
        }
    } else {
        json(StatusCode::UNAUTHORIZED, b"{}")
    };
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
    if response.status() == StatusCode::OK {
        OK.fetch_add(1, Ordering::Relaxed);
    }
    ready(Ok(response))
}

fn prefix(request: Request<Empty<Bytes>>) -> ControlFlow<Res, Request<Empty<Bytes>>> {
    if request.headers().contains_key(header::AUTHORIZATION) {
        ControlFlow::Continue(request)
    } else {
        ControlFlow::Break(json(StatusCode::UNAUTHORIZED, b"{}"))
    }
}

fn postfix(_: &RequestHead, mut response: Res) -> Res {
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
    response
}

fn monitor(exchange: &Exchange<'_, Res, Infallible>) {
    if exchange.status() == Some(StatusCode::OK) {
        OK.fetch_add(1, Ordering::Relaxed);
    }
}

async fn axum_prefix(request: AxumRequest, next: Next) -> axum::response::Response {
    if request.headers().contains_key(header::AUTHORIZATION) {
        next.run(request).await
    } else {
        (StatusCode::UNAUTHORIZED, "{}").into_response()
    }
}

async fn axum_postfix(request: AxumRequest, next: Next) -> axum::response::Response {
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
    response
}

async fn axum_monitor(request: AxumRequest, next: Next) -> axum::response::Response {
    let response = next.run(request).await;
    if response.status() == StatusCode::OK {
        OK.fetch_add(1, Ordering::Relaxed);
    }
    response
}

fn axum_app() -> axum::Router {
    axum::Router::new()
        .route(
            "/users/42",
            axum::routing::get(|| async { ([(header::CONTENT_TYPE, "application/json")], JSON) }),
        )
        .layer(axum::middleware::from_fn(axum_prefix))
        .layer(axum::middleware::from_fn(axum_postfix))
        .layer(axum::middleware::from_fn(axum_monitor))
}

/// One request through `service`, body collected; returns the body length.
fn one<S, B>(service: &mut S) -> usize
where
    S: Service<Request<Empty<Bytes>>, Response = Response<B>, Error = Infallible>,
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    run(async {
        let response = service.call(request()).await.unwrap();
        debug_assert_eq!(response.status(), StatusCode::OK);
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .len()
    })
}

fn pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");

    let mut service = service_fn(bare);
    group.bench_function("bare service_fn", |b| {
        b.iter(|| black_box(one(&mut service)))
    });

    let mut service = ServiceBuilder::new()
        .layer(MonitorLayer::new(monitor))
        .layer(PostfixLayer::new(postfix))
        .layer(PrefixLayer::new(prefix))
        .service(service_fn(handler));
    group.bench_function("pronghorn sync", |b| {
        b.iter(|| black_box(one(&mut service)))
    });

    let mut service = ServiceBuilder::new()
        .layer(MonitorLayer::new(|x: &Exchange<'_, Res, Infallible>| {
            monitor(x);
            async {}
        }))
        .layer(PostfixLayer::new(|head: &RequestHead, response: Res| {
            let response = postfix(head, response);
            async move { response }
        }))
        .layer(PrefixLayer::new(
            |request: Request<Empty<Bytes>>| async move { prefix(request) },
        ))
        .service(service_fn(handler));
    group.bench_function("pronghorn async hooks", |b| {
        b.iter(|| black_box(one(&mut service)))
    });

    let mut service = axum_app();
    group.bench_function("axum from_fn x3", |b| {
        b.iter(|| black_box(one(&mut service)))
    });

    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
