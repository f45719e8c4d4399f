//! [`serve`]: run a service over TCP with hyper — HTTP/1.1 (keep-alive,
//! pipelining) and HTTP/2 — with a limit or a timeout on everything a
//! client can hold (feature `server`).
//!
//! The accept loop and the settings are here; one connection is
//! [`connection`] (tower to hyper), [`io`] (bounded write coalescing),
//! [`budget`] (what HTTP/2 answers hold unsent), [`timeouts`] (the
//! watchdog) and [`graceful`] (shutdown).

mod admission;
mod budget;
mod connection;
mod executor;
mod graceful;
mod heads;
mod io;
mod listener;
mod request_line;
mod response_body;
mod run;
mod slots;
mod timeouts;
#[cfg(feature = "tls")]
mod tls;
mod windows;

pub use self::listener::{ConnLimiter, IncomingStream, Listener, ListenerExt, TapIo};
#[cfg(feature = "tls")]
pub use self::tls::Tls;

use std::{
    fmt,
    future::{Future, IntoFuture, pending},
    marker::PhantomData,
    pin::Pin,
    sync::Arc,
    time::Duration,
};

use http::{Request, Response};
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tower_service::Service;

use self::{connection::Peer, timeouts::Timeouts, windows::INITIAL_WINDOW};
use crate::clock::FOREVER;

use crate::body::BoxError;

