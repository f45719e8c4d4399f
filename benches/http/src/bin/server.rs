//! One server of the HTTP load benchmark, on one thread:
//! `server STACK PORT ROUTES` with STACK one of `pronghorn`, `hyper`, `axum`,
//! `actix`; and four diagnostic variants, `pronghorn-h1` and `axum-h1`
//! (the router on hyper's HTTP/1 connection with its defaults, as bare
//! hyper runs, instead of `serve` or `axum::serve`), `pronghorn-inline`
//! (`GET /json` only, no hooks: the handler does the postfix's and the
//! monitor's work itself) and `pronghorn-layers` (bare hyper's `match` on
//! `serve`, the three steps as pronghorn's tower layers).
//!
//! Every stack serves the same routes and runs the same three steps around
//! them — a prefix that refuses requests carrying `x-block`, a postfix that
//! adds `x-server`, a monitor that counts statuses — written the way each
//! stack writes them: pronghorn hooks, inline code in a hand-written hyper
//! `match`, axum `from_fn` middleware, actix-web `wrap_fn`.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /json` | `{"message":"Hello, World!"}` (serialised per request) |
//! | `GET /async` | the same after one suspension (`yield_now`) |
//! | `GET /task` | the same after waiting for a task it spawns (a suspension only the scheduler can end) |
//! | `GET /users/{id}` | `{"id":ID,"name":"user"}` |
//! | `POST /echo` | the JSON body, parsed and serialised again |
//! | `GET /error` | 500 |
//! | `GET /r/{n}/x` | `{"route":N}`, one static route per n < ROUTES |

use std::{
    convert::Infallible,
    net::SocketAddr,
    ops::ControlFlow,
    sync::atomic::{AtomicU64, Ordering},
};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde::{Deserialize, Serialize};

static SERVED: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

fn count(status: StatusCode) {
    if status.is_server_error() {
        FAILED.fetch_add(1, Ordering::Relaxed);
    } else {
        SERVED.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Serialize, Deserialize)]
struct User {
    id: u64,
    name: &'static str,
}

#[derive(Serialize)]
struct RouteNumber {
    route: usize,
}

const HELLO: Message = Message { message: "Hello, World!" };

/// The suspension of `GET /task`: waits for a task it spawns, which runs
/// only once the connection's task has handed the thread back to the
/// scheduler. Unlike `yield_now`, which is ready when polled a second
/// time, no stack can end this wait without a trip through the scheduler,
/// as with a handler waiting on I/O.
async fn wait_for_a_task() {
    tokio::task::spawn(async {}).await.unwrap();
}

fn main() {
    let mut args = std::env::args().skip(1);
    let stack = args.next().expect("usage: server STACK PORT ROUTES");
    let port: u16 = args.next().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let routes: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    // The scaling stacks (scale.sh): each runs on WORKERS threads.
    let workers: usize = std::env::var("WORKERS").ok().and_then(|w| w.parse().ok()).unwrap_or(1);
    match stack.as_str() {
        "actix" => actix(address, routes, 1),
        "actix-workers" => actix(address, routes, workers),
        "hyper-per-core" => per_core(address, workers, move |listener| hyper(listener, routes)),
        // `serve` once per worker, each on a listener of its own: its
        // limits are then the worker's, not the server's.
        "pronghorn-reuseport" => per_core(address, workers, move |listener| pronghorn(listener, routes, false, 0)),
        "pronghorn-multi-thread" | "axum-multi-thread" => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind(address).await.unwrap();
                println!("{stack} listening on {address} with {workers} threads");
                match stack.as_str() {
                    "pronghorn-multi-thread" => pronghorn(listener, routes, false, 0).await,
                    _ => axum(listener, routes, false).await,
                }
            });
        }
        other => {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind(address).await.unwrap();
                println!("{other} listening on {address} with {routes} routes");
                match other {
                    "pronghorn" => pronghorn(listener, routes, false, 0).await,
                    "pronghorn-h1" => pronghorn(listener, routes, true, 0).await,
                    // The accept loop here, the connections on the workers.
                    "pronghorn-workers" => pronghorn(listener, routes, false, workers).await,
                    "pronghorn-inline" => pronghorn_inline(listener).await,
                    "pronghorn-layers" => pronghorn_layers(listener, routes).await,
                    "hyper" => hyper(listener, routes).await,
                    "axum" => axum(listener, routes, false).await,
                    // axum::serve as its users write it: no TCP_NODELAY.
                    "axum-defaults" => axum_defaults(listener, routes).await,
                    "axum-h1" => axum(listener, routes, true).await,
                    _ => panic!("unknown stack {other}"),
                }
            });
        }
    }
}

