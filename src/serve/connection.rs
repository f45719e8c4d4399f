//! tower → hyper: one connection's service, as hyper calls it.

use std::{
    any::Any,
    cell::{Cell, RefCell},
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, Waker, ready},
};

use bytes::{Buf, Bytes};
use http::{Method, Request, Response, StatusCode, Version};
use http_body::{Body as HttpBody, Frame, SizeHint};
use pin_project_lite::pin_project;
use tower_service::Service;

use crate::{
    handler::{BodyAllowance, ServerAllowance, UNCOUNTED},
    upgrade::Shutdown,
};

use super::{
    BoxError,
    heads::{HeadAllowance, HeadReservation},
    io,
    timeouts::{ConnectionWatch, NextHead, StreamGuard},
    windows::{WindowAllowance, WindowGrant},
};

/// One connection's service, as hyper calls it: tower's `call(&mut self)`
/// behind hyper's `call(&self)`.
///
/// hyper-util's `TowerToHyperService` clones the service for every request
/// and drives the clone through a `Oneshot`. Here the connection keeps one
/// service, asks it once whether it is ready and, when it is, calls it at
/// once: the request moves straight into the service's own future. Only a
/// service that is not ready at once (a concurrency limit, a buffer) is
/// cloned, and the clone is polled for readiness with the task's waker.
///
/// It also tells the connection's watchdog that a request arrived, counts
/// HTTP/2 streams until their response ends and their heads until it is
/// ready, and stops the connection's writes from being held while the
/// service or a response body is not ready (see [`io`]).
pub(super) struct Connection<S> {
    service: RefCell<S>,
    watch: Arc<ConnectionWatch>,
    /// Handed to the requests that ask for an upgrade (WebSocket).
    #[cfg(feature = "ws")]
    shutdown: Arc<Shutdown>,
    #[cfg(feature = "ws")]
    upgrades: crate::upgrade::UpgradeSlots,
    /// The client's address, put in each request when
    /// [`Serve::connect_info`](super::Serve::connect_info) asks for it.
    peer: Option<std::net::SocketAddr>,
    /// What the body extractors of the connection's requests may hold at
    /// once, over HTTP/1 (the server's allowance) and HTTP/2 (also the
    /// connection's); `None` for no bound.
    http1_allowance: Option<BodyAllowance>,
    http2_allowance: Option<BodyAllowance>,
    /// What the HTTP/2 requests being answered on all connections may
    /// hold in heads; `None` for no bound.
    heads: Option<HeadAllowance>,
    /// The connection's HTTP/2 receive window in the server's bound,
    /// given back when the connection ends, or at its first request if
    /// that is an HTTP/1 one.
    window: Cell<Option<WindowGrant>>,
}

/// The server's bounds on what the requests of all its connections hold
/// at once, which each connection takes its part of; `None` for no bound.
pub(super) struct ServerBounds {
    /// The slots of WebSocket connections.
    #[cfg(feature = "ws")]
    pub(super) upgrades: crate::upgrade::UpgradeSlots,
    /// Request bodies being read, and WebSocket messages.
    pub(super) bodies: Option<ServerAllowance>,
    /// The bytes of bodies one HTTP/2 connection may read at once, past
    /// the first.
    pub(super) http2_bodies: usize,
    /// The heads of the HTTP/2 requests being answered.
    pub(super) heads: Option<HeadAllowance>,
    /// The HTTP/2 receive windows granted, and the full window.
    pub(super) windows: Option<WindowAllowance>,
    pub(super) window: u32,
}

