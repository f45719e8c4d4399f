//! The handshake: whether a request asks for an upgrade, the answer that
//! grants it, and the task that hands the upgraded connection over.

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::{body::Body, handler::IntoResponse, handler::RouteContext, step::BoxFuture};

use super::{Accepted, ErasedWebSocket, Limits};

/// Whether a request asks for a WebSocket upgrade: over HTTP/1.1, with
/// `upgrade: websocket` and `connection: upgrade`; over HTTP/2, an
/// extended CONNECT with `:protocol` websocket (RFC 8441). An `Upgrade` in
/// an HTTP/1.0 request is ignored (RFC 9110, 7.8).
pub(crate) fn is_upgrade<B>(request: &Request<B>) -> bool {
    let headers = request.headers();
    match request.version() {
        http::Version::HTTP_11 => {
            let has_token = |name, token: &str| {
                tokens(headers, name).any(|part| part.eq_ignore_ascii_case(token))
            };
            has_token(header::UPGRADE, "websocket") && has_token(header::CONNECTION, "upgrade")
        }
        http::Version::HTTP_2 => is_extended_connect(request.method(), request.extensions()),
        _ => false,
    }
}

/// Whether an HTTP/2 request is an extended CONNECT for a WebSocket
/// (RFC 8441).
pub(super) fn is_extended_connect(method: &http::Method, extensions: &http::Extensions) -> bool {
    method == http::Method::CONNECT
        && (extensions.get::<hyper::ext::Protocol>())
            .is_some_and(|protocol| protocol.as_str().eq_ignore_ascii_case("websocket"))
}

/// The comma-separated tokens of every `name` header, trimmed.
pub(super) fn tokens(headers: &HeaderMap, name: header::HeaderName) -> impl Iterator<Item = &str> {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
}

/// Completes the handshake: answers 101 and puts in `connection` the
/// future that hands the upgraded connection to `handler`, for the caller
/// to spawn once the answer is out of its hands; or answers 400 for a
/// malformed handshake.
pub(crate) fn handshake(
    request: &mut Request<Body>,
    route: RouteContext<'_>,
    handler: &ErasedWebSocket,
    limits: Limits,
    protocols: &[Box<str>],
    connection: &mut Option<BoxFuture<()>>,
) -> Response<Body> {
    let http2 = request.version() == http::Version::HTTP_2;
    let headers = request.headers();
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|version| version != "13")
    {
        let mut response = (
            StatusCode::BAD_REQUEST,
            "unsupported WebSocket version: expected 13",
        )
            .into_response();
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    }
    let Ok(accept) = accept_for(http2, headers) else {
        return (StatusCode::BAD_REQUEST, "missing sec-websocket-key").into_response();
    };
    let chosen = choose_protocol(headers, protocols);
    // Chosen among the router's own names, which are checked header text
    // here: one that is not is never answered.
    let answered = chosen
        .as_deref()
        .and_then(|protocol| HeaderValue::from_str(protocol).ok());
    // The handler's extractors, at the handshake: a refusal is answered
    // with no upgrade.
    let connected = match handler(&route.with_request(request)) {
        Ok(connected) => connected,
        Err(refused) => return refused,
    };
    let Some(accepted) = Accepted::at(request.extensions(), limits, chosen) else {
        return too_many_websockets();
    };
    let upgrade = hyper::upgrade::on(request);
    *connection = Some(Box::pin(async move {
        match upgrade.await {
            Ok(upgraded) => connected(accepted.socket(upgraded).await).await,
            Err(error) => tracing::debug!(%error, "pronghorn: WebSocket upgrade failed"),
        }
    }));
    let mut response = granted(accept);
    if let Some(protocol) = answered {
        response
            .headers_mut()
            .insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
    }
    response
}

/// An HTTP/1.1 handshake without a `sec-websocket-key`.
pub(super) struct MissingKey;

/// The `sec-websocket-accept` a handshake with `headers` is answered with:
/// over HTTP/1.1, derived from its key; over HTTP/2, none, the stream
/// being the handshake's proof.
pub(super) fn accept_for(
    http2: bool,
    headers: &HeaderMap,
) -> Result<Option<HeaderValue>, MissingKey> {
    if http2 {
        return Ok(None);
    }
    let key = headers.get(header::SEC_WEBSOCKET_KEY).ok_or(MissingKey)?;
    let accept = derive_accept_key(key.as_bytes());
    let accept = HeaderValue::from_str(&accept).expect("a base64 accept key is valid header text");
    Ok(Some(accept))
}

/// The answer granting a handshake: over HTTP/1.1, 101 with the accept
/// key `accept`; over HTTP/2 (no key), 200, the stream staying open
/// (RFC 8441, 5).
pub(super) fn granted(accept: Option<HeaderValue>) -> Response<Body> {
    let Some(accept) = accept else {
        return StatusCode::OK.into_response();
    };
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    response
}

/// The answer to a handshake past the server's WebSocket cap. It closes
/// its connection: a crowd of handshakes refused keeps no connection
/// slots from other clients while they wait to be shed as idle.
pub(super) fn too_many_websockets() -> Response<Body> {
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        "too many WebSocket connections open; try again later",
    )
        .into_response();
    (response.headers_mut()).insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The first of `protocols` (the server's, preferred first) that the
/// handshake's `sec-websocket-protocol` offers.
pub(super) fn choose_protocol(headers: &HeaderMap, protocols: &[Box<str>]) -> Option<Box<str>> {
    if protocols.is_empty() {
        return None;
    }
    let offered: Vec<&str> = tokens(headers, header::SEC_WEBSOCKET_PROTOCOL).collect();
    protocols
        .iter()
        .find(|protocol| offered.contains(&&***protocol))
        .cloned()
}
