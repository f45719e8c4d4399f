//! The limits of a router's WebSocket connections, and the settings they
//! give tungstenite.

use std::time::Duration;

use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

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
    pub(super) max_message_size: usize,
    max_frame_size: usize,
    max_write_buffer_size: usize,
    pub(super) send_timeout: Duration,
    pub(super) message_timeout: Duration,
    pub(super) ping_interval: Duration,
    pub(super) idle_timeout: Duration,
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
pub(super) const WRITE_BUFFER_SIZE: usize = 128 * 1024;

/// The longest header a frame has (RFC 6455, 5.2): a 2-byte head, an
/// 8-byte length and a 4-byte mask.
pub(super) const MAX_FRAME_HEADER: usize = 14;

/// What tungstenite reads at once, and keeps for each connection while
/// no frame is underway: an idle connection's memory, and what a message
/// waiting for room in the server's allowance holds past the uncounted
/// part.
pub(super) const READ_BUFFER_SIZE: usize = 16 * 1024;

impl Limits {
    /// The largest message a client may send, in bytes (default 1 MiB).
    /// A larger one (or a frame larger than
    /// [`max_frame_size`](Self::max_frame_size)) is refused: the read
    /// fails with an error whose [`is_capacity`](super::Error::is_capacity) is
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
    /// one fails with an error whose [`is_capacity`](super::Error::is_capacity)
    /// is true.
    pub fn max_write_buffer_size(mut self, bytes: usize) -> Self {
        self.max_write_buffer_size = bytes.max(2 * WRITE_BUFFER_SIZE);
        self
    }

    /// How long a send may wait on a client that takes none of it
    /// (default 30 s), counted from the last byte the client took: then
    /// the send fails with an error whose
    /// [`is_timeout`](super::Error::is_timeout) is true, and the handler had best
    /// end. A client that reads slowly but steadily is not cut off.
    /// `Duration::MAX` waits for ever.
    pub fn send_timeout(mut self, timeout: Duration) -> Self {
        self.send_timeout = timeout;
        self
    }

    /// How long a client has to send a whole message once it began it
    /// (default 30 s), the frames of a fragmented message and the control
    /// frames among them included: then the next read yields an error
    /// whose [`is_timeout`](super::Error::is_timeout) is true, and the reads
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
    /// yields an error whose [`is_timeout`](super::Error::is_timeout) is true,
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
    /// [`is_timeout`](super::Error::is_timeout) is true, and the reads after it
    /// none. Pings and pongs are not messages: a live client that says
    /// nothing and is told nothing is let go after this time. The check
    /// runs while the handler reads.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    pub(super) fn config(self) -> WebSocketConfig {
        WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER_SIZE)
            .write_buffer_size(WRITE_BUFFER_SIZE)
            .max_write_buffer_size(self.max_write_buffer_size + MAX_FRAME_HEADER)
            .max_message_size(Some(self.max_message_size))
            .max_frame_size(Some(self.max_frame_size))
    }
}
