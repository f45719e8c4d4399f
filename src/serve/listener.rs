//! [`Listener`]: where [`serve`](super::serve) takes its clients from — a
//! TCP listener, a Unix socket, or one of your own — as axum's.

use std::{any::Any, future::Future, io, time::Duration};

use tokio::io::{AsyncRead, AsyncWrite};

use crate::log::RateLimit;

/// Pauses after an `accept` that failed for lack of resources (file
/// descriptors, memory), rather than spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// What [`serve`](super::serve) accepts its clients from, as axum's
/// `Listener`: a [`TcpListener`](tokio::net::TcpListener), a
/// [`UnixListener`](tokio::net::UnixListener) (on Unix), a listener
/// wrapped by [`ListenerExt::tap_io`], or one of your own.
///
/// Its `accept` does not fail: a listener handles the errors of its own
/// `accept` (the TCP one logs them at most once a second, pausing when
/// resources ran out) and goes on. With
/// [`connect_info`](super::Serve::connect_info), each request carries a
/// [`ConnectInfo`](crate::handler::ConnectInfo) of its client's
/// [`Addr`](Listener::Addr).
///
/// ```no_run
/// # #[cfg(unix)]
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// use pronghorn::{Router, serve};
///
/// let router = Router::new().get("/", || "hello").compile().unwrap();
/// // Behind a proxy that speaks to it over a Unix socket.
/// let listener = tokio::net::UnixListener::bind("/run/app.sock")?;
/// serve(listener, router).await
/// # }
/// # #[cfg(not(unix))] fn main() {}
/// ```
pub trait Listener: Send + 'static {
    /// A connection accepted.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// The address of its peer, or of the listener.
    type Addr: Clone + Send + Sync + 'static;

    /// The next connection and its peer's address.
    fn accept(&mut self) -> impl Future<Output = (Self::Io, Self::Addr)> + Send;

    /// The address it listens on.
    ///
    /// # Errors
    ///
    /// The system's, when it cannot tell.
    fn local_addr(&self) -> io::Result<Self::Addr>;

    /// The most connections a server may hold from it at once, when it
    /// says ([`ListenerExt::limit_connections`]): `serve` holds the
    /// lower of this and its own
    /// [`max_connections`](super::Serve::max_connections). `None`, the
    /// default, leaves the server's.
    fn connection_limit(&self) -> Option<usize> {
        None
    }
}

/// Logs a failed `accept` at most once a second, with the count of those
/// not logged, and pauses when resources ran out (a connection reset
/// before it was taken is no reason to).
async fn accept_failed(error: io::Error) {
    static ACCEPT_FAILED: RateLimit = RateLimit::per_second(1);
    if let Some(suppressed) = ACCEPT_FAILED.admit() {
        tracing::warn!(%error, suppressed, "pronghorn: accept failed");
    }
    if !matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    ) {
        tokio::time::sleep(ACCEPT_BACKOFF).await;
    }
}

impl Listener for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match tokio::net::TcpListener::accept(self).await {
                Ok(accepted) => return accepted,
                Err(error) => accept_failed(error).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        tokio::net::TcpListener::local_addr(self)
    }
}

#[cfg(unix)]
impl Listener for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match tokio::net::UnixListener::accept(self).await {
                Ok(accepted) => return accepted,
                Err(error) => accept_failed(error).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        tokio::net::UnixListener::local_addr(self)
    }
}

/// What a [`Listener`] can be made into, as axum's `ListenerExt`.
pub trait ListenerExt: Listener + Sized {
    /// Holds the connections a server takes from it to at most `limit`
    /// at once, as axum's `limit_connections`: what
    /// [`Serve::max_connections`](super::Serve::max_connections) sets,
    /// said where the listener is made (the lower of the two holds). At
    /// the limit, a new client takes the place of the connection idle
    /// longest, where axum's waits in the backlog until one closes; while
    /// none is idle, it waits as well. Values below 1 are raised to 1.
    ///
    /// ```no_run
    /// # #[tokio::main] async fn main() -> std::io::Result<()> {
    /// use pronghorn::{ListenerExt, Router, serve};
    ///
    /// let router = Router::new().get("/", || "hello").compile().unwrap();
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?.limit_connections(1000);
    /// serve(listener, router).await
    /// # }
    /// ```
    fn limit_connections(self, limit: usize) -> ConnLimiter<Self> {
        ConnLimiter {
            listener: self,
            limit: limit.max(1),
        }
    }

