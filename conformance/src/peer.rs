//! `peer hyper|axum ADDRESS`: bare hyper (hyper-util's auto builder, HTTP/1
//! and h2c) or axum's `serve`, answering as `examples/conformance.rs` does:
//! `/` echoes the body (or `hello`) to every method, `/status/{code}`
//! answers that status, `/stream` a body of unknown length, `/get-only`
//! GET alone; under axum, `/ws` is a WebSocket echo through axum's
//! `WebSocketUpgrade` (tokio-tungstenite).

use std::convert::Infallible;

use axum::extract::{
    Path,
    ws::{Message, WebSocket, WebSocketUpgrade},
};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Frame, Incoming},
    header::{self, HeaderValue},
    service::service_fn,
};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto::Builder,
};
use tokio::net::TcpListener;

fn answer(body: Bytes) -> Bytes {
    if body.is_empty() {
        Bytes::from_static(b"hello")
    } else {
        body
    }
}

type HyperBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn full(bytes: impl Into<Bytes>) -> HyperBody {
    Full::new(bytes.into()).boxed()
}

/// The chunks of `/stream`: a body of unknown length.
fn chunks() -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> {
    futures_util::stream::iter(["hel", "lo"].map(|chunk| Ok(Bytes::from_static(chunk.as_bytes()))))
}

/// As a hyper user writes it: a body that fails to arrive fails the
/// service, and hyper ends the connection.
async fn hyper_app(request: Request<Incoming>) -> Result<Response<HyperBody>, hyper::Error> {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    let mut response = Response::new(full("hello"));
    if path == "/" {
        let body = request.into_body().collect().await?.to_bytes();
        *response.body_mut() = full(answer(body));
    } else if let Some(code) = path.strip_prefix("/status/") {
        *response.status_mut() = code
            .parse()
            .ok()
            .and_then(|code| StatusCode::from_u16(code).ok())
            .unwrap_or(StatusCode::BAD_REQUEST);
    } else if path == "/stream" && (method == Method::GET || method == Method::HEAD) {
        let frames = futures_util::StreamExt::map(chunks(), |chunk| chunk.map(Frame::data));
        *response.body_mut() = StreamBody::new(frames).boxed();
    } else if path == "/get-only" {
        if method != Method::GET && method != Method::HEAD {
            *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
            *response.body_mut() = full("");
        }
    } else {
        *response.status_mut() = StatusCode::NOT_FOUND;
        *response.body_mut() = full("");
    }
    Ok(response)
}

async fn serve_hyper(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let _ = Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(stream), service_fn(hyper_app))
                .await;
        });
    }
}

async fn websocket_echo(mut socket: WebSocket) {
    while let Some(Ok(message)) = socket.recv().await {
        let echo = matches!(message, Message::Text(_) | Message::Binary(_));
        if echo && socket.send(message).await.is_err() {
            break;
        }
    }
}

async fn serve_axum(listener: TcpListener) {
    let app = axum::Router::new()
        .route(
            "/",
            axum::routing::any(|body: Bytes| async move { answer(body) }),
        )
        .route(
            "/status/{code}",
            axum::routing::any(|Path(code): Path<u16>| async move {
                let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
                (status, "hello")
            }),
        )
        .route(
            "/stream",
            axum::routing::get(|| async { axum::body::Body::from_stream(chunks()) }),
        )
        .route("/get-only", axum::routing::get(|| async { "hello" }))
        .route(
            "/ws",
            axum::routing::get(|upgrade: WebSocketUpgrade| async move {
                upgrade.on_upgrade(websocket_echo)
            }),
        );
    axum::serve(listener, app).await.expect("axum serves");
}

#[tokio::main]
async fn main() {
    let mut arguments = std::env::args().skip(1);
    let (Some(stack), Some(address)) = (arguments.next(), arguments.next()) else {
        eprintln!("usage: peer hyper|axum ADDRESS");
        std::process::exit(2);
    };
    let listener = TcpListener::bind(&address)
        .await
        .expect("the address is free");
    println!("listening on {}", listener.local_addr().expect("bound"));
    match stack.as_str() {
        "hyper" => serve_hyper(listener).await,
        "axum" => serve_axum(listener).await,
        other => {
            eprintln!("unknown stack {other:?}: hyper or axum");
            std::process::exit(2);
        }
    }
}
