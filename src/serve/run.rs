//! The server's run: the accept loop, hyper's settings, each connection's
//! task, and the drain at shutdown.

use std::{future::Future, pin::pin, sync::Arc, time::Duration};

use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::conn::auto,
};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
    sync::OwnedSemaphorePermit,
    task::JoinSet,
};

use super::{
    Runs, Serve, Served, Settings,
    connection::{Connection, ServerBounds},
    executor::InPlace,
    graceful::Graceful,
    io::{Batched, CoalescingIo},
    listener::{Listener, cast},
    request_line::RequestLineIo,
    slots::{SHED_RETRY, Slots},
    timeouts::{ConnectionWatch, Watchdog},
};
use crate::body::BoxError;
use crate::{shares::share_tables_on_this_thread, shutdown::Shutdown};

/// Serves `serve`'s listener until `signal`, then drains the connections
/// within the shutdown deadline.
pub(super) async fn run<S, F, L>(serve: Serve<S, L>, signal: F) -> std::io::Result<()>
where
    L: Listener,
    S: Served<L>,
    F: Future<Output = ()> + Send,
{
    let Serve {
        listener,
        service,
        limits,
        connect_info,
        half_close,
        #[cfg(feature = "tls")]
        tls,
        on_worker_start,
    } = serve;
    // A `Router` served as it is is compiled before the first client: one
    // that does not compile is the server's error, not every request's.
    let (service, made) = service.into_served();
    let connect_info = connect_info.or(made.map(|made| made.0));
    crate::served::check(&service)?;
    let limits = limits.held_to(listener.connection_limit());
    let mut builder = hyper_builder(&limits, half_close);
    // The watchdogs keep each connection's time, in milliseconds from here.
    let clock = tokio::time::Instant::now();
    let shutdown = Arc::new(Shutdown::default());
    let slots = Slots::new(limits.max_connections);
    let bounds = ServerBounds::of(&limits);
    let mut workers = match limits.workers {
        0 => None,
        count => Some(Workers::start(count, on_worker_start)?),
    };
    let mut connections = JoinSet::new();
    let mut signal = pin!(signal);
    let mut clients = Clients::new(listener, keepalive(limits.tcp_keepalive));
    loop {
        while connections.try_join_next().is_some() {}
        let Some((slot, (stream, peer))) = clients.next(&slots, signal.as_mut()).await else {
            break;
        };
        let watch = Arc::new(ConnectionWatch::new(
            limits.http2_send_buffer,
            super::timeouts::millis(clock.elapsed()),
        ));
        let slot = slots.occupy(slot, &watch);
        let index = slot.index();
        // The window goes with this connection's copy of the builder.
        let (window, grant) = bounds.grant_window();
        builder
            .http2()
            .initial_stream_window_size(window)
            .initial_connection_window_size(window);
        let peer = connect_info.map(|make| make(&stream, peer));
        let service = Connection::new(
            service.clone(),
            Arc::clone(&watch),
            &shutdown,
            peer,
            &bounds,
            grant,
        );
        let start = Start {
            builder: builder.clone(),
            service,
            watch: Arc::clone(&watch),
            slot,
            shutdown: Arc::clone(&shutdown),
            limits,
            clock,
            #[cfg(feature = "tls")]
            tls: tls.clone(),
        };
        if let Some(task) = spawn(&mut connections, workers.as_mut(), start, stream) {
            slots.started(index, &watch, task);
        }
    }
    drop(clients);
    drain(connections, &shutdown, limits.shutdown_timeout).await;
    Ok(())
}

/// Where the clients come from: the listener, the TCP keep-alive its
/// sockets get, and a client accepted at the limit, waiting for the slot
/// of a connection shed for it.
struct Clients<L: Listener> {
    listener: L,
    keepalive: Option<socket2::TcpKeepalive>,
    arrived: Option<(L::Io, L::Addr)>,
}

impl<L: Listener> Clients<L> {
    fn new(listener: L, keepalive: Option<socket2::TcpKeepalive>) -> Self {
        Self {
            listener,
            keepalive,
            arrived: None,
        }
    }

    /// The next client and a free slot for it; `None` once `signal` comes.
    /// At the connection limit, a new client makes room: the connection
    /// idle longest is shed, and the client waits (in `arrived`) for its
    /// slot, or, while none is idle, for any.
    async fn next<F: Future<Output = ()>>(
        &mut self,
        slots: &Slots,
        signal: std::pin::Pin<&mut F>,
    ) -> Option<(OwnedSemaphorePermit, (L::Io, L::Addr))> {
        let Self {
            listener,
            keepalive,
            arrived,
        } = self;
        next_client(slots, listener, keepalive, arrived, signal).await
    }
}

