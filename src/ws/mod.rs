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

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
    time::Duration,
};

use futures_util::{Sink, Stream};

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::{
    self,
    handshake::derive_accept_key,
    protocol::{WebSocketConfig, frame::coding::CloseCode},
};

use crate::{
    body::Body,
    handler::IntoResponse,
    handler::{
        BodyAllowance, FromRequestHead, HeadExtractors, Needs, RequestContext, RouteContext,
        for_each_arity,
    },
    step::BoxFuture,
    upgrade::{ShutdownHandle, ShutdownWatch, UpgradeSlots},
};

mod codec;
mod frames;
mod message;
mod socket;
mod upgrade;

use self::{
    codec::Codec,
    socket::{Socket, Wait},
};

pub use self::{
    message::{CloseFrame, Error, Message, Utf8Bytes, close_code},
    upgrade::WebSocketUpgrade,
};

/// The connection a WebSocket handler receives over the upgraded HTTP
/// connection: a `Stream` of the client's [`Message`]s and a `Sink` of the
/// server's. Use `futures_util`'s `StreamExt` and `SinkExt` to read and
/// send them. (tokio-tungstenite speaks the protocol below; no type of its
/// is part of this API.) [`Router::websocket`](crate::Router::websocket)
/// shows an echo handler.
///
/// A handler may simply return, whether or not the client began a close:
/// the close frame the connection owes (or, if none was begun, a normal
/// close) is sent as the socket is dropped, so that the close is clean.
///
/// Served by [`serve`](crate::serve), the connection ends with the server:
/// when a graceful shutdown begins, the next read sends the client a close
/// frame with code 1001 (Going Away), then yields the client's close
/// frame, then ends. A handler that reads its socket, as most loop on
/// `next()`, so ends cleanly.
///
/// Once upgraded, the connection is the handler's: `serve`'s timeouts no
/// longer apply to it, but its TCP keep-alive
/// ([`Serve::tcp_keepalive`](crate::Serve::tcp_keepalive)) still finds a
/// client that vanished, and `next()` then ends with an error. A client
/// that stays but stops reading makes `send` wait once its socket is
/// full, until the [send timeout](Limits::send_timeout) (30 s): the send
/// then fails, and the handler had best end. A client that begins a
/// message and does not finish it within the
/// [message timeout](Limits::message_timeout) (30 s), whatever control
/// frames it sends meanwhile, makes `next()` yield an error, then end. A
/// client that sends nothing for the
/// [ping interval](Limits::ping_interval) (30 s) is pinged, and if it
/// then sends nothing for as long again, `next()` yields an error, then
/// ends: a crowd of sockets opened and left silent does not stay. An
/// [idle timeout](Limits::idle_timeout) (none by default) ends a
/// connection on which no message goes either way. Under `serve`, at most
/// [`Serve::max_websockets`](crate::Serve::max_websockets) WebSockets are
/// open at once (half the connection limit); a handshake past it is
/// answered 503.
///
/// What a connection holds of the client's messages: 16 KiB while none is
/// underway; the message underway, up to 64 KiB, and past that only with
/// room in the server's allowance for what requests read
/// ([`Serve::body_buffer`](crate::Serve::body_buffer)): each such message
/// reserves twice what has arrived of it and a step ahead (a message in
/// fragments holds about twice its size while it is read), and waits for
/// room while others hold it. And of the handler's messages: what the client has
/// not taken yet, up to the
/// [write buffer's bound](Limits::max_write_buffer_size) (1 MiB), until
/// the send timeout. With many connections, these add up: a server with
/// `max_connections` WebSockets whose clients all stop reading holds that
/// many write buffers, for the send timeout. The buffers that grew for a
/// message larger than 16 KiB, read or sent, are let go once the
/// connection is idle again: an idle connection holds about 32 KiB,
/// whatever it carried before.
#[derive(Debug)]
pub struct WebSocket {
    codec: Codec<TokioIo<Upgraded>>,
    /// How long a send has waited on a client that takes none of it.
    send_wait: Wait,
    /// How long the client's message underway has taken so far.
    message_wait: Wait,
    /// How long the client has sent nothing, for the liveness check.
    silence: Wait,
    /// Whether the silence brought a ping.
    pinged: bool,
    /// How long no message went either way.
    idle: Wait,
    /// The messages read and sent: the idle timeout's progress.
    exchanged: u64,
    /// A wait outlasted its timeout: reads are over.
    timed_out: bool,
    /// The server's shutdown, when `serve` serves the connection.
    shutdown: Option<ShutdownWatch>,
    /// The subprotocol the handshake settled on.
    protocol: Option<Box<str>>,
    /// Where the close for a shutdown stands.
    going_away: GoingAway,
    /// Its slot among the server's WebSockets, when `serve` serves it.
    _slot: Option<tokio::sync::OwnedSemaphorePermit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GoingAway {
    /// The server is not shutting down (or the close is not sent yet).
    No,
    /// The close frame is to be sent.
    Send,
    /// The close frame is to be flushed.
    Flush,
    /// Sent: reads go on until the client's answer.
    Sent,
}

impl WebSocket {
    /// The subprotocol the handshake settled on: the first of
    /// [`Router::websocket_protocols`](crate::Router::websocket_protocols)
    /// the client offered, if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// Sends a close frame, with a code and a reason or without, and
    /// flushes it; the client's close frame is then the last message read.
    pub async fn close(&mut self, frame: Option<CloseFrame>) -> Result<(), Error> {
        futures_util::SinkExt::send(self, Message::Close(frame)).await
    }