/// Serves `service` on `listener` until the returned future is dropped or,
/// with [`Serve::with_graceful_shutdown`], until a signal.
///
/// HTTP/1.1 (with keep-alive and pipelining) and HTTP/2 (prior knowledge)
/// are served on the same port; upgrades (WebSocket) are supported; every
/// accepted socket gets `TCP_NODELAY`. The answers to pipelined HTTP/1
/// requests that were read together are written together, up to a bound
/// per connection ([`Serve::pipeline_buffer`]): a client that pipelines
/// without reading its answers holds no more than that.
///
/// Each connection gets one clone of `service` and calls it request after
/// request, as tower services expect; when it is ready at once (the
/// router always is), a request goes straight into its `call`, with no
/// clone and no extra future per request. A service that is not ready is
/// cloned for that request and the clone awaited. A service that fails
/// closes its connection, as hyper does.
///
/// An HTTP/1.1 request without a `Host` header, and an HTTP/1 request with
/// two, are answered 400 and the connection closed, as RFC 9112 requires,
/// without calling the service: two could be read one way by a proxy in
/// front and another by the service.
///
/// # Limits
///
/// Every resource a client can hold has a limit, with a default safe for
/// a server open to the internet, and a setting:
///
/// | limit | default | setting |
/// | --- | --- | --- |
/// | time to send a request's head, from its first byte (and a new connection's first request, from the accept) | 10 s | [`header_read_timeout`](Serve::header_read_timeout) |
/// | HTTP/1 idle time between requests | 10 s | [`keep_alive_timeout`](Serve::keep_alive_timeout) |
/// | time a connection may send nothing of what it has to send: its client stopped reading, or (HTTP/2) grants no flow-control window | 30 s | [`send_timeout`](Serve::send_timeout) |
/// | HTTP/2 idle time with no stream open (then a GOAWAY, and the close) | 60 s | [`http2_idle_timeout`](Serve::http2_idle_timeout) |
/// | HTTP/2 keep-alive: a ping after this much silence, the connection closed if no answer within the same time | 20 s | [`http2_keep_alive`](Serve::http2_keep_alive) |
/// | HTTP/2 streams open at once on a connection | 100 | [`http2_max_streams`](Serve::http2_max_streams) |
/// | a client that vanished without closing its connection: TCP keep-alive probes after this much silence, three unanswered ones close the connection | 60 s | [`tcp_keepalive`](Serve::tcp_keepalive) |
/// | connections open at once (at the limit, a new client closes the connection idle longest; while none is idle, it waits for one to close) | 1,024 | [`max_connections`](Serve::max_connections) |
/// | WebSocket connections open at once (503 over it) | half the connection limit | `max_websockets` (feature `ws`) |
/// | size of an HTTP/1 request's head (431 over it; 414 when a connection's first request line alone outgrows it) | 64 KiB | [`max_header_size`](Serve::max_header_size) |
/// | size of an HTTP/2 request's header list (431 over it) | 16 KiB | [`http2_max_header_size`](Serve::http2_max_header_size) |
/// | number of a request's headers (431 over it) | 100 | [`max_headers`](Serve::max_headers) |
/// | heads of the HTTP/2 requests being answered, on all connections (503 over it) | 64 MiB | [`http2_header_buffer`](Serve::http2_header_buffer) |
/// | answers to pipelined requests held back to be written together | 64 KiB | [`pipeline_buffer`](Serve::pipeline_buffer) |
/// | HTTP/2 response bytes produced ahead of the socket, per connection, past each body's first chunk | 256 KiB | [`http2_send_buffer`](Serve::http2_send_buffer) |
/// | HTTP/2 request bodies being read at once by body extractors, per connection, past the first (503 over it) | 4 MiB | [`http2_body_buffer`](Serve::http2_body_buffer) |
/// | HTTP/2 request body bytes a client may send ahead of what is read, per connection and per stream (the flow-control windows) | 1 MiB | [`http2_receive_window`](Serve::http2_receive_window) |
/// | those windows, on all connections (past it a new connection is granted what is left, at least HTTP/2's initial 64 KiB) | 256 MiB | [`http2_receive_buffer`](Serve::http2_receive_buffer) |
/// | request bodies being read at once by body extractors, and WebSocket messages past 64 KiB, on all connections, counted as they arrive (over it a body waits, 503 at its body timeout; a message waits, until its message timeout) | 256 MiB | [`body_buffer`](Serve::body_buffer) |
/// | graceful shutdown: time for the connections, and the WebSocket handlers, to finish before the server returns (WebSockets are sent a 1001 close frame at the signal; connections still open are closed) | 30 s | [`shutdown_timeout`](Serve::shutdown_timeout) |
/// | work for an HTTP/1 client that closed its connection (its request is cancelled at once, unless half-closed connections are answered) | none | [`half_close`](Serve::half_close) |
///
/// The body of a request is limited by the service: the router's
/// [body limit](crate::Router::body_limit) (413 over it, also before
/// `100 Continue` when a client announces a longer body; hyper itself
/// answers 431 to the two `Content-Length` values it cannot count,
/// 2⁶⁴ − 2 and 2⁶⁴ − 1, before any service sees the request) and
/// [body timeout](crate::Router::body_timeout) (408 when the body is not
/// all there in time; a body the handler streams fails with an error at
/// the same deadline).
///
/// Some requests are refused before the service sees them. Over HTTP/1:
/// a missing `Host` in HTTP/1.1, two `Host` lines, or one that is not a
/// host and port (400); a target in the authority form outside CONNECT,
/// or `*` outside OPTIONS (400); a transfer coding other than `chunked`
/// (501) or `chunked` twice (400); each answered with `connection: close`.
/// Over HTTP/2, a request that RFC 9113 (8.1.1) makes malformed and the
/// `h2` crate lets through — a field value with leading or trailing
/// whitespace, a `Host` that names another authority than `:authority`, a
/// CONNECT without `:authority` — has its stream reset with
/// PROTOCOL_ERROR.
///
/// A body extractor (`Json`, `Bytes`, `String`, `Form`) holds what it has
/// read until the body is complete, up to the body limit. Over HTTP/1 a
/// connection reads one body at a time; over HTTP/2 a client could start
/// one on every stream and end none, were it not for
/// [`http2_body_buffer`](Serve::http2_body_buffer). So what a client's
/// bodies hold is at most the body limit (or that allowance, if larger)
/// per connection, until the body timeout; and what all bodies hold, at
/// most [`body_buffer`](Serve::body_buffer), beside 64 KiB per HTTP/1
/// connection. A handler that streams its body holds what it keeps of it.
/// Body bytes a client sends before they are read wait in its socket over
/// HTTP/1; over HTTP/2 in its connection, up to the flow-control window
/// the server grants ([`http2_receive_window`](Serve::http2_receive_window),
/// 1 MiB a connection), and those of all connections up to
/// [`http2_receive_buffer`](Serve::http2_receive_buffer) beyond the 64 KiB
/// every HTTP/2 connection starts with.
///
/// Request heads are bounded the same way: over HTTP/1 a connection reads
/// one at a time, of at most [`max_header_size`](Serve::max_header_size);
/// over HTTP/2 each stream holds one of at most
/// [`http2_max_header_size`](Serve::http2_max_header_size) until its
/// answer is ready, and those of all connections at most
/// [`http2_header_buffer`](Serve::http2_header_buffer).
///
/// So what all clients together can make the server hold is, at the
/// defaults, the sum of these bounds:
///
/// | held | bound |
/// | --- | --- |
/// | request heads | 64 KiB an HTTP/1 connection; HTTP/2 header lists, 64 MiB in all (two to three times that in memory) |
/// | request bodies and WebSocket messages being read | 256 MiB in all, beside 64 KiB an HTTP/1 connection or WebSocket |
/// | HTTP/2 request body bytes sent ahead of the reading | 256 MiB in all, beside 64 KiB a connection |
/// | answers held for a pipelining client | 64 KiB a connection |
/// | HTTP/2 answers produced ahead of the socket | 256 KiB a connection, past each body's first chunk |
/// | WebSocket messages a client has not taken | 1 MiB a connection, until the send timeout |
///
/// Most are per connection: a server with less memory lowers
/// [`max_connections`](Serve::max_connections) first.
///
/// The HTTP/2 limits are per connection, sized for one client on it.
/// Behind a proxy that carries many clients over one HTTP/2 connection,
/// raise [`http2_max_streams`](Serve::http2_max_streams),
/// [`http2_body_buffer`](Serve::http2_body_buffer) and
/// [`http2_send_buffer`](Serve::http2_send_buffer) to what the proxy
/// lets all of them do at once: otherwise one client's uploads are
/// refused, or its downloads wait, because of another's.
///
/// A connection's timeouts are checked four times in the shortest of the
/// first four timeouts: a connection is closed between its timeout and a
/// quarter of the shortest timeout later. A duration too long to count,
/// `Duration::MAX`, is a wait with no end.
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
pub fn serve<L, S>(listener: L, service: S) -> Serve<S, L>
where
    L: Listener,
    S: Served<L>,
{
    Serve {
        listener,
        service,
        limits: Settings::default(),
        connect_info: None,
        half_close: false,
        #[cfg(feature = "tls")]
        tls: None,
        on_worker_start: None,
    }
}