// ---- pronghorn -------------------------------------------------------------

async fn pronghorn(listener: tokio::net::TcpListener, routes: usize, http1_only: bool, workers: usize) {
    use pronghorn::{
        Body, Router,
        handler::{Json, Path},
        router::{Route, RouteExchange},
    };
    let mut router = Router::new()
        .get("/json", || Json(HELLO))
        .get("/async", || async {
            tokio::task::yield_now().await;
            Json(HELLO)
        })
        .get("/task", || async {
            wait_for_a_task().await;
            Json(HELLO)
        })
        .get("/users/{id}", |Path(id): Path<u64>| Json(User { id, name: "user" }))
        .post("/echo", |Json(value): Json<serde_json::Value>| Json(value))
        .get("/error", || (StatusCode::INTERNAL_SERVER_ERROR, "error"));
    for n in 0..routes {
        router = router.get(&format!("/r/{n}/x"), move || Json(RouteNumber { route: n }));
    }
    let router = router
        .prefix("/", |request: &mut Request<Body>, _: &mut Route<'_>| {
            if request.headers().contains_key("x-block") {
                ControlFlow::Break(StatusCode::FORBIDDEN)
            } else {
                ControlFlow::Continue(())
            }
        })
        .postfix("/", |_: &Route<'_>, response: &mut Response<Body>| {
            response.headers_mut().insert("x-server", HeaderValue::from_static("bench"));
        })
        .monitor("/", |exchange: &RouteExchange<'_>| count(exchange.status().unwrap_or(StatusCode::OK)))
        .compile()
        .unwrap();
    if !http1_only {
        pronghorn::serve(listener, router).workers(workers).await.unwrap();
        return;
    }
    // Diagnostic variant: the router on hyper's HTTP/1 connection directly,
    // as the bare hyper server runs, to measure what `serve` itself costs.
    on_hyper_http1(listener, router).await;
}

/// Serves a tower service on hyper's HTTP/1 connection with its safe
/// defaults, as the bare hyper server runs: the `-h1` diagnostic variants.
async fn on_hyper_http1<S, B>(listener: tokio::net::TcpListener, service: S)
where
    S: tower::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        stream.set_nodelay(true).unwrap();
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Diagnostic variant: the router with no hooks, its `/json` handler doing
/// the postfix's and the monitor's work inline (no `x-block` check), on
/// `serve`, to measure what the hooks cost beside the routing.
async fn pronghorn_inline(listener: tokio::net::TcpListener) {
    use pronghorn::{IntoResponse, Router, handler::Json};
    let router = Router::new()
        .get("/json", || {
            let mut response = Json(HELLO).into_response();
            response.headers_mut().insert("x-server", HeaderValue::from_static("bench"));
            count(response.status());
            response
        })
        .compile()
        .unwrap();
    pronghorn::serve(listener, router).await.unwrap();
}

// ---- bare hyper --------------------------------------------------------------

fn json_response<T: Serialize>(status: StatusCode, value: &T) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(serde_json::to_vec(value).unwrap())));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// Bare hyper's routes, a hand-written `match`; with `STEPS`, the three
/// steps as inline code around it (the bare hyper stack), without, none
/// (pronghorn's layers bring them).
async fn hyper_handle<const STEPS: bool>(request: Request<Incoming>, routes: usize) -> Response<Full<Bytes>> {
    if STEPS && request.headers().contains_key("x-block") {
        return text(StatusCode::FORBIDDEN, "");
    }
    // Matched on borrows of the request, as hyper's own examples do: the
    // POST arm still takes the request's body (the borrows end with the
    // pattern), and no copy of the path is made.
    let mut response = match (request.method(), request.uri().path()) {
        (&Method::GET, "/json") => json_response(StatusCode::OK, &HELLO),
        (&Method::GET, "/async") => {
            tokio::task::yield_now().await;
            json_response(StatusCode::OK, &HELLO)
        }
        (&Method::GET, "/task") => {
            wait_for_a_task().await;
            json_response(StatusCode::OK, &HELLO)
        }
        (&Method::POST, "/echo") => {
            let body = request.into_body().collect().await.unwrap().to_bytes();
            match serde_json::from_slice::<serde_json::Value>(&body) {
                Ok(value) => json_response(StatusCode::OK, &value),
                Err(_) => text(StatusCode::BAD_REQUEST, "bad json"),
            }
        }
        (&Method::GET, "/error") => text(StatusCode::INTERNAL_SERVER_ERROR, "error"),
        (&Method::GET, path) => match path.strip_prefix("/users/").map(str::parse::<u64>) {
            Some(Ok(id)) => json_response(StatusCode::OK, &User { id, name: "user" }),
            _ => match path.strip_prefix("/r/").and_then(|rest| rest.strip_suffix("/x")).map(str::parse::<usize>) {
                Some(Ok(n)) if n < routes => json_response(StatusCode::OK, &RouteNumber { route: n }),
                _ => text(StatusCode::NOT_FOUND, "Not Found"),
            },
        },
        _ => text(StatusCode::NOT_FOUND, "Not Found"),
    };
    if STEPS {
        response.headers_mut().insert("x-server", HeaderValue::from_static("bench"));
        count(response.status());
    }
    response
}

