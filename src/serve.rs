//! [`serve`]: run a service over TCP with hyper — HTTP/1.1 (keep-alive,
//! pipelining) and HTTP/2, `TCP_NODELAY`, a header-read timeout, graceful
//! shutdown (feature `server`).

use std::{
    error::Error as StdError,
    fmt,
    future::{Future, IntoFuture, pending},
    io,
    net::SocketAddr,
    pin::{Pin, pin},
    time::Duration,
};

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto, graceful::GracefulShutdown},
    service::TowerToHyperService,
};
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
        .timer(TokioTimer::new())
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
            .serve_connection_with_upgrades(
                TokioIo::new(stream),
                TowerToHyperService::new(service.clone()),
            )
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
