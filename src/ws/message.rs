//! pronghorn's WebSocket messages, close frames and errors: the values a
//! handler reads and sends, whatever library speaks the protocol below.

use std::{fmt, ops::Deref};

use bytes::Bytes;
use tokio_tungstenite::tungstenite;

/// A message of a WebSocket connection, read from the client or sent to it.
///
/// ```
/// use pronghorn::ws::Message;
///
/// let message = Message::text("hello");
/// assert_eq!(message.as_text(), Some("hello"));
/// assert_eq!(Message::binary(vec![1, 2]).into_data(), &[1, 2][..]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A text message, valid UTF-8.
    Text(Utf8Bytes),
    /// A binary message.
    Binary(Bytes),
    /// A ping. One read from the client is answered with a pong by the
    /// connection itself; the handler sees it too.
    Ping(Bytes),
    /// A pong.
    Pong(Bytes),
    /// A close frame, with a code and a reason, or none.
    Close(Option<CloseFrame>),
}

impl Message {
    /// A text message.
    pub fn text(text: impl Into<Utf8Bytes>) -> Self {
        Message::Text(text.into())
    }

    /// A binary message.
    pub fn binary(data: impl Into<Bytes>) -> Self {
        Message::Binary(data.into())
    }

    /// Whether this is a close frame: the peer is done.
    pub fn is_close(&self) -> bool {
        matches!(self, Message::Close(_))
    }

    /// The text of a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The message's payload as bytes: a text's UTF-8, a close frame's
    /// reason.
    pub fn into_data(self) -> Bytes {
        match self {
            Message::Text(text) => text.0.into(),
            Message::Binary(data) | Message::Ping(data) | Message::Pong(data) => data,
            Message::Close(frame) => frame.map_or_else(Bytes::new, |frame| frame.reason.0.into()),
        }
    }
}

impl From<Message> for tungstenite::Message {
    fn from(message: Message) -> Self {
        match message {
            Message::Text(text) => tungstenite::Message::Text(text.0),
            Message::Binary(data) => tungstenite::Message::Binary(data),
            Message::Ping(data) => tungstenite::Message::Ping(data),
            Message::Pong(data) => tungstenite::Message::Pong(data),
            Message::Close(frame) => {
                tungstenite::Message::Close(frame.map(|frame| tungstenite::protocol::CloseFrame {
                    code: frame.code.into(),
                    reason: frame.reason.0,
                }))
            }
        }
    }
}

impl Message {
    /// The message tungstenite read, or `None` for a raw frame (which
    /// tungstenite never hands a reader).
    pub(super) fn read(message: tungstenite::Message) -> Option<Self> {
        Some(match message {
            tungstenite::Message::Text(text) => Message::Text(Utf8Bytes(text)),
            tungstenite::Message::Binary(data) => Message::Binary(data),
            tungstenite::Message::Ping(data) => Message::Ping(data),
            tungstenite::Message::Pong(data) => Message::Pong(data),
            tungstenite::Message::Close(frame) => Message::Close(frame.map(|frame| CloseFrame {
                code: frame.code.into(),
                reason: Utf8Bytes(frame.reason),
            })),
            tungstenite::Message::Frame(_) => return None,
        })
    }
}

/// A close frame: a code ([`close_code`]) and a reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseFrame {
    /// Why the connection closes: one of [`close_code`], or another
    /// registered or private code.
    pub code: u16,
    /// A text saying why, at most 123 bytes.
    pub reason: Utf8Bytes,
}

/// The codes of a close frame that a server sends most (RFC 6455, 7.4.1).
pub mod close_code {
    /// The purpose of the connection is fulfilled.
    pub const NORMAL: u16 = 1000;
    /// The server is going away: shutting down.
    pub const AWAY: u16 = 1001;
    /// The peer broke the protocol.
    pub const PROTOCOL: u16 = 1002;
    /// The peer sent a kind of data the endpoint does not accept.
    pub const UNSUPPORTED: u16 = 1003;
    /// A text message was not UTF-8, or data did not fit its type.
    pub const INVALID: u16 = 1007;
    /// A message broke the endpoint's policy.
    pub const POLICY: u16 = 1008;
    /// A message was too big to process.
    pub const SIZE: u16 = 1009;
    /// The server met a condition that kept it from answering.
    pub const ERROR: u16 = 1011;
    /// The server is restarting.
    pub const RESTART: u16 = 1012;
    /// The server is overloaded: try again later.
    pub const AGAIN: u16 = 1013;
}