impl ServerBounds {
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
        peer: Option<std::net::SocketAddr>,
        bounds: &ServerBounds,
        window: Option<WindowGrant>,
    ) -> Self {
        let http1 = BodyAllowance::new(0, bounds.bodies.clone());
        let http2 = BodyAllowance::new(bounds.http2_bodies, bounds.bodies.clone());
        Self {
            service: RefCell::new(service),
            watch,
            #[cfg(feature = "ws")]
            shutdown: Arc::clone(shutdown),
            #[cfg(feature = "ws")]
            upgrades: bounds.upgrades.clone(),
            peer,
            http1_allowance: http1.bounds().then_some(http1),
            http2_allowance: http2.bounds().then_some(http2),
            heads: bounds.heads.clone(),
            window: Cell::new(window),
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
        if let Some(peer) = self.peer {
            request
                .extensions_mut()
                .insert(crate::handler::ConnectInfo(peer));
        }
        let fields = HeadFields::read(&request);
        let (upgrade_header, admission) = (fields.upgrade, fields.admission(&request));
        let http2 = request.version() == Version::HTTP_2;
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
            Admission::Sound => match &self.heads {
                Some(heads) if http2 => match heads.reserve(&request) {
                    Some(head) => Some(head),
                    None => {
                        let status = StatusCode::SERVICE_UNAVAILABLE;
                        return here(State::Refused { status }, stream);
                    }
                },
                _ => None,
            },
        };
        ConnectionFuture {
            state: self.start(request, http2, body),
            stream,
            next_head: (!http2).then(|| NextHead(Arc::clone(&self.watch))),
            head,
            upgrade,
        }
    }
}

impl<S> Connection<S> {
    /// Lends the request what the connection holds for it: a request for
    /// an upgrade, the server's shutdown and WebSocket slots; a request
    /// with a body, the allowance its extractor reads (over HTTP/1, not a
    /// small one); a request for an upgrade, the one its WebSocket's
    /// messages read.
    #[inline(always)]
    fn lend<B: HttpBody>(&self, request: &mut Request<B>, upgrade: bool, http2: bool, body: bool) {
        #[cfg(feature = "ws")]
        if upgrade {
            let handle = crate::upgrade::ShutdownHandle(Arc::clone(&self.shutdown));
            request.extensions_mut().insert(handle);
            request.extensions_mut().insert(self.upgrades.clone());
        }
        if !http2 {
            // HTTP/1 has no flow-control windows.
            drop(self.window.take());
        }
        let allowance = match http2 {
            true if body => &self.http2_allowance,
            false if upgrade || (body && !declared_small(request.body())) => &self.http1_allowance,
            _ => &None,
        };
        if let Some(allowance) = allowance {
            request.extensions_mut().insert(allowance.clone());
        }
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
            return State::Waiting {
                service: service.clone(),
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
        // Called at the next poll, on a clone: a service not ready, or
        // the answer to an HTTP/1 request with a body (see `call`).
        Waiting { service: S, request: Option<R> },
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
                    if let Poll::Ready(ready) = service.poll_ready(cx) {
                        ready.map_err(Into::into)?;
                    } else {
                        io::stop_holding();
                        return Poll::Pending;
                    }
                    service.call(request.take().expect("polled after completion"))
                }
            };
            self.as_mut().project().state.set(State::Called { future });
        }
    }
}

/// The largest piece of a response body handed to hyper at once.
///
/// hyper copies an HTTP/1 response's body into its write buffer, and
/// stops asking for more while that holds `max_header_size` (64 KiB by
/// default) — but a chunk it takes is copied whole, however large. A
/// client that does not read would make the connection hold a copy of
/// every large body it asked for (200 clients of a 4 MiB body held 800
/// MB). Cut into pieces, which share the chunk's memory, a body costs the
/// connection hyper's bound plus one piece, whatever its size.
///
/// (hyper would keep the chunks uncopied if the socket took vectored
/// writes, but its queue of chunks costs about 5 % more instructions per
/// request, large body or not.)
pub(super) const MAX_PIECE: usize = 16 * 1024;

pin_project! {
    /// A response body as the connection sends it: the service's body,
    /// its `Bytes` chunks in pieces of at most [`MAX_PIECE`] bytes, which
    /// stops writes from being held while it is not ready and, over
    /// HTTP/2, counts its stream closed when it is dropped; none for an
    /// answer of the connection's own.
    pub(super) struct ConnectionBody<B> {
        #[pin]
        body: Option<B>,
        stream: Option<StreamGuard>,
        // Over HTTP/1, starts the wait for the next head when hyper drops
        // the body, having taken all of it.
        next_head: Option<NextHead>,
        // What is left of a chunk larger than a piece (boxed: most bodies
        // have none, and the body is moved about with every response).
        rest: Option<Box<Bytes>>,
    }
}

impl<B> ConnectionBody<B> {
    fn new(body: Option<B>, stream: Option<StreamGuard>, next_head: Option<NextHead>) -> Self {
        Self {
            body,
            stream,
            next_head,
            rest: None,
        }
    }
}

