//! The socket a WebSocket handler holds: a stream of the client's
//! messages, a sink of its own, the close handshake and the timeouts.

use std::{
    pin::Pin,
    task::{Context, Poll, ready},
};

use futures_util::{Sink, Stream};

use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::{self, protocol::frame::coding::CloseCode};

use crate::{
    handler::BodyAllowance,
    shutdown::{ShutdownHandle, ShutdownWatch},
    upgrade_slots::{UpgradeSlot, UpgradeSlots},
};

use super::{
    CloseFrame, Error, Limits, Message,
    codec::Codec,
    socket::{Socket, Wait},
};

/// The connection a WebSocket handler receives over the upgraded HTTP
/// connection: a `Stream` of the client's [`Message`]s and a `Sink` of the
/// server's. [`recv`](Self::recv) and [`send`](Self::send) read and send
/// them, as axum's do; `futures_util`'s `StreamExt` and `SinkExt` (split,
/// forward, …) work as well. (tokio-tungstenite speaks the protocol below; no type of its
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
    /// Reads are over: a wait outlasted its timeout, or the close of a
    /// shutdown could not be sent. The next read ends the stream.
    reads_over: bool,
    /// The server's shutdown, when `serve` serves the connection.
    shutdown: Option<ShutdownWatch>,
    /// The subprotocol the handshake settled on.
    protocol: Option<Box<str>>,
    /// Where the close for a shutdown stands.
    going_away: GoingAway,
    /// Its slot among the server's WebSockets, when `serve` serves it.
    _slot: Option<UpgradeSlot>,
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

    /// The next message, `None` once the connection is over: the
    /// [`Stream`]'s next item, as axum's `recv` gives it. Cancel-safe: in a
    /// `tokio::select!` that another branch wins, no message is lost.
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        futures_util::StreamExt::next(self).await
    }

    /// Sends `message` and flushes it, as the [`Sink`]'s `send` does.
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        futures_util::SinkExt::send(self, message).await
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
        if this.reads_over {
            return Poll::Ready(None);
        }
        if let Err(error) = ready!(this.poll_going_away(cx)) {
            // The connection is gone: the error, then the end, as after
            // any other (a handler that reads on would spin otherwise).
            this.reads_over = true;
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
        self.reads_over = true;
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

/// What the server lends an accepted handshake's socket, taken when the
/// handshake is answered: a slot among the server's WebSockets, held as
/// long as the socket; the shutdown it watches from then (a shutdown
/// during the handshake counts too); the allowance its large messages take
/// room in.
pub(crate) struct Accepted {
    pub(super) limits: Limits,
    pub(super) protocol: Option<Box<str>>,
    slot: Option<UpgradeSlot>,
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
            reads_over: false,
            shutdown: self.shutdown,
            protocol: self.protocol,
            going_away: GoingAway::No,
            _slot: self.slot,
        }
    }
}
