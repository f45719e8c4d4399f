//! Bounded write coalescing: the answers to requests a connection has
//! already read go out in one write.
//!
//! A client that pipelines HTTP/1 requests sends many in one packet;
//! hyper answers them one at a time and flushes after each, one `write`
//! system call per answer. [`CoalescingIo`] sits under hyper, on the socket,
//! and lets a flush wait while the connection has more work it can do
//! without waiting — the next request already read, a handler that is
//! ready. The waiting answers are written together:
//!
//! - when the connection would wait on its socket for more input (a read
//!   that would block writes first: the answers to everything read so far
//!   go out before the server waits for the client). After answers to
//!   pipelined requests they wait for the end of the connection's poll
//!   instead, as below: hyper looks for the next request before it writes
//!   the answer to the last one, which then goes out in the same write;
//! - when the connection would wait on anything else — a handler or a
//!   response body that is not ready (see [`stop_holding`]) — or stops
//!   for any reason, at the end of the connection's poll ([`Batched`]);
//! - when the buffer reaches its bound; past it the connection waits until
//!   the socket takes the bytes, and hyper reads no further request until
//!   its answer is flushed: a client that sends without reading holds at
//!   most this bound here, beside hyper's own bounded buffers.
//!
//! An answer flushed after a read found nothing more to read — the
//! connection has answered all the client sent — goes out at the flush.
//! So a request that is not pipelined is answered with one write in the
//! same poll that read it: no added latency, and no second poll.
//!
//! Holding is scoped to the connection's own poll by a thread-local flag
//! (a task polls one connection at a time on one thread): outside it — an
//! upgraded connection driven by a WebSocket task, say — every flush
//! writes.
//!
//! hyper's own option for this, `pipeline_flush`, lifts its write buffer's
//! bound while unread requests remain, so one client that pipelines
//! without reading grows the server's memory without bound.

use std::{
    cell::Cell,
    future::Future,
    io,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use pin_project_lite::pin_project;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{slots::Slot, timeouts::ConnectionWatch};

/// The default bound of [`CoalescingIo`]'s buffer.
pub(crate) const DEFAULT_PIPELINE_BUFFER: usize = 64 * 1024;

/// Inside a connection's poll: flushes may be held.
const HOLDING: u8 = 1;
/// A flush was held: bytes wait in a buffer.
const HELD: u8 = 2;

thread_local! {
    /// What the connection being polled on this thread allows: `HOLDING`
    /// while [`Batched`] polls it and nothing it waits on is pending,
    /// `HELD` once a flush was held. Zero outside a connection's poll.
    static HOLD: Cell<u8> = const { Cell::new(0) };
}

/// The connection waits on something other than its socket — a handler or
/// a response body that is not ready, or an upgrade: flushes write for the
/// rest of this poll. Outside a connection's poll, does nothing.
pub(crate) fn stop_holding() {
    HOLD.with(|hold| hold.set(hold.get() & !HOLDING));
}

/// Holds a flush if the connection's poll allows it.
fn hold() -> bool {
    HOLD.with(|hold| {
        let state = hold.get();
        let holding = state & HOLDING != 0;
        if holding {
            hold.set(state | HELD);
        }
        holding
    })
}

/// Restores the thread's flag when a poll ends, even by a panic.
struct Restore(u8);

impl Drop for Restore {
    fn drop(&mut self) {
        HOLD.with(|hold| hold.set(self.0));
    }
}

pin_project! {
    /// A connection whose flushes may wait until the end of its poll.
    ///
    /// Polls the connection with holding allowed; if it stops (`Pending`)
    /// with a flush held, polls it once more with holding off, so that its
    /// next flush writes. hyper's HTTP/1 connection flushes in every poll.
    pub(crate) struct Batched<C> {
        #[pin]
        connection: C,
        enabled: bool,
    }
}

impl<C> Batched<C> {
    /// `enabled: false` passes every poll straight through.
    pub(crate) fn new(connection: C, enabled: bool) -> Self {
        Self {
            connection,
            enabled,
        }
    }
}

impl<C: Future> Future for Batched<C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let mut this = self.project();
        if !*this.enabled {
            return this.connection.poll(cx);
        }
        let _restore = Restore(HOLD.with(|hold| hold.replace(HOLDING)));
        let result = this.connection.as_mut().poll(cx);
        let held = HOLD.with(|hold| hold.replace(0)) & HELD != 0;
        if held && result.is_pending() {
            return this.connection.poll(cx);
        }
        result
    }
}

