//! The server that the conformance suites run against (`conformance/`):
//! HTTP/1.1 and HTTP/2 (h2c with prior knowledge, or TLS-less upgrade-free
//! HTTP/2 as h2spec speaks it) on `serve`'s defaults, and a WebSocket echo
//! behind a prefix hook.
//!
//! ```text
//! cargo run --release --example conformance --features ws -- 127.0.0.1:8080
//! cargo run --release --example conformance --features ws -- 127.0.0.1:9001 --large-messages
//! ```
//!
//! - `/` answers every method with the request's body, or `hello` when it
//!   has none;
//! - `/status/{code}` answers every method with that status and the body
//!   `hello` (which the server must not send where the status forbids a
//!   body: 1xx, 204, 304);
//! - `/stream` answers GET with `hello` as a body of unknown length;
//! - `/get-only` answers GET (and HEAD) only: another method gets 405;
//! - `/ws` is a WebSocket echo, written the obvious way: loop on `next()`,
//!   send back what came, stop at the end. A prefix hook runs before every
//!   handshake and refuses one whose query is `deny`.
//!
//! `--large-messages` raises the WebSocket limits (a message, a frame, the
//! write buffer) to 32 MiB, for the Autobahn TestSuite's section 9, whose
//! messages reach 16 MiB; under the defaults (1 MiB) the larger ones are
//! refused with close code 1009, as [`pronghorn::ws::Limits`] documents.

use std::{convert::Infallible, ops::ControlFlow};

use bytes::Bytes;
use futures_util::StreamExt;
use http::{Request, StatusCode};
use pronghorn::{
    Body, CompiledRouter, Router,
    handler::Path,
    router::Route,
    serve,
    ws::{Limits, Message, WebSocket},
};

/// The application. `large_messages` raises the WebSocket limits.
pub fn app(large_messages: bool) -> CompiledRouter {
    let router = Router::new()
        .any("/", |body: Bytes| async move {
            if body.is_empty() {
                Bytes::from_static(b"hello")
            } else {
                body
            }
        })
        .any("/status/{code}", |Path(code): Path<u16>| {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
            (status, "hello")
        })
        .get("/stream", || {
            let chunks = ["hel", "lo"]
                .map(|chunk| Ok::<_, Infallible>(Bytes::from_static(chunk.as_bytes())));
            Body::from_stream(futures_util::stream::iter(chunks))
        })
        .get("/get-only", || "hello")
        .websocket("/ws", |mut socket: WebSocket| async move {
            while let Some(Ok(message)) = socket.next().await {
                let echo = matches!(message, Message::Text(_) | Message::Binary(_));
                if echo && socket.send(message).await.is_err() {
                    break;
                }
            }
        })
        .prefix("/ws", |request: Request<Body>, _: &mut Route<'_>| {
            if request.uri().query() == Some("deny") {
                ControlFlow::Break((StatusCode::FORBIDDEN, "denied"))
            } else {
                ControlFlow::Continue(request)
            }
        });
    let router = if large_messages {
        router.websocket_limits(
            Limits::default()
                .max_message_size(32 << 20)
                .max_frame_size(32 << 20)
                // So that an echo of the largest message fits.
                .max_write_buffer_size(32 << 20),
        )
    } else {
        router
    };
    router.compile().expect("the routes are valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut address = "127.0.0.1:8080".to_owned();
    let mut large_messages = false;
    for argument in std::env::args().skip(1) {
        match argument.as_str() {
            "--large-messages" => large_messages = true,
            _ => address = argument,
        }
    }
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on {}", listener.local_addr()?);
    serve(listener, app(large_messages)).await
}
