//! WebSocket routes (feature `ws`): the handshake, and the connection handed
//! to the route's handler as a stream and a sink of [`Message`]s.
//!
//! A route is registered with [`Router::websocket`](crate::Router::websocket);
//! its handler receives the [`WebSocket`] once the handshake is done, on a
//! task of its own, and the connection closes when the handler returns.
//!
//! ```
//! use futures_util::{SinkExt, StreamExt};
//! use pronghorn::{Router, handler::RouteParams, serve, ws::{Message, WebSocket}};
//! use tokio::net::{TcpListener, TcpStream};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Answers each text message with the same text, upper-cased.
//! let router = Router::new()
//!     .websocket("/shout/{room}", |mut socket: WebSocket, params: RouteParams| async move {
//!         let room = params.get("room").unwrap_or("?").to_owned();
//!         while let Some(Ok(Message::Text(text))) = socket.next().await {
//!             let answer = format!("{room}: {}", text.to_uppercase());
//!             if socket.send(Message::text(answer)).await.is_err() {
//!                 break;
//!             }
//!         }
//!     })
//!     .compile()?;
//! let listener = TcpListener::bind("127.0.0.1:0").await?;
//! let address = listener.local_addr()?;
//! tokio::spawn(serve(listener, router).into_future());
//!
//! // A client on loopback: the handshake, one message there and back.
//! let stream = TcpStream::connect(address).await?;
//! let (mut client, response) =
//!     tokio_tungstenite::client_async(format!("ws://{address}/shout/lobby"), stream).await?;
//! assert_eq!(response.status(), 101);
//! use tokio_tungstenite::tungstenite::Message as ClientMessage;
//! client.send(ClientMessage::text("hello")).await?;
//! let answer = client.next().await.expect("an answer")?;
//! assert_eq!(answer.into_text()?, "lobby: HELLO");
//! # Ok(())
//! # }
//! ```

mod codec;
mod frames;
mod handler;
mod handshake;
mod limits;
mod message;
mod socket;
mod upgrade;
mod websocket;

pub(crate) use self::{
    handler::{ErasedWebSocket, erase},
    handshake::{handshake, is_upgrade},
    websocket::Accepted,
};
pub use self::{
    handler::{PreparedHandler, WebSocketHandler},
    limits::Limits,
    message::{CloseFrame, Error, Message, Utf8Bytes, close_code},
    upgrade::{DefaultOnFailedUpgrade, OnFailedUpgrade, WebSocketUpgrade, rejection},
    websocket::WebSocket,
};