async fn hyper(listener: tokio::net::TcpListener, routes: usize) {
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        stream.set_nodelay(true).unwrap();
        let service = hyper::service::service_fn(move |request| async move {
            Ok::<_, Infallible>(hyper_handle::<true>(request, routes).await)
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A server as those that scale run it: a thread per worker, each a
/// single-threaded runtime with a listener of its own on the same port
/// (`SO_REUSEPORT`: the kernel spreads the connections by their address),
/// running `serve_on` there.
fn per_core<F, Fut>(address: SocketAddr, workers: usize, serve_on: F)
where
    F: Fn(tokio::net::TcpListener) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    println!("listening on {address} with {workers} threads, a listener each");
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            socket.set_reuse_address(true).unwrap();
            socket.set_reuse_port(true).unwrap();
            socket.set_nonblocking(true).unwrap();
            socket.bind(&address.into()).unwrap();
            socket.listen(1024).unwrap();
            let listener: std::net::TcpListener = socket.into();
            let serve_on = serve_on.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async move {
                    serve_on(tokio::net::TcpListener::from_std(listener).unwrap()).await;
                });
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

// ---- pronghorn's layers around bare hyper's routes ---------------------------

/// Diagnostic variant: bare hyper's `match`, with the three steps as
/// pronghorn's tower layers (`PrefixLayer`, `PostfixLayer`, `MonitorLayer`)
/// instead of inline code, on `serve`: what the middleware costs in a stack
/// that routes by hand.
async fn pronghorn_layers(listener: tokio::net::TcpListener, routes: usize) {
    use pronghorn::{RequestHead, monitor::{Exchange, MonitorLayer}, postfix::PostfixLayer, prefix::PrefixLayer};
    let service = tower::ServiceBuilder::new()
        .layer(MonitorLayer::new(|exchange: &Exchange<'_, Response<Full<Bytes>>, Infallible>| {
            count(exchange.status().unwrap_or(StatusCode::OK))
        }))
        .layer(PostfixLayer::new(|_: &RequestHead, response: &mut Response<Full<Bytes>>| {
            response.headers_mut().insert("x-server", HeaderValue::from_static("bench"));
        }))
        .layer(PrefixLayer::new(|request: &mut Request<Incoming>| {
            if request.headers().contains_key("x-block") {
                ControlFlow::Break(text(StatusCode::FORBIDDEN, ""))
            } else {
                ControlFlow::Continue(())
            }
        }))
        .service(tower::service_fn(move |request| async move { Ok::<_, Infallible>(hyper_handle::<false>(request, routes).await) }));
    pronghorn::serve(listener, service).await.unwrap();
}

// ---- axum ------------------------------------------------------------------

async fn axum(listener: tokio::net::TcpListener, routes: usize, http1_only: bool) {
    axum_with(listener, routes, http1_only, true).await;
}

async fn axum_defaults(listener: tokio::net::TcpListener, routes: usize) {
    axum_with(listener, routes, false, false).await;
}

async fn axum_with(listener: tokio::net::TcpListener, routes: usize, http1_only: bool, nodelay: bool) {
    use axum::{
        Json,
        extract::{Path, Request as AxumRequest},
        middleware::{Next, from_fn},
        response::{IntoResponse, Response as AxumResponse},
        routing::{get, post},
    };
    async fn prefix(request: AxumRequest, next: Next) -> AxumResponse {
        if request.headers().contains_key("x-block") {
            StatusCode::FORBIDDEN.into_response()
        } else {
            next.run(request).await
        }
    }
    async fn postfix(request: AxumRequest, next: Next) -> AxumResponse {
        let mut response = next.run(request).await;
        response.headers_mut().insert("x-server", HeaderValue::from_static("bench"));
        response
    }
    async fn monitor(request: AxumRequest, next: Next) -> AxumResponse {
        let response = next.run(request).await;
        count(response.status());
        response
    }
    let mut router = axum::Router::new()
        .route("/json", get(|| async { Json(HELLO) }))
        .route(
            "/async",
            get(|| async {
                tokio::task::yield_now().await;
                Json(HELLO)
            }),
        )
        .route(
            "/task",
            get(|| async {
                wait_for_a_task().await;
                Json(HELLO)
            }),
        )
        .route("/users/{id}", get(|Path(id): Path<u64>| async move { Json(User { id, name: "user" }) }))
        .route("/echo", post(|Json(value): Json<serde_json::Value>| async move { Json(value) }))
        .route("/error", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "error") }));
    for n in 0..routes {
        router = router.route(&format!("/r/{n}/x"), get(move || async move { Json(RouteNumber { route: n }) }));
    }
    let router = router.layer(from_fn(prefix)).layer(from_fn(postfix)).layer(from_fn(monitor));
    if http1_only {
        // Diagnostic variant: the same router on hyper's HTTP/1 connection
        // with its defaults, as the bare hyper server runs, to tell
        // what axum's stack costs from what `axum::serve` (one flush per
        // pipelined answer) costs.
        on_hyper_http1(listener, router).await;
        return;
    }
    if !nodelay {
        axum::serve(listener, router).await.unwrap();
        return;
    }
    // axum::serve does not set TCP_NODELAY by default: without it pipelined
    // throughput collapses, so it is set here as for every other stack.
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await.unwrap();
}