/// What [`serve`] can run on the connections of a listener `L`: a tower
/// service, hyper's requests in, responses out, cloned for each
/// connection; or one made with
/// [`into_make_service_with_connect_info`](crate::Router::into_make_service_with_connect_info),
/// whose requests carry what their connection tells of itself. Every
/// such service is one: the trait is there for the compiler's message
/// about a value that is not — a handler given where a service is due,
/// say. A [`Router`](crate::Router) is one as it is: `serve` compiles it
/// before it accepts a client, and its future returns the router's error
/// (`InvalidInput`, naming the route and the mistake) if it does not
/// compile.
///
/// ```compile_fail
/// # async fn run(listener: tokio::net::TcpListener) {
/// // error: `{closure}` is not a service `serve` can run
/// pronghorn::serve(listener, || "hello");
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a service `serve` can run",
    label = "not a `Service<Request<Incoming>>` that is `Clone + Send + 'static`",
    note = "a handler is served inside a `Router`: `serve(listener, Router::new().get(\"/\", handler))`",
    note = "`serve` runs a tower `Service` of hyper's `Request<Incoming>` that answers a `Response` and is `Clone + Send + 'static`, its future `Send + 'static`, its error `Into<BoxError>`"
)]
pub trait Served<L: Listener>: Send + 'static {
    /// The body of its responses.
    type Body: http_body::Body<Data: Send, Error: Into<BoxError>> + Send + 'static;

    /// The service run on each connection.
    type Service: Runs<Self::Body>;

    /// The service, and what its connections' requests carry of them.
    #[doc(hidden)]
    fn into_served(self) -> (Self::Service, Option<ConnectInfoOf<L>>);
}

#[diagnostic::do_not_recommend]
impl<S, B, L> Served<L> for S
where
    L: Listener,
    // `Response = …` names the body, as a bound on `Runs<B>` would not.
    S: Runs<B> + Service<Request<Incoming>, Response = Response<B>>,
    B: http_body::Body<Data: Send, Error: Into<BoxError>> + Send + 'static,
{
    type Body = B;
    type Service = S;

    fn into_served(self) -> (S, Option<ConnectInfoOf<L>>) {
        (self, None)
    }
}

/// A tower service `serve` runs on a connection: hyper's requests in,
/// responses of body `B` out, cloned for each connection.
#[doc(hidden)]
pub trait Runs<B>:
    Service<
        Request<Incoming>,
        Response = Response<B>,
        Error: Into<BoxError>,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S, B> Runs<B> for S where
    S: Service<
            Request<Incoming>,
            Response = Response<B>,
            Error: Into<BoxError>,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// What the requests of a connection of a listener `L` carry of it.
#[doc(hidden)]
pub struct ConnectInfoOf<L: Listener>(PeerOf<L>);

impl<L: Listener> fmt::Debug for ConnectInfoOf<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConnectInfoOf")
    }
}

/// A service whose requests carry what their connection tells of itself,
/// a `C` ([`Connected`](crate::handler::Connected)), as axum's
/// `IntoMakeServiceWithConnectInfo`: made by
/// [`Router::into_make_service_with_connect_info`](crate::Router::into_make_service_with_connect_info),
/// given to [`serve`].
pub struct IntoMakeServiceWithConnectInfo<S, C> {
    service: S,
    _connect_info: PhantomData<fn() -> C>,
}

impl<S, C> IntoMakeServiceWithConnectInfo<S, C> {
    /// `service`, its requests carrying a `C`.
    pub(crate) fn new(service: S) -> Self {
        Self {
            service,
            _connect_info: PhantomData,
        }
    }
}

impl<S: fmt::Debug, C> fmt::Debug for IntoMakeServiceWithConnectInfo<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoMakeServiceWithConnectInfo")
            .field("service", &self.service)
            .field("connect_info", &std::any::type_name::<C>())
            .finish()
    }
}

#[diagnostic::do_not_recommend]
impl<S, C, L> Served<L> for IntoMakeServiceWithConnectInfo<S, C>
where
    L: Listener,
    S: Served<L>,
    C: for<'a> crate::handler::Connected<IncomingStream<'a, L>>,
{
    type Body = S::Body;
    type Service = S::Service;

    fn into_served(self) -> (S::Service, Option<ConnectInfoOf<L>>) {
        let (service, _) = self.service.into_served();
        (service, Some(ConnectInfoOf(connected::<L, C>())))
    }
}