impl<C: super::timeouts::CloseGracefully> super::timeouts::CloseGracefully for Batched<C> {
    fn close_gracefully(self: Pin<&mut Self>) {
        self.project().connection.close_gracefully();
    }
}

/// A socket whose flushes may be held while the connection has more to
/// do, up to `limit` buffered bytes (see the module's documentation).
#[derive(Debug)]
pub(crate) struct CoalescingIo<T> {
    io: T,
    /// Bytes written by the connection, not yet to the socket; those
    /// before `sent` are on the socket already.
    buffer: Vec<u8>,
    sent: usize,
    limit: usize,
    /// How many flushes the buffered bytes waited through: the answers
    /// held, one flush each.
    held: usize,
    /// The last read found nothing to read: the connection has answered
    /// everything the client sent so far.
    read_all: bool,
    /// The client opened with HTTP/2's preface: the connection's answers
    /// are held to the end of its poll whatever it read (see
    /// [`poll_flush`](Self::poll_flush)).
    http2: bool,
    /// Whether the first bytes read were looked at for the preface.
    sniffed: bool,
    /// Told when request bytes arrive, and when the socket stops taking
    /// bytes and starts again.
    watch: Arc<ConnectionWatch>,
    /// The connection's place under the server's connection limit, held
    /// as long as the socket is, upgraded or not.
    _slot: Option<Slot>,
}

impl<T> CoalescingIo<T> {
    pub(crate) fn new(
        io: T,
        limit: usize,
        watch: Arc<ConnectionWatch>,
        slot: Option<Slot>,
    ) -> Self {
        Self {
            io,
            buffer: Vec::new(),
            sent: 0,
            limit,
            held: 0,
            read_all: false,
            http2: false,
            sniffed: false,
            watch,
            _slot: slot,
        }
    }

    fn buffered(&self) -> usize {
        self.buffer.len() - self.sent
    }
}