    /// Drives the close frame of a shutdown out.
    fn poll_going_away(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), tungstenite::Error>> {
        if self.going_away == GoingAway::No {
            let signalled = self
                .shutdown
                .as_mut()
                .is_some_and(|shutdown| shutdown.poll_signalled(cx));
            if !signalled {
                return Poll::Ready(Ok(()));
            }
            self.going_away = GoingAway::Send;
        }
        let codec = &mut self.codec;
        if self.going_away == GoingAway::Send {
            ready!(codec.poll_ready(cx))?;
            codec.start_send(tungstenite::Message::Close(Some(
                tungstenite::protocol::CloseFrame {
                    code: CloseCode::Away,
                    reason: "the server is shutting down".into(),
                },
            )))?;
            self.going_away = GoingAway::Flush;
        }
        if self.going_away == GoingAway::Flush {
            ready!(codec.poll_flush(cx))?;
            self.going_away = GoingAway::Sent;
        }
        Poll::Ready(Ok(()))
    }
}

impl Stream for WebSocket {
    type Item = Result<Message, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.timed_out {
            return Poll::Ready(None);
        }
        if let Err(error) = ready!(this.poll_going_away(cx)) {
            return Poll::Ready(Some(Err(error.into())));
        }
        loop {
            let Poll::Ready(read) = this.codec.poll_next(cx) else {
                return this.poll_timeouts(cx);
            };
            // A data message ends the wait for it; a control frame read
            // among a message's fragments (a ping every few seconds) is no
            // progress on the message, and leaves its wait running.
            match &read {
                Some(Ok(tungstenite::Message::Ping(_) | tungstenite::Message::Pong(_))) => {}
                Some(Ok(tungstenite::Message::Text(_) | tungstenite::Message::Binary(_))) => {
                    this.exchanged += 1;
                    this.message_wait.end();
                }
                _ => this.message_wait.end(),
            }
            return Poll::Ready(match read {
                Some(Ok(message)) => match Message::read(message) {
                    Some(message) => Some(Ok(message)),
                    None => continue,
                },
                Some(Err(error)) => {
                    if matches!(error, tungstenite::Error::Capacity(_)) {
                        this.refuse_too_big(cx);
                    }
                    Some(Err(error.into()))
                }
                None => None,
            });
        }
    }
}

impl WebSocket {
    /// A message or frame over the limits was refused: the connection is
    /// closed with code 1009 (RFC 6455, 7.4.1), the close frame written
    /// now if the socket takes it and otherwise when the handler returns.
    fn refuse_too_big(&mut self, cx: &mut Context<'_>) {
        let close = tungstenite::Message::Close(Some(tungstenite::protocol::CloseFrame {
            code: CloseCode::Size,
            reason: "message too big".into(),
        }));
        if self.codec.start_send(close).is_ok() {
            let _ = self.codec.poll_flush(cx);
        }
    }
}

/// A handler that returns, however it ends, completes the close handshake
/// as far as it goes without waiting: the close frame it owes the client
/// (or, if none was begun, a normal close) is written if the socket takes
/// it at once, as it does a frame this small, before the connection ends.
/// A client that closed gets its answer: the close is clean.
impl Drop for WebSocket {
    fn drop(&mut self) {
        let cx = &mut Context::from_waker(std::task::Waker::noop());
        let _ = self.codec.poll_close(cx);
    }
}