/// A server about to run: `.await` it. Returned by [`serve`]; its settings
/// are the [limits](serve#limits) of what a client can hold.
///
/// ```no_run
/// use std::time::Duration;
/// use pronghorn::{Router, serve};
///
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// let router = Router::new().get("/", || "hello").compile().unwrap();
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
/// // Behind a proxy that keeps its connections to us open longer:
/// serve(listener, router)
///     .keep_alive_timeout(Duration::from_secs(75))
///     .max_connections(4096)
///     .connect_info(true)
///     .await
/// # }
/// ```
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve<S, L: Listener = TcpListener> {
    listener: L,
    service: S,
    limits: Settings,
    /// What each request carries of its connection, made as the
    /// connection is accepted: `None` for nothing.
    connect_info: Option<PeerOf<L>>,
    /// Whether an HTTP/1 client may close its sending side and still be
    /// answered.
    half_close: bool,
    #[cfg(feature = "tls")]
    tls: Option<Tls>,
    /// Called on each worker thread as it starts, with its index.
    on_worker_start: Option<WorkerStart>,
}

/// Makes what the requests of a connection carry of it.
type PeerOf<L> = fn(&<L as Listener>::Io, <L as Listener>::Addr) -> Peer;

/// What the requests of a connection carry of it: the `C` it makes of
/// itself.
fn connected<L, C>() -> PeerOf<L>
where
    L: Listener,
    C: for<'a> crate::handler::Connected<IncomingStream<'a, L>>,
{
    |io, address| Peer::of(C::connect_info(IncomingStream::new(io, address)))
}

/// What [`Serve::on_worker_start`] calls.
type WorkerStart = Arc<dyn Fn(usize) + Send + Sync>;

/// The settings of a [`Serve`]: the limits, and how it runs.
#[derive(Debug, Clone, Copy)]
struct Settings {
    /// The watchdog's: header read, keep-alive, HTTP/2 idle.
    timeouts: Timeouts,
    http2_keep_alive: Duration,
    http2_max_streams: u32,
    http2_receive_window: u32,
    http2_receive_buffer: usize,
    max_connections: usize,
    /// `None`: half of `max_connections`.
    #[cfg(feature = "ws")]
    max_websockets: Option<usize>,
    max_header_size: usize,
    http2_max_header_size: usize,
    max_headers: usize,
    pipeline_buffer: usize,
    http2_send_buffer: usize,
    http2_body_buffer: usize,
    body_buffer: usize,
    http2_header_buffer: usize,
    tcp_keepalive: Duration,
    shutdown_timeout: Duration,
    /// Worker threads of the server's own; 0: none, the connections run
    /// on the runtime that awaits the server.
    workers: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            timeouts: Timeouts::default(),
            http2_keep_alive: Duration::from_secs(20),
            http2_max_streams: 100,
            http2_receive_window: 1024 * 1024,
            http2_receive_buffer: 256 * 1024 * 1024,
            max_connections: 1024,
            #[cfg(feature = "ws")]
            max_websockets: None,
            max_header_size: 64 * 1024,
            http2_max_header_size: 16 * 1024,
            max_headers: 100,
            pipeline_buffer: io::DEFAULT_PIPELINE_BUFFER,
            http2_send_buffer: 256 * 1024,
            http2_body_buffer: 4 * 1024 * 1024,
            body_buffer: 256 * 1024 * 1024,
            http2_header_buffer: 64 * 1024 * 1024,
            tcp_keepalive: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(30),
            workers: 0,
        }
    }
}

impl Settings {
    /// The same, with at most `connections` connections when a listener
    /// says so ([`ListenerExt::limit_connections`]).
    fn held_to(mut self, connections: Option<usize>) -> Self {
        if let Some(connections) = connections {
            self.max_connections = self.max_connections.min(connections);
        }
        self
    }
}

/// hyper's smallest buffer for an HTTP/1 connection.
const MIN_HEADER_SIZE: usize = 8 * 1024;

impl<S, L: Listener> fmt::Debug for Serve<S, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &std::any::type_name::<L>())
            .field("limits", &self.limits)
            .finish()
    }
}

