//! tungstenite over the socket, rebuilt with small buffers once it is idle
//! after a large message.
//!
//! tungstenite reads a frame into a buffer that grows to hold the whole
//! frame, and writes a message from one that grows to hold the whole
//! message, or all it could not write while the client was not reading.
//! Neither ever shrinks: 1,000 idle connections that had each echoed one
//! 1 MiB message held 2 GB, for as long as their clients kept them open.
//!
//! So once a connection has read a frame or sent a message larger than
//! the read buffer's first size (16 KiB), or waited on its client to
//! write, [`Codec`] starts tungstenite afresh at the next moment it holds
//! nothing: every byte read has been yielded as a message, every message
//! sent has been flushed, no pong is owed and no close is underway. A new
//! tungstenite over the same socket then has what the old one had, with
//! buffers of their first size. The same 1,000 connections then hold
//! 41 MB.

use std::{
    future::Future,
    pin::{Pin, pin},
    task::{Context, Poll},
};

use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        self,
        protocol::{Role, WebSocketConfig},
    },
};

use super::{limits::READ_BUFFER_SIZE, socket::Socket};

/// tungstenite over the socket, and what tells when it holds nothing.
#[derive(Debug)]
pub(super) struct Codec<T> {
    /// Out of its place only while it is rebuilt.
    stream: Option<WebSocketStream<Socket<T>>>,
    /// The items tungstenite yielded: once as many as the socket read
    /// whole, tungstenite holds none of what it read.
    yielded: u64,
    /// Whether tungstenite may owe a pong: it writes one for a ping it
    /// read at its next read or flush.
    pong_owed: bool,
    /// Whether a message was handed to tungstenite and not flushed since.
    unflushed: bool,
    /// Whether a close frame was read or sent, or reading failed or ended:
    /// tungstenite's state is no longer a fresh one's.
    closing: bool,
    /// Whether a message past the read buffer's size was sent since
    /// tungstenite was built.
    sent_large: bool,
}

impl<T: AsyncRead + AsyncWrite + Unpin> Codec<T> {
    pub(super) async fn new(socket: Socket<T>, config: WebSocketConfig) -> Self {
        let stream = WebSocketStream::from_raw_socket(socket, Role::Server, Some(config)).await;
        Self {
            stream: Some(stream),
            yielded: 0,
            pong_owed: false,
            unflushed: false,
            closing: false,
            sent_large: false,
        }
    }

    fn stream(&mut self) -> Pin<&mut WebSocketStream<Socket<T>>> {
        Pin::new(self.stream.as_mut().expect("rebuilt in place"))
    }

    pub(super) fn socket(&self) -> &Socket<T> {
        self.stream.as_ref().expect("rebuilt in place").get_ref()
    }

    /// The next message, from a tungstenite rebuilt first if it holds
    /// nothing after a large message.
    pub(super) fn poll_next(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<tungstenite::Message, tungstenite::Error>>> {
        self.rebuild_if_idle(cx);
        let next = self.stream().poll_next(cx);
        // tungstenite wrote the pong it owed first, unless the client is
        // not reading.
        self.pong_owed &= self.socket().write_waits;
        match &next {
            Poll::Ready(Some(Ok(message))) => {
                self.yielded += 1;
                self.pong_owed |= message.is_ping();
                self.closing |= message.is_close();
            }
            Poll::Ready(_) => self.closing = true,
            Poll::Pending => {}
        }
        next
    }

    /// Whether a message may be sent, from a tungstenite rebuilt first if
    /// it holds nothing after a large message.
    pub(super) fn poll_ready(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), tungstenite::Error>> {
        self.rebuild_if_idle(cx);
        self.stream().poll_ready(cx)
    }

    pub(super) fn start_send(
        &mut self,
        message: tungstenite::Message,
    ) -> Result<(), tungstenite::Error> {
        self.unflushed = true;
        self.closing |= message.is_close();
        self.sent_large |= message.len() > READ_BUFFER_SIZE;
        self.stream().start_send(message)
    }

    pub(super) fn poll_flush(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), tungstenite::Error>> {
        let flushed = self.stream().poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            // The messages sent are written, and the pong owed with them.
            (self.unflushed, self.pong_owed) = (false, false);
        }
        flushed
    }

    pub(super) fn poll_close(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), tungstenite::Error>> {
        self.closing = true;
        self.stream().poll_close(cx)
    }

    /// Whether tungstenite's buffers may have grown past their first size.
    fn grown(&self) -> bool {
        let socket = self.socket();
        self.sent_large || socket.waited || socket.progress.largest() > READ_BUFFER_SIZE as u64
    }

    /// Whether tungstenite holds nothing a new one would not: every byte
    /// read yielded, every message flushed, no pong owed, no close begun.
    fn holds_nothing(&self) -> bool {
        let socket = self.socket();
        !self.pong_owed
            && !self.unflushed
            && !self.closing
            && !socket.write_waits
            && socket.progress.between_messages()
            && socket.progress.items() == self.yielded
    }

