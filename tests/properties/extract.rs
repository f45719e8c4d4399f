//! Extractors on hostile input, checked against a reference written here:
//! the property of `tests/properties/main.rs` and the fuzz target
//! `fuzz/fuzz_targets/extract.rs`, which include this one file.
//!
//! Each [`Call`] is a request to one route of a fixed router whose handler
//! takes one extractor — `Path` into a number, a tuple, a struct and an
//! enum; `Query` into a struct of options, into `(key, value)` pairs, and
//! optional; `Json` and `String` bodies under a body limit — with raw text
//! for its parameters, query string and body.
//! The body comes whole or a piece at a time, its length told or not, each
//! piece after a wait (pending, then waking its waker), as a body still
//! arriving over HTTP/1 does. The answer must be the reference's: 200 with
//! the values it extracts, or the refusal it predicts (400 for what does
//! not decode or parse, 413 over the limit, 415 for a body that is not
//! declared JSON), however the body came; and the response future may be
//! pending only after a wake-up. Nothing a client sends may make a
//! handler's extractor panic (a 500).

use std::{
    collections::VecDeque,
    convert::Infallible,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use pronghorn::{
    Router,
    handler::{Json, Path, Query},
    router::CompiledRouter,
};
use serde::Deserialize;
use tower_service::Service;

use super::poll::drive;

/// The body limit of the router: small, so that bodies cross it.
pub const LIMIT: usize = 64;

/// The route a call goes to, and what its handler extracts.
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// `GET /u8/{v}`: `Path<u8>`.
    Number,
    /// `GET /pair/{a}/{b}`: `Path<(u32, String)>`.
    Pair,
    /// `GET /named/{id}/{name}`: `Path<Named>`.
    Named,
    /// `GET /color/{c}`: `Path<Color>`.
    Color,
    /// `GET /query`: `Query<Filter>`.
    Query,
    /// `GET /pairs`: `Query<Vec<(String, u8)>>`.
    Pairs,
    /// `GET /maybe`: `Option<Query<Required>>`.
    MaybeQuery,
    /// `POST /json`: `Json<serde_json::Value>`.
    Json,
    /// `POST /text`: `String`.
    Text,
}

/// One request: raw parameter values (as many as the route takes), a raw
/// query string, a content type (an index into [`CONTENT_TYPES`]) and a
/// body, sent in `pieces` pieces (at least one), each after a wait when
/// `waits`, its length told when `sized`.
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub struct Call {
    pub target: Target,
    pub values: Vec<String>,
    pub query: String,
    pub content_type: u8,
    pub body: Vec<u8>,
    pub pieces: u8,
    pub waits: bool,
    pub sized: bool,
}

impl Call {
    /// The content type the call declares, and whether it declares JSON.
    fn content_type(&self) -> (Option<&'static str>, bool) {
        CONTENT_TYPES[usize::from(self.content_type) % CONTENT_TYPES.len()]
    }
}

/// A request body that comes in pieces, each after a wait if asked.
pub struct Trickle {
    pieces: VecDeque<Bytes>,
    waits: bool,
    /// Whether the next piece has been waited for.
    waited: bool,
    size: Option<u64>,
}

impl Trickle {
    fn new(call: &Call) -> Self {
        let count = usize::from(call.pieces).clamp(1, 8);
        let length = call.body.len().div_ceil(count).max(1);
        Self {
            pieces: call
                .body
                .chunks(length)
                .map(Bytes::copy_from_slice)
                .collect(),
            waits: call.waits,
            waited: false,
            size: call.sized.then_some(call.body.len() as u64),
        }
    }
}