impl<B> HttpBody for ConnectionBody<B>
where
    B: HttpBody,
    B::Data: Buf + 'static,
{
    type Data = B::Data;
    type Error = B::Error;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if let Some(stream) = this.stream.as_mut() {
            ready!(stream.poll_send_room(cx));
        }
        if let Some(rest) = this.rest.take() {
            let mut rest = *rest;
            if rest.len() > MAX_PIECE {
                *this.rest = Some(Box::new(rest.split_off(MAX_PIECE)));
            }
            // Only a body of `Bytes` is cut: its data is `Bytes`.
            let mut piece = None::<B::Data>;
            if let Some(slot) = (&mut piece as &mut dyn Any).downcast_mut::<Option<Bytes>>() {
                *slot = Some(rest);
            }
            if let (Some(stream), Some(piece)) = (this.stream, &piece) {
                stream.produced(piece.remaining());
            }
            return Poll::Ready(piece.map(|piece| Ok(Frame::data(piece))));
        }
        let Some(body) = this.body.as_pin_mut() else {
            return Poll::Ready(None);
        };
        let mut frame = body.poll_frame(cx);
        match &mut frame {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_mut() {
                    if let Some(chunk) = (data as &mut dyn Any).downcast_mut::<Bytes>() {
                        if chunk.len() > MAX_PIECE {
                            *this.rest = Some(Box::new(chunk.split_off(MAX_PIECE)));
                        }
                    }
                    if let Some(stream) = this.stream {
                        stream.produced(data.remaining());
                    }
                }
            }
            // The connection waits on the body: what it wrote so far goes
            // out now.
            Poll::Pending => io::stop_holding(),
            Poll::Ready(_) => {}
        }
        frame
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        self.rest.is_none() && self.body.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        let mut hint = self
            .body
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint);
        if let Some(rest) = &self.rest {
            let rest = rest.len() as u64;
            hint.set_lower(hint.lower().saturating_add(rest));
            if let Some(upper) = hint.upper() {
                hint.set_upper(upper.saturating_add(rest));
            }
        }
        hint
    }
}

/// What `call` reads of a request's headers: its `Host` lines, whether it
/// asks for an upgrade and whether it names a transfer coding.
struct HeadFields<'a> {
    /// The first `Host` line.
    host: Option<&'a http::HeaderValue>,
    /// More than one `Host` line.
    hosts: bool,
    upgrade: bool,
    /// A `Transfer-Encoding` line.
    coding: bool,
}

/// What the connection makes of a request's head before its service does.
enum Admission {
    Sound,
    /// Answered with this status, and the connection closed.
    Refused(StatusCode),
    /// An HTTP/2 stream reset with PROTOCOL_ERROR.
    Malformed,
}

/// Up to this many header names, [`HeadFields::read`] looks through the names
/// rather than look each up: one pass costs less than the hash of a name.
const SCANNED_NAMES: usize = 8;

impl<'a> HeadFields<'a> {
    fn read<B>(request: &'a Request<B>) -> Self {
        let headers = request.headers();
        if headers.keys_len() > SCANNED_NAMES {
            let mut hosts = headers.get_all(http::header::HOST).iter();
            return Self {
                host: hosts.next(),
                hosts: hosts.next().is_some(),
                upgrade: headers.contains_key(http::header::UPGRADE),
                coding: headers.contains_key(http::header::TRANSFER_ENCODING),
            };
        }
        let mut head = Self {
            host: None,
            hosts: false,
            upgrade: false,
            coding: false,
        };
        for (name, value) in headers {
            if name == http::header::HOST {
                head.hosts |= head.host.is_some();
                head.host.get_or_insert(value);
            } else if name == http::header::UPGRADE {
                head.upgrade = true;
            } else if name == http::header::TRANSFER_ENCODING {
                head.coding = true;
            }
        }
        head
    }

