//! Reading the request's body: `String` and `Bytes`, collected within the
//! body limit and timeout by a [`BodyFuture`] (as `Json`, `Form` and
//! `RawForm` are), the `Body` itself, streamed by the handler; and
//! [`BytesRejection`] and [`StringRejection`], why they refused.

use std::{
    fmt,
    future::Future,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use http_body::Body as _;
use http_body_util::Limited;

use super::{
    FromRequestBody, Rejection, RequestContext,
    rejection::{self, Shape, rejection_enum, rejection_variants},
};
use crate::{
    body::Body,
    handler::{
        Answers,
        allowance::{BodyAllowance, Reservation, STEP},
    },
};

/// The 415 of `extractor` for a request whose content type is not `of_type`
/// (`matches` says whether it is); axum tells the client `axum`.
pub(super) fn unless_of_type(
    matches: bool,
    extractor: &'static str,
    of_type: &str,
    axum: &'static str,
) -> Option<Rejection> {
    (!matches).then(|| {
        let message = format!("expected a request with `content-type: {of_type}`");
        Rejection::new(extractor, StatusCode::UNSUPPORTED_MEDIA_TYPE, message).or_as_axum(axum)
    })
}

/// The media type the request's `content-type` declares, without its
/// parameters. Media types are ASCII and case-insensitive: compared as
/// bytes, without allocating.
pub(super) fn media_type(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(http::header::CONTENT_TYPE)?.as_bytes();
    let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
    Some(value[..end].trim_ascii())
}

/// The answer to a body that declares more than `limit` bytes (hyper's
/// declares what `content-length` says), before a byte of it is read: a
/// client waiting for `100 Continue` is not told to send.
pub(super) fn declared_too_large(body: &Body, limit: usize) -> Option<Rejection> {
    (body.size_hint().lower() > limit as u64).then(|| too_large(limit))
}

/// The body itself, as it streams in, for a handler that reads it at its
/// own pace (its last argument). The body limit and the body timeout
/// apply: past the limit, or when the body is not all there by the
/// deadline, the stream ends with an error. A body declaring more than the
/// limit is answered 413 before the handler runs.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, Router};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/count", |body: Body| async move {
///         let mut body = std::pin::pin!(body);
///         let mut bytes = 0;
///         while let Some(Ok(frame)) = body.frame().await {
///             bytes += frame.data_ref().map_or(0, |data| data.len());
///         }
///         format!("{bytes} bytes")
///     })
///     .compile()
///     .unwrap();
/// let request = Request::post("/count").body("12345".to_owned()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "5 bytes");
/// # }
/// ```
impl FromRequestBody for Body {
    type Future = std::future::Ready<Result<Self, Response<Body>>>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        let streamed = streamed(body, context.body_limit, context.body_timeout);
        std::future::ready(streamed.map_err(|rejection| context.reject(rejection)))
    }
}

/// A body a handler streams itself: refused at once if it declares more
/// than `limit` bytes, and otherwise cut with an error at `limit` bytes or
/// when it is not all there within `timeout`.
pub(crate) fn streamed(body: Body, limit: usize, timeout: Duration) -> Result<Body, Rejection> {
    match declared_too_large(&body, limit) {
        Some(refused) => Err(refused),
        None => Ok(Body::new(Streamed {
            body: Limited::new(body, limit),
            deadline: Deadline::new(timeout),
        })),
    }
}

/// A body a handler streams, with its limit and its deadline.
struct Streamed {
    body: Limited<Body>,
    deadline: Deadline,
}