impl http_body::Body for Trickle {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.pieces.is_empty() {
            return Poll::Ready(None);
        }
        if self.waits && !self.waited {
            self.waited = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.waited = false;
        Poll::Ready(self.pieces.pop_front().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        match self.size {
            Some(size) => SizeHint::with_exact(size),
            None => SizeHint::default(),
        }
    }
}

/// Content types a call may declare, and whether each declares JSON.
pub const CONTENT_TYPES: &[(Option<&str>, bool)] = &[
    (Some("application/json"), true),
    (Some("application/json; charset=utf-8"), true),
    (Some("Application/JSON"), true),
    (Some("application/problem+json"), true),
    (Some(" application/json "), true),
    (Some("text/plain"), false),
    (Some("application/jsonp"), false),
    (Some("application/+json"), false),
    (None, false),
];

#[derive(Deserialize)]
struct Named {
    id: i64,
    name: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

#[derive(Deserialize)]
struct Filter {
    a: Option<u32>,
    b: Option<String>,
    flag: Option<bool>,
}

#[derive(Deserialize)]
struct Required {
    a: u8,
}

fn filter_answer(a: Option<u32>, b: Option<&str>, flag: Option<bool>) -> String {
    format!("a={a:?} b={b:?} flag={flag:?}")
}

/// The router every call goes to.
pub fn router() -> CompiledRouter {
    Router::new()
        .get("/u8/{v}", |Path(v): Path<u8>| v.to_string())
        .get("/pair/{a}/{b}", |Path((a, b)): Path<(u32, String)>| {
            format!("{a} {b}")
        })
        .get("/named/{id}/{name}", |Path(named): Path<Named>| {
            format!("{} {}", named.id, named.name)
        })
        .get("/color/{c}", |Path(color): Path<Color>| {
            format!("{color:?}")
        })
        .get("/query", |Query(filter): Query<Filter>| {
            filter_answer(filter.a, filter.b.as_deref(), filter.flag)
        })
        .get("/pairs", |Query(pairs): Query<Vec<(String, u8)>>| {
            format!("{pairs:?}")
        })
        .get("/maybe", |required: Option<Query<Required>>| {
            format!("{:?}", required.map(|Query(required)| required.a))
        })
        .post("/json", |Json(value): Json<serde_json::Value>| {
            value.to_string()
        })
        .post("/text", |text: String| text)
        .body_limit(LIMIT)
        .compile()
        .expect("the extractor routes compile")
}

/// Percent-decoding as a path parameter is decoded: `%` and two hex
/// digits make a byte; anything else after `%`, or bytes that are not
/// UTF-8, fail.
fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut decoded = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// Form decoding, as a query component is decoded (the `form_urlencoded`
/// crate's rules, axum's): `+` is a space, `%` and two hex digits make a
/// byte, any other `%` stays as it is, and bytes that are not UTF-8 become
/// U+FFFD. It never fails.
fn form_decode(raw: &str) -> Option<String> {
    let spaced = raw.replace('+', " ");
    let bytes = spaced.as_bytes();
    let mut decoded = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok());
        match hex.filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit())) {
            Some(hex) if bytes[i] == b'%' => {
                decoded.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            _ => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&decoded).into_owned())
}

/// What the reference expects: 200 with a body, or a refusal.
#[derive(Debug, PartialEq)]
enum Expected {
    Ok(String),
    Refused(StatusCode),
}

const BAD: Expected = Expected::Refused(StatusCode::BAD_REQUEST);

fn ok_or_bad(answer: Option<String>) -> Expected {
    answer.map_or(BAD, Expected::Ok)
}

/// The reference answer to `call`, whose route takes `values`, with
/// `query` as the request's URI holds it.
fn expected(call: &Call, values: &[&str], query: &str) -> Expected {
    let (_, json) = call.content_type();
    match call.target {
        Target::Number => ok_or_bad((|| {
            Some(decode(values[0])?.parse::<u8>().ok()?.to_string())
        })()),
        Target::Pair => ok_or_bad((|| {
            let a: u32 = decode(values[0])?.parse().ok()?;
            Some(format!("{a} {}", decode(values[1])?))
        })()),
        Target::Named => ok_or_bad((|| {
            let id: i64 = decode(values[0])?.parse().ok()?;
            Some(format!("{id} {}", decode(values[1])?))
        })()),
        Target::Color => ok_or_bad(match decode(values[0]).as_deref() {
            Some("red") => Some("Red".to_owned()),
            Some("green") => Some("Green".to_owned()),
            _ => None,
        }),
        Target::Query => ok_or_bad(filter(query)),
        Target::Pairs => ok_or_bad((|| {
            let pairs = query_pairs(query)?.into_iter();
            let pairs = pairs.map(|(key, value)| Some((key, value.parse::<u8>().ok()?)));
            Some(format!("{:?}", pairs.collect::<Option<Vec<_>>>()?))
        })()),
        Target::MaybeQuery => ok_or_bad((|| {
            let pairs = query_pairs(query)?;
            let mut given = pairs.iter().filter(|(key, _)| key == "a");
            // Absent, `None`; given twice or not a `u8`, refused.
            match (given.next(), given.next()) {
                (None, _) => Some("None".to_owned()),
                (Some((_, a)), None) => Some(format!("Some({})", a.parse::<u8>().ok()?)),
                (Some(_), Some(_)) => None,
            }
        })()),
        Target::Json if !json => Expected::Refused(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        Target::Json | Target::Text if call.body.len() > LIMIT => {
            Expected::Refused(StatusCode::PAYLOAD_TOO_LARGE)
        }
        Target::Json => ok_or_bad(
            serde_json::from_slice::<serde_json::Value>(&call.body)
                .ok()
                .map(|value| value.to_string()),
        ),
        Target::Text => ok_or_bad(String::from_utf8(call.body.clone()).ok()),
    }
}

/// The pairs of a query string, decoded; `None` when one does not decode.
fn query_pairs(query: &str) -> Option<Vec<(String, String)>> {
    let pairs = query.split('&').filter(|pair| !pair.is_empty());
    pairs
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            Some((form_decode(key)?, form_decode(value)?))
        })
        .collect()
}