// ---- actix-web ---------------------------------------------------------------

fn actix(address: SocketAddr, routes: usize, workers: usize) {
    use actix_web::{
        App, HttpResponse, HttpServer,
        dev::Service as _,
        http::header::{HeaderName, HeaderValue as ActixHeaderValue},
        web,
    };
    println!("actix listening on {address} with {routes} routes");
    actix_web::rt::System::new().block_on(async move {
        HttpServer::new(move || {
            let mut app = App::new()
                .wrap_fn(|request, service| {
                    let future = service.call(request);
                    async move {
                        let response = future.await?;
                        count(StatusCode::from_u16(response.status().as_u16()).unwrap());
                        Ok(response)
                    }
                })
                .wrap_fn(|request, service| {
                    let future = service.call(request);
                    async move {
                        let mut response = future.await?;
                        response
                            .headers_mut()
                            .insert(HeaderName::from_static("x-server"), ActixHeaderValue::from_static("bench"));
                        Ok(response)
                    }
                })
                .wrap_fn(|request, service| {
                    let blocked = request.headers().contains_key("x-block");
                    let future = (!blocked).then(|| service.call(request));
                    async move {
                        match future {
                            Some(future) => future.await,
                            None => Err(actix_web::error::ErrorForbidden("blocked")),
                        }
                    }
                })
                .route("/json", web::get().to(|| async { web::Json(HELLO) }))
                .route(
                    "/async",
                    web::get().to(|| async {
                        tokio::task::yield_now().await;
                        web::Json(HELLO)
                    }),
                )
                .route(
                    "/task",
                    web::get().to(|| async {
                        wait_for_a_task().await;
                        web::Json(HELLO)
                    }),
                )
                .route("/users/{id}", web::get().to(|id: web::Path<u64>| async move { web::Json(User { id: *id, name: "user" }) }))
                .route("/echo", web::post().to(|value: web::Json<serde_json::Value>| async move { web::Json(value.into_inner()) }))
                .route("/error", web::get().to(|| async { HttpResponse::InternalServerError().body("error") }));
            for n in 0..routes {
                app = app.route(&format!("/r/{n}/x"), web::get().to(move || async move { web::Json(RouteNumber { route: n }) }));
            }
            app
        })
        .workers(workers)
        // As every other server here: without it, pipelined answers that
        // leave the handler in separate writes wait for the client's
        // delayed ACK (seen: 2.3k req/s, p99 44 ms, pipelined async).
        .tcp_nodelay(true)
        .bind(address)
        .unwrap()
        .run()
        .await
        .unwrap();
    });
}
