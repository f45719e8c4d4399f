//! [`serve`]: run a service over TCP with hyper — HTTP/1.1 (keep-alive,
//! pipelining) and HTTP/2, `TCP_NODELAY`, a header-read timeout, graceful
//! shutdown (feature `server`).

use std::{
    cell::RefCell,
    error::Error as StdError,
    fmt,
    future::{Future, IntoFuture, pending},
    io,
    net::SocketAddr,
    pin::{Pin, pin},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    task::{Context, Poll, Waker, ready},
    time::{Duration, Instant},
};

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::conn::auto,
};
use pin_project_lite::pin_project;
use tokio::{
    net::TcpListener,
    sync::{Notify, futures::OwnedNotified, watch},
};
use tower_service::Service;

type BoxError = Box<dyn StdError + Send + Sync>;

/// The default time a client has to send a request's headers.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `service` on `listener` until the returned future is dropped or,
/// with [`Serve::with_graceful_shutdown`], until a signal.
///
/// Every accepted socket gets `TCP_NODELAY`; HTTP/1 responses to pipelined
/// requests are flushed in batches (hyper's `pipeline_flush`); a connection
/// left waiting for a request's headers for the header-read timeout
/// (default 10 s, see [`Serve::header_read_timeout`]) is closed. HTTP/2 is
/// served to clients that speak it (prior knowledge). Upgrades (WebSocket)
/// are supported.
///
/// Each connection gets one clone of `service` and calls it request after
/// request, as tower services expect; when it is ready at once (the
/// router always is), a request goes straight into its `call`, with no
/// clone and no extra future per request. A service that is not ready is
/// cloned for that request and the clone awaited.
///
/// ```no_run
/// use pronghorn::{Router, serve};
///
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// let router = Router::new().get("/", || "hello").compile().unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// serve(listener, router).await
/// # }
/// ```
pub fn serve<S, B>(listener: TcpListener, service: S) -> Serve<S>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
{
    Serve {
        listener,
        service,
        header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
    }
}

/// A server about to run: `.await` it. Returned by [`serve`].
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve<S> {
    listener: TcpListener,
    service: S,
    header_read_timeout: Duration,
}

impl<S> fmt::Debug for Serve<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .field("header_read_timeout", &self.header_read_timeout)
            .finish()
    }
}

impl<S> Serve<S> {
    /// How long a connection may wait for a request's headers before it is
    /// closed (default 10 s).
    ///
    /// A connection waits from when it is accepted until its first request
    /// arrives and, over HTTP/1, from when the previous exchange is over
    /// (its response sent) until the next request's headers are complete:
    /// a client that connects and says nothing, sends its headers a byte
    /// at a time, or keeps an idle connection open is cut off. A request
    /// being answered or a response being streamed, however long, is not a
    /// wait, nor is an HTTP/2 connection once its first request arrived.
    ///
    /// Connections are checked four times per timeout, so one is closed
    /// between one and one and a quarter timeouts after its wait began.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Stops accepting when `signal` completes, lets the requests in flight
    /// finish, then returns.
    ///
    /// ```
    /// use std::{future::IntoFuture, time::Duration};
    /// use pronghorn::{Router, serve};
    /// use tokio::{io::{AsyncReadExt, AsyncWriteExt}, net::{TcpListener, TcpStream}, sync::oneshot};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let router = Router::new().get("/", || "hello").compile().unwrap();
    /// let server = serve(TcpListener::bind("127.0.0.1:0").await?, router)
    ///     .header_read_timeout(Duration::from_secs(5));
    /// let address = server.local_addr()?;
    /// let (stop, stopped) = oneshot::channel::<()>();
    /// let signal = async { stopped.await.unwrap_or(()) };
    /// let server = tokio::spawn(server.with_graceful_shutdown(signal).into_future());
    ///
    /// let mut client = TcpStream::connect(address).await?;
    /// client.write_all(b"GET / HTTP/1.1\r\nhost: example\r\nconnection: close\r\n\r\n").await?;
    /// let mut answer = String::new();
    /// client.read_to_string(&mut answer).await?;
    /// assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
    /// assert!(answer.ends_with("\r\n\r\nhello"));
    ///
    /// // The server returns once the signal came and its connections are done.
    /// stop.send(()).unwrap();
    /// server.await.unwrap()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<S, F>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        WithGracefulShutdown {
            serve: self,
            signal,
        }
    }
}

