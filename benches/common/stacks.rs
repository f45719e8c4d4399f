//! The same request work done by each stack that the benchmarks compare:
//! shared by `benches/pipeline.rs` (criterion, time) and
//! `benches/http/src/bin/instructions.rs` (callgrind, instructions and
//! allocations).
//!
//! The work: refuse a request without a token (prefix), answer a JSON body
//! for `/users/42` (handler), add a `server` header (postfix), count the
//! status (monitor). Each request is built the way hyper's parser builds
//! it, run, and its body collected.

#![allow(dead_code, reason = "each benchmark uses some of the stacks")]

use std::{
    convert::Infallible,
    future::{Future, Ready, ready},
    ops::ControlFlow,
    pin::pin,
    sync::atomic::{AtomicU64, Ordering},
    task::{Context, Poll, Waker},
};

use axum::{
    extract::Request as AxumRequest, middleware::Next, response::IntoResponse as AxumIntoResponse,
};
use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Empty, Full};
use pronghorn::{
    Body, CompiledRouter, Exchange, IntoResponse, MonitorLayer, PostfixLayer, PrefixLayer,
    RequestHead, Router,
    handler::Path,
    router::{Route, RouteExchange, RoutePostfix, RoutePrefix},
};
use tower::{Service, ServiceBuilder, service_fn};

pub type Req = Request<Empty<Bytes>>;
pub type Res = Response<Full<Bytes>>;
pub const JSON: &[u8] = br#"{"id":42,"name":"pronghorn"}"#;

pub static OK: AtomicU64 = AtomicU64::new(0);

