//! [`WebSocketUpgrade`]: a WebSocket handshake as a handler's extractor,
//! for a handler that decides per request whether to upgrade.

use http::{HeaderMap, HeaderValue, Method, Response, Version, header};
use hyper::upgrade::OnUpgrade;

use super::{
    Accepted, Error, Limits, WebSocket,
    handshake::{
        accept_for, choose_protocol, granted, is_extended_connect, tokens, too_many_websockets,
    },
};
use crate::{
    body::Body,
    handler::{FromRequestHead, Rejection, RequestContext, rejection_enum, rejection_variants},
};

/// A WebSocket handshake, as a handler's argument: the handler decides per
/// request whether to upgrade ([`on_upgrade`](Self::on_upgrade), which
/// answers the 101), with which subprotocol and headers, or to answer as
/// plain HTTP — as axum's `WebSocketUpgrade` does (feature `ws`).
///
/// Over HTTP/1.1 the handshake is a GET with `connection: upgrade`,
/// `upgrade: websocket` and a `sec-websocket-key`, answered 101; over
/// HTTP/2 it is an extended CONNECT (RFC 8441, which `serve` advertises),
/// answered 200 — a route for both takes [`any`](crate::router::any) or
/// `get(…).connect(…)`. A request that is not a handshake is refused with
/// a [`WebSocketUpgradeRejection`](rejection::WebSocketUpgradeRejection):
/// 405 for another method, 400 for a missing or wrong `connection`,
/// `upgrade`, `:protocol`, `sec-websocket-version` or `sec-websocket-key`,
/// and 426 for one whose connection cannot be upgraded (HTTP/1.0, or not
/// served by hyper); a handler taking `Result<WebSocketUpgrade, _>` answers
/// it itself. The
/// prefix hooks of the route run before its handler as for any route; the
/// socket runs in a task of its own once the 101 is out, so its monitors
/// see the handshake, not the connection's end (a route given to
/// [`Router::websocket`](crate::Router::websocket) is monitored to its
/// end). The server's WebSocket cap and shutdown hold as for those routes.
///
/// ```
/// use futures_util::{SinkExt, StreamExt};
/// use pronghorn::{Router, handler::Query, ws::WebSocketUpgrade};
///
/// #[derive(serde::Deserialize)]
/// struct Room { name: String }
///
/// let router = Router::new()
///     .get("/chat", |Query(room): Query<Room>, upgrade: WebSocketUpgrade| {
///         if room.name.is_empty() {
///             return (http::StatusCode::BAD_REQUEST, "which room?").into_response();
///         }
///         upgrade.protocols(["chat.v2"]).on_upgrade(|mut socket| async move {
///             while let Some(Ok(message)) = socket.next().await {
///                 if message.is_close() || socket.send(message).await.is_err() {
///                     break;
///                 }
///             }
///         })
///     })
///     .compile()
///     .unwrap();
/// # use pronghorn::IntoResponse;
/// # let _ = router;
/// ```
pub struct WebSocketUpgrade<F = DefaultOnFailedUpgrade> {
    /// Over HTTP/1.1, the `sec-websocket-accept` to answer; over HTTP/2,
    /// none.
    accept: Option<HeaderValue>,
    /// What the client offered, for `protocols` to choose from.
    offered: HeaderMap,
    protocol: Option<Box<str>>,
    limits: Limits,
    headers: HeaderMap,
    on_upgrade: OnUpgrade,
    on_failed_upgrade: F,
    /// What the server lends the socket, or `None` past its cap.
    accepted: Option<Accepted>,
}

impl<F> std::fmt::Debug for WebSocketUpgrade<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("protocol", &self.protocol)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What to do when a connection granted its upgrade is not handed over
/// (the client went away in between, say): see
/// [`WebSocketUpgrade::on_failed_upgrade`].
pub trait OnFailedUpgrade: Send + 'static {
    /// Called with what went wrong.
    fn call(self, error: Error);
}

impl<F: FnOnce(Error) + Send + 'static> OnFailedUpgrade for F {
    fn call(self, error: Error) {
        self(error)
    }
}

/// The [`OnFailedUpgrade`] of a [`WebSocketUpgrade`] given none: it logs
/// the error at debug level (`tracing`).
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct DefaultOnFailedUpgrade;

impl OnFailedUpgrade for DefaultOnFailedUpgrade {
    fn call(self, error: Error) {
        tracing::debug!(%error, "pronghorn: WebSocket upgrade failed");
    }
}