/// A server that shuts down gracefully on a signal: `.await` it.
#[must_use = "a server does nothing until it is awaited"]
pub struct WithGracefulShutdown<S, F> {
    serve: Serve<S>,
    signal: F,
}

impl<S, F> fmt::Debug for WithGracefulShutdown<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown")
            .field("serve", &self.serve)
            .finish()
    }
}

impl<S, B> IntoFuture for Serve<S>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Output = io::Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run(self, pending::<()>()))
    }
}

impl<S, B, F> IntoFuture for WithGracefulShutdown<S, F>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()> + Send + 'static,
{
    type Output = io::Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run(self.serve, self.signal))
    }
}

async fn run<S, B, F>(serve: Serve<S>, signal: F) -> io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()> + Send,
{
    let Serve {
        listener,
        service,
        header_read_timeout,
    } = serve;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper arms its header-read timeout with each connection's
    // `HeadTimer`, which only tells the connection's watchdog; the
    // watchdog keeps the time. `epoch` is what those timers answer for
    // the time: any instant does, one read of the clock serves all.
    let epoch = Instant::now();
    builder
        .http1()
        .header_read_timeout(header_read_timeout)
        .keep_alive(true)
        .pipeline_flush(true);
    builder.http2().timer(TokioTimer::new());
    let shutdown = Arc::new(Shutdown::default());
    // Every connection holds a receiver; `closed` tells when the last is
    // gone.
    let (alive, _) = watch::channel(());
    let mut signal = pin!(signal);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = signal.as_mut() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors or a connection reset before accept:
                // the listener itself is fine; pause briefly on resource
                // exhaustion rather than spin.
                tracing::warn!(%error, "pronghorn: accept failed");
                if !matches!(
                    error.kind(),
                    io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                ) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                continue;
            }
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "pronghorn: could not set TCP_NODELAY");
        }
        let watch = Arc::new(HeadWatch::new());
        // The timer goes with this connection's copy of the builder.
        builder.http1().timer(HeadTimer {
            watch: Arc::clone(&watch),
            epoch,
        });
        let service = Connection::new(service.clone(), Arc::clone(&watch));
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = Graceful::new(connection, &shutdown, alive.subscribe(), |connection| {
            connection.graceful_shutdown();
        });
        let connection = Watchdog::new(connection, watch, header_read_timeout);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(error = %error, "pronghorn: connection ended with an error");
            }
        });
    }
    drop(listener);
    shutdown.signal();
    alive.closed().await;
    Ok(())
}

/// The graceful shutdown signal, shared by the accept loop and its
/// connections.
#[derive(Debug, Default)]
struct Shutdown {
    /// Set once the signal came, before the connections are woken.
    signalled: AtomicBool,
    /// Wakes every connection that waits; each takes its [`OwnedNotified`]
    /// before it is spawned, so none misses the signal.
    notify: Arc<Notify>,
}

impl Shutdown {
    fn signal(&self) {
        self.signalled.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

pin_project! {
    /// A connection that shuts down gracefully on the [`Shutdown`] signal:
    /// it finishes the requests in flight and closes.
    ///
    /// hyper-util's `GracefulShutdown` polls a `watch` channel's `changed`
    /// future at every poll of the connection, a lock and an unlock of its
    /// `Notify` each time: once a request without pipelining, once a
    /// request that suspends. Here the signal is polled once with each
    /// waker the connection's task is polled with (one task, so once), and
    /// the flag read at every other poll: one load.
    struct Graceful<C> {
        #[pin]
        connection: C,
        #[pin]
        signal: OwnedNotified,
        shutdown: Arc<Shutdown>,
        // The waker the signal holds; `None` before the first poll.
        registered: Option<Waker>,
        // Whether the connection was told to shut down.
        told: bool,
        // How to tell it: the connection type's own `graceful_shutdown`.
        shut_down: fn(Pin<&mut C>),
        // Dropped with the connection: the server waits for all of them.
        _alive: watch::Receiver<()>,
    }
}

impl<C> Graceful<C> {
    fn new(
        connection: C,
        shutdown: &Arc<Shutdown>,
        alive: watch::Receiver<()>,
        shut_down: fn(Pin<&mut C>),
    ) -> Self {
        Self {
            connection,
            signal: Arc::clone(&shutdown.notify).notified_owned(),
            shutdown: Arc::clone(shutdown),
            registered: None,
            told: false,
            shut_down,
            _alive: alive,
        }
    }
}

impl<C: Future> Future for Graceful<C> {
    type Output = C::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let mut this = self.project();
        if !*this.told {
            let signalled = this.shutdown.signalled.load(Ordering::SeqCst)
                || match this.registered {
                    Some(waker) if waker.will_wake(cx.waker()) => false,
                    _ => {
                        // The signal holds no waker yet, or another one.
                        let ready = this.signal.as_mut().poll(cx).is_ready();
                        *this.registered = Some(cx.waker().clone());
                        ready
                    }
                };
            if signalled {
                *this.told = true;
                (this.shut_down)(this.connection.as_mut());
            }
        }
        this.connection.poll(cx)
    }
}

/// One connection's service, as hyper calls it: tower's `call(&mut self)`
/// behind hyper's `call(&self)`.
///
/// hyper-util's `TowerToHyperService` clones the service for every request
/// and drives the clone through a `Oneshot`. Here the connection keeps one
/// service, asks it once whether it is ready and, when it is, calls it at
/// once: the request moves straight into the service's own future. Only a
/// service that is not ready at once (a concurrency limit, a buffer) is
/// cloned, and the clone is polled for readiness with the task's waker.
struct Connection<S> {
    service: RefCell<S>,
    watch: Arc<HeadWatch>,
}

impl<S> Connection<S> {
    fn new(service: S, watch: Arc<HeadWatch>) -> Self {
        Self {
            service: RefCell::new(service),
            watch,
        }
    }
}

impl<S, R> hyper::service::Service<R> for Connection<S>
where
    S: Service<R> + Clone,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ConnectionFuture<S, R>;