impl Sink<Message> for WebSocket {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        let ready = this.codec.poll_ready(cx);
        this.timed(ready, cx)
    }

    fn start_send(self: Pin<&mut Self>, message: Message) -> Result<(), Error> {
        let this = self.get_mut();
        if matches!(message, Message::Text(_) | Message::Binary(_)) {
            this.exchanged += 1;
        }
        this.codec.start_send(message.into()).map_err(Error::from)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        let flushed = this.codec.poll_flush(cx);
        this.timed(flushed, cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        let closed = this.codec.poll_close(cx);
        this.timed(closed, cx)
    }
}

impl WebSocket {
    /// A read waits: whether a wait outlasted its timeout — the message
    /// underway, the client's silence after a ping, no message either
    /// way. Reads end after one that did.
    fn poll_timeouts(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Message, Error>>> {
        let error = if self.poll_message_expired(cx) {
            Error::message_timed_out()
        } else if self.poll_silence_expired(cx) {
            Error::ping_unanswered()
        } else if self.idle.poll_expired(self.exchanged, cx) {
            Error::idle_timed_out()
        } else {
            return Poll::Pending;
        };
        self.timed_out = true;
        Poll::Ready(Some(Err(error)))
    }

    /// Once a message is underway, whether it took longer than the
    /// message timeout.
    fn poll_message_expired(&mut self, cx: &mut Context<'_>) -> bool {
        if self.codec.socket().progress.between_messages() {
            self.message_wait.end();
            return false;
        }
        // No progress counts: the whole message has the timeout.
        self.message_wait.poll_expired(0, cx)
    }

    /// The liveness check: after a ping interval in which the client sent
    /// nothing, a ping; whether the client then sent nothing for another.
    fn poll_silence_expired(&mut self, cx: &mut Context<'_>) -> bool {
        let read = self.codec.socket().read;
        if self.silence.progressed(read) {
            self.pinged = false;
        }
        if !self.silence.poll_expired(read, cx) {
            return false;
        }
        if self.pinged {
            return true;
        }
        // A client whose socket takes nothing now gets no ping: the send
        // timeout is for it, and silence through one more interval too.
        if self.codec.poll_ready(cx).is_ready()
            && self
                .codec
                .start_send(tungstenite::Message::Ping(bytes::Bytes::new()))
                .is_ok()
        {
            let _ = self.codec.poll_flush(cx);
        }
        self.pinged = true;
        self.silence.end();
        // Starts the next interval, with the task woken at its end.
        self.silence.poll_expired(read, cx)
    }

    /// A send's progress under the send timeout: a send that waits fails
    /// once the client has taken none of it for the timeout.
    fn timed(
        &mut self,
        poll: Poll<Result<(), tungstenite::Error>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        match poll {
            Poll::Ready(result) => {
                self.send_wait.end();
                Poll::Ready(result.map_err(Error::from))
            }
            Poll::Pending => {
                let written = self.codec.socket().written;
                match self.send_wait.poll_expired(written, cx) {
                    true => Poll::Ready(Err(Error::send_timed_out())),
                    false => Poll::Pending,
                }
            }
        }
    }
}

/// The limits of a router's WebSocket connections
/// ([`Router::websocket_limits`](crate::Router::websocket_limits)).
///
/// The defaults suit clients the server does not trust: a message or a
/// frame of at most 1 MiB (a connection that sends a larger one is
/// closed), at most 1 MiB of messages waiting to be written to a client
/// that does not read (sending more fails), 30 s for a send the client
/// takes nothing of, 30 s for a client to finish a message it began, and
/// a ping after 30 s of silence from the client, which must answer within
/// 30 s.
///
/// ```
/// use pronghorn::{Router, ws::{Limits, WebSocket}, handler::RouteParams};
///
/// let router = Router::new()
///     .websocket("/upload", |_: WebSocket, _: RouteParams| async {})
///     .websocket_limits(Limits::default().max_message_size(16 * 1024 * 1024))
///     .compile()
///     .unwrap();
/// # drop(router);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_message_size: usize,
    max_frame_size: usize,
    max_write_buffer_size: usize,
    send_timeout: Duration,
    message_timeout: Duration,
    ping_interval: Duration,
    idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_size: 1 << 20,
            max_frame_size: 1 << 20,
            max_write_buffer_size: 1 << 20,
            send_timeout: Duration::from_secs(30),
            message_timeout: Duration::from_secs(30),
            ping_interval: Duration::from_secs(30),
            idle_timeout: Duration::MAX,
        }
    }
}