impl<F> WebSocketUpgrade<F> {
    /// Speaks the first of `protocols` (the server's, preferred first) that
    /// the client offers; with none of them offered, none.
    pub fn protocols<I, P>(mut self, protocols: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<Box<str>>,
    {
        let protocols: Vec<Box<str>> = protocols.into_iter().map(Into::into).collect();
        self.protocol = choose_protocol(&self.offered, &protocols);
        self
    }

    /// The subprotocol chosen, if one is.
    pub fn selected_protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// The socket's limits (by default [`Limits::default`]'s).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// A header to send with the 101.
    pub fn header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Calls `callback` when the connection, its upgrade granted, is not
    /// handed over; by default the error is logged at debug level.
    ///
    /// ```
    /// use pronghorn::{Router, ws::WebSocketUpgrade};
    ///
    /// let router = Router::new().get("/ws", |upgrade: WebSocketUpgrade| {
    ///     upgrade
    ///         .on_failed_upgrade(|error| eprintln!("no WebSocket after all: {error}"))
    ///         .on_upgrade(|_socket| async {})
    /// });
    /// # router.compile().unwrap();
    /// ```
    pub fn on_failed_upgrade<C: OnFailedUpgrade>(self, callback: C) -> WebSocketUpgrade<C> {
        WebSocketUpgrade {
            accept: self.accept,
            offered: self.offered,
            protocol: self.protocol,
            limits: self.limits,
            headers: self.headers,
            on_upgrade: self.on_upgrade,
            on_failed_upgrade: callback,
            accepted: self.accepted,
        }
    }

    /// Answers the handshake (101, or 200 over HTTP/2) and, once the
    /// connection is upgraded, runs `callback` with the socket in a task of
    /// its own (a Tokio task, as the server's); past the server's
    /// WebSocket cap, answers 503 instead.
    #[must_use = "the handshake is granted by answering with this response"]
    pub fn on_upgrade<C, Fut>(self, callback: C) -> Response<Body>
    where
        C: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
        F: OnFailedUpgrade,
    {
        let Some(mut accepted) = self.accepted else {
            return too_many_websockets();
        };
        accepted.limits = self.limits;
        accepted.protocol = self.protocol.clone();
        let (on_upgrade, on_failed_upgrade) = (self.on_upgrade, self.on_failed_upgrade);
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => callback(accepted.socket(upgraded).await).await,
                Err(error) => on_failed_upgrade.call(Error::upgrade_failed(error)),
            }
        });
        let mut response = granted(self.accept);
        let headers = response.headers_mut();
        for (name, value) in self.headers {
            if let Some(name) = name {
                headers.insert(name, value);
            }
        }
        let protocol = (self.protocol.as_deref()).and_then(|p| HeaderValue::from_str(p).ok());
        if let Some(protocol) = protocol {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
        }
        response
    }
}

pub mod rejection {
    //! Why [`WebSocketUpgrade`](super::WebSocketUpgrade) refused a request,
    //! as axum's `ws::rejection` names it.

    use super::{rejection_enum, rejection_variants};

    rejection_variants! {
        /// An HTTP/1 handshake that is not a GET (405).
        MethodNotGet;
        /// An HTTP/2 handshake that is not a CONNECT (405).
        MethodNotConnect;
        /// No `upgrade` in the `Connection` header (400).
        InvalidConnectionHeader;
        /// No `websocket` in the `Upgrade` header (400).
        InvalidUpgradeHeader;
        /// An HTTP/2 CONNECT whose `:protocol` is not `websocket` (400).
        InvalidProtocolPseudoheader;
        /// A `Sec-WebSocket-Version` other than 13 (400).
        InvalidWebSocketVersionHeader;
        /// No `Sec-WebSocket-Key` (400).
        WebSocketKeyHeaderMissing;
        /// A connection that cannot be upgraded: HTTP/1.0, or not served
        /// by hyper (426).
        ConnectionNotUpgradable;
    }

    rejection_enum! {
        /// Why `WebSocketUpgrade` refused a request, as axum's
        /// `WebSocketUpgradeRejection`, for a handler that takes
        /// `Result<WebSocketUpgrade, WebSocketUpgradeRejection>` to answer
        /// it itself.
        WebSocketUpgradeRejection ("`WebSocketUpgrade`") {
            /// An HTTP/1 handshake that is not a GET.
            MethodNotGet(MethodNotGet),
            /// An HTTP/2 handshake that is not a CONNECT.
            MethodNotConnect(MethodNotConnect),
            /// No `upgrade` in `Connection`.
            InvalidConnectionHeader(InvalidConnectionHeader),
            /// No `websocket` in `Upgrade`.
            InvalidUpgradeHeader(InvalidUpgradeHeader),
            /// A `:protocol` other than `websocket`.
            InvalidProtocolPseudoheader(InvalidProtocolPseudoheader),
            /// A version other than 13.
            InvalidWebSocketVersionHeader(InvalidWebSocketVersionHeader),
            /// No key.
            WebSocketKeyHeaderMissing(WebSocketKeyHeaderMissing),
            /// A connection that cannot be upgraded.
            ConnectionNotUpgradable(ConnectionNotUpgradable),
        }
    }

