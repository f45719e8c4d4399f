//! A WebSocket echo server on `/echo`, behind a prefix that refuses
//! connections without `?token=secret`.
//!
//! ```text
//! cargo run --example websocket --features ws
//! websocat 'ws://127.0.0.1:3002/echo?token=secret'
//! ```

use std::ops::ControlFlow;

use http::{Request, StatusCode};
use pronghorn::{
    Body, CompiledRouter, Router,
    handler::RouteParams,
    router::{Route, RouteExchange},
    serve,
    ws::{Message, WebSocket},
};

/// The application: also used by the examples' test.
pub fn app() -> CompiledRouter {
    Router::new()
        .websocket(
            "/echo",
            |mut socket: WebSocket, _: RouteParams| async move {
                while let Some(Ok(message)) = socket.recv().await {
                    let echo = match message {
                        Message::Text(_) | Message::Binary(_) => message,
                        Message::Close(_) => break,
                        _ => continue,
                    };
                    if socket.send(echo).await.is_err() {
                        break;
                    }
                }
            },
        )
        // Runs before the handshake: a refusal is a normal HTTP response.
        .prefix("/echo", |request: Request<Body>, _: &mut Route<'_>| {
            if request.uri().query() == Some("token=secret") {
                ControlFlow::Continue(request)
            } else {
                ControlFlow::Break((StatusCode::UNAUTHORIZED, "token required"))
            }
        })
        .monitor("/", |exchange: &RouteExchange<'_>| {
            println!(
                "{} {} {:?}",
                exchange.method(),
                exchange.path(),
                exchange.status()
            );
        })
        .compile()
        .expect("the routes are valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3002".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on ws://{}/echo", listener.local_addr()?);
    serve(listener, app()).await
}
