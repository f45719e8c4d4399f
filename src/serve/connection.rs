//! tower → hyper: one connection's service, as hyper calls it.

use std::{
    cell::{Cell, OnceCell, RefCell},
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll, Waker, ready},
};

use http::{Method, Request, Response, StatusCode, Version};
use http_body::Body as HttpBody;
use pin_project_lite::pin_project;
use tower_service::Service;

use crate::{
    handler::{BodyAllowance, ServerAllowance, UNCOUNTED},
    shutdown::Shutdown,
};

use super::{
    admission::{Admission, HeadFields},
    heads::{ConnectionHeads, HeadAllowance, HeadReservation},
    io,
    response_body::ConnectionBody,
    timeouts::{ConnectionWatch, NextHead, StreamGuard},
    windows::{WindowAllowance, WindowGrant},
};
use crate::body::BoxError;

/// One connection's service, as hyper calls it: tower's `call(&mut self)`
/// behind hyper's `call(&self)`.
///
/// hyper-util's `TowerToHyperService` clones the service for every request
/// and drives the clone through a `Oneshot`. Here the connection keeps one
/// service, asks it once whether it is ready and, when it is, calls it at
/// once: the request moves straight into the service's own future. Only a
/// service that is not ready at once (a concurrency limit, a buffer) is
/// cloned, and the clone is polled for readiness with the task's waker.
/// An HTTP/1 request with a body is called on the future's first poll, on
/// a second instance of the service the connection keeps for that: a
/// clone made once for the connection, not one a request — a clone of a
/// router writes the reference count every worker shares.
///
/// It also tells the connection's watchdog that a request arrived, counts
/// HTTP/2 streams until their response ends and their heads until it is
/// ready, and stops the connection's writes from being held while the
/// service or a response body is not ready (see [`io`]).
pub(super) struct Connection<S> {
    service: RefCell<S>,
    /// The instance the HTTP/1 requests with a body are called on, made
    /// at the first one.
    deferred: OnceCell<Arc<Mutex<S>>>,
    watch: Arc<ConnectionWatch>,
    /// Handed to the requests that ask for an upgrade (WebSocket).
    #[cfg(feature = "ws")]
    shutdown: Arc<Shutdown>,
    #[cfg(feature = "ws")]
    upgrades: crate::upgrade_slots::UpgradeSlots,
    /// The client's address, put in each request when
    /// [`Serve::connect_info`](super::Serve::connect_info) asks for it.
    peer: Option<Peer>,
    /// The server's allowance for bodies, and what one HTTP/2
    /// connection's bodies may hold past the first.
    server_bodies: Option<ServerAllowance>,
    http2_bodies: usize,
    /// What the body extractors of the connection's requests may hold at
    /// once, over HTTP/1 (the server's allowance) and HTTP/2 (also the
    /// connection's); `None` for no bound. Made at the first request
    /// that needs one: a connection speaks one of the two, and most
    /// HTTP/1 requests need none.
    http1_allowance: OnceCell<Option<BodyAllowance>>,
    http2_allowance: OnceCell<Option<BodyAllowance>>,
    /// What the HTTP/2 requests being answered on all connections may
    /// hold in heads, and the connection's handle on it, made at its
    /// first HTTP/2 request; `None` for no bound.
    server_heads: Option<HeadAllowance>,
    heads: OnceCell<Option<ConnectionHeads>>,
    /// The connection's HTTP/2 receive window in the server's bound,
    /// given back when the connection ends, or at its first request if
    /// that is an HTTP/1 one.
    window: Cell<Option<WindowGrant>>,
    /// The last `Host` admitted (up to [`KNOWN_HOST`] bytes): a client
    /// names the same host request after request, checked once.
    known_host: RefCell<Vec<u8>>,
}

/// The client's address, put in each request as a
/// [`ConnectInfo`](crate::handler::ConnectInfo): a TCP socket's as it is,
/// another listener's through the one function that knows its type.
#[derive(Clone)]
pub(super) enum Peer {
    Tcp(std::net::SocketAddr),
    Other(Arc<dyn Fn(&mut http::Extensions) + Send + Sync>),
}

impl Peer {
    /// The peer at `address`, of a listener's address type.
    pub(super) fn of<A: Clone + Send + Sync + 'static>(address: A) -> Self {
        match super::listener::cast::<A, std::net::SocketAddr>(address) {
            Ok(address) => Peer::Tcp(address),
            Err(address) => Peer::Other(Arc::new(move |extensions: &mut http::Extensions| {
                extensions.insert(crate::handler::ConnectInfo(address.clone()));
            })),
        }
    }

    #[inline]
    fn insert(&self, extensions: &mut http::Extensions) {
        match self {
            Peer::Tcp(address) => {
                extensions.insert(crate::handler::ConnectInfo(*address));
            }
            Peer::Other(insert) => insert(extensions),
        }
    }
}

