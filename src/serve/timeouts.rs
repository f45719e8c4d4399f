//! The connection watchdog: closes a connection that waits too long for a
//! request's head (slow or silent clients), sits idle between HTTP/1
//! requests, holds an HTTP/2 connection with no stream open, or sends
//! nothing of what it has to send (a client that stopped reading, or over
//! HTTP/2 grants no flow-control window).

use std::{
    error::Error as StdError,
    fmt,
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use pin_project_lite::pin_project;

use super::budget::{Place, SendBudget};
use crate::body::BoxError;

/// The waiting bit of [`ConnectionWatch::state`].
const WAITING: u64 = 1;
/// A byte of the awaited request arrived.
const STARTED: u64 = 2;
/// One wait in the counter above the flags.
const NEXT_WAIT: u64 = 4;

/// How a connection stands: shared by its watchdog, its service, the
/// bodies of its HTTP/1 answers and its socket, all on the connection's
/// task.
///
/// `state` is one word: the number of the current wait for a request head
/// (shifted left by two), whether a byte of that request arrived (bit 1)
/// and whether the connection is waiting (bit 0). A connection starts
/// waiting (the protocol is not known yet); each HTTP/1 answer that ends
/// starts a new wait (hyper goes back to reading heads then), and a
/// request delivered to the service ends the wait. HTTP/2 streams are
/// counted as they open and as their responses end.
///
/// `stall` counts the times the socket stopped taking bytes and started
/// again: odd while a write waits on the socket. `waiting` counts the
/// HTTP/2 response bodies that produced data and wait to be asked for
/// more — for the client to grant flow-control window, mostly — and
/// `moved` the times one was asked: a connection with bodies waiting and
/// none moving cannot send, whatever its socket does.
///
/// It also holds the connection's [`SendBudget`]: its HTTP/2 response
/// bodies count what they produce there, and its socket what it takes.
#[derive(Debug)]
pub(super) struct ConnectionWatch {
    state: AtomicU64,
    opened: AtomicU64,
    closed: AtomicU64,
    stall: AtomicU64,
    waiting: AtomicU64,
    moved: AtomicU64,
    /// Since when (milliseconds from the server's start) the connection
    /// has been as its watchdog saw it at its last tick.
    quiet: AtomicU64,
    pub(super) send: SendBudget,
}

impl ConnectionWatch {
    /// A new connection's, accepted `accepted` milliseconds after the
    /// server started, its HTTP/2 responses holding at most about
    /// `send_budget` bytes unsent.
    pub(super) fn new(send_budget: usize, accepted: u64) -> Self {
        Self {
            quiet: AtomicU64::new(accepted),
            state: AtomicU64::new(WAITING),
            opened: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            stall: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
            moved: AtomicU64::new(0),
            send: SendBudget::new(send_budget),
        }
    }

    fn state(&self) -> u64 {
        self.state.load(Ordering::Relaxed)
    }

    // One task writes and reads the state, so a plain load and store do:
    // no read-modify-write is needed. (An HTTP/2 response body may end on
    // another task: the stream counters are read-modify-written.)

    /// An HTTP/1 answer ended ([`NextHead`]): a new wait for a request
    /// head. (The connection's first wait began at the accept, and every
    /// wait has ended, its head received, before its answer ends.)
    pub(super) fn head_awaited(&self) {
        let state = self.state();
        let next = ((state | WAITING) & !STARTED) + NEXT_WAIT;
        self.state.store(next, Ordering::Relaxed);
    }

    /// A request head arrived: the wait is over.
    #[inline]
    pub(super) fn head_received(&self) {
        let state = self.state();
        if state & WAITING != 0 {
            self.state
                .store(state & !(WAITING | STARTED), Ordering::Relaxed);
        }
    }

    /// Bytes arrived on the socket: a waiting connection's request began.
    #[inline]
    pub(super) fn bytes_read(&self) {
        let state = self.state();
        if state & (WAITING | STARTED) == WAITING {
            self.state.store(state | STARTED, Ordering::Relaxed);
        }
    }

    /// Notes how a write (or flush) to the socket went, and passes it on:
    /// `Pending`, the socket is full and a stall begins (unless one has);
    /// ready, it took bytes (or failed) and a stall is over.
    #[inline]
    pub(super) fn writing<T>(&self, write: Poll<T>) -> Poll<T> {
        let stall = self.stall.load(Ordering::Relaxed);
        if (stall & 1 == 0) == write.is_pending() {
            self.stall.store(stall + 1, Ordering::Relaxed);
        }
        write
    }

    /// An HTTP/2 stream opened: its guard counts it closed when dropped.
    pub(super) fn stream_opened(self: &Arc<Self>) -> StreamGuard {
        self.opened.fetch_add(1, Ordering::Relaxed);
        StreamGuard {
            watch: Arc::clone(self),
            place: None,
            started: false,
            waiting: false,
        }
    }

    /// Whether the connection is idle — waiting for a request's first
    /// byte, or over HTTP/2 with no stream open, with nothing waiting to
    /// be sent (hyper may read the next head before the last answer is
    /// all out) — and if so since when, as its watchdog last saw it
    /// (milliseconds from the server's start).
    pub(super) fn quiet_since(&self) -> Option<u64> {
        if self.sending().is_some() {
            return None;
        }
        let state = self.state();
        let idle = match state & WAITING {
            0 => {
                let opened = self.opened.load(Ordering::Relaxed);
                opened > 0 && opened == self.closed.load(Ordering::Relaxed)
            }
            _ => state & STARTED == 0,
        };
        idle.then(|| self.quiet.load(Ordering::Relaxed))
    }

    /// How sending stands: `None` while nothing waits to be sent, else a
    /// count that changes whenever sending makes progress.
    fn sending(&self) -> Option<u64> {
        let stall = self.stall.load(Ordering::Relaxed);
        let moved = self.moved.load(Ordering::Relaxed);
        let blocked = stall & 1 != 0 || self.waiting.load(Ordering::Relaxed) > 0;
        // Each count only grows, and each step of either changes the sum.
        blocked.then_some(stall.wrapping_add(moved))
    }

    /// What the watchdog compares from one tick to the next.
    fn snapshot(&self) -> Snapshot {
        let state = self.state();
        Snapshot {
            // The first wait counts from the accept: its first byte does
            // not start the count again.
            state: match state < NEXT_WAIT {
                true => state & !STARTED,
                false => state,
            },
            opened: self.opened.load(Ordering::Relaxed),
            closed: self.closed.load(Ordering::Relaxed),
        }
    }
}

/// An HTTP/2 stream, counted closed when its response body is dropped;
/// its body waits for the connection's send budget through it.
#[derive(Debug)]
pub(super) struct StreamGuard {
    watch: Arc<ConnectionWatch>,
    /// The response body's place among those waiting for the
    /// connection's send budget.
    place: Place,
    /// Whether the body produced data yet.
    started: bool,
    /// Whether it produced data and was not asked for more since.
    waiting: bool,
}

impl StreamGuard {
    /// Ready when the stream's response body may produce more (see
    /// [`SendBudget`]): its first data at once, the rest while the
    /// connection's budget allows.
    pub(super) fn poll_send_room(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.started {
            return Poll::Ready(());
        }
        if self.waiting {
            self.waiting = false;
            self.watch.waiting.fetch_sub(1, Ordering::Relaxed);
            self.watch.moved.fetch_add(1, Ordering::Relaxed);
        }
        self.watch.send.poll_room(cx, &mut self.place)
    }

    /// The body produced `bytes`, and waits to be asked for more.
    pub(super) fn produced(&mut self, bytes: usize) {
        self.started = true;
        self.watch.send.produced(bytes);
        if !self.waiting {
            self.waiting = true;
            self.watch.waiting.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.watch.send.leave(self.place);
        if self.waiting {
            self.watch.waiting.fetch_sub(1, Ordering::Relaxed);
        }
        self.watch.closed.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Snapshot {
    state: u64,
    opened: u64,
    closed: u64,
}

impl Snapshot {
    /// What this state may last, or `None` when it is not a wait.
    fn limit(&self, timeouts: &Timeouts) -> Option<Duration> {
        let state = self.state;
        if state & WAITING != 0 {
            // The first wait of a connection is for its first request's
            // head; later ones are idle until the next request starts.
            let idle = state >= NEXT_WAIT && state & STARTED == 0;
            Some(match idle {
                true => timeouts.keep_alive,
                false => timeouts.header_read,
            })
        } else if self.opened > 0 && self.opened == self.closed {
            Some(timeouts.http2_idle)
        } else {
            None
        }
    }
}

/// The watchdog's timeouts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    header_read: Duration,
    keep_alive: Duration,
    http2_idle: Duration,
    /// How long a connection may send nothing of what it has to send.
    send: Duration,
}

/// `serve`'s defaults.
impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header_read: Duration::from_secs(10),
            keep_alive: Duration::from_secs(10),
            http2_idle: Duration::from_secs(60),
            send: Duration::from_secs(30),
        }
    }
}