/// [`Clients::next`], on its parts.
async fn next_client<F: Future<Output = ()>, L: Listener>(
    slots: &Slots,
    listener: &mut L,
    keepalive: &Option<socket2::TcpKeepalive>,
    arrived: &mut Option<(L::Io, L::Addr)>,
    mut signal: std::pin::Pin<&mut F>,
) -> Option<(OwnedSemaphorePermit, (L::Io, L::Addr))> {
    let slot = loop {
        if let Some(slot) = slots.try_free() {
            break slot;
        }
        tokio::select! {
            slot = slots.free() => break slot,
            accepted = accept(&mut *listener, keepalive), if arrived.is_none() => {
                *arrived = Some(accepted);
                slots.shed_idle_longest();
            }
            () = tokio::time::sleep(SHED_RETRY), if arrived.is_some() => {
                slots.shed_idle_longest();
            }
            () = signal.as_mut() => return None,
        }
    };
    let accepted = match arrived.take() {
        Some(accepted) => accepted,
        None => tokio::select! {
            accepted = accept(listener, keepalive) => accepted,
            () = signal.as_mut() => return None,
        },
    };
    Some((slot, accepted))
}

/// Spawns the connection's task: on this runtime, or, for a TCP socket,
/// on the next worker's.
fn spawn<S, B, Io>(
    connections: &mut JoinSet<()>,
    workers: Option<&mut Workers>,
    start: Start<S>,
    stream: Io,
) -> Option<tokio::task::AbortHandle>
where
    S: Runs<B>,
    B: http_body::Body<Data: Send, Error: Into<BoxError>> + Send + 'static,
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(workers) = workers else {
        return Some(connections.spawn(start.run(Handoff::Registered(stream))));
    };
    let stream = match cast::<Io, TcpStream>(stream) {
        Ok(stream) => stream,
        // Only a TCP socket moves to another runtime's reactor.
        Err(stream) => return Some(connections.spawn(start.run(Handoff::Registered(stream)))),
    };
    // The socket leaves this runtime's reactor for the worker's.
    match stream.into_std() {
        Ok(stream) => {
            Some(connections.spawn_on(start.run(Handoff::<Io>::Moved(stream)), workers.next()))
        }
        Err(error) => {
            tracing::debug!(%error, "pronghorn: could not hand a connection to a worker");
            None
        }
    }
}

/// A socket on its way to its connection's task.
enum Handoff<Io> {
    /// Accepted on the runtime that runs the task.
    Registered(Io),
    /// Taken off the accepting runtime's reactor, for a worker's.
    Moved(std::net::TcpStream),
}

/// What a connection's task needs to serve it, made where it was accepted.
struct Start<S> {
    builder: auto::Builder<InPlace>,
    service: Connection<S>,
    watch: Arc<ConnectionWatch>,
    slot: super::slots::Slot,
    shutdown: Arc<Shutdown>,
    limits: Settings,
    clock: tokio::time::Instant,
    #[cfg(feature = "tls")]
    tls: Option<super::Tls>,
}

impl<S> Start<S> {
    /// Serves the connection on `socket` until it ends: TLS if set, write
    /// coalescing, hyper, graceful shutdown and the watchdog's timeouts.
    async fn run<B, Io>(self, socket: Handoff<Io>)
    where
        Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        S: Runs<B>,
        B: http_body::Body<Data: Send, Error: Into<BoxError>> + Send + 'static,
    {
        let Self {
            builder,
            service,
            watch,
            slot,
            shutdown,
            limits,
            clock,
            #[cfg(feature = "tls")]
            tls,
        } = self;
        let stream = match socket {
            Handoff::Registered(stream) => stream,
            // Moved only where the listener's sockets are TCP ones.
            Handoff::Moved(stream) => {
                match TcpStream::from_std(stream).map(cast::<TcpStream, Io>) {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(_)) => return,
                    Err(error) => {
                        tracing::debug!(%error, "pronghorn: a worker could not take a connection");
                        return;
                    }
                }
            }
        };
        #[cfg(feature = "tls")]
        let stream = match &tls {
            Some(tls) => tls.accept(stream),
            None => super::tls::Transport::from(stream),
        };
        // The slot goes with the socket: an upgraded connection keeps it
        // until it closes.
        let io = CoalescingIo::new(
            stream,
            limits.pipeline_buffer,
            Arc::clone(&watch),
            Some(slot),
        );
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(RequestLineIo::new(io)), service)
            .into_owned();
        let connection = Graceful::new(connection, &shutdown, |connection| {
            connection.graceful_shutdown();
        });
        let connection = Batched::new(connection, limits.pipeline_buffer > 0);
        let connection = Watchdog::new(connection, watch, limits.timeouts, clock);
        if let Err(error) = connection.await {
            tracing::debug!(error = %error, "pronghorn: connection ended with an error");
        }
    }
}