/// Polls a future that completes without outside events to its end.
pub fn run<F: Future>(future: F) -> F::Output {
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
pub fn request() -> Req {
    let mut buffer = BytesMut::from(&b"/users/42 HTTP/1.1\r\n"[..]);
    let line = buffer.split_to(buffer.len()).freeze();
    Request::get(Uri::from_maybe_shared(line.slice(0..9)).unwrap())
        .header(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"))
        .body(Empty::new())
        .unwrap()
}

/// One request through `service`, body collected; returns the body length.
pub fn one<S, B>(service: &mut S) -> usize
where
    S: Service<Req, Response = Response<B>, Error = Infallible>,
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

fn json(status: StatusCode, body: &'static [u8]) -> Res {
    let mut response = Response::new(Full::new(Bytes::from_static(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn handler(request: Req) -> Ready<Result<Res, Infallible>> {
    ready(Ok(match request.uri().path() {
        "/users/42" => json(StatusCode::OK, JSON),
        _ => json(StatusCode::NOT_FOUND, b"{}"),
    }))
}

/// The floor: every step written inline in one `service_fn`.
pub fn bare() -> impl Service<Req, Response = Res, Error = Infallible> {
    service_fn(|request: Req| {
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
    })
}

fn prefix(request: &mut Req) -> ControlFlow<Res> {
    if request.headers().contains_key(header::AUTHORIZATION) {
        ControlFlow::Continue(())
    } else {
        ControlFlow::Break(json(StatusCode::UNAUTHORIZED, b"{}"))
    }
}

fn prefix_by_value(mut request: Req) -> ControlFlow<Res, Req> {
    prefix(&mut request)?;
    ControlFlow::Continue(request)
}

fn postfix(response: &mut Res) {
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
}

fn postfix_by_value(_: &RequestHead, mut response: Res) -> Res {
    postfix(&mut response);
    response
}

fn monitor(outcome: Option<Result<&Res, &Infallible>>) {
    if let Some(Ok(response)) = outcome
        && response.status() == StatusCode::OK
    {
        OK.fetch_add(1, Ordering::Relaxed);
    }
}

fn monitor_exchange(exchange: &Exchange<'_, Res, Infallible>) {
    monitor(exchange.outcome());
}

/// pronghorn's three layers, synchronous, around the same handler: the
/// prefix looks at the request and the postfix edits the response where
/// they lie, and neither the postfix nor the monitor (which reads the
/// outcome alone) asks for the request head.
pub fn layers() -> impl Service<Req, Response = Res, Error = Infallible> {
    ServiceBuilder::new()
        .layer(MonitorLayer::new(monitor))
        .layer(PostfixLayer::new(postfix))
        .layer(PrefixLayer::new(prefix))
        .service(service_fn(handler))
}

/// The same, with a prefix and a postfix that take the message and return
/// it, and a postfix and a monitor that are handed the request head (and
/// the monitor the clock).
pub fn layers_by_value() -> impl Service<Req, Response = Res, Error = Infallible> {
    ServiceBuilder::new()
        .layer(MonitorLayer::new(monitor_exchange))
        .layer(PostfixLayer::new(postfix_by_value))
        .layer(PrefixLayer::new(prefix_by_value))
        .service(service_fn(handler))
}

/// The same three layers written as `async` closures.
pub fn async_layers() -> impl Service<Req, Response = Res, Error = Infallible> {
    ServiceBuilder::new()
        .layer(MonitorLayer::new(|x: &Exchange<'_, Res, Infallible>| {
            monitor_exchange(x);
            async {}
        }))
        .layer(PostfixLayer::new(|head: &RequestHead, response: Res| {
            let response = postfix_by_value(head, response);
            async move { response }
        }))
        .layer(PrefixLayer::new(|request: Req| async move {
            prefix_by_value(request)
        }))
        .service(service_fn(handler))
}

/// The same three steps as hand-written tower layers, as a user would
/// write them without pronghorn: a prefix answering `Either` a ready 401
/// or the inner future, a postfix and a monitor each a future around the
/// inner one.
pub fn hand_written() -> impl Service<Req, Response = Res, Error = Infallible> {
    ServiceBuilder::new()
        .layer(tower::layer::layer_fn(|inner| Count { inner }))
        .layer(tower::layer::layer_fn(|inner| ServerHeader { inner }))
        .layer(tower::layer::layer_fn(|inner| Auth { inner }))
        .service(service_fn(handler))
}

#[derive(Clone)]
struct Auth<S> {
    inner: S,
}

impl<S: Service<Req, Response = Res>> Service<Req> for Auth<S> {
    type Response = Res;
    type Error = S::Error;
    type Future = AuthFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        if request.headers().contains_key(header::AUTHORIZATION) {
            AuthFuture::Inner {
                future: self.inner.call(request),
            }
        } else {
            AuthFuture::Denied {
                response: Some(json(StatusCode::UNAUTHORIZED, b"{}")),
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// Either the 401 answered at once or the inner service's future.
    #[project = AuthProjection]
    enum AuthFuture<F> {
        Denied { response: Option<Res> },
        Inner { #[pin] future: F },
    }
}

impl<F: Future<Output = Result<Res, E>>, E> Future for AuthFuture<F> {
    type Output = Result<Res, E>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AuthProjection::Denied { response } => {
                Poll::Ready(Ok(response.take().expect("polled after completion")))
            }
            AuthProjection::Inner { future } => future.poll(cx),
        }
    }
}

#[derive(Clone)]
struct ServerHeader<S> {
    inner: S,
}

impl<S: Service<Req, Response = Res>> Service<Req> for ServerHeader<S> {
    type Response = Res;
    type Error = S::Error;
    type Future = ServerHeaderFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        ServerHeaderFuture {
            inner: self.inner.call(request),
        }
    }
}

pin_project_lite::pin_project! {
    struct ServerHeaderFuture<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future<Output = Result<Res, E>>, E> Future for ServerHeaderFuture<F> {
    type Output = Result<Res, E>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut response = std::task::ready!(self.project().inner.poll(cx))?;
        response
            .headers_mut()
            .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
        Poll::Ready(Ok(response))
    }
}

#[derive(Clone)]
struct Count<S> {
    inner: S,
}

impl<S: Service<Req, Response = Res>> Service<Req> for Count<S> {
    type Response = Res;
    type Error = S::Error;
    type Future = CountFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        CountFuture {
            inner: self.inner.call(request),
        }
    }
}

pin_project_lite::pin_project! {
    struct CountFuture<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future<Output = Result<Res, E>>, E> Future for CountFuture<F> {
    type Output = Result<Res, E>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = std::task::ready!(self.project().inner.poll(cx));
        if let Ok(response) = &outcome {
            if response.status() == StatusCode::OK {
                OK.fetch_add(1, Ordering::Relaxed);
            }
        }
        Poll::Ready(outcome)
    }
}

/// The same three steps with tower-http's nearest layers: a request header
/// check (`ValidateRequestHeaderLayer`), `SetResponseHeaderLayer`, and a
/// counting `MapResponse`.
pub fn tower_http() -> impl Service<Req, Response = Res, Error = Infallible> {
    use tower_http::{
        set_header::SetResponseHeaderLayer, validate_request::ValidateRequestHeaderLayer,
    };
    ServiceBuilder::new()
        .map_response(|response: Res| {
            if response.status() == StatusCode::OK {
                OK.fetch_add(1, Ordering::Relaxed);
            }
            response
        })
        .layer(SetResponseHeaderLayer::overriding(
            header::SERVER,
            HeaderValue::from_static("pronghorn"),
        ))
        // tower-http's `ValidateRequest` answers `Err(response)`, by value.
        .layer(ValidateRequestHeaderLayer::custom(
            #[allow(
                clippy::result_large_err,
                reason = "the refusal is the response, as in the crate"
            )]
            |request: &mut Req| {
                if request.headers().contains_key(header::AUTHORIZATION) {
                    Ok(())
                } else {
                    Err(json(StatusCode::UNAUTHORIZED, b"{}"))
                }
            },
        ))
        .service(service_fn(handler))
}

fn router_json() -> Response<Body> {
    let mut response = Response::new(Body::from(JSON));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The dynamic route's handler: the JSON body for user 42, else 404.
fn router_user(Path(id): Path<u32>) -> Response<Body> {
    match id {
        42 => router_json(),
        _ => IntoResponse::into_response(StatusCode::NOT_FOUND),
    }
}

/// pronghorn's router with three path-scoped hooks, on `routes` (one
/// static route `/users/42`, or the dynamic `/users/{id}` with a typed
/// parameter).
fn router_with<P: 'static, Q: 'static>(
    routes: Router,
    prefix: impl RoutePrefix<P>,
    postfix: impl RoutePostfix<Q>,
) -> Router {
    routes
        .prefix("/", prefix)
        .postfix("/users", postfix)
        .monitor("/", |exchange: &RouteExchange<'_>| {
            if exchange.status() == Some(StatusCode::OK) {
                OK.fetch_add(1, Ordering::Relaxed);
            }
        })
}

fn route_prefix(request: &mut Request<Body>, _: &mut Route<'_>) -> ControlFlow<StatusCode> {
    if request.headers().contains_key(header::AUTHORIZATION) {
        ControlFlow::Continue(())
    } else {
        ControlFlow::Break(StatusCode::UNAUTHORIZED)
    }
}

fn route_postfix(_: &Route<'_>, response: &mut Response<Body>) {
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
}

/// The router, static route; the prefix and the postfix work in place.
pub fn router() -> CompiledRouter {
    router_source().compile().unwrap()
}

/// What [`router`] compiles, for a [`Reloadable`](pronghorn::router::Reloadable).
pub fn router_source() -> Router {
    let routes = Router::new().get("/users/42", router_json);
    router_with(routes, route_prefix, route_postfix)
}

/// The same, with a prefix and a postfix that take the message and return
/// it.
pub fn router_by_value() -> CompiledRouter {
    router_with(
        Router::new().get("/users/42", router_json),
        |mut request: Request<Body>, route: &mut Route<'_>| {
            route_prefix(&mut request, route)?;
            ControlFlow::Continue(request)
        },
        |route: &Route<'_>, mut response: Response<Body>| {
            route_postfix(route, &mut response);
            response
        },
    )
    .compile()
    .unwrap()
}