/// The longest `Host` a connection keeps as known.
const KNOWN_HOST: usize = 255;

/// The server's bounds on what the requests of all its connections hold
/// at once, which each connection takes its part of; `None` for no bound.
pub(super) struct ServerBounds {
    /// The slots of WebSocket connections.
    #[cfg(feature = "ws")]
    upgrades: crate::upgrade_slots::UpgradeSlots,
    /// Request bodies being read, and WebSocket messages.
    bodies: Option<ServerAllowance>,
    /// The bytes of bodies one HTTP/2 connection may read at once, past
    /// the first.
    http2_bodies: usize,
    /// The heads of the HTTP/2 requests being answered.
    heads: Option<HeadAllowance>,
    /// The HTTP/2 receive windows granted, and the full window.
    windows: Option<WindowAllowance>,
    window: u32,
}

impl ServerBounds {
    /// The server-wide bounds every connection shares, from the limits.
    pub(super) fn of(limits: &super::Settings) -> Self {
        ServerBounds {
            #[cfg(feature = "ws")]
            upgrades: crate::upgrade_slots::UpgradeSlots::new(
                (limits.max_websockets).unwrap_or(limits.max_connections.div_ceil(2)),
            ),
            bodies: (limits.body_buffer > 0).then(|| ServerAllowance::new(limits.body_buffer)),
            http2_bodies: limits.http2_body_buffer,
            heads: HeadAllowance::new(limits.http2_header_buffer),
            windows: (limits.http2_receive_buffer > 0)
                .then(|| WindowAllowance::new(limits.http2_receive_buffer)),
            window: limits.http2_receive_window,
        }
    }

    /// A new connection's HTTP/2 receive window, its own and each
    /// stream's, and its place in the server's bound if there is one.
    pub(super) fn grant_window(&self) -> (u32, Option<WindowGrant>) {
        let grant = (self.windows.as_ref()).map(|windows| windows.grant(self.window));
        (
            grant.as_ref().map_or(self.window, WindowGrant::window),
            grant,
        )
    }
}

impl<S> Connection<S> {
    #[cfg_attr(not(feature = "ws"), allow(unused_variables))]
    pub(super) fn new(
        service: S,
        watch: Arc<ConnectionWatch>,
        shutdown: &Arc<Shutdown>,
        peer: Option<Peer>,
        bounds: &ServerBounds,
        window: Option<WindowGrant>,
    ) -> Self {
        Self {
            service: RefCell::new(service),
            deferred: OnceCell::new(),
            watch,
            #[cfg(feature = "ws")]
            shutdown: Arc::clone(shutdown),
            #[cfg(feature = "ws")]
            upgrades: bounds.upgrades.clone(),
            peer,
            server_bodies: bounds.bodies.clone(),
            http2_bodies: bounds.http2_bodies,
            http1_allowance: OnceCell::new(),
            http2_allowance: OnceCell::new(),
            server_heads: bounds.heads.clone(),
            heads: OnceCell::new(),
            window: Cell::new(window),
            known_host: RefCell::new(Vec::new()),
        }
    }
}

/// Whether an HTTP/1 body declares a length that does not count in the
/// server's allowance.
fn declared_small(body: &impl HttpBody) -> bool {
    body.size_hint()
        .exact()
        .is_some_and(|length| length <= UNCOUNTED)
}