impl Timeouts {
    /// Sets the header-read timeout.
    pub(super) fn set_header_read(&mut self, timeout: Duration) {
        self.header_read = timeout;
    }

    /// Sets the keep-alive timeout.
    pub(super) fn set_keep_alive(&mut self, timeout: Duration) {
        self.keep_alive = timeout;
    }

    /// Sets the HTTP/2 idle timeout.
    pub(super) fn set_http2_idle(&mut self, timeout: Duration) {
        self.http2_idle = timeout;
    }

    /// Sets the send timeout.
    pub(super) fn set_send(&mut self, timeout: Duration) {
        self.send = timeout;
    }

    /// How often the watchdog looks: four times in the shortest timeout.
    fn period(&self) -> Duration {
        let shortest = self
            .header_read
            .min(self.keep_alive)
            .min(self.http2_idle)
            .min(self.send);
        (shortest / TICKS).max(Duration::from_millis(1))
    }
}

/// Tells a connection's watchdog, when dropped, that the answer to an
/// HTTP/1 request has ended: the wait for the next request's head begins.
///
/// hyper drops a response's body once it has taken all of it (at once
/// for a body it does not send), and at that moment goes back to reading
/// heads. Its own header-read timeout would tell the same moment, but
/// costs each request one more turn of hyper's poll loop: hyper tries to
/// read the next head at once, to arm it.
#[derive(Debug)]
pub(super) struct NextHead(Arc<ConnectionWatch>);