/// What tungstenite writes before it flushes; the write buffer's bound
/// is kept above it.
const WRITE_BUFFER_SIZE: usize = 128 * 1024;

/// The longest header a frame has (RFC 6455, 5.2): a 2-byte head, an
/// 8-byte length and a 4-byte mask.
const MAX_FRAME_HEADER: usize = 14;

/// What tungstenite reads at once, and keeps for each connection while
/// no frame is underway: an idle connection's memory, and what a message
/// waiting for room in the server's allowance holds past the uncounted
/// part.
const READ_BUFFER_SIZE: usize = 16 * 1024;

impl Limits {
    /// The largest message a client may send, in bytes (default 1 MiB).
    /// A larger one (or a frame larger than
    /// [`max_frame_size`](Self::max_frame_size)) is refused: the read
    /// fails with an error whose [`is_capacity`](Error::is_capacity) is
    /// true, and the connection is closed with code 1009, "message too
    /// big" (RFC 6455, 7.4.1).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// The largest frame a client may send, in bytes (default 1 MiB).
    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.max_frame_size = bytes;
        self
    }

    /// The most bytes of messages waiting to be written to the client
    /// (default 1 MiB; at least 256 KiB, smaller values are raised to it).
    /// A message of up to this size can be sent (its frame's header is
    /// not counted): a handler can echo the largest message a client may
    /// send while this is at least
    /// [`max_message_size`](Self::max_message_size). The send of a larger
    /// one fails with an error whose [`is_capacity`](Error::is_capacity)
    /// is true.
    pub fn max_write_buffer_size(mut self, bytes: usize) -> Self {
        self.max_write_buffer_size = bytes.max(2 * WRITE_BUFFER_SIZE);
        self
    }

    /// How long a send may wait on a client that takes none of it
    /// (default 30 s), counted from the last byte the client took: then
    /// the send fails with an error whose
    /// [`is_timeout`](Error::is_timeout) is true, and the handler had best
    /// end. A client that reads slowly but steadily is not cut off.
    /// `Duration::MAX` waits for ever.
    pub fn send_timeout(mut self, timeout: Duration) -> Self {
        self.send_timeout = timeout;
        self
    }

    /// How long a client has to send a whole message once it began it
    /// (default 30 s), the frames of a fragmented message and the control
    /// frames among them included: then the next read yields an error
    /// whose [`is_timeout`](Error::is_timeout) is true, and the reads
    /// after it none. Without it, a client that begins a message and
    /// sends no more holds what it sent, up to the largest message, for
    /// as long as its handler reads. `Duration::MAX` waits for ever.
    pub fn message_timeout(mut self, timeout: Duration) -> Self {
        self.message_timeout = timeout;
        self
    }

    /// The liveness check (default 30 s): once the client has sent
    /// nothing for this long, it is sent a ping, and if it sends nothing
    /// (its pong, or anything else) for as long again, the next read
    /// yields an error whose [`is_timeout`](Error::is_timeout) is true,
    /// and the reads after it none. A client that vanished, or that
    /// holds a connection open without a WebSocket behind it, so lets go
    /// of it within twice this time. The check runs while the handler
    /// reads (`next()`), as most do in a loop. `Duration::MAX` sends no
    /// pings.
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = interval;
        self
    }

    /// How long a connection may carry no message either way (default:
    /// no limit): then the next read yields an error whose
    /// [`is_timeout`](Error::is_timeout) is true, and the reads after it
    /// none. Pings and pongs are not messages: a live client that says
    /// nothing and is told nothing is let go after this time. The check
    /// runs while the handler reads.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    fn config(self) -> WebSocketConfig {
        WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER_SIZE)
            .write_buffer_size(WRITE_BUFFER_SIZE)
            .max_write_buffer_size(self.max_write_buffer_size + MAX_FRAME_HEADER)
            .max_message_size(Some(self.max_message_size))
            .max_frame_size(Some(self.max_frame_size))
    }
}