impl<S, RequestBody, ResponseBody> hyper::service::Service<Request<RequestBody>> for Connection<S>
where
    S: Service<Request<RequestBody>, Response = Response<ResponseBody>> + Clone,
    RequestBody: HttpBody,
    S::Error: Into<BoxError>,
{
    type Response = Response<ConnectionBody<ResponseBody>>;
    type Error = BoxError;
    type Future = ConnectionFuture<S, Request<RequestBody>>;

    fn call(&self, mut request: Request<RequestBody>) -> Self::Future {
        self.watch.head_received();
        if let Some(peer) = &self.peer {
            // Through a moved-out map: a pointer into the request given to
            // code the compiler cannot see would cost the request two
            // copies on its way to the service.
            let mut extensions = std::mem::take(request.extensions_mut());
            peer.insert(&mut extensions);
            *request.extensions_mut() = extensions;
        }
        let fields = HeadFields::read(&request);
        let admission = fields.admission(&request, &self.known_host.borrow());
        if let (Admission::Sound, Some(host)) = (&admission, fields.host()) {
            self.know_host(host);
        }
        let http2 = request.version() == Version::HTTP_2;
        // An upgrade over HTTP/2 is an extended CONNECT (RFC 8441).
        let upgrade_header = match http2 {
            true => request.extensions().get::<hyper::ext::Protocol>().is_some(),
            false => fields.upgrade,
        };
        let body = !request.body().is_end_stream();
        self.lend(&mut request, upgrade_header, http2, body);
        let stream = http2.then(|| self.watch.stream_opened());
        // hyper hands the socket to a request's upgrade when the
        // connection ends after it, whatever the answer: one asked for by
        // an `Upgrade` header or a CONNECT.
        let upgrade = upgrade_header || request.method() == Method::CONNECT;
        let here = |state, stream| ConnectionFuture::answered_here(state, stream, upgrade);
        let head = match admission {
            Admission::Refused(status) => return here(State::Refused { status }, stream),
            // A malformed request is a stream error of type PROTOCOL_ERROR
            // (RFC 9113, 8.1.1): hyper resets the stream with the reason
            // of the `h2::Error` it finds in the service's error.
            Admission::Malformed => {
                let error = Box::new(h2::Error::from(h2::Reason::PROTOCOL_ERROR));
                return here(State::Failed { error: Some(error) }, stream);
            }
            Admission::Sound if http2 => match self.heads() {
                Some(heads) => match heads.reserve(&request) {
                    Some(head) => Some(head),
                    None => {
                        let status = StatusCode::SERVICE_UNAVAILABLE;
                        return here(State::Refused { status }, stream);
                    }
                },
                None => None,
            },
            Admission::Sound => None,
        };
        ConnectionFuture {
            state: self.start(request, http2, body),
            stream,
            next_head: (!http2).then(|| NextHead::new(Arc::clone(&self.watch))),
            head,
            upgrade,
        }
    }
}

impl<S> Connection<S> {
    /// Keeps `host`, just admitted, as the connection's known one.
    #[inline]
    fn know_host(&self, host: &[u8]) {
        let mut known = self.known_host.borrow_mut();
        if *known != host && host.len() <= KNOWN_HOST {
            known.clear();
            known.extend_from_slice(host);
        }
    }

    /// Lends the request what the connection holds for it: a request for
    /// an upgrade, the server's shutdown and WebSocket slots; a request
    /// with a body, the allowance its extractor reads (over HTTP/1, not a
    /// small one); a request for an upgrade, the one its WebSocket's
    /// messages read.
    #[inline(always)]
    fn lend<B: HttpBody>(&self, request: &mut Request<B>, upgrade: bool, http2: bool, body: bool) {
        #[cfg(feature = "ws")]
        if upgrade {
            let handle = crate::shutdown::ShutdownHandle::new(Arc::clone(&self.shutdown));
            request.extensions_mut().insert(handle);
            // Over HTTP/2 the upgraded stream is one of the connection's:
            // counted open while it lives, the connection is not idle.
            let slots = match http2 {
                true => self.upgrades.holding(self.watch.stream_opened()),
                false => self.upgrades.clone(),
            };
            request.extensions_mut().insert(slots);
        }
        if !http2 {
            // HTTP/1 has no flow-control windows.
            drop(self.window.take());
        }
        let lent = match http2 {
            true => body,
            false => upgrade || (body && !declared_small(request.body())),
        };
        if let Some(allowance) = lent.then(|| self.allowance(http2)).flatten() {
            request.extensions_mut().insert(allowance.clone());
        }
    }

    /// The body allowance of the connection's HTTP/2 or HTTP/1 requests,
    /// made at its first use; `None` for no bound.
    fn allowance(&self, http2: bool) -> Option<&BodyAllowance> {
        let (made, connection) = match http2 {
            true => (&self.http2_allowance, self.http2_bodies),
            false => (&self.http1_allowance, 0),
        };
        let made = made.get_or_init(|| {
            let allowance = BodyAllowance::new(connection, self.server_bodies.clone());
            allowance.bounds().then_some(allowance)
        });
        made.as_ref()
    }

    /// The connection's handle on the server's bound on HTTP/2 heads, made
    /// at its first use; `None` for no bound.
    fn heads(&self) -> Option<&ConnectionHeads> {
        let made = self.heads.get_or_init(|| {
            self.server_heads
                .as_ref()
                .map(HeadAllowance::for_connection)
        });
        made.as_ref()
    }

    /// Calls the service with `request`, or readies the call for the
    /// future's first poll.
    #[inline(always)]
    fn start<R>(&self, request: R, http2: bool, body: bool) -> State<S, R>
    where
        S: Service<R> + Clone,
        S::Error: Into<BoxError>,
    {
        // hyper calls the service from the connection's task, one call at
        // a time (HTTP/2 streams too), and no future holds the borrow: it
        // ends with this call.
        let mut service = self.service.borrow_mut();
        if body && !http2 {
            // hyper calls the service before it hands over the body bytes
            // it read with the head, and hands them over before it polls
            // the answer: called then, a handler finds a small body there
            // and answers at once, its state never boxed.
            let deferred = (self.deferred).get_or_init(|| Arc::new(Mutex::new(service.clone())));
            return State::Deferred {
                service: Arc::clone(deferred),
                request: Some(request),
            };
        }
        // The readiness asked here with a waker that ignores wake-ups is
        // asked again, with the task's, on the clone below.
        match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
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
        }
    }
}