impl NextHead {
    /// Tells `watch` when dropped.
    pub(super) fn new(watch: Arc<ConnectionWatch>) -> Self {
        NextHead(watch)
    }
}

impl Drop for NextHead {
    fn drop(&mut self) {
        self.0.head_awaited();
    }
}

/// Ticks of the watchdog in its shortest timeout.
const TICKS: u32 = 4;

pin_project! {
    /// A connection under its watchdog: closed once one wait outlasted its
    /// timeout, checked at every tick (a quarter of the shortest timeout),
    /// so between the timeout and the timeout plus one tick after the wait
    /// began.
    ///
    /// A connection waits from when it is accepted until its first request
    /// head; over HTTP/1, from when the answer to each request ends until
    /// the next request's first byte (the keep-alive timeout) and from
    /// that byte until the head is parsed (the header-read timeout); over
    /// HTTP/2, while no stream is open (the HTTP/2 idle timeout). A
    /// request being answered or a response being streamed is not a wait.
    /// Apart from these, a connection that sends nothing of what it has to
    /// send for the send timeout is closed: its socket takes no byte, or
    /// (HTTP/2) its answers wait for flow-control window and none moves.
    /// One Tokio timer per connection, re-armed at each tick, replaces
    /// hyper's timer per request.
    pub(super) struct Watchdog<C> {
        #[pin]
        connection: C,
        #[pin]
        tick: tokio::time::Sleep,
        watch: Arc<ConnectionWatch>,
        timeouts: Timeouts,
        period: Duration,
        // What the last tick saw.
        seen: Snapshot,
        // How long the state seen has lasted, in whole ticks.
        idle: Duration,
        // How sending stood at the last tick, and how long it has made no
        // progress.
        sending: Option<u64>,
        stalled: Duration,
        // Whether the tick was polled since it was last set.
        polled: bool,
        // Whether an idle HTTP/2 connection was told to close, at the last
        // tick: it is dropped at the next.
        closing: bool,
        // When the server started: the watch's quiet time counts from it.
        epoch: tokio::time::Instant,
    }
}