    /// A new tungstenite over the same socket, once the old one's buffers
    /// may have grown and it holds nothing.
    fn rebuild_if_idle(&mut self, cx: &mut Context<'_>) {
        if !self.grown() || !self.holds_nothing() {
            return;
        }
        let stream = self.stream.take().expect("rebuilt in place");
        let config = *stream.get_config();
        let mut socket = stream.into_inner();
        socket.progress.forget_largest();
        socket.forget_waits();
        self.sent_large = false;
        // It builds tungstenite's state, and awaits nothing.
        let rebuilt = pin!(WebSocketStream::from_raw_socket(
            socket,
            Role::Server,
            Some(config)
        ))
        .poll(cx);
        let Poll::Ready(rebuilt) = rebuilt else {
            unreachable!("tokio-tungstenite builds a stream over a socket at once")
        };
        self.stream = Some(rebuilt);
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;

    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

    use super::*;

    /// A client's whole frame, masked with a zero mask.
    fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut frame = vec![0x80 | opcode];
        match payload.len() {
            length @ 0..=125 => frame.push(0x80 | length as u8),
            length @ 126..=0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(length as u16).to_be_bytes());
            }
            length => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(length as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&[0; 4]);
        frame.extend_from_slice(payload);
        frame
    }

    async fn codec() -> (Codec<DuplexStream>, DuplexStream) {
        let (server, client) = duplex(4 << 20);
        let socket = Socket::new(server, None, 1 << 20);
        let codec = Codec::new(socket, super::super::Limits::default().config()).await;
        (codec, client)
    }

    async fn next(codec: &mut Codec<DuplexStream>) -> tungstenite::Message {
        let next = poll_fn(|cx| codec.poll_next(cx));
        let next = tokio::time::timeout(std::time::Duration::from_secs(5), next).await;
        next.expect("a message sent is read").unwrap().unwrap()
    }

    /// Whether the next read waits, having rebuilt tungstenite if it could.
    fn read_waits(codec: &mut Codec<DuplexStream>) -> bool {
        codec
            .poll_next(&mut Context::from_waker(std::task::Waker::noop()))
            .is_pending()
    }

    async fn send(codec: &mut Codec<DuplexStream>, message: tungstenite::Message) {
        poll_fn(|cx| codec.poll_ready(cx)).await.unwrap();
        codec.start_send(message).unwrap();
        poll_fn(|cx| codec.poll_flush(cx)).await.unwrap();
    }

    /// What the server wrote: a frame header and its payload.
    async fn read_frame(client: &mut DuplexStream) -> (u8, Vec<u8>) {
        let mut head = [0; 2];
        let head_read = client.read_exact(&mut head);
        (tokio::time::timeout(std::time::Duration::from_secs(5), head_read).await)
            .expect("the server wrote a frame")
            .unwrap();
        let length = match head[1] & 0x7f {
            126 => usize::from(client.read_u16().await.unwrap()),
            127 => client.read_u64().await.unwrap() as usize,
            length => usize::from(length),
        };
        let mut payload = vec![0; length];
        client.read_exact(&mut payload).await.unwrap();
        (head[0] & 0x0f, payload)
    }

    #[tokio::test]
    async fn after_a_large_message_tungstenite_is_rebuilt_only_once_it_holds_nothing() {
        let (mut codec, mut client) = codec().await;
        let large = vec![7; 100 * 1024];
        // The large message, a small one and a ping, in one write: the
        // small one and the ping are in tungstenite's buffer after the
        // large one is read.
        let mut bytes = frame(0x2, &large);
        bytes.extend(frame(0x1, b"after"));
        bytes.extend(frame(0x9, b"ping"));
        client.write_all(&bytes).await.unwrap();

        assert_eq!(next(&mut codec).await, tungstenite::Message::binary(large));
        assert!(codec.grown());
        assert_eq!(next(&mut codec).await, tungstenite::Message::text("after"));
        assert_eq!(
            next(&mut codec).await,
            tungstenite::Message::Ping("ping".into())
        );
        assert!(codec.grown(), "kept while a pong is owed");
        // The next read writes the pong, then may rebuild.
        assert!(read_waits(&mut codec));
        assert_eq!(read_frame(&mut client).await, (0xA, b"ping".to_vec()));
        assert!(read_waits(&mut codec));
        assert!(!codec.grown(), "rebuilt");

        // The new tungstenite reads and writes on the same connection.
        client.write_all(&frame(0x1, b"again")).await.unwrap();
        assert_eq!(next(&mut codec).await, tungstenite::Message::text("again"));
        send(&mut codec, tungstenite::Message::text("answer")).await;
        assert_eq!(read_frame(&mut client).await, (0x1, b"answer".to_vec()));
    }

    #[tokio::test]
    async fn a_frame_begun_is_never_lost_to_a_rebuild() {
        let (mut codec, mut client) = codec().await;
        // A large message, and half of the next one.
        let small = frame(0x2, &[2; 1_000]);
        let mut bytes = frame(0x2, &[1; 70_000]);
        bytes.extend_from_slice(&small[..500]);
        client.write_all(&bytes).await.unwrap();
        assert_eq!(next(&mut codec).await.len(), 70_000);
        // The half is read by the first of these reads at the latest: the
        // second finds tungstenite holding it.
        assert!(read_waits(&mut codec));
        assert!(read_waits(&mut codec));
        assert!(codec.grown(), "rebuilt mid-frame");
        client.write_all(&small[500..]).await.unwrap();
        assert_eq!(
            next(&mut codec).await,
            tungstenite::Message::binary(vec![2; 1_000])
        );
        assert!(read_waits(&mut codec));
        assert!(!codec.grown());
    }

    #[tokio::test]
    async fn a_large_message_sent_is_flushed_before_a_rebuild() {
        let (mut codec, mut client) = codec().await;
        let large = vec![3; 200 * 1024];
        poll_fn(|cx| codec.poll_ready(cx)).await.unwrap();
        codec
            .start_send(tungstenite::Message::binary(large.clone()))
            .unwrap();
        assert!(read_waits(&mut codec));
        assert!(codec.grown(), "not rebuilt before the flush");
        poll_fn(|cx| codec.poll_flush(cx)).await.unwrap();
        assert_eq!(read_frame(&mut client).await, (0x2, large));
        poll_fn(|cx| codec.poll_ready(cx)).await.unwrap();
        assert!(!codec.grown(), "rebuilt at the next send");
    }
}