    /// Calls `tap` on each connection as it is accepted, before it is
    /// served: to set a socket option, say.
    ///
    /// ```no_run
    /// # #[tokio::main] async fn main() -> std::io::Result<()> {
    /// use pronghorn::{ListenerExt, Router, serve};
    ///
    /// let router = Router::new().get("/", || "hello").compile().unwrap();
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?.tap_io(|stream| {
    ///     if let Err(error) = stream.set_ttl(64) {
    ///         eprintln!("could not set the TTL: {error}");
    ///     }
    /// });
    /// serve(listener, router).await
    /// # }
    /// ```
    fn tap_io<F>(self, tap: F) -> TapIo<Self, F>
    where
        F: FnMut(&mut Self::Io) + Send + 'static,
    {
        TapIo {
            listener: self,
            tap,
        }
    }
}

impl<L: Listener> ListenerExt for L {}

/// A [`Listener`] whose server holds at most a number of connections
/// from it at once (see [`ListenerExt::limit_connections`]).
#[derive(Debug)]
pub struct ConnLimiter<L> {
    listener: L,
    limit: usize,
}

impl<L: Listener> Listener for ConnLimiter<L> {
    type Io = L::Io;
    type Addr = L::Addr;

    fn accept(&mut self) -> impl Future<Output = (Self::Io, Self::Addr)> + Send {
        self.listener.accept()
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }

    fn connection_limit(&self) -> Option<usize> {
        let inner = self.listener.connection_limit().unwrap_or(usize::MAX);
        Some(self.limit.min(inner))
    }
}

/// A [`Listener`] that calls a function on each connection it accepts
/// (see [`ListenerExt::tap_io`]).
pub struct TapIo<L, F> {
    listener: L,
    tap: F,
}

impl<L: std::fmt::Debug, F> std::fmt::Debug for TapIo<L, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TapIo")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

impl<L, F> Listener for TapIo<L, F>
where
    L: Listener,
    F: FnMut(&mut L::Io) + Send + 'static,
{
    type Io = L::Io;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (mut io, addr) = self.listener.accept().await;
        (self.tap)(&mut io);
        (io, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }

    fn connection_limit(&self) -> Option<usize> {
        self.listener.connection_limit()
    }
}

/// A connection just accepted by a listener `L`, before it is served: what
/// a [`Connected`](crate::handler::Connected) type is made from (see
/// [`Serve::connect_info_as`](super::Serve::connect_info_as)), as axum's
/// `IncomingStream`.
pub struct IncomingStream<'a, L: Listener> {
    io: &'a L::Io,
    remote_addr: L::Addr,
}

impl<'a, L: Listener> IncomingStream<'a, L> {
    pub(super) fn new(io: &'a L::Io, remote_addr: L::Addr) -> Self {
        IncomingStream { io, remote_addr }
    }

    /// The connection.
    pub fn io(&self) -> &'a L::Io {
        self.io
    }

    /// Its peer's address.
    pub fn remote_addr(&self) -> &L::Addr {
        &self.remote_addr
    }
}

impl<L: Listener<Addr: std::fmt::Debug>> std::fmt::Debug for IncomingStream<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncomingStream")
            .field("remote_addr", &self.remote_addr)
            .finish_non_exhaustive()
    }
}

impl<L: Listener<Addr = std::net::SocketAddr>> crate::handler::Connected<IncomingStream<'_, L>>
    for std::net::SocketAddr
{
    fn connect_info(stream: IncomingStream<'_, L>) -> Self {
        stream.remote_addr
    }
}

/// `value` as a `B`, when it is one (`A` and `B` the same type); else
/// itself. For what only a TCP socket has: its options, and its move to
/// another runtime.
pub(super) fn cast<A: 'static, B: 'static>(value: A) -> Result<B, A> {
    let mut slot = Some(value);
    match (&mut slot as &mut dyn Any).downcast_mut::<Option<B>>() {
        Some(same) => Ok(same.take().expect("the value is in its slot")),
        None => Err(slot.take().expect("the value is in its slot")),
    }
}

#[cfg(test)]
mod tests {
    use super::cast;

    #[test]
    fn cast_is_the_value_only_to_its_own_type() {
        assert_eq!(cast::<u8, u8>(7), Ok(7));
        assert_eq!(cast::<u8, u16>(7), Err(7));
    }
}
