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
    task::{Context, Poll, Waker, ready},
    time::{Duration, Instant},
};

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto, graceful::GracefulShutdown},
};
use pin_project_lite::pin_project;
use tokio::net::TcpListener;
use tower_service::Service;

type BoxError = Box<dyn StdError + Send + Sync>;

/// The default time a client has to send a request's headers.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `service` on `listener` until the returned future is dropped or,
/// with [`Serve::with_graceful_shutdown`], until a signal.
///
/// Every accepted socket gets `TCP_NODELAY`; HTTP/1 responses to pipelined
/// requests are flushed in batches (hyper's `pipeline_flush`); a connection
/// that has not sent a request's headers within the header-read timeout
/// (default 10 s) is closed. HTTP/2 is served to clients that speak it
/// (prior knowledge). Upgrades (WebSocket) are supported.
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
    /// How long a client may take to send a request's headers before its
    /// connection is closed (default 10 s).
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
    builder
        .http1()
        .timer(LazyTimer)
        .header_read_timeout(header_read_timeout)
        .keep_alive(true)
        .pipeline_flush(true);
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
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
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), Connection::new(service.clone()))
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(error = %error, "pronghorn: connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
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
}

impl<S> Connection<S> {
    fn new(service: S) -> Self {
        Self {
            service: RefCell::new(service),
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

/// hyper's HTTP/1 timer, which runs the header-read timeout: hyper-util's
/// `TokioTimer`, except that the Tokio sleep is made when hyper first polls
/// it.
///
/// hyper arms the timeout before reading every request head and drops it
/// once the head is parsed. A head that is already in the read buffer (a
/// pipelined or promptly sent request) is parsed before the timeout is ever
/// polled, and then costs no Tokio timer entry: no runtime handle looked up
/// and cloned, no entry made and dropped. A head that is not there yet
/// arms the sleep for the deadline hyper set, at once.
#[derive(Clone, Copy, Debug)]
struct LazyTimer;

impl hyper::rt::Timer for LazyTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(LazySleep {
            deadline,
            sleep: None,
        })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<LazySleep>() {
            Some(lazy) => lazy.reset(deadline),
            None => *sleep = self.sleep_until(deadline),
        }
    }

    fn now(&self) -> Instant {
        // Tokio's clock, as `TokioTimer`'s: it follows a paused test clock.
        tokio::time::Instant::now().into()
    }
}

pin_project! {
    /// The sleep of [`LazyTimer`]: a deadline, and the Tokio sleep once
    /// polled.
    struct LazySleep {
        deadline: Instant,
        #[pin]
        sleep: Option<tokio::time::Sleep>,
    }
}

impl LazySleep {
    fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.project();
        *this.deadline = deadline;
        if let Some(sleep) = this.sleep.as_pin_mut() {
            sleep.reset(deadline.into());
        }
    }
}

impl Future for LazySleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        if this.sleep.is_none() {
            let deadline = (*this.deadline).into();
            this.sleep.set(Some(tokio::time::sleep_until(deadline)));
        }
        this.sleep
            .as_pin_mut()
            .expect("the sleep was just made")
            .poll(cx)
    }
}

impl hyper::rt::Sleep for LazySleep {}