impl<C> Watchdog<C> {
    pub(super) fn new(
        connection: C,
        watch: Arc<ConnectionWatch>,
        timeouts: Timeouts,
        epoch: tokio::time::Instant,
    ) -> Self {
        let period = timeouts.period();
        Self {
            epoch,
            connection,
            tick: tokio::time::sleep(period),
            seen: watch.snapshot(),
            watch,
            timeouts,
            period,
            idle: Duration::ZERO,
            closing: false,
            sending: None,
            stalled: Duration::ZERO,
            polled: false,
        }
    }
}

/// A connection that can be told to close once its requests are done:
/// over HTTP/2, with a GOAWAY frame.
pub(super) trait CloseGracefully {
    fn close_gracefully(self: Pin<&mut Self>);
}

impl<C, E> Future for Watchdog<C>
where
    C: Future<Output = Result<(), E>> + CloseGracefully,
    E: Into<BoxError>,
{
    type Output = Result<(), BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Poll::Ready(result) = this.connection.as_mut().poll(cx) {
            return Poll::Ready(result.map_err(Into::into));
        }
        loop {
            // Once polled, the tick holds this task's waker and wakes it
            // when it fires: until then, checking it is one load (polling
            // it at every poll of the connection would cost more than
            // hyper's timer saved, one request per poll without
            // pipelining).
            if *this.polled {
                if !this.tick.is_elapsed() {
                    return Poll::Pending;
                }
            } else if !tokio::task::coop::has_budget_remaining() {
                // With the task's budget spent, the tick would answer
                // `Pending` without taking the waker; whatever spent the
                // budget has the task polled again, and the tick with it.
                return Poll::Pending;
            }
            if this.tick.as_mut().poll(cx).is_pending() {
                *this.polled = true;
                return Poll::Pending;
            }
            let now = this.watch.snapshot();
            match now.limit(this.timeouts) {
                Some(limit) if now == *this.seen => {
                    *this.idle += *this.period;
                    if *this.idle >= limit {
                        if now.state & WAITING != 0 {
                            return Poll::Ready(Err(TimedOut::Request.into()));
                        }
                        // An idle HTTP/2 connection is told why it closes
                        // (GOAWAY), and has one tick to take it.
                        if *this.closing {
                            return Poll::Ready(Err(TimedOut::Http2Idle.into()));
                        }
                        *this.closing = true;
                        this.connection.as_mut().close_gracefully();
                        if let Poll::Ready(result) = this.connection.as_mut().poll(cx) {
                            return Poll::Ready(result.map_err(Into::into));
                        }
                    }
                }
                _ => {
                    *this.seen = now;
                    *this.idle = Duration::ZERO;
                }
            }
            // Since when the connection has been as it is now, for the
            // connection cap to find the one idle longest.
            let quiet = (this.tick.deadline())
                .saturating_duration_since(*this.epoch)
                .saturating_sub(*this.idle);
            (this.watch.quiet).store(millis(quiet), Ordering::Relaxed);
            let sending = this.watch.sending();
            if sending.is_some() && sending == *this.sending {
                *this.stalled += *this.period;
                if *this.stalled >= this.timeouts.send {
                    return Poll::Ready(Err(TimedOut::Send.into()));
                }
            } else {
                *this.sending = sending;
                *this.stalled = Duration::ZERO;
            }
            let next = this.tick.deadline() + *this.period;
            this.tick.as_mut().reset(next);
            *this.polled = false;
        }
    }
}