impl<S, L: Listener> Serve<S, L> {
    /// How long a client has to send a request's head (default 10 s).
    ///
    /// Counted from the request's first byte and, for a connection's first
    /// request, from when the connection was accepted: a client that
    /// connects and says nothing, or sends its headers a byte at a time,
    /// is cut off. A request being answered or a response being streamed,
    /// however long, is not a wait.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeouts.set_header_read(timeout.min(FOREVER));
        self
    }

    /// How long an HTTP/1 connection may stay idle between an answer and
    /// the next request's first byte before it is closed (default 10 s).
    /// `Duration::ZERO` closes each connection after its answer, unless
    /// the next request has already come.
    pub fn keep_alive_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeouts.set_keep_alive(timeout.min(FOREVER));
        self
    }

    /// How long a connection may take nothing of what the server has to
    /// send it before it is closed (default 30 s).
    ///
    /// A client that stops reading — an answer it asked for, a server-sent
    /// event stream, answers to requests it pipelined — soon fills its
    /// socket's buffers; from then on, the connection is closed if the
    /// socket takes no byte for this long. A slow client is not cut off
    /// as long as it takes something: the time counts from the last byte
    /// taken, not from the start of the answer. An upgraded (WebSocket)
    /// connection belongs to its handler, whose sends have a timeout of
    /// their own (`ws::Limits::send_timeout`).
    ///
    /// Over HTTP/2 a client may also read its socket and stop granting
    /// flow-control window: a connection whose answers wait for window,
    /// none of them moving, for this long is closed too. While one of its
    /// streams moves, the connection stays, and a stream the client
    /// starves holds its answer, as HTTP/2 lets it: how many such streams
    /// there are is bounded by
    /// [`http2_max_streams`](Self::http2_max_streams), and what their
    /// bodies produce past their first chunk by
    /// [`http2_send_buffer`](Self::http2_send_buffer).
    pub fn send_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeouts.set_send(timeout.min(FOREVER));
        self
    }

    /// How long an HTTP/2 connection may stay open with no stream before it
    /// is closed (default 60 s). A stream counts until its response body
    /// ends: a long server-sent event stream keeps its connection.
    /// `Duration::ZERO` closes a connection as soon as its streams end.
    /// The client is sent a GOAWAY frame first, and the connection is
    /// closed a quarter of the shortest timeout later at most (sooner if
    /// the client closes it, as clients do on a GOAWAY).
    pub fn http2_idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeouts.set_http2_idle(timeout.min(FOREVER));
        self
    }

    /// After how long without a frame from the client an HTTP/2 connection
    /// is pinged, and how long the client has to answer before the
    /// connection is closed (default 20 s): a peer that vanished without
    /// closing its connection does not hold it. `Duration::ZERO` sends no
    /// pings: a vanished peer then holds its connection until the
    /// [HTTP/2 idle timeout](Self::http2_idle_timeout) once its streams end,
    /// and for as long as a stream of its lasts.
    pub fn http2_keep_alive(mut self, interval: Duration) -> Self {
        self.limits.http2_keep_alive = interval.min(FOREVER);
        self
    }

    /// How many bytes of request bodies an HTTP/2 client may send ahead of
    /// what the server has read, on one connection and on each of its
    /// streams: the flow-control windows the server grants (default 1 MiB,
    /// hyper's; HTTP/2 allows 65,535 bytes to 2 GiB − 1, and values outside
    /// are brought to the nearest).
    ///
    /// What a client sends ahead waits in the server's memory until the
    /// body is read — also while its extractor waits for room in
    /// [`body_buffer`](Self::body_buffer) — and the windows of all
    /// connections are bounded by
    /// [`http2_receive_buffer`](Self::http2_receive_buffer). A smaller
    /// window holds less, and slows uploads over a long round trip: a
    /// connection's request bodies arrive at most one window per round
    /// trip (1 MiB every 100 ms is 10 MB/s).
    pub fn http2_receive_window(mut self, bytes: u32) -> Self {
        self.limits.http2_receive_window = bytes.clamp(INITIAL_WINDOW, i32::MAX as u32);
        self
    }

    /// How many bytes of flow-control windows the server grants HTTP/2
    /// clients on all connections together, beyond the 65,535 bytes every
    /// connection starts with (default 256 MiB; 0 for no bound).
    ///
    /// A new connection is granted its full
    /// [`http2_receive_window`](Self::http2_receive_window) while the
    /// windows of the connections open fit within this bound, and what is
    /// left of it past that: a client that opens many connections and
    /// sends each its window holds at most this, and 64 KiB a connection.
    /// Without it, all connections may hold the window times
    /// [`max_connections`](Self::max_connections): 1 GiB with the
    /// defaults. A connection gives its window back when it closes, or at
    /// its first request if it speaks HTTP/1, which has no windows; one
    /// that has not sent a request yet holds it meanwhile.
    ///
    /// Unlike the other HTTP/2 settings, this one is for the whole server.
    pub fn http2_receive_buffer(mut self, bytes: usize) -> Self {
        self.limits.http2_receive_buffer = bytes;
        self
    }

    /// How many streams — requests being answered — an HTTP/2 client may
    /// have open at once on one connection (default 100, the least
    /// RFC 9113 recommends; hyper's own is 200). Each holds its request's
    /// headers and its handler's work while it runs: this and
    /// [`max_connections`](Self::max_connections) bound what one client
    /// can start at once. Values below 1 are raised to 1.
    pub fn http2_max_streams(mut self, streams: u32) -> Self {
        self.limits.http2_max_streams = streams.max(1);
        self
    }

    /// After how long without a packet from the client its socket is
    /// probed (TCP keep-alive), the connection being closed when three
    /// probes a sixth of that apart go unanswered (default 60 s: a client
    /// that vanished is let go 90 s after its last packet).
    ///
    /// The timeouts above end a connection that waits for a request or
    /// cannot send. What they cannot see is a client that vanished — its
    /// machine off, its network gone, a NAT that forgot it — while the
    /// server waits on something else: a WebSocket handler waiting for
    /// the next message, a quiet server-sent event stream. Probes find
    /// it. `Duration::ZERO` sends none, nor does a time longer than the
    /// systems allow (Linux: 32,767 s). (The probes' spacing and count
    /// are set on Linux, Android, FreeBSD, NetBSD, macOS, iOS and
    /// Windows; elsewhere they are the system's.)
    pub fn tcp_keepalive(mut self, idle: Duration) -> Self {
        self.limits.tcp_keepalive = idle;
        self
    }

    /// How many connections may be open at once (default 1,024).
    ///
    /// At the limit, a new client makes room: the connection idle longest
    /// — silent since it was accepted, between two requests, or over
    /// HTTP/2 with no stream open, with nothing left to send — is closed,
    /// and the new client takes its slot, as nginx reuses its keep-alive
    /// connections. So a crowd of idle connections cannot keep other
    /// clients out. A connection in the middle of a request, or still
    /// sending an answer, is never closed for this: while none is idle,
    /// the new client waits (the server holds at most this one beyond the
    /// limit) and the others wait in the listener's backlog, until a
    /// connection closes. An upgraded (WebSocket) connection counts until
    /// it closes and is not shed. Keep it below the process's limit on
    /// open files, so that the limit, not a failed `accept`, is what a
    /// flood of connections meets. Values below 1 are
    /// raised to 1; values above `usize::MAX >> 3` (as good as no limit)
    /// are lowered to it.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.limits.max_connections = connections.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self
    }

    /// How many WebSocket connections may be open at once (default: half
    /// of [`max_connections`](Self::max_connections)).
    ///
    /// An upgraded connection holds its slot under the connection limit
    /// until it closes, and is never shed to make room for a new client:
    /// without a cap of its own, a crowd of WebSockets that say nothing
    /// could take every slot. A handshake past this cap is answered
    /// `503 Service Unavailable`, with no upgrade. Silent clients are let
    /// go by the WebSockets' liveness check
    /// ([`ws::Limits::ping_interval`](crate::ws::Limits::ping_interval)).
    #[cfg(feature = "ws")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ws")))]
    pub fn max_websockets(mut self, websockets: usize) -> Self {
        self.limits.max_websockets = Some(websockets);
        self
    }

    /// The largest HTTP/1 request head, in bytes, answered `431 Request
    /// Header Fields Too Large` over it (default 64 KiB; at least 8 KiB,
    /// smaller values are raised to it). It also bounds the connection's
    /// read buffer. A connection's first request whose request line alone
    /// outgrows it is answered `414 URI Too Long`; on the requests after
    /// it, where a head starts in the stream is hyper's to know, and such
    /// a target is answered 431.
    pub fn max_header_size(mut self, bytes: usize) -> Self {
        self.limits.max_header_size = bytes.max(MIN_HEADER_SIZE);
        self
    }

    /// The largest HTTP/2 request header list, in bytes as HTTP/2 counts
    /// them (each header's name and value, and 32 more), answered
    /// `431 Request Header Fields Too Large` over it (default 16 KiB, as
    /// hyper's; at least 1 KiB, smaller values are raised to it).
    ///
    /// Smaller than HTTP/1's, for each stream of a connection holds its
    /// request's headers while it is answered: with the defaults, a
    /// connection's request heads hold at most
    /// [`http2_max_streams`](Self::http2_max_streams) × 16 KiB (1.6 MiB,
    /// about twice that as the server reads them), against 64 KiB over
    /// HTTP/1. What the heads of all connections hold is bounded by
    /// [`http2_header_buffer`](Self::http2_header_buffer).
    pub fn http2_max_header_size(mut self, bytes: usize) -> Self {
        self.limits.http2_max_header_size = bytes.max(1024);
        self
    }

    /// The most headers a request may have, answered `431 Request Header
    /// Fields Too Large` over it (default 100; HTTP/1). More than a head of
    /// [`max_header_size`](Self::max_header_size) bytes can hold (a header
    /// line takes at least 3 bytes) is no further limit, and is served as
    /// that many.
    pub fn max_headers(mut self, headers: usize) -> Self {
        self.limits.max_headers = headers;
        self
    }

    /// Puts the client's address (the listener's
    /// [`Addr`](Listener::Addr)) in each request's extensions, for the
    /// [`ConnectInfo`](crate::handler::ConnectInfo) extractor (off by
    /// default: it costs each request an extension's allocations).
    pub fn connect_info(mut self, enabled: bool) -> Self {
        self.connect_info = enabled.then_some(|_, address| Peer::of(address));
        self
    }

    /// Puts a `C` made from each connection as it is accepted in each of
    /// its requests' extensions, for the
    /// [`ConnectInfo<C>`](crate::handler::ConnectInfo) extractor: what
    /// axum's `into_make_service_with_connect_info::<C>()` does. See
    /// [`Connected`](crate::handler::Connected).
    pub fn connect_info_as<C>(mut self) -> Self
    where
        C: for<'a> crate::handler::Connected<IncomingStream<'a, L>>,
    {
        self.connect_info = Some(connected::<L, C>());
        self
    }

    /// Whether an HTTP/1 client that closes its sending side while a
    /// request is being answered still gets the answer (off by default).
    ///
    /// Off, a client that closes its connection is gone: the request it
    /// waited for is cancelled at once (its handler's future dropped, its
    /// monitors told), so that a client cannot leave work running for no
    /// one. On, the server cannot tell a client gone from one that only
    /// stopped sending, and notices it only when it writes the answer.
    pub fn half_close(mut self, enabled: bool) -> Self {
        self.half_close = enabled;
        self
    }

    /// How many bytes of answers to pipelined HTTP/1 requests may wait to
    /// be written together (default 64 KiB; 0 writes each answer at once).
    ///
    /// A client that pipelines requests gets the answers to those read
    /// together in one write. Past this bound the connection waits until
    /// the client reads, and reads no further request meanwhile.
    pub fn pipeline_buffer(mut self, bytes: usize) -> Self {
        self.limits.pipeline_buffer = bytes;
        self
    }

    /// How many bytes an HTTP/2 connection's response bodies may produce
    /// ahead of what its socket has taken (default 256 KiB; 0 for no
    /// bound but hyper's own).
    ///
    /// A body's first data always goes; it is polled for more only while
    /// its connection is below the bound. So a client that opens many
    /// streams and reads none of them holds about this much beyond each
    /// body's first chunk, not the tens of KiB a stream hyper would let it;
    /// and an answer of one chunk never waits behind another stream. A
    /// client that stalls one of its streams makes the later chunks of its
    /// other streams wait once the stalled stream's unsent bytes reach the
    /// bound.
    pub fn http2_send_buffer(mut self, bytes: usize) -> Self {
        self.limits.http2_send_buffer = bytes;
        self
    }

    /// How many bytes of request bodies the body extractors (`Json`,
    /// `Bytes`, `String`, `Form`) of one HTTP/2 connection may be reading
    /// at once (default 4 MiB; 0 for no bound).
    ///
    /// Each body counts what it may take — its declared length, else the
    /// route's body limit — from when its extractor starts until it is
    /// done. The first body a connection reads always may, whatever its
    /// size; another is answered 503 when it would take the connection
    /// past this bound. (It is not made to wait: unread, it would hold
    /// the connection's flow-control window.) Over HTTP/1 a connection
    /// reads one body at a time, and nothing changes.
    pub fn http2_body_buffer(mut self, bytes: usize) -> Self {
        self.limits.http2_body_buffer = bytes;
        self
    }

    /// How many bytes of request bodies the body extractors (`Json`,
    /// `Bytes`, `String`, `Form`) of all connections may be reading at once
    /// (default 256 MiB; 0 for no bound).
    ///
    /// Each body counts what has arrived of it and a step of 64 KiB ahead,
    /// never more than it declares (or the route's body limit), from when
    /// its extractor starts until it is done: a head alone counts one step,
    /// so a crowd of heads that declare large bodies and send none takes
    /// little of the bound. A body with no room for its next step waits,
    /// in the order the waits began, until its body timeout, and is
    /// answered 503 then; a body that has no room for its first step is
    /// not told to send meanwhile (`100 Continue`). Without the bound, a
    /// client that opens many connections and starts a body on each,
    /// ending none, holds a body limit's worth of memory per connection.
    /// A body larger than the bound is read alone. When bodies that
    /// arrive hold all of it, they wait for each other, and those not
    /// done by their body timeout are answered 503: size it for the
    /// uploads you expect at once.
    ///
    /// An HTTP/1 body that declares at most 64 KiB does not count: a
    /// connection reads one body at a time, so these hold at most 64 KiB a
    /// connection (64 MiB at the default connection limit), and the small
    /// bodies most requests carry cost no reservation.
    ///
    /// WebSocket messages (feature `ws`) count too: once a message being
    /// read is past 64 KiB, it counts twice what has arrived of it (a
    /// message in fragments holds about that) and a step ahead, up to
    /// twice the largest message a client may send
    /// (`ws::Limits::max_message_size`), and reads on only with room,
    /// until its message timeout (`ws::Limits::message_timeout`).
    ///
    /// So that its threads do not all write one count for each body, each
    /// takes the bound a share at a time (64 KiB; a 64th of a bound under
    /// 4 MiB; none under 1 MiB) and its bodies take their room from what
    /// it keeps, up to two shares; what threads keep counts in the bound.
    /// With shares, a body larger than seven eighths of the bound is read
    /// with seven eighths of it (what idle threads keep could otherwise
    /// leave it waiting), and a body its thread has room for passes bodies
    /// waiting on other threads.
    pub fn body_buffer(mut self, bytes: usize) -> Self {
        self.limits.body_buffer = bytes;
        self
    }

    /// How many bytes of request heads the HTTP/2 requests being answered
    /// on all connections may hold at once (default 64 MiB; 0 for no
    /// bound).
    ///
    /// A head counts its size as HTTP/2 counts a header list — each field's
    /// name and value and 32 bytes — from when the request reaches the
    /// service until its answer is ready. A request that would take the
    /// server past this bound is answered 503 at once; one alone always
    /// passes. Without it, a client that opens many connections, each with
    /// every stream it may and requests that take long, holds
    /// `max_connections` × [`http2_max_streams`](Self::http2_max_streams) ×
    /// [`http2_max_header_size`](Self::http2_max_header_size) of heads,
    /// and two to three times that in memory. An HTTP/1 connection reads one
    /// request at a time: its head is bounded by
    /// [`max_header_size`](Self::max_header_size) (64 MiB at the default
    /// connection limit, which this default matches).
    ///
    /// Unlike the other HTTP/2 settings, this one is for the whole server.
    /// So that its threads do not all write one count per request, each
    /// takes the bound in shares (64 KiB; a 64th of a bound under 4 MiB;
    /// none under 64 KiB) and counts its requests' heads against its own:
    /// the shares count as held, so the bound holds, and a request may be
    /// refused while threads keep up to two shares each unused.
    pub fn http2_header_buffer(mut self, bytes: usize) -> Self {
        self.limits.http2_header_buffer = bytes;
        self
    }

    /// After a graceful shutdown's signal, how long the connections have to
    /// finish their requests, and WebSocket handlers to end after their
    /// 1001 close frame (default 30 s); connections still open then — a
    /// response that streams for ever, a body that never arrives — are
    /// closed, and the server returns.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.limits.shutdown_timeout = timeout.min(FOREVER);
        self
    }

    /// Serves HTTPS with `tls` (feature `tls`): every connection begins
    /// with a TLS handshake, then speaks HTTP/2 or HTTP/1.1 as the client
    /// chose (ALPN).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls(mut self, tls: Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Serves the connections on `workers` threads of the server's own,
    /// each running a single-threaded tokio runtime: a connection lives on
    /// one worker from its accept to its end, with its HTTP/2 streams and
    /// its WebSocket, and nothing of it moves between threads. The accept
    /// loop stays on the runtime that awaits the server and hands the
    /// connections to the workers in turn, so that each serves an equal
    /// share of them. 0, the default: no workers, every connection a task
    /// of the runtime that awaits the server.
    ///
    /// The server's limits hold across the workers as on one: the
    /// connection cap (and the shedding of the connection idle longest),
    /// the WebSocket cap, the allowances for heads, bodies and HTTP/2
    /// windows are the server's, not a worker's. A graceful shutdown drains
    /// every worker within its deadline; the workers stop when the server
    /// returns (or its future is dropped).
    ///
    /// Which to pick: workers, for a server that has the machine to
    /// itself — they spare the connections the multi-thread runtime's work
    /// stealing, whose shared queues and moved tasks cost more the more
    /// cores take part — and, on each worker, requests with a body, HTTP/2
    /// heads and requests that suspend write no count another worker
    /// writes. Measured on two cores (the repository's BENCHMARKS.md,
    /// "Over cores"; medians of three and five runs): a request's CPU
    /// time with 2 workers is 0.84× and 0.95× that with 1 on GET, 0.98×
    /// and 0.94× on POST; against `serve` on a multi-thread runtime of 2
    /// threads, 0.92× and 0.98× on GET, 1.01× and 0.92× on POST (single
    /// runs differ by up to 15 %). Without workers, for a service
    /// whose handlers lean on the runtime they run in (work spawned onto
    /// its other threads, blocking sections), or a server that shares its
    /// runtime with other work.
    ///
    /// ```no_run
    /// use pronghorn::{Router, serve};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
    /// let router = Router::new().get("/", || "hello").compile().unwrap();
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
    /// serve(listener, router).per_core().await
    /// # }
    /// ```
    pub fn workers(mut self, workers: usize) -> Self {
        self.limits.workers = workers;
        self
    }

    /// As many [`workers`](Self::workers) as the cores the process may use
    /// (`std::thread::available_parallelism`; one if that is unknown).
    pub fn per_core(self) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        self.workers(cores)
    }

    /// Calls `start` on each [worker](Self::workers) thread as it starts,
    /// before it serves a connection, with the worker's index (0 to
    /// `workers - 1`): to pin each worker to a core, name it in your
    /// logs, or set up what its thread keeps. Pinning is the caller's to
    /// do — pronghorn has no `unsafe` code, and setting a thread's
    /// affinity is a system call — with a crate made for it, as
    /// `core_affinity`'s `set_for_current`. Without workers it is not
    /// called.
    ///
    /// ```no_run
    /// use pronghorn::{Router, serve};
    ///
    /// # #[tokio::main] async fn main() -> std::io::Result<()> {
    /// let router = Router::new().get("/", || "hello").compile().unwrap();
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
    /// serve(listener, router)
    ///     .per_core()
    ///     .on_worker_start(|index| tracing::info!(index, "worker started"))
    ///     .await
    /// # }
    /// ```
    pub fn on_worker_start(mut self, start: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_worker_start = Some(Arc::new(start));
        self
    }

    /// The address the server listens on.
    ///
    /// # Errors
    ///
    /// The listener's, when it cannot tell.
    pub fn local_addr(&self) -> std::io::Result<L::Addr> {
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
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<S, F, L>
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
pub struct WithGracefulShutdown<S, F, L: Listener = TcpListener> {
    serve: Serve<S, L>,
    signal: F,
}

impl<S, F, L: Listener> WithGracefulShutdown<S, F, L> {
    /// The address the server listens on, as [`Serve::local_addr`].
    ///
    /// # Errors
    ///
    /// The listener's, when it cannot tell.
    pub fn local_addr(&self) -> std::io::Result<L::Addr> {
        self.serve.local_addr()
    }
}

impl<S, F, L: Listener> fmt::Debug for WithGracefulShutdown<S, F, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown")
            .field("serve", &self.serve)
            .finish()
    }
}

impl<S: Served<L>, L: Listener> IntoFuture for Serve<S, L> {
    type Output = std::io::Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run::run(self, pending::<()>()))
    }
}

impl<S, F, L> IntoFuture for WithGracefulShutdown<S, F, L>
where
    L: Listener,
    S: Served<L>,
    F: Future<Output = ()> + Send + 'static,
{
    type Output = std::io::Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run::run(self.serve, self.signal))
    }
}