impl http_body::Body for Streamed {
    type Data = Bytes;
    type Error = crate::body::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Pending if this.deadline.poll_passed(cx) => {
                Poll::Ready(Some(Err(this.deadline.passed().into())))
            }
            polled => polled,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The future of a body extractor: collects the body within the limit
/// and converts it. A named type, not a box: a body that is already
/// complete is read without allocating for the future.
pub struct BodyFuture<T> {
    body: Option<Limited<Body>>,
    gathered: Gathered,
    // What the body may take of its connection's and its server's
    // allowances, given back when the future is dropped; and the most the
    // body may bring (its declared length, else the limit).
    reservation: Option<Reservation>,
    most: usize,
    deadline: Deadline,
    // Why the body is refused before it is read (a wrong content type, a
    // declared length over the limit).
    refused: Option<Rejection>,
    limit: usize,
    /// The value of the body, or of why it could not be read.
    // Given the router's answer set, for a rejection the handler takes to
    // be worded as the router would answer it.
    convert: fn(Result<Bytes, Rejection>, Answers) -> Result<T, Rejection>,
    /// How the route's router answers a rejection, if it says.
    shape: Option<Shape>,
    answers: Answers,
}

/// A body's bytes as they arrive. A body that comes in one frame, as a
/// small one mostly does, is that frame: no copy.
#[derive(Debug, Default)]
struct Gathered {
    first: Bytes,
    rest: Vec<Bytes>,
    len: usize,
}

impl Gathered {
    fn push(&mut self, data: Bytes) {
        self.len += data.len();
        if self.first.is_empty() {
            self.first = data;
        } else if !data.is_empty() {
            self.rest.push(data);
        }
    }

    fn into_bytes(self) -> Bytes {
        if self.rest.is_empty() {
            return self.first;
        }
        let mut whole = bytes::BytesMut::with_capacity(self.len);
        whole.extend_from_slice(&self.first);
        for data in &self.rest {
            whole.extend_from_slice(data);
        }
        whole.freeze()
    }
}

/// The answer to a body its HTTP/2 connection has no allowance left for.
#[cold]
fn connection_busy() -> Rejection {
    Rejection::new(
        "body",
        StatusCode::SERVICE_UNAVAILABLE,
        "too many request bodies being read on this connection at once",
    )
}

/// The answer to a body that waited for room on the server until its
/// deadline.
#[cold]
fn server_busy() -> Rejection {
    Rejection::new(
        "body",
        StatusCode::SERVICE_UNAVAILABLE,
        "too many request bodies being read at once; try again later",
    )
}

/// The answer to a body over `limit` bytes.
fn too_large(limit: usize) -> Rejection {
    Rejection::new(
        "body",
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body larger than the limit of {limit} bytes"),
    )
    .or_as_axum("Failed to buffer the request body: length limit exceeded")
}

/// A body extractor's deadline, armed the second time the body keeps the
/// extractor waiting.
///
/// Not the first: served by hyper, the extractor is first polled before
/// hyper has passed on the body bytes it read with the head, and polled
/// again in the same turn of the connection, when a body sent with its
/// head is complete. A request whose body arrives with it so costs no
/// timer; one that waits for it costs one (boxed: body futures are
/// `Unpin`).
#[cfg(feature = "server")]
#[derive(Debug)]
struct Deadline {
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    timeout: Duration,
    waited: bool,
}

#[cfg(feature = "server")]
impl Deadline {
    fn new(timeout: Duration) -> Self {
        Self {
            sleep: None,
            timeout,
            waited: false,
        }
    }

    /// Whether the deadline passed, the body not being ready. Outside a
    /// Tokio runtime there is no timer, and no deadline.
    fn poll_passed(&mut self, cx: &mut Context<'_>) -> bool {
        if self.sleep.is_none() {
            if !std::mem::replace(&mut self.waited, true)
                || tokio::runtime::Handle::try_current().is_err()
            {
                return false;
            }
            self.sleep = Some(Box::pin(tokio::time::sleep(self.timeout)));
        }
        let sleep = self.sleep.as_mut().expect("armed above");
        sleep.as_mut().poll(cx).is_ready()
    }

    /// What a body cut at the deadline fails with.
    fn passed(&self) -> String {
        format!("request body not received within {:?}", self.timeout)
    }