/// The router, static route, in a table of 1,000 more static routes.
pub fn router_1000() -> CompiledRouter {
    let routes = (0..1000).fold(Router::new(), |router, n| {
        router.get(&format!("/r/{n}/x"), router_json)
    });
    router_with(
        routes.get("/users/42", router_json),
        route_prefix,
        route_postfix,
    )
    .compile()
    .unwrap()
}

/// The router, dynamic route with a typed parameter.
pub fn router_dynamic() -> CompiledRouter {
    let routes = Router::new().get("/users/{id}", router_user);
    router_with(routes, route_prefix, route_postfix)
        .compile()
        .unwrap()
}

async fn axum_prefix(request: AxumRequest, next: Next) -> axum::response::Response {
    if request.headers().contains_key(header::AUTHORIZATION) {
        next.run(request).await
    } else {
        AxumIntoResponse::into_response((StatusCode::UNAUTHORIZED, "{}"))
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

/// axum's handler of the dynamic route, as `router_user`.
async fn axum_user(axum::extract::Path(id): axum::extract::Path<u32>) -> axum::response::Response {
    if id == 42 {
        AxumIntoResponse::into_response(([(header::CONTENT_TYPE, "application/json")], JSON))
    } else {
        AxumIntoResponse::into_response(StatusCode::NOT_FOUND)
    }
}

/// axum: a `Router` with the three steps as `from_fn` middleware.
pub fn axum_from_fn() -> axum::Router {
    axum::Router::new()
        .route("/users/{id}", axum::routing::get(axum_user))
        .layer(axum::middleware::from_fn(axum_prefix))
        .layer(axum::middleware::from_fn(axum_postfix))
        .layer(axum::middleware::from_fn(axum_monitor))
}

/// The router's dynamic route alone: no hook, no layer.
pub fn router_plain() -> CompiledRouter {
    Router::new()
        .get("/users/{id}", router_user)
        .compile()
        .unwrap()
}

/// The static route behind the prefix's check (a token, or 401) as a
/// prefix hook on the route's scope: beside [`router_from_fn`].
pub fn router_check_prefix() -> CompiledRouter {
    Router::new()
        .get("/users/42", router_json)
        .prefix("/users/42", route_prefix)
        .compile()
        .unwrap()
}

/// The same check as an axum-style `from_fn` function in `route_layer`.
pub fn router_from_fn() -> CompiledRouter {
    async fn check(request: Request<Body>, next: pronghorn::middleware::Next) -> Response<Body> {
        match request.headers().contains_key(header::AUTHORIZATION) {
            true => next.run(request).await,
            false => IntoResponse::into_response(StatusCode::UNAUTHORIZED),
        }
    }
    Router::new()
        .get("/users/42", router_json)
        .route_layer(pronghorn::middleware::from_fn(check))
        .compile()
        .unwrap()
}

/// The same route with tower-http's `TraceLayer` given to `Router::layer`,
/// as an axum application adds it.
pub fn router_trace() -> CompiledRouter {
    Router::new()
        .get("/users/{id}", router_user)
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .compile()
        .unwrap()
}

/// The router's static route with the three steps as pronghorn's own
/// tower layers on the route (`route_layer`), in place of hooks.
pub fn router_layers() -> CompiledRouter {
    Router::new()
        .get("/users/42", router_json)
        .route_layer(
            ServiceBuilder::new()
                .layer(MonitorLayer::new(
                    |outcome: Option<Result<&Response<Body>, &Infallible>>| {
                        if let Some(Ok(response)) = outcome {
                            if response.status() == StatusCode::OK {
                                OK.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    },
                ))
                .layer(PostfixLayer::new(|response: &mut Response<Body>| {
                    response
                        .headers_mut()
                        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
                }))
                .layer(PrefixLayer::new(|request: &mut Request<Body>| {
                    if request.headers().contains_key(header::AUTHORIZATION) {
                        ControlFlow::Continue(())
                    } else {
                        ControlFlow::Break(IntoResponse::into_response(StatusCode::UNAUTHORIZED))
                    }
                })),
        )
        .compile()
        .unwrap()
}

/// axum's router with the same route and `TraceLayer`.
pub fn axum_trace() -> axum::Router {
    axum::Router::new()
        .route("/users/{id}", axum::routing::get(axum_user))
        .layer(tower_http::trace::TraceLayer::new_for_http())
}

/// Axum's plain router, no middleware, for scale.
pub fn axum_plain() -> axum::Router {
    axum::Router::new().route(
        "/users/{id}",
        axum::routing::get(|| async { ([(header::CONTENT_TYPE, "application/json")], JSON) }),
    )
}
