//! [`WebSocketUpgrade`]: a WebSocket handshake as a handler's extractor,
//! for a handler that decides per request whether to upgrade.

use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::{Accepted, Limits, WebSocket, choose_protocol, tokens, too_many_websockets};
use crate::{
    body::Body,
    handler::{FromRequestHead, IntoResponse, Rejection, RequestContext},
};

/// A WebSocket handshake, as a handler's argument: the handler decides per
/// request whether to upgrade ([`on_upgrade`](Self::on_upgrade), which
/// answers the 101), with which subprotocol and headers, or to answer as
/// plain HTTP — as axum's `WebSocketUpgrade` does (feature `ws`).
///
/// A request that is not a WebSocket handshake is refused: 405 for a
/// method other than GET, 400 for a missing or wrong `connection`,
/// `upgrade`, `sec-websocket-version` or `sec-websocket-key`, and 426 for
/// one whose connection cannot be upgraded (not served by hyper). The
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
pub struct WebSocketUpgrade {
    accept: HeaderValue,
    /// What the client offered, for `protocols` to choose from.
    offered: HeaderMap,
    protocol: Option<Box<str>>,
    limits: Limits,
    headers: HeaderMap,
    on_upgrade: OnUpgrade,
    /// What the server lends the socket, or `None` past its cap.
    accepted: Option<Accepted>,
}

impl std::fmt::Debug for WebSocketUpgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("protocol", &self.protocol)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl WebSocketUpgrade {
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

    /// Answers the handshake with 101 and, once the connection is
    /// upgraded, runs `callback` with the socket in a task of its own (a
    /// Tokio task, as the server's); past the server's WebSocket cap,
    /// answers 503 instead.
    pub fn on_upgrade<F, Fut>(self, callback: F) -> Response<Body>
    where
        F: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let Some(mut accepted) = self.accepted else {
            return too_many_websockets();
        };
        accepted.limits = self.limits;
        accepted.protocol = self.protocol.clone();
        let on_upgrade = self.on_upgrade;
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => callback(accepted.socket(upgraded).await).await,
                Err(error) => tracing::debug!(%error, "pronghorn: WebSocket upgrade failed"),
            }
        });
        let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
        let headers = response.headers_mut();
        headers.extend(self.headers);
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, self.accept);
        let protocol = (self.protocol.as_deref()).and_then(|p| HeaderValue::from_str(p).ok());
        if let Some(protocol) = protocol {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
        }
        response
    }
}

/// A refusal of a request that is no WebSocket handshake, in pronghorn's
/// words and axum's.
fn refused(
    context: &RequestContext<'_>,
    status: StatusCode,
    ours: &'static str,
    axum: &'static str,
) -> Response<Body> {
    context.reject(Rejection::new("WebSocketUpgrade", status, ours).or_as_axum(axum))
}

impl FromRequestHead for WebSocketUpgrade {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        let headers = context.headers();
        let has = |name, token: &str| tokens(headers, name).any(|t| t.eq_ignore_ascii_case(token));
        if context.method() != Method::GET {
            return Err(refused(
                context,
                StatusCode::METHOD_NOT_ALLOWED,
                "a WebSocket handshake is a GET request",
                "Request method must be `GET`",
            ));
        }
        if !has(header::CONNECTION, "upgrade") {
            return Err(refused(
                context,
                StatusCode::BAD_REQUEST,
                "a WebSocket handshake asks for `connection: upgrade`",
                "Connection header did not include 'upgrade'",
            ));
        }
        if !has(header::UPGRADE, "websocket") {
            return Err(refused(
                context,
                StatusCode::BAD_REQUEST,
                "a WebSocket handshake asks for `upgrade: websocket`",
                "`Upgrade` header did not include 'websocket'",
            ));
        }
        if headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_none_or(|v| v != "13")
        {
            return Err(refused(
                context,
                StatusCode::BAD_REQUEST,
                "unsupported WebSocket version: expected 13",
                "`Sec-WebSocket-Version` header did not include '13'",
            ));
        }
        let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
            return Err(refused(
                context,
                StatusCode::BAD_REQUEST,
                "missing sec-websocket-key",
                "`Sec-WebSocket-Key` header missing",
            ));
        };
        let Some(on_upgrade) = context.extensions().get::<OnUpgrade>().cloned() else {
            return Err(refused(
                context,
                StatusCode::UPGRADE_REQUIRED,
                "this connection cannot be upgraded",
                "WebSocket request couldn't be upgraded since no upgrade state was present",
            ));
        };
        let accept = derive_accept_key(key.as_bytes());
        let mut offered = HeaderMap::new();
        for value in headers.get_all(header::SEC_WEBSOCKET_PROTOCOL) {
            offered.append(header::SEC_WEBSOCKET_PROTOCOL, value.clone());
        }
        Ok(WebSocketUpgrade {
            accept: HeaderValue::from_str(&accept)
                .expect("a base64 accept key is valid header text"),
            offered,
            protocol: None,
            limits: Limits::default(),
            headers: HeaderMap::new(),
            on_upgrade,
            accepted: Accepted::at(context.extensions(), Limits::default(), None),
        })
    }
}