/// Text known to be UTF-8, held as shared bytes: a text message's payload,
/// read without a copy.
///
/// ```
/// use pronghorn::ws::Utf8Bytes;
///
/// let text = Utf8Bytes::from("héllo");
/// assert_eq!(text.as_str(), "héllo");
/// assert_eq!(text.len(), 6);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Utf8Bytes(tungstenite::Utf8Bytes);

impl Utf8Bytes {
    /// Text from a static string, without a copy.
    pub const fn from_static(text: &'static str) -> Self {
        Utf8Bytes(tungstenite::Utf8Bytes::from_static(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl Deref for Utf8Bytes {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Utf8Bytes {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for Utf8Bytes {
    fn from(text: String) -> Self {
        Utf8Bytes(text.into())
    }
}

impl From<&str> for Utf8Bytes {
    fn from(text: &str) -> Self {
        Utf8Bytes(text.into())
    }
}

impl From<Utf8Bytes> for Bytes {
    fn from(text: Utf8Bytes) -> Self {
        text.0.into()
    }
}

impl TryFrom<Bytes> for Utf8Bytes {
    type Error = std::str::Utf8Error;

    /// The bytes, if they are UTF-8.
    fn try_from(bytes: Bytes) -> Result<Self, Self::Error> {
        tungstenite::Utf8Bytes::try_from(bytes).map(Utf8Bytes)
    }
}

impl PartialEq<str> for Utf8Bytes {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Utf8Bytes {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Why reading or sending a WebSocket message failed: the connection is
/// closed, the peer broke the protocol, a message is over a limit
/// ([`Limits`](super::Limits)), or the connection failed.
#[derive(Debug)]
pub struct Error(tungstenite::Error);

impl Error {
    /// Whether the connection is closed (normally, or sending after the
    /// close), as opposed to failed.
    pub fn is_closed(&self) -> bool {
        matches!(
            self.0,
            tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed
        )
    }

    /// Whether the client took nothing sent to it within the
    /// [send timeout](super::Limits::send_timeout), did not finish a
    /// message within the [message timeout](super::Limits::message_timeout),
    /// or stopped answering TCP keep-alive probes.
    pub fn is_timeout(&self) -> bool {
        matches!(&self.0, tungstenite::Error::Io(error) if error.kind() == std::io::ErrorKind::TimedOut)
    }

    /// A send the client took nothing of within the send timeout.
    pub(super) fn send_timed_out() -> Self {
        Self::timed_out("the client took nothing sent to it within the send timeout")
    }

    /// A message the client did not finish within the message timeout.
    pub(super) fn message_timed_out() -> Self {
        Self::timed_out("the client did not finish its message within the message timeout")
    }

    /// A client silent through a ping interval and the ping after it.
    pub(super) fn ping_unanswered() -> Self {
        Self::timed_out("the client answered no ping within the ping interval")
    }

    /// No message either way within the idle timeout.
    pub(super) fn idle_timed_out() -> Self {
        Self::timed_out("no message either way within the idle timeout")
    }

    /// The connection, granted an upgrade, was not handed over.
    pub(super) fn upgrade_failed(error: hyper::Error) -> Self {
        Error(tungstenite::Error::Io(std::io::Error::other(error)))
    }

    fn timed_out(why: &'static str) -> Self {
        Error(tungstenite::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            why,
        )))
    }

    /// Whether a message or frame was over a limit.
    pub fn is_capacity(&self) -> bool {
        matches!(
            self.0,
            tungstenite::Error::Capacity(_) | tungstenite::Error::WriteBufferFull(_)
        )
    }
}

impl From<tungstenite::Error> for Error {
    fn from(error: tungstenite::Error) -> Self {
        Error(error)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}