    /// Arms the deadline at the next poll, the first wait included.
    fn arm(&mut self) -> &mut Self {
        self.waited = true;
        self
    }
}

/// Without a runtime's timer, no deadline.
#[cfg(not(feature = "server"))]
#[derive(Debug)]
struct Deadline;

#[cfg(not(feature = "server"))]
impl Deadline {
    fn new(_: Duration) -> Self {
        Self
    }

    fn poll_passed(&mut self, _: &mut Context<'_>) -> bool {
        false
    }

    fn passed(&self) -> String {
        unreachable!("no deadline passes without a timer")
    }

    fn arm(&mut self) -> &mut Self {
        self
    }
}

impl<T> BodyFuture<T> {
    pub(super) fn new(
        body: Body,
        context: &RequestContext<'_>,
        refused: Option<Rejection>,
        convert: fn(Result<Bytes, Rejection>, Answers) -> Result<T, Rejection>,
    ) -> Self {
        let limit = context.body_limit;
        // A body that says it is longer than the limit (hyper's says what
        // `content-length` declares) is refused before it is polled: a
        // client waiting for `100 Continue` is not told to send.
        let mut refused = refused.or_else(|| declared_too_large(&body, limit));
        let most = body
            .size_hint()
            .exact()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(limit)
            .min(limit);
        // What the body may take of its connection's allowance (HTTP/2) and
        // its server's.
        let mut reservation = None;
        if let (None, Some(allowance)) = (
            &refused,
            context.request.extensions().get::<BodyAllowance>(),
        ) {
            reservation = allowance.reserve(most);
            refused = reservation.is_none().then(connection_busy);
        }
        Self {
            body: refused.is_none().then(|| Limited::new(body, limit)),
            gathered: Gathered::default(),
            reservation,
            most,
            deadline: Deadline::new(context.body_timeout),
            refused,
            limit,
            convert,
            shape: context.rejection.cloned(),
            answers: context.answers,
        }
    }

    /// The answer to the body as read, or as refused.
    fn finish(&mut self, bytes: Result<Bytes, Rejection>) -> Poll<Result<T, Response<Body>>> {
        let value = (self.convert)(bytes, self.answers);
        Poll::Ready(
            value.map_err(|refused| rejection::answer(self.shape.as_ref(), self.answers, refused)),
        )
    }
}

impl<T> fmt::Debug for BodyFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyFuture")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl<T> Future for BodyFuture<T> {
    type Output = Result<T, Response<Body>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(body) = &mut this.body else {
            let refused = this.refused.take().expect("future polled after completion");
            return this.finish(Err(refused));
        };
        loop {
            if let Some(reservation) = &mut this.reservation {
                // Room for what came and a step ahead, as the body arrives.
                let ahead = (this.gathered.len.saturating_add(STEP)).min(this.most);
                if reservation.poll_room(cx, ahead).is_pending() {
                    // Only room given back wakes the wait: the deadline is
                    // armed at once.
                    if this.deadline.arm().poll_passed(cx) {
                        return this.finish(Err(server_busy()));
                    }
                    return Poll::Pending;
                }
            }
            match Pin::new(&mut *body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        this.gathered.push(data);
                    }
                }
                Poll::Ready(Some(Err(error))) => {
                    this.body = None;
                    return this.finish(Err(if error.is::<http_body_util::LengthLimitError>() {
                        too_large(this.limit)
                    } else {
                        Rejection::new(
                            "body",
                            StatusCode::BAD_REQUEST,
                            format!("request body could not be read: {error}"),
                        )
                        .or_as_axum(format!("Failed to buffer the request body: {error}"))
                    }));
                }
                Poll::Ready(None) => {
                    this.body = None;
                    let gathered = std::mem::take(&mut this.gathered);
                    return this.finish(Ok(gathered.into_bytes()));
                }
                Poll::Pending if this.deadline.poll_passed(cx) => {
                    this.body = None;
                    return this.finish(Err(Rejection::new(
                        "body",
                        StatusCode::REQUEST_TIMEOUT,
                        "request body not received within the time allowed",
                    )));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl FromRequestBody for Bytes {
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        BodyFuture::new(body, context, None, |bytes, _| bytes)
    }
}

/// The body, or why it could not be read, for the handler to answer
/// itself.
impl FromRequestBody for Result<Bytes, BytesRejection> {
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        BodyFuture::new(body, context, None, |bytes, answers| {
            Ok(bytes.map_err(|rejection| BytesRejection::of(rejection.worded(answers))))
        })
    }
}