    fn call(&self, request: R) -> Self::Future {
        self.watch.head_received();
        // hyper calls the service from the connection's task, one call at
        // a time (HTTP/2 streams too), and no future holds the borrow: it
        // ends with this call.
        let mut service = self.service.borrow_mut();
        // The readiness asked here with a waker that ignores wake-ups is
        // asked again, with the task's, on the clone below.
        let state = match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(())) => State::Called {
                future: service.call(request),
            },
            Poll::Ready(Err(error)) => State::Failed {
                error: Some(error.into()),
            },
            Poll::Pending => State::Waiting {
                service: service.clone(),
                request: Some(request),
            },
        };
        ConnectionFuture { state }
    }
}

pin_project! {
    /// The response future of [`Connection`].
    struct ConnectionFuture<S, R>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, R>
    where
        S: Service<R>,
    {
        Called { #[pin] future: S::Future },
        Waiting { service: S, request: Option<R> },
        Failed { error: Option<BoxError> },
    }
}

impl<S, R> Future for ConnectionFuture<S, R>
where
    S: Service<R>,
    S::Error: Into<BoxError>,
{
    type Output = Result<S::Response, BoxError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let future = match self.as_mut().project().state.project() {
                StateProj::Called { future } => return future.poll(cx).map_err(Into::into),
                StateProj::Failed { error } => {
                    return Poll::Ready(Err(error.take().expect("polled after completion")));
                }
                StateProj::Waiting { service, request } => {
                    ready!(service.poll_ready(cx)).map_err(Into::into)?;
                    service.call(request.take().expect("polled after completion"))
                }
            };
            self.as_mut().project().state.set(State::Called { future });
        }
    }
}

/// How a connection stands with request heads: shared by its watchdog,
/// hyper's HTTP/1 timer and its service, all on the connection's task.
///
/// The state is one word: the number of the current wait for a request
/// head, shifted left, and whether the connection is waiting (bit 0). A
/// connection starts waiting (the protocol is not known yet); hyper's
/// HTTP/1 connection starts a new wait each time it begins to read a head
/// (it asks its timer for the time then), and a request delivered to the
/// service ends the wait.
#[derive(Debug)]
struct HeadWatch {
    state: AtomicU64,
}

const WAITING: u64 = 1;

impl HeadWatch {
    fn new() -> Self {
        Self {
            state: AtomicU64::new(WAITING),
        }
    }

    fn state(&self) -> u64 {
        self.state.load(Ordering::Relaxed)
    }

    // One task writes and reads the state, so a plain load and store do:
    // no read-modify-write is needed.

    /// hyper begins to read a request head: a new wait.
    fn head_awaited(&self) {
        let next = (self.state() | WAITING) + 2;
        self.state.store(next, Ordering::Relaxed);
    }