pin_project! {
    /// The response future of [`Connection`].
    pub(super) struct ConnectionFuture<S, R>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R>,
        stream: Option<StreamGuard>,
        // Over HTTP/1, the wait for the next head, begun when the answer
        // ends.
        next_head: Option<NextHead>,
        // The request's place among the HTTP/2 heads being answered.
        head: Option<HeadReservation>,
        // The request asked for an upgrade.
        upgrade: bool,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, R>
    where
        S: Service<R>,
    {
        Called { #[pin] future: S::Future },
        // Called at the next poll, on a clone: a service not ready.
        Waiting { service: S, request: Option<R> },
        // Called at the first poll, on the connection's second instance:
        // an HTTP/1 request with a body (see `start`).
        Deferred { service: Arc<Mutex<S>>, request: Option<R> },
        Failed { error: Option<BoxError> },
        // Answered without the service: a head the connection refuses
        // (400, 501; see `HeadFields::verdict`), or one past the server's
        // allowance for heads (503).
        Refused { status: StatusCode },
    }
}

impl<S: Service<R>, R> ConnectionFuture<S, R> {
    /// A request answered by the connection, not the service: it ends an
    /// HTTP/1 connection, and holds no place among the HTTP/2 heads.
    fn answered_here(state: State<S, R>, stream: Option<StreamGuard>, upgrade: bool) -> Self {
        Self {
            state,
            stream,
            next_head: None,
            head: None,
            upgrade,
        }
    }
}

impl<S, R, B> ConnectionFuture<S, R>
where
    S: Service<R, Response = Response<B>>,
{
    /// The answer as the connection sends it: the service's, or its own
    /// (no body).
    fn answer(self: Pin<&mut Self>, response: Response<Option<B>>) -> Response<ConnectionBody<B>> {
        let this = self.project();
        if *this.upgrade || response.status() == StatusCode::SWITCHING_PROTOCOLS {
            // The socket may be about to change hands — to the upgrade, or,
            // one not granted, to no one if the connection ends here: the
            // answer is written before it does.
            io::stop_holding();
        }
        let (stream, next_head) = (this.stream.take(), this.next_head.take());
        // The head is no longer needed, whatever the body still takes.
        this.head.take();
        response.map(|body| ConnectionBody::new(body, stream, next_head))
    }
}

impl<S, R, B> Future for ConnectionFuture<S, R>
where
    S: Service<R, Response = Response<B>>,
    S::Error: Into<BoxError>,
{
    type Output = Result<Response<ConnectionBody<B>>, BoxError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let future = match self.as_mut().project().state.project() {
                StateProj::Called { future } => {
                    let Poll::Ready(result) = future.poll(cx) else {
                        // The connection waits on the service: what it
                        // answered so far goes out now.
                        io::stop_holding();
                        return Poll::Pending;
                    };
                    let response = result.map_err(Into::into)?;
                    return Poll::Ready(Ok(self.answer(response.map(Some))));
                }
                StateProj::Failed { error } => {
                    return Poll::Ready(Err(error.take().expect("polled after completion")));
                }
                StateProj::Refused { status } => {
                    let mut response = Response::new(None);
                    *response.status_mut() = *status;
                    if *status != StatusCode::SERVICE_UNAVAILABLE {
                        response.headers_mut().insert(
                            http::header::CONNECTION,
                            http::HeaderValue::from_static("close"),
                        );
                    }
                    return Poll::Ready(Ok(self.answer(response)));
                }
                StateProj::Waiting { service, request } => {
                    ready!(call_when_ready(service, request, cx))?
                }
                StateProj::Deferred { service, request } => {
                    let mut service = service.lock().unwrap_or_else(PoisonError::into_inner);
                    ready!(call_when_ready(&mut *service, request, cx))?
                }
            };
            self.as_mut().project().state.set(State::Called { future });
        }
    }
}

/// Calls `service` with the request once it is ready; while it is not,
/// what the connection answered so far goes out.
fn call_when_ready<S, R>(
    service: &mut S,
    request: &mut Option<R>,
    cx: &mut Context<'_>,
) -> Poll<Result<S::Future, BoxError>>
where
    S: Service<R>,
    S::Error: Into<BoxError>,
{
    let Poll::Ready(ready) = service.poll_ready(cx) else {
        io::stop_holding();
        return Poll::Pending;
    };
    if let Err(error) = ready {
        return Poll::Ready(Err(error.into()));
    }
    let request = request.take().expect("polled after completion");
    Poll::Ready(Ok(service.call(request)))
}