impl FromRequestBody for String {
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        BodyFuture::new(body, context, None, |bytes, _| bytes.and_then(utf8))
    }
}

/// The body as text, or why it could not be read or is not UTF-8, for the
/// handler to answer itself.
impl FromRequestBody for Result<String, StringRejection> {
    type Future = BodyFuture<Self>;

    fn from_body(body: Body, context: &RequestContext<'_>) -> Self::Future {
        BodyFuture::new(body, context, None, |bytes, answers| {
            Ok(match bytes {
                Ok(bytes) => utf8(bytes).map_err(|rejection| {
                    StringRejection::InvalidUtf8(InvalidUtf8(rejection.worded(answers)))
                }),
                Err(rejection) => Err(StringRejection::FailedToBufferBody(FailedToBufferBody::of(
                    rejection.worded(answers),
                ))),
            })
        })
    }
}

/// `bytes` as text, or the 400 of a body that is not UTF-8.
fn utf8(bytes: Bytes) -> Result<String, Rejection> {
    String::from_utf8(bytes.to_vec()).map_err(|error| {
        Rejection::new(
            "body",
            StatusCode::BAD_REQUEST,
            format!("request body is not UTF-8: {error}"),
        )
        .or_as_axum(format!("Request body didn't contain valid UTF-8: {error}"))
    })
}

rejection_variants! {
    /// A body over the body limit (413).
    LengthLimitError;
    /// A body that could not be read: cut off or failed (400), not
    /// received within the body timeout (408), or without room on a busy
    /// server (503).
    UnknownBodyError;
    /// A `String` body that is not UTF-8 (400).
    InvalidUtf8;
}

rejection_enum! {
    /// Why a body could not be read, as axum's `FailedToBufferBody`.
    FailedToBufferBody ("a body extractor") {
        /// It is larger than the body limit.
        LengthLimitError(LengthLimitError),
        /// It could not be read in full, in time.
        UnknownBodyError(UnknownBodyError),
    } from |rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => Self::LengthLimitError(LengthLimitError(rejection)),
        _ => Self::UnknownBodyError(UnknownBodyError(rejection)),
    }
}

rejection_enum! {
    /// Why `Bytes` refused a request, as axum's `BytesRejection`, for a
    /// handler that takes `Result<Bytes, BytesRejection>` to answer it
    /// itself; also what `Json`, `Form` and `RawForm` tell of a body they
    /// could not read.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use http::Request;
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::rejection::{BytesRejection, FailedToBufferBody}};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .post("/upload", |body: Result<Bytes, BytesRejection>| match body {
    ///         Ok(body) => format!("{} bytes", body.len()),
    ///         Err(BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(_))) => {
    ///             "too large".to_owned()
    ///         }
    ///         Err(other) => other.body_text(),
    ///     })
    ///     .body_limit(4)
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::post("/upload").body("12345".to_owned()).unwrap();
    /// let response = router.oneshot(request).await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "too large");
    /// # }
    /// ```
    BytesRejection ("`Bytes`") {
        /// The body could not be read: over the limit, too slow, cut off.
        FailedToBufferBody(FailedToBufferBody),
    } from |rejection| Self::FailedToBufferBody(FailedToBufferBody::of(rejection))
}

rejection_enum! {
    /// Why `String` refused a request, as axum's `StringRejection`, for a
    /// handler that takes `Result<String, StringRejection>` to answer it
    /// itself.
    StringRejection ("`String`") {
        /// The body could not be read: over the limit, too slow, cut off.
        FailedToBufferBody(FailedToBufferBody),
        /// The body is not UTF-8.
        InvalidUtf8(InvalidUtf8),
    }
}