    /// A request head arrived: the wait is over.
    #[inline]
    fn head_received(&self) {
        let state = self.state();
        if state & WAITING != 0 {
            self.state.store(state & !WAITING, Ordering::Relaxed);
        }
    }
}

/// hyper's HTTP/1 timer, one per connection, which runs no timer at all:
/// it tells the connection's [`Watchdog`] when hyper begins to wait for a
/// request head, and hands hyper a sleep that never fires.
///
/// hyper arms its header-read timeout before every request head and drops
/// it once the head is parsed, which with a real timer costs a clock read,
/// an allocation and a free per request. The sleep here has no size, so
/// boxing it allocates nothing, and the time handed out is fixed: the
/// watchdog keeps the time, with one Tokio timer per connection.
#[derive(Debug)]
struct HeadTimer {
    watch: Arc<HeadWatch>,
    /// What `now` answers: only added to and handed back by hyper.
    epoch: Instant,
}

impl hyper::rt::Timer for HeadTimer {
    fn sleep(&self, _: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(NeverSleep)
    }

    fn sleep_until(&self, _: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(NeverSleep)
    }

    fn now(&self) -> Instant {
        // hyper asks for the time exactly when it arms the header-read
        // timeout, that is, when it begins to read a request head.
        self.watch.head_awaited();
        self.epoch
    }
}

/// The sleep of [`HeadTimer`]: never ready, holding nothing.
struct NeverSleep;

impl Future for NeverSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl hyper::rt::Sleep for NeverSleep {}

/// Ticks of the watchdog in one header-read timeout.
const TICKS: u32 = 4;

pin_project! {
    /// A connection under its header-read watchdog: closed once it has
    /// waited for one request head through `TICKS` ticks of a quarter of
    /// the timeout, that is, between one and one and a quarter timeouts
    /// after the wait began.
    ///
    /// A connection waits from when it is accepted until its first request
    /// head, and over HTTP/1 from when hyper begins to read each following
    /// head (after the previous request) until it is parsed, as hyper's own
    /// timeout counts; a request being answered, a response being
    /// streamed, an HTTP/2 connection past its first request are not
    /// waiting. One Tokio timer per connection, re-armed at each tick,
    /// replaces hyper's timer per request.
    struct Watchdog<C> {
        #[pin]
        connection: C,
        #[pin]
        tick: tokio::time::Sleep,
        watch: Arc<HeadWatch>,
        period: Duration,
        // The state at the last tick.
        seen: u64,
        // Ticks in a row that found the same wait.
        idle: u32,
        // Whether the tick was polled since it was last set.
        polled: bool,
    }
}

impl<C> Watchdog<C> {
    fn new(connection: C, watch: Arc<HeadWatch>, timeout: Duration) -> Self {
        let period = (timeout / TICKS).max(Duration::from_millis(1));
        Self {
            connection,
            tick: tokio::time::sleep(period),
            seen: watch.state(),
            watch,
            period,
            idle: 0,
            polled: false,
        }
    }
}

impl<C, E> Future for Watchdog<C>
where
    C: Future<Output = Result<(), E>>,
    E: Into<BoxError>,
{
    type Output = Result<(), BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Poll::Ready(result) = this.connection.poll(cx) {
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
            let state = this.watch.state();
            if state & WAITING != 0 && state == *this.seen {
                *this.idle += 1;
                if *this.idle >= TICKS {
                    return Poll::Ready(Err(HeaderTimeout.into()));
                }
            } else {
                *this.seen = state;
                *this.idle = 0;
            }
            let next = this.tick.deadline() + *this.period;
            this.tick.as_mut().reset(next);
            *this.polled = false;
        }
    }
}

/// Why the watchdog closed a connection.
#[derive(Debug)]
struct HeaderTimeout;

impl fmt::Display for HeaderTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no request head within the header-read timeout")
    }
}

impl StdError for HeaderTimeout {}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_closes_a_waiting_connection_that_spent_its_budget() {
        let timeout = Duration::from_secs(1);
        let started = tokio::time::Instant::now();
        let watchdog = Watchdog::new(Greedy { spent: false }, Arc::new(HeadWatch::new()), timeout);
        let closed = tokio::time::timeout(timeout * 10, watchdog)
            .await
            .expect("the watchdog closes the connection");
        let error = closed.expect_err("closed for its header timeout");
        assert!(error.is::<HeaderTimeout>(), "{error}");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= timeout && elapsed <= timeout + timeout / TICKS,
            "closed after {elapsed:?}"
        );
    }
}