/// A WebSocket handler: `Fn(WebSocket, T1, …, Tn) -> impl Future<Output =
/// ()>`, where each `Ti` is an extractor of the handshake's head
/// ([`FromRequestHead`]: `Path`, `Query`,
/// `State`, `Header`, `RouteParams`, …). The extractors run at the
/// handshake: one that refuses the request answers it, with no upgrade.
///
/// ```
/// use futures_util::SinkExt;
/// use pronghorn::{Router, handler::{Path, State}, ws::{Message, WebSocket}};
///
/// let router = Router::new()
///     .websocket("/rooms/{room}", |mut socket: WebSocket, Path(room): Path<String>, State(motd): State<&'static str>| async move {
///         let _ = socket.send(Message::text(format!("{motd} in {room}"))).await;
///     })
///     .state("welcome")
///     .compile()
///     .unwrap();
/// # let _ = router;
/// ```
// A refusal is the response that answers the handshake, as an extractor's
// is: not boxed, for it is sent as it is.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response that answers the handshake"
)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a WebSocket handler of pronghorn's",
    label = "not a WebSocket handler",
    note = "a WebSocket handler is `Fn(WebSocket, T1, …, Tn) -> impl Future<Output = ()>`, `Clone + Send + Sync + 'static`, each `Ti` a pronghorn extractor of the request's head"
)]
pub trait WebSocketHandler<M>: Clone + Send + Sync + 'static {
    /// Extracts the handler's arguments from the handshake's head: the
    /// connection's task, waiting for its socket; or the answer of an
    /// extractor that refused the request.
    #[doc(hidden)]
    fn prepare(&self, context: &RequestContext<'_>) -> Result<Connected, Response<Body>>;

    /// Adds what the handler's extractors need of its router and route.
    #[doc(hidden)]
    fn needs(needs: &mut Needs);
}

/// A WebSocket handler with its arguments extracted, waiting for its
/// socket.
#[doc(hidden)]
pub type Connected = Box<dyn FnOnce(WebSocket) -> BoxFuture<()> + Send>;

macro_rules! websocket_handlers {
    ($($ty:ident),*) => {
        #[allow(
            non_snake_case,
            unused_variables,
            reason = "the extractors are named after their type parameters; a handler of no argument uses no context"
        )]
        impl<F, Fut, $($ty,)*> WebSocketHandler<($($ty,)*)> for F
        where
            F: Fn(WebSocket, $($ty),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = ()> + Send + 'static,
            $($ty: FromRequestHead + Send + 'static,)*
        {
            fn prepare(&self, context: &RequestContext<'_>) -> Result<Connected, Response<Body>> {
                let ($($ty,)*) = <($($ty,)*) as HeadExtractors>::extract(context)?;
                let handler = self.clone();
                Ok(Box::new(move |socket| Box::pin(handler(socket, $($ty),*))))
            }

            fn needs(needs: &mut Needs) {
                <($($ty,)*) as HeadExtractors>::needs(needs);
            }
        }
    };
}

for_each_arity!(websocket_handlers);

pub(crate) type ErasedWebSocket =
    dyn Fn(&RequestContext<'_>) -> Result<Connected, Response<Body>> + Send + Sync;

/// Erases a WebSocket handler.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response that answers the handshake"
)]
pub(crate) fn erase<H: WebSocketHandler<M>, M>(handler: H) -> Arc<ErasedWebSocket> {
    Arc::new(move |context| handler.prepare(context))
}

/// Whether a request asks for a WebSocket upgrade: over HTTP/1.1, with
/// `upgrade: websocket` and `connection: upgrade`. An `Upgrade` in an
/// HTTP/1.0 request is ignored (RFC 9110, 7.8).
pub(crate) fn is_upgrade(version: http::Version, headers: &HeaderMap) -> bool {
    if version != http::Version::HTTP_11 {
        return false;
    }
    let has_token =
        |name, token: &str| tokens(headers, name).any(|part| part.eq_ignore_ascii_case(token));
    has_token(header::UPGRADE, "websocket") && has_token(header::CONNECTION, "upgrade")
}

/// The comma-separated tokens of every `name` header, trimmed.
fn tokens(headers: &HeaderMap, name: header::HeaderName) -> impl Iterator<Item = &str> {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
}