    /// Whether the request goes to the service, or is refused here:
    ///
    /// - a `Host` that is not as RFC 9112 (3.2) requires is 400;
    /// - over HTTP/1, a target in the authority form outside CONNECT, or
    ///   `*` outside OPTIONS, is 400 (3.2.3, 3.2.4);
    /// - over HTTP/1, a transfer coding other than `chunked` is 501 (hyper
    ///   reads the body as chunked whatever came before it, and nothing
    ///   here decodes the others), and `chunked` twice is 400 (6.1);
    /// - over HTTP/2, what [`is_malformed_http2`] finds resets the stream.
    fn admission<B>(&self, request: &Request<B>) -> Admission {
        let version = request.version();
        if !self.host_is_sound(version) {
            return Admission::Refused(StatusCode::BAD_REQUEST);
        }
        if version == Version::HTTP_2 {
            return match is_malformed_http2(request, self.host) {
                true => Admission::Malformed,
                false => Admission::Sound,
            };
        }
        if !is_target_sound(request.method(), request.uri()) {
            return Admission::Refused(StatusCode::BAD_REQUEST);
        }
        match self.coding {
            true => coding_refusal(request.headers()).map_or(Admission::Sound, Admission::Refused),
            false => Admission::Sound,
        }
    }

    /// Whether the request's `Host` is as HTTP/1 requires (RFC 9112,
    /// 3.2): one line, present in HTTP/1.1, and a host with an optional
    /// port. Two could be read two ways, by a proxy in front and by the
    /// service; none leaves the service to guess. HTTP/2 names its
    /// authority in the request line.
    fn host_is_sound(&self, version: Version) -> bool {
        let sound = match version {
            Version::HTTP_11 => self.host.is_some() && !self.hosts,
            Version::HTTP_10 | Version::HTTP_09 => !self.hosts,
            _ => true,
        };
        sound && self.host.is_none_or(|host| is_host(host.as_bytes()))
    }
}

/// Whether an HTTP/1 request's target has a form its method may use (RFC
/// 9112, 3.2): the authority form is CONNECT's alone, `*` OPTIONS' alone.
fn is_target_sound(method: &Method, uri: &http::Uri) -> bool {
    match uri.path().as_bytes().first() {
        Some(b'/') => true,
        Some(b'*') => *method == Method::OPTIONS,
        _ => *method == Method::CONNECT,
    }
}

/// The status a request's `Transfer-Encoding` is refused with, if any.
/// hyper has refused those whose last coding is not `chunked` (400).
fn coding_refusal(headers: &http::HeaderMap) -> Option<StatusCode> {
    let (mut chunked, mut others) = (0, false);
    let codings = headers.get_all(http::header::TRANSFER_ENCODING).iter();
    for coding in codings.flat_map(|value| value.as_bytes().split(|&byte| byte == b',')) {
        match trim_whitespace(coding) {
            // An empty list element is no coding (RFC 9110, 5.6.1).
            [] => {}
            coding if coding.eq_ignore_ascii_case(b"chunked") => chunked += 1,
            _ => others = true,
        }
    }
    match (chunked, others) {
        (1, false) => None,
        (2.., _) => Some(StatusCode::BAD_REQUEST),
        _ => Some(StatusCode::NOT_IMPLEMENTED),
    }
}

/// `bytes` without the spaces and tabs around it (OWS).
fn trim_whitespace(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != b' ' && b != b'\t');
    let end = bytes.iter().rposition(|&b| b != b' ' && b != b'\t');
    match (start, end) {
        (Some(start), Some(end)) => &bytes[start..=end],
        _ => &[],
    }
}

/// Whether an HTTP/2 request is malformed in a way that the `h2` crate
/// lets through (RFC 9113, 8.2.1 and 8.3): a field value that starts or
/// ends with a space or a tab, a `Host` that names another authority than
/// `:authority`, a CONNECT without `:authority`.
fn is_malformed_http2<B>(request: &Request<B>, host: Option<&http::HeaderValue>) -> bool {
    let authority = request.uri().authority();
    if request.method() == Method::CONNECT && authority.is_none() {
        return true;
    }
    if let (Some(host), Some(authority)) = (host, authority) {
        let scheme = request.uri().scheme_str();
        if !same_authority(host.as_bytes(), authority.as_str().as_bytes(), scheme) {
            return true;
        }
    }
    request
        .headers()
        .values()
        .any(|value| matches!(value.as_bytes(), [b' ' | b'\t', ..] | [.., b' ' | b'\t']))
}

/// Whether a `Host` and an `:authority` name one authority once normalized
/// as their scheme says (RFC 3986, 6.2.3): the host without regard to
/// case, a port that is the scheme's default the same as none.
fn same_authority(host: &[u8], authority: &[u8], scheme: Option<&str>) -> bool {
    let default_port: &[u8] = match scheme {
        Some("https") => b":443",
        _ => b":80",
    };
    let host = host.strip_suffix(default_port).unwrap_or(host);
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    host.eq_ignore_ascii_case(authority)
}