impl<T: AsyncWrite + Unpin> CoalescingIo<T> {
    /// Writes out the buffer; `Pending` until the socket took all of it.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.buffer.len() {
            let written = Pin::new(&mut self.io).poll_write(cx, &self.buffer[self.sent..]);
            let written = ready!(self.watch.writing(written))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += written;
        }
        self.buffer.clear();
        self.sent = 0;
        self.held = 0;
        // Nothing is held any more: the connection's poll need not be
        // repeated to write it.
        HOLD.with(|hold| hold.set(hold.get() & !HELD));
        Poll::Ready(Ok(()))
    }

    /// Makes room for `incoming` bytes: writes the buffer out first when
    /// they would take it past its limit. `Ok(true)` when they go in the
    /// buffer, `Ok(false)` when they are too many and go to the socket.
    fn poll_room(&mut self, cx: &mut Context<'_>, incoming: usize) -> Poll<io::Result<bool>> {
        if self.buffered() + incoming > self.limit {
            ready!(self.poll_drain(cx))?;
        }
        // Outside a connection's poll, nothing is held: write through.
        let holding = HOLD.with(Cell::get) & HOLDING != 0;
        Poll::Ready(Ok(
            incoming <= self.limit && (holding || self.buffered() > 0)
        ))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for CoalescingIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let filled = buf.filled().len();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        this.read_all = read.is_pending();
        if buf.filled().len() > filled {
            if !this.sniffed {
                this.sniffed = true;
                this.http2 = buf.filled()[filled..].starts_with(b"PRI * HTTP/2");
            }
            this.watch.bytes_read();
        } else if read.is_pending()
            && this.buffered() > 0
            && !((this.http2 || this.held > 1) && hold())
        {
            // Nothing more to read: what the connection answered so far
            // goes out before it waits for the client. After answers to
            // pipelined requests, inside the connection's poll, it goes
            // out at the poll's end instead, with the answer to the last
            // request read: hyper looks for the next request before it
            // writes that one. (A lone answer goes out now: waiting would
            // cost the poll again, for nothing.)
            if let Poll::Ready(Err(error)) = this.poll_drain(cx) {
                return Poll::Ready(Err(error));
            }
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for CoalescingIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let written = if ready!(this.poll_room(cx, data.len()))? {
            this.buffer.extend_from_slice(data);
            data.len()
        } else {
            let written = Pin::new(&mut this.io).poll_write(cx, data);
            ready!(this.watch.writing(written))?
        };
        // Past the buffer's bound, bytes taken here are on the socket.
        this.watch.send.sent(written);
        Poll::Ready(Ok(written))
    }

    fn is_write_vectored(&self) -> bool {
        // The bytes are copied into the buffer either way: hyper's flat
        // buffer, one slice per flush, costs it less than its queue. (The
        // default vectored write, one slice at a time, is then all a
        // caller needs.)
        false
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.buffered() > 0 {
            // Once the client's requests are all read and answered, the
            // answers go out now: holding them would only cost the
            // connection's poll again. An HTTP/2 connection flushes after
            // each stream it accepts, its streams answered in place as it
            // accepts them (`executor.rs`): its answers wait for the end
            // of the poll, to go out together.
            if (this.http2 || !this.read_all) && hold() {
                this.held += 1;
            } else {
                ready!(this.poll_drain(cx))?;
            }
        }
        let flushed = Pin::new(&mut this.io).poll_flush(cx);
        this.watch.writing(flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_drain(cx))?;
        let shut = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch.writing(shut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{future::poll_fn, task::Waker};
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    fn in_poll<R>(f: impl FnOnce() -> R) -> (R, bool) {
        let _restore = Restore(HOLD.with(|hold| hold.replace(HOLDING)));
        let result = f();
        (result, HOLD.with(Cell::get) & HELD != 0)
    }

    /// A socket taking `capacity` bytes under a buffer of `limit`, and the
    /// client's end.
    fn coalescing(capacity: usize, limit: usize) -> (DuplexStream, CoalescingIo<DuplexStream>) {
        let (client, server) = tokio::io::duplex(capacity);
        let io = CoalescingIo::new(server, limit, Arc::new(ConnectionWatch::new(0, 0)), None);
        (client, io)
    }

    /// Reads with nothing to read: `Pending`.
    fn read_would_wait(io: &mut CoalescingIo<DuplexStream>, cx: &mut Context<'_>) {
        let mut buf = [0; 8];
        let mut read = ReadBuf::new(&mut buf);
        assert!(Pin::new(io).poll_read(cx, &mut read).is_pending());
    }

    #[tokio::test]
    async fn answers_to_pipelined_requests_are_held_past_a_read_that_would_wait() {
        let (client, mut io) = coalescing(1 << 20, 1024);
        let mut cx = Context::from_waker(Waker::noop());
        let (_, held) = in_poll(|| {
            for answer in [&b"one "[..], b"two "] {
                assert!(matches!(
                    Pin::new(&mut io).poll_write(&mut cx, answer),
                    Poll::Ready(Ok(4))
                ));
                assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
            }
            assert_eq!(io.buffered(), 8, "the flushes were held");
            // Nothing to read: the answers stay held, for the end of the
            // poll, with any the connection writes after its read.
            read_would_wait(&mut io, &mut cx);
            assert_eq!(io.buffered(), 8);
        });
        assert!(held, "held for the end of the poll");
        // Outside the connection's poll (as `Batched` polls it again), a
        // read that would wait writes them.
        read_would_wait(&mut io, &mut cx);
        assert_eq!(io.buffered(), 0);
        let mut client = client;
        let mut received = [0; 8];
        client.read_exact(&mut received).await.unwrap();
        assert_eq!(&received, b"one two ");
    }

    #[tokio::test]
    async fn a_lone_answer_goes_out_when_a_read_would_wait() {
        let (mut client, mut io) = coalescing(1 << 20, 1024);
        let mut cx = Context::from_waker(Waker::noop());
        let (_, held) = in_poll(|| {
            assert!(Pin::new(&mut io).poll_write(&mut cx, b"one ").is_ready());
            assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
            assert_eq!(io.buffered(), 4, "the flush was held");
            read_would_wait(&mut io, &mut cx);
            assert_eq!(io.buffered(), 0, "written before the read waits");
        });
        assert!(!held, "nothing left for the end of the poll");
        let mut received = [0; 4];
        client.read_exact(&mut received).await.unwrap();
        assert_eq!(&received, b"one ");
    }

    #[tokio::test]
    async fn an_answer_flushed_after_a_read_that_would_wait_goes_out_at_once() {
        let (mut client, mut io) = coalescing(1 << 20, 1024);
        let mut cx = Context::from_waker(Waker::noop());
        let (_, held) = in_poll(|| {
            // The client sent nothing more: everything it sent is answered
            // with this one.
            read_would_wait(&mut io, &mut cx);
            assert!(Pin::new(&mut io).poll_write(&mut cx, b"one ").is_ready());
            assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
            assert_eq!(io.buffered(), 0, "written at the flush");
        });
        assert!(!held, "nothing left for the end of the poll");
        let mut received = [0; 4];
        client.read_exact(&mut received).await.unwrap();
        assert_eq!(&received, b"one ");
    }

    #[tokio::test]
    async fn an_http2_connection_s_answers_wait_for_the_end_of_its_poll() {
        let (mut client, mut io) = coalescing(1 << 20, 1024);
        client
            .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        let mut cx = Context::from_waker(Waker::noop());
        let (_, held) = in_poll(|| {
            let mut buf = [0; 64];
            let mut read = ReadBuf::new(&mut buf);
            assert!(Pin::new(&mut io).poll_read(&mut cx, &mut read).is_ready());
            // Everything the client sent is read; each stream's answer is
            // flushed as the connection accepts the next.
            read_would_wait(&mut io, &mut cx);
            for answer in [&b"one "[..], b"two "] {
                assert!(Pin::new(&mut io).poll_write(&mut cx, answer).is_ready());
                assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
                read_would_wait(&mut io, &mut cx);
            }
            assert_eq!(io.buffered(), 8, "held for the end of the poll");
        });
        assert!(held);
        // The connection's poll again, holding off: one write.
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.buffered(), 0);
        let mut received = [0; 8];
        client.read_exact(&mut received).await.unwrap();
        assert_eq!(&received, b"one two ");
    }

    #[tokio::test]
    async fn a_flush_outside_a_connection_poll_writes() {
        let (mut client, mut io) = coalescing(1 << 20, 1024);
        io.write_all(b"hello").await.unwrap();
        io.flush().await.unwrap();
        assert_eq!(io.buffered(), 0);
        let mut received = [0; 5];
        client.read_exact(&mut received).await.unwrap();
        assert_eq!(&received, b"hello");
    }

    #[tokio::test]
    async fn the_buffer_never_grows_past_its_limit_when_the_peer_does_not_read() {
        // The peer's side takes 4 KiB and reads nothing.
        let (client, mut io) = coalescing(4096, 1024);
        let mut cx = Context::from_waker(Waker::noop());
        let mut accepted = 0;
        in_poll(|| {
            loop {
                match Pin::new(&mut io).poll_write(&mut cx, &[b'x'; 100]) {
                    Poll::Ready(Ok(n)) => accepted += n,
                    Poll::Ready(Err(error)) => panic!("{error}"),
                    Poll::Pending => break,
                }
                assert!(io.buffered() <= 1024);
                let _ = Pin::new(&mut io).poll_flush(&mut cx);
            }
        });
        assert!(accepted <= 4096 + 1024, "accepted {accepted} bytes");
        drop(client);
        // Once the peer is gone the writes fail instead of buffering.
        let result = poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx)).await;
        assert!(result.is_err());
    }
}
