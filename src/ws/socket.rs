//! The upgraded connection as tungstenite reads and writes it, and the
//! waits a [`WebSocket`](super::WebSocket) times on it.

use std::{
    future::Future,
    io,
    pin::Pin,
    task::{Context, Poll, ready},
    time::Duration,
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::frames::Progress;
use crate::{
    clock::FOREVER,
    handler::{BodyAllowance, Reservation, STEP, UNCOUNTED},
};

/// How long a wait has gone on with no progress: a send with the client
/// taking none of it, a message with the client not finishing it.
#[derive(Debug)]
pub(super) struct Wait {
    timeout: Duration,
    /// Whether a wait goes on.
    waiting: bool,
    /// The progress when the wait began, or last went on: for a send, the
    /// bytes the socket had taken.
    progress: u64,
    /// Set when the wait began or last went on; kept from wait to wait.
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Wait {
    pub(super) fn new(timeout: Duration) -> Self {
        Self {
            timeout: timeout.min(FOREVER),
            waiting: false,
            progress: 0,
            sleep: None,
        }
    }

    /// The wait is over: the next has the whole timeout.
    pub(super) fn end(&mut self) {
        self.waiting = false;
    }

    /// Whether a wait goes on and `progress` is past where it stood.
    pub(super) fn progressed(&self, progress: u64) -> bool {
        self.waiting && progress != self.progress
    }

    /// A wait goes on, with `progress` so far: whether there was none for
    /// the timeout. A wait with no timeout (`Duration::MAX`) never ends
    /// so, and arms no timer.
    pub(super) fn poll_expired(&mut self, progress: u64, cx: &mut Context<'_>) -> bool {
        if self.timeout >= FOREVER {
            return false;
        }
        if !self.waiting || progress != self.progress {
            (self.waiting, self.progress) = (true, progress);
            let deadline = tokio::time::Instant::now() + self.timeout;
            match &mut self.sleep {
                Some(sleep) => sleep.as_mut().reset(deadline),
                None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        let sleep = self.sleep.as_mut().expect("set above");
        sleep.as_mut().poll(cx).is_ready()
    }
}

/// The upgraded connection as tungstenite reads and writes it. It counts
/// the bytes its socket takes, for the send timeout to count from the
/// last; follows the frames it reads, for the message timeout to know
/// when a message is underway; and once the message underway is past
/// what a request reads without counting, reads only with room for it
/// in the server's allowance (`Serve::body_buffer`).
#[derive(Debug)]
pub(super) struct Socket<T> {
    io: T,
    pub(super) written: u64,
    /// The bytes read from the client: any is a sign of life.
    pub(super) read: u64,
    pub(super) progress: Progress,
    /// The server's allowance, when `serve` serves the connection.
    allowance: Option<BodyAllowance>,
    /// The most a message reserves of it, as it arrives: twice the largest
    /// a client may send, for tungstenite may hold the fragments of a
    /// message and the frame being read at once.
    reservation: usize,
    /// The message underway's room, once it is past what needs none.
    room: Option<Reservation>,
    /// Whether the last write waited on the client.
    pub(super) write_waits: bool,
    /// Whether a write waited since [`Socket::forget_waits`]: tungstenite
    /// then held what it had to send.
    pub(super) waited: bool,
}

impl<T> Socket<T> {
    /// The socket for messages of at most `message_size` bytes.
    pub(super) fn new(io: T, allowance: Option<BodyAllowance>, message_size: usize) -> Self {
        Self {
            io,
            written: 0,
            read: 0,
            progress: Progress::default(),
            allowance,
            reservation: message_size.saturating_mul(2),
            room: None,
            write_waits: false,
            waited: false,
        }
    }

    pub(super) fn forget_waits(&mut self) {
        self.waited = false;
    }

    /// Notes whether a write waits.
    fn wrote<R>(&mut self, poll: Poll<R>) -> Poll<R> {
        self.write_waits = poll.is_pending();
        self.waited |= self.write_waits;
        poll
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Socket<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let underway = usize::try_from(this.progress.underway()).unwrap_or(usize::MAX);
        if underway as u64 > UNCOUNTED {
            if let (None, Some(allowance)) = (&this.room, &this.allowance) {
                this.room = allowance.reserve(this.reservation);
            }
            if let Some(room) = &mut this.room {
                // Room as the message arrives: twice what came (fragments
                // and the frame being read), and a step ahead.
                let ahead = underway.saturating_mul(2).saturating_add(STEP);
                ready!(room.poll_room(cx, ahead.min(this.reservation)));
            }
        }
        let filled = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        this.read += (buf.filled().len() - filled) as u64;
        this.progress.read(&buf.filled()[filled..]);
        if this.progress.between_messages() {
            this.room = None;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Socket<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write(cx, data);
        let written = ready!(self.wrote(poll))?;
        self.written += written as u64;
        Poll::Ready(Ok(written))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write_vectored(cx, data);
        let written = ready!(self.wrote(poll))?;
        self.written += written as u64;
        Poll::Ready(Ok(written))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.io).poll_flush(cx);
        self.wrote(poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    #[tokio::test(start_paused = true)]
    async fn a_send_times_out_only_after_the_client_took_nothing_for_the_timeout() {
        let timeout = Duration::from_millis(300);
        let step = Duration::from_millis(200);
        let mut wait = Wait::new(timeout);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(!wait.poll_expired(0, &mut cx));
        tokio::time::advance(step).await;
        // The client took some bytes: the count starts over.
        assert!(!wait.poll_expired(100, &mut cx));
        tokio::time::advance(step).await;
        assert!(!wait.poll_expired(100, &mut cx), "timed out mid-progress");
        tokio::time::advance(step).await;
        assert!(wait.poll_expired(100, &mut cx), "no time out");
        // A send that went through ends the wait: the next one has the
        // whole timeout again.
        wait.end();
        assert!(!wait.poll_expired(100, &mut cx));
    }
}