/// Whether `host` may be a `Host`: every byte one a host may hold, and a
/// port, if any, of digits alone.
fn is_host(host: &[u8]) -> bool {
    has_host_bytes(host) && has_sound_port(host)
}

/// Whether what follows a `Host`'s host — after an IP literal's `]`, or
/// from the first `:` — is nothing or a port: `:` and digits.
fn has_sound_port(host: &[u8]) -> bool {
    let rest = match host.first() {
        Some(b'[') => match host.iter().position(|&byte| byte == b']') {
            Some(end) => &host[end + 1..],
            None => return false,
        },
        _ => match host.iter().position(|&byte| byte == b':') {
            Some(colon) => &host[colon..],
            None => return true,
        },
    };
    match rest {
        [] => true,
        [b':', port @ ..] => port.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Whether every byte of `host` may be part of a `Host`. Eight bytes a
/// step, with no early exit, so that the steps unroll: this runs on every
/// HTTP/1 request.
fn has_host_bytes(host: &[u8]) -> bool {
    let mut chunks = host.chunks_exact(8);
    let mut sound = true;
    for chunk in &mut chunks {
        for &byte in chunk {
            sound &= is_host_byte(byte);
        }
    }
    for &byte in chunks.remainder() {
        sound &= is_host_byte(byte);
    }
    sound
}

/// Whether `byte` may be part of a `Host` (RFC 3986, 3.2.2 and 3.2.3): a
/// registered name's (letters, digits, `-._~`, sub-delimiters, percent
/// escapes), an IP literal's (`[`, `]`, `:`), a port's. One lookup a byte:
/// this runs on every HTTP/1 request.
fn is_host_byte(byte: u8) -> bool {
    static HOST_BYTES: [bool; 256] = {
        let mut set = [false; 256];
        let mut byte = 0;
        while byte < 128 {
            set[byte] = (byte as u8).is_ascii_alphanumeric();
            byte += 1;
        }
        let others = b"-._~%!$&'()*+,;=:[]";
        let mut i = 0;
        while i < others.len() {
            set[others[i] as usize] = true;
            i += 1;
        }
        set
    };
    HOST_BYTES[usize::from(byte)]
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue, StatusCode, header::TRANSFER_ENCODING};

    use super::{coding_refusal, is_host};

    #[test]
    fn a_host_s_port_is_digits_alone() {
        for sound in [
            "localhost",
            "localhost:8080",
            "localhost:",
            "[::1]",
            "[::1]:443",
        ] {
            assert!(is_host(sound.as_bytes()), "{sound}");
        }
        for unsound in ["localhost:abc", "a:1:2", "[::1", "[::1]x", "[::1]:8a"] {
            assert!(!is_host(unsound.as_bytes()), "{unsound}");
        }
    }

    #[test]
    fn transfer_codings_other_than_one_chunked_are_refused() {
        let refusal = |lines: &[&'static str]| {
            let mut headers = HeaderMap::new();
            for line in lines {
                headers.append(TRANSFER_ENCODING, HeaderValue::from_static(line));
            }
            coding_refusal(&headers)
        };
        assert_eq!(refusal(&["chunked"]), None);
        assert_eq!(refusal(&[" Chunked\t"]), None);
        assert_eq!(refusal(&[", chunked,"]), None);
        assert_eq!(
            refusal(&["chunked, chunked"]),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            refusal(&["gzip, chunked"]),
            Some(StatusCode::NOT_IMPLEMENTED)
        );
        assert_eq!(
            refusal(&["gzip", "chunked"]),
            Some(StatusCode::NOT_IMPLEMENTED)
        );
    }

    #[test]
    fn a_host_is_refused_for_one_bad_byte_wherever_it_stands() {
        let host = b"www.example.com:8080";
        assert!(is_host(host));
        assert!(is_host(b""));
        for at in 0..host.len() {
            for bad in [b' ', b'/', b'@', b'\\', 0x7f, 0xc3] {
                let mut refused = *host;
                refused[at] = bad;
                assert!(
                    !is_host(&refused),
                    "{:?}",
                    String::from_utf8_lossy(&refused)
                );
            }
        }
    }
}