/// `duration` in whole milliseconds, as the connection watch keeps times.
pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Why the watchdog closed a connection.
#[derive(Debug)]
pub(super) enum TimedOut {
    /// It waited for a request.
    Request,
    /// An HTTP/2 connection stayed idle.
    Http2Idle,
    /// Its socket took nothing of what there was to send.
    Send,
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Request => "no request within the header-read or keep-alive timeout",
            Self::Http2Idle => "no HTTP/2 stream within the idle timeout",
            Self::Send => "the client took nothing sent to it within the send timeout",
        })
    }
}

impl StdError for TimedOut {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;

    /// A connection that spends its task's whole budget on its first poll,
    /// then waits for ever: the watchdog's first tick must still take the
    /// task's waker (over loopback, hyper spends the budget under load).
    struct Greedy {
        spent: bool,
    }

    impl Future for Greedy {
        type Output = Result<(), BoxError>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            if !self.spent {
                self.spent = true;
                loop {
                    let spend = pin!(tokio::task::coop::consume_budget());
                    if spend.poll(cx).is_pending() {
                        break;
                    }
                }
            }
            Poll::Pending
        }
    }

    impl CloseGracefully for Greedy {
        fn close_gracefully(self: Pin<&mut Self>) {}
    }

    impl<T> CloseGracefully for std::future::Pending<T> {
        fn close_gracefully(self: Pin<&mut Self>) {}
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_closes_a_waiting_connection_that_spent_its_budget() {
        let timeout = Duration::from_secs(1);
        let started = tokio::time::Instant::now();
        let watchdog = Watchdog::new(
            Greedy { spent: false },
            Arc::new(ConnectionWatch::new(0, 0)),
            Timeouts {
                header_read: timeout,
                keep_alive: timeout,
                http2_idle: timeout,
                send: timeout,
            },
            tokio::time::Instant::now(),
        );
        let closed = tokio::time::timeout(timeout * 10, watchdog)
            .await
            .expect("the watchdog closes the connection");
        let error = closed.expect_err("closed for its header timeout");
        assert!(error.is::<TimedOut>(), "{error}");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= timeout && elapsed <= timeout + timeout / TICKS,
            "closed after {elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_socket_that_takes_nothing_for_the_send_timeout_is_closed() {
        let send = Duration::from_secs(1);
        let far = Duration::from_secs(100);
        let watch = Arc::new(ConnectionWatch::new(0, 0));
        let mut watchdog = pin!(Watchdog::new(
            std::future::pending::<Result<(), BoxError>>(),
            Arc::clone(&watch),
            Timeouts {
                header_read: far,
                keep_alive: far,
                http2_idle: far,
                send,
            },
            tokio::time::Instant::now(),
        ));
        // The socket takes nothing for most of the timeout, then a few
        // bytes, then nothing again: the count starts over.
        let _ = watch.writing(Poll::<()>::Pending);
        let open = tokio::time::timeout(send * 3 / 4, watchdog.as_mut()).await;
        assert!(open.is_err(), "closed before the timeout");
        let _ = watch.writing(Poll::Ready(()));
        let _ = watch.writing(Poll::<()>::Pending);
        let stalled = tokio::time::Instant::now();
        let closed = tokio::time::timeout(send * 2, watchdog)
            .await
            .expect("the watchdog closes the connection");
        let error = closed.expect_err("closed for its send timeout");
        assert!(
            matches!(error.downcast_ref(), Some(TimedOut::Send)),
            "{error}"
        );
        let elapsed = stalled.elapsed();
        assert!(
            elapsed >= send && elapsed <= send + send / TICKS,
            "closed {elapsed:?} into the stall"
        );
    }
}