/// Completes the handshake: answers 101 and puts in `connection` the
/// future that hands the upgraded connection to `handler`, for the caller
/// to spawn once the answer is out of its hands; or answers 400 for a
/// malformed handshake.
pub(crate) fn handshake(
    request: &mut Request<Body>,
    route: RouteContext<'_>,
    handler: &ErasedWebSocket,
    limits: Limits,
    protocols: &[Box<str>],
    connection: &mut Option<BoxFuture<()>>,
) -> Response<Body> {
    let headers = request.headers();
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|version| version != "13")
    {
        let mut response = (
            StatusCode::BAD_REQUEST,
            "unsupported WebSocket version: expected 13",
        )
            .into_response();
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return (StatusCode::BAD_REQUEST, "missing sec-websocket-key").into_response();
    };
    let accept = derive_accept_key(key.as_bytes());
    let chosen = choose_protocol(headers, protocols);
    // Chosen among the router's own names, which are checked header text
    // here: one that is not is never answered.
    let answered = chosen
        .as_deref()
        .and_then(|protocol| HeaderValue::from_str(protocol).ok());
    // The handler's extractors, at the handshake: a refusal is answered
    // with no upgrade.
    let connected = match handler(&route.with_request(request)) {
        Ok(connected) => connected,
        Err(refused) => return refused,
    };
    let Some(accepted) = Accepted::at(request.extensions(), limits, chosen) else {
        return too_many_websockets();
    };
    let upgrade = hyper::upgrade::on(request);
    *connection = Some(Box::pin(async move {
        match upgrade.await {
            Ok(upgraded) => connected(accepted.socket(upgraded).await).await,
            Err(error) => tracing::debug!(%error, "pronghorn: WebSocket upgrade failed"),
        }
    }));
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(
        header::SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).expect("a base64 accept key is valid header text"),
    );
    if let Some(protocol) = answered {
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
    }
    response
}

/// The answer to a handshake past the server's WebSocket cap. It closes
/// its connection: a crowd of handshakes refused keeps no connection
/// slots from other clients while they wait to be shed as idle.
fn too_many_websockets() -> Response<Body> {
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        "too many WebSocket connections open; try again later",
    )
        .into_response();
    (response.headers_mut()).insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// What the server lends an accepted handshake's socket, taken when the
/// handshake is answered: a slot among the server's WebSockets, held as
/// long as the socket; the shutdown it watches from then (a shutdown
/// during the handshake counts too); the allowance its large messages take
/// room in.
pub(crate) struct Accepted {
    limits: Limits,
    protocol: Option<Box<str>>,
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
    shutdown: Option<ShutdownWatch>,
    allowance: Option<BodyAllowance>,
}

impl Accepted {
    /// What the server lends a handshake whose request has `extensions`;
    /// `None` when its WebSockets are all taken.
    pub(crate) fn at(
        extensions: &http::Extensions,
        limits: Limits,
        protocol: Option<Box<str>>,
    ) -> Option<Self> {
        let slot = match extensions.get::<UpgradeSlots>() {
            Some(slots) => Some(slots.try_take()?),
            None => None,
        };
        Some(Self {
            limits,
            protocol,
            slot,
            shutdown: extensions
                .get::<ShutdownHandle>()
                .map(ShutdownHandle::watch),
            allowance: extensions.get::<BodyAllowance>().cloned(),
        })
    }

    /// The socket over the connection `upgraded`.
    pub(crate) async fn socket(self, upgraded: Upgraded) -> WebSocket {
        let limits = self.limits;
        let io = Socket::new(
            TokioIo::new(upgraded),
            self.allowance,
            limits.max_message_size,
        );
        let codec = Codec::new(io, limits.config()).await;
        WebSocket {
            codec,
            send_wait: Wait::new(limits.send_timeout),
            message_wait: Wait::new(limits.message_timeout),
            silence: Wait::new(limits.ping_interval),
            pinged: false,
            idle: Wait::new(limits.idle_timeout),
            exchanged: 0,
            timed_out: false,
            shutdown: self.shutdown,
            protocol: self.protocol,
            going_away: GoingAway::No,
            _slot: self.slot,
        }
    }
}

/// The first of `protocols` (the server's, preferred first) that the
/// handshake's `sec-websocket-protocol` offers.
fn choose_protocol(headers: &HeaderMap, protocols: &[Box<str>]) -> Option<Box<str>> {
    if protocols.is_empty() {
        return None;
    }
    let offered: Vec<&str> = tokens(headers, header::SEC_WEBSOCKET_PROTOCOL).collect();
    protocols
        .iter()
        .find(|protocol| offered.contains(&&***protocol))
        .cloned()
}