/// The server's worker threads (see [`Serve::workers`]): each runs a
/// single-threaded runtime until the server ends.
struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    /// Dropped when the server ends: each worker's runtime then stops.
    _stop: tokio::sync::watch::Sender<()>,
    /// The worker the next connection goes to.
    next: usize,
}

impl Workers {
    fn start(count: usize, on_start: Option<super::WorkerStart>) -> std::io::Result<Self> {
        let (stop, stopped) = tokio::sync::watch::channel(());
        let mut handles = Vec::with_capacity(count);
        for index in 0..count {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            handles.push(runtime.handle().clone());
            let mut stopped = stopped.clone();
            let on_start = on_start.clone();
            std::thread::Builder::new()
                .name(format!("pronghorn-worker-{index}"))
                .spawn(move || {
                    if let Some(on_start) = on_start {
                        on_start(index);
                    }
                    // A worker's connections never leave it: the requests
                    // it suspends share one hold on the router's tables.
                    share_tables_on_this_thread();
                    runtime.block_on(async move { while stopped.changed().await.is_ok() {} });
                })?;
        }
        Ok(Self {
            handles,
            _stop: stop,
            next: 0,
        })
    }

    /// The runtime of the worker whose turn it is: connections go round
    /// the workers in turn.
    fn next(&mut self) -> &tokio::runtime::Handle {
        let handle = &self.handles[self.next];
        self.next = (self.next + 1) % self.handles.len();
        handle
    }
}

/// hyper's connection settings, from the limits.
fn hyper_builder(limits: &Settings, half_close: bool) -> auto::Builder<InPlace> {
    let mut builder = auto::Builder::new(InPlace);
    builder
        .http1()
        // The watchdog times the wait for each head (see `Watchdog`):
        // hyper's own timeout would also cost each request one more turn
        // of hyper's poll loop, to arm it.
        .header_read_timeout(None)
        .keep_alive(true)
        .half_close(half_close)
        .max_buf_size(limits.max_header_size)
        // hyper sets aside room for this many headers at each attempt to
        // parse a head: no more than a head can hold.
        .max_headers(limits.max_headers.min(limits.max_header_size / 3));
    // A ping interval of zero would close every idle connection at once:
    // zero sends no pings, as it does for `Sse::keep_alive`.
    let pings = Some(limits.http2_keep_alive).filter(|interval| !interval.is_zero());
    builder
        .http2()
        .timer(TokioTimer::new())
        // WebSockets over HTTP/2 (RFC 8441).
        .enable_connect_protocol()
        .keep_alive_interval(pings)
        .keep_alive_timeout(limits.http2_keep_alive)
        .max_concurrent_streams(limits.http2_max_streams)
        .max_header_list_size(u32::try_from(limits.http2_max_header_size).unwrap_or(u32::MAX));
    builder
}

/// The TCP keep-alive of accepted sockets: probes after `idle` of
/// silence, three a sixth of that apart; `None` for zero, and for more
/// than the longest wait the systems allow (Linux: 32,767 s).
fn keepalive(idle: Duration) -> Option<socket2::TcpKeepalive> {
    if idle.is_zero() || idle > Duration::from_secs(32_767) {
        return None;
    }
    let keepalive = socket2::TcpKeepalive::new().with_time(idle);
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "macos",
        target_os = "ios",
        target_os = "windows",
    ))]
    let keepalive = keepalive
        .with_interval((idle / 6).max(Duration::from_secs(1)))
        .with_retries(3);
    Some(keepalive)
}

/// The next client, with `TCP_NODELAY` and `keepalive` set where it is a
/// TCP socket.
async fn accept<L: Listener>(
    listener: &mut L,
    keepalive: &Option<socket2::TcpKeepalive>,
) -> (L::Io, L::Addr) {
    let (io, peer) = listener.accept().await;
    if let Some(stream) = (&io as &dyn std::any::Any).downcast_ref::<TcpStream>() {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "pronghorn: could not set TCP_NODELAY");
        }
        if let Some(keepalive) = keepalive {
            let socket = socket2::SockRef::from(stream);
            if let Err(error) = socket.set_tcp_keepalive(keepalive) {
                tracing::debug!(%error, "pronghorn: could not set TCP keep-alive");
            }
        }
    }
    (io, peer)
}

/// After the signal: tells every connection to finish, waits for them and
/// for the upgraded connections they handed over, and closes those still
/// open at the deadline.
async fn drain(mut connections: JoinSet<()>, shutdown: &Shutdown, deadline: Duration) {
    shutdown.signal();
    let finished = async {
        while connections.join_next().await.is_some() {}
        shutdown.upgraded_closed().await;
    };
    if tokio::time::timeout(deadline, finished).await.is_err() {
        tracing::debug!(
            open = connections.len(),
            "pronghorn: connections still open at the shutdown deadline are closed"
        );
        connections.shutdown().await;
    }
}