/// The reference answer of `Query<Filter>`: every pair decodes, each field
/// is given at most once and parses.
fn filter(query: &str) -> Option<String> {
    let pairs = query_pairs(query)?;
    let field = |name: &str| {
        let mut values = pairs
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value);
        let first = values.next();
        // A field given twice is refused.
        match values.next() {
            Some(_) => Err(()),
            None => Ok(first),
        }
    };
    let a = match field("a").ok()? {
        Some(a) => Some(a.parse::<u32>().ok()?),
        None => None,
    };
    let flag = match field("flag").ok()? {
        Some(flag) => Some(flag.parse::<bool>().ok()?),
        None => None,
    };
    let b = field("b").ok()?;
    Some(filter_answer(a, b.map(String::as_str), flag))
}

/// Sends `call` to `router` and checks its answer against the reference.
pub fn check(router: &mut CompiledRouter, call: &Call) {
    let (route, count) = match call.target {
        Target::Number => ("/u8", 1),
        Target::Pair => ("/pair", 2),
        Target::Named => ("/named", 2),
        Target::Color => ("/color", 1),
        Target::Query | Target::Pairs | Target::MaybeQuery | Target::Json | Target::Text => ("", 0),
    };
    let values: Vec<&str> = call.values.iter().take(count).map(String::as_str).collect();
    // A value that is empty or holds a delimiter would change the path.
    let delimits = |value: &&str| value.is_empty() || value.contains(['/', '?', '#']);
    if values.len() < count || values.iter().any(delimits) {
        return;
    }
    let (method, uri) = match call.target {
        Target::Query => (Method::GET, format!("/query?{}", call.query)),
        Target::Pairs => (Method::GET, format!("/pairs?{}", call.query)),
        Target::MaybeQuery => (Method::GET, format!("/maybe?{}", call.query)),
        Target::Json => (Method::POST, "/json".to_owned()),
        Target::Text => (Method::POST, "/text".to_owned()),
        _ => (Method::GET, format!("{route}/{}", values.join("/"))),
    };
    let mut request = Request::builder().method(method).uri(&uri);
    let (content_type, _) = call.content_type();
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    let Ok(request) = request.body(Trickle::new(call)) else {
        return;
    };
    // The path as parsed must be the one built (a fragment or a space
    // would cut it short).
    if request.uri().path() != uri.split_once('?').map_or(uri.as_str(), |(path, _)| path) {
        return;
    }
    let query = request.uri().query().unwrap_or("").to_owned();
    let (response, _) = drive(router.call(request));
    let response = response.unwrap_or_else(|never| match never {});
    let status = response.status();
    let (body, _) = drive(response.into_body().collect());
    let body = body.expect("a full body").to_bytes();
    let answer = match status {
        StatusCode::OK => Expected::Ok(String::from_utf8(body.to_vec()).expect("UTF-8")),
        refused => Expected::Refused(refused),
    };
    assert_eq!(
        answer,
        expected(call, &values, &query),
        "{uri} with {call:?}"
    );
}