    /// Builds a variant of [`WebSocketUpgradeRejection`] with its status
    /// and texts (pronghorn's, then axum's).
    macro_rules! refusal {
        ($context:expr, $variant:ident, $status:ident, $ours:literal, $axum:literal) => {
            WebSocketUpgradeRejection::$variant($variant(
                crate::handler::Rejection::new(
                    "WebSocketUpgrade",
                    http::StatusCode::$status,
                    $ours,
                )
                .or_as_axum($axum)
                .worded($context.answers()),
            ))
        };
    }
    pub(super) use refusal;
}

use rejection::{
    ConnectionNotUpgradable, InvalidConnectionHeader, InvalidProtocolPseudoheader,
    InvalidUpgradeHeader, InvalidWebSocketVersionHeader, MethodNotConnect, MethodNotGet,
    WebSocketKeyHeaderMissing, WebSocketUpgradeRejection, refusal,
};

/// Whether `context`'s request asks for an upgrade as its version does:
/// over HTTP/1, a GET with `connection: upgrade` and `upgrade: websocket`;
/// over HTTP/2, an extended CONNECT for a WebSocket. `Ok(true)` for the
/// latter, which has no key.
fn asks_to_upgrade(context: &RequestContext<'_>) -> Result<bool, WebSocketUpgradeRejection> {
    let headers = context.headers();
    let has = |name, token: &str| tokens(headers, name).any(|t| t.eq_ignore_ascii_case(token));
    if context.version() > Version::HTTP_11 {
        if context.method() != Method::CONNECT {
            return Err(refusal!(
                context,
                MethodNotConnect,
                METHOD_NOT_ALLOWED,
                "a WebSocket handshake over HTTP/2 is a CONNECT request",
                "Request method must be `CONNECT`"
            ));
        }
        if !is_extended_connect(context.method(), context.extensions()) {
            return Err(refusal!(
                context,
                InvalidProtocolPseudoheader,
                BAD_REQUEST,
                "a WebSocket handshake over HTTP/2 asks for `:protocol: websocket`",
                "`:protocol` pseudo-header did not include 'websocket'"
            ));
        }
        return Ok(true);
    }
    if context.method() != Method::GET {
        return Err(refusal!(
            context,
            MethodNotGet,
            METHOD_NOT_ALLOWED,
            "a WebSocket handshake is a GET request",
            "Request method must be `GET`"
        ));
    }
    if !has(header::CONNECTION, "upgrade") {
        return Err(refusal!(
            context,
            InvalidConnectionHeader,
            BAD_REQUEST,
            "a WebSocket handshake asks for `connection: upgrade`",
            "Connection header did not include 'upgrade'"
        ));
    }
    if !has(header::UPGRADE, "websocket") {
        return Err(refusal!(
            context,
            InvalidUpgradeHeader,
            BAD_REQUEST,
            "a WebSocket handshake asks for `upgrade: websocket`",
            "`Upgrade` header did not include 'websocket'"
        ));
    }
    Ok(false)
}

/// The handshake of `context`'s request, or why it is none (worded as
/// the router answers).
fn check(context: &RequestContext<'_>) -> Result<WebSocketUpgrade, WebSocketUpgradeRejection> {
    let headers = context.headers();
    let http2 = asks_to_upgrade(context)?;
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v != "13")
    {
        return Err(refusal!(
            context,
            InvalidWebSocketVersionHeader,
            BAD_REQUEST,
            "unsupported WebSocket version: expected 13",
            "`Sec-WebSocket-Version` header did not include '13'"
        ));
    }
    let Ok(accept) = accept_for(http2, headers) else {
        return Err(refusal!(
            context,
            WebSocketKeyHeaderMissing,
            BAD_REQUEST,
            "missing sec-websocket-key",
            "`Sec-WebSocket-Key` header missing"
        ));
    };
    let Some(on_upgrade) = context.extensions().get::<OnUpgrade>().cloned() else {
        return Err(refusal!(
            context,
            ConnectionNotUpgradable,
            UPGRADE_REQUIRED,
            "this connection cannot be upgraded",
            "WebSocket request couldn't be upgraded since no upgrade state was present"
        ));
    };
    let mut offered = HeaderMap::new();
    for value in headers.get_all(header::SEC_WEBSOCKET_PROTOCOL) {
        offered.append(header::SEC_WEBSOCKET_PROTOCOL, value.clone());
    }
    Ok(WebSocketUpgrade {
        accept,
        offered,
        protocol: None,
        limits: Limits::default(),
        headers: HeaderMap::new(),
        on_upgrade,
        on_failed_upgrade: DefaultOnFailedUpgrade,
        accepted: Accepted::at(context.extensions(), Limits::default(), None),
    })
}

impl FromRequestHead for WebSocketUpgrade {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        check(context).map_err(|rejection| context.reject(Rejection::from(rejection)))
    }
}

impl FromRequestHead for Result<WebSocketUpgrade, WebSocketUpgradeRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(check(context))
    }
}
