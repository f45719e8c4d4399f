//! [`Body`]: the body of every request and response inside the router —
//! empty, one buffer, hyper's request body, or a stream (only a stream
//! allocates); and what axum's `body` module has beside it: [`Bytes`],
//! [`to_bytes`].

use std::{
    any::Any,
    fmt,
    pin::Pin,
    task::{Context, Poll},
};

#[doc(no_inline)]
pub use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;

/// A response, its body pronghorn's [`Body`] unless said otherwise: what
/// handlers, layers and the router answer, as axum's `response::Response`.
pub type Response<B = Body> = http::Response<B>;

/// A request, its body pronghorn's [`Body`] unless said otherwise: what
/// the router hands a handler, a layer or a middleware function, as
/// axum's `extract::Request`.
///
/// ```
/// use pronghorn::{Request, Response, Router, middleware::{Next, from_fn}};
///
/// async fn log(request: Request, next: Next) -> Response {
///     println!("{} {}", request.method(), request.uri());
///     next.run(request).await
/// }
///
/// let router = Router::new().get("/", || "hello").layer(from_fn(log)).compile().unwrap();
/// # let _ = router;
/// ```
pub type Request<B = Body> = http::Request<B>;

/// The whole of `body`, of at most `limit` bytes, as axum's
/// `body::to_bytes`: in tests, say, to read an answer.
///
/// # Errors
///
/// The body's own error, or one saying the body is over `limit`.
///
/// ```
/// use pronghorn::body::{Body, to_bytes};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// assert_eq!(to_bytes(Body::full("hello"), 1024).await.unwrap(), "hello");
/// assert!(to_bytes(Body::full("hello"), 4).await.is_err());
/// # }
/// ```
pub async fn to_bytes(body: Body, limit: usize) -> Result<Bytes, BoxError> {
    Ok(http_body_util::Limited::new(body, limit)
        .collect()
        .await?
        .to_bytes())
}

/// The error type of a streaming [`Body`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `value` as a `T` if that is its type, or `value` back. Both types are
/// known where it is called: the check is folded away at compile time.
#[inline(always)]
pub(crate) fn downcast<T: 'static, U: 'static>(value: U) -> Result<T, U> {
    let mut slot = Some(value);
    match (&mut slot as &mut dyn Any).downcast_mut::<Option<T>>() {
        Some(found) => Ok(found.take().expect("the value is in its slot")),
        None => Err(slot.expect("the value is in its slot")),
    }
}

/// A response body: empty, one buffer, or a boxed stream of frames.
///
/// Empty and full bodies are stored inline, so building a response from a
/// `&'static str`, a `String` or `Bytes` allocates nothing beyond the data
/// itself; only a stream is boxed.
///
/// ```
/// use pronghorn::Body;
/// use http_body::Body as _;
///
/// assert_eq!(Body::empty().size_hint().exact(), Some(0));
/// assert_eq!(Body::from("hello").size_hint().exact(), Some(5));
/// ```
pub struct Body {
    kind: Kind,
}

enum Kind {
    Empty,
    Full(Option<Bytes>),
    /// A request body as hyper reads it, kept as it is.
    #[cfg(feature = "server")]
    Incoming(hyper::body::Incoming),
    Stream(Pin<Box<dyn http_body::Body<Data = Bytes, Error = BoxError> + Send>>),
}

impl Body {
    /// A body with no data.
    #[inline]
    pub const fn empty() -> Self {
        Self { kind: Kind::Empty }
    }

    /// A body of one buffer.
    #[inline]
    pub fn full(data: impl Into<Bytes>) -> Self {
        let data = data.into();
        if data.is_empty() {
            Self::empty()
        } else {
            Self {
                kind: Kind::Full(Some(data)),
            }
        }
    }

    /// Any other body: kept as it is if it already is a `Body`, stored
    /// inline if it is an `http_body_util::Full<Bytes>`, an
    /// `http_body_util::Empty<Bytes>`, a `String` or hyper's `Incoming`
    /// (feature `server`), boxed otherwise.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use http_body::Body as _;
    /// use http_body_util::Full;
    /// use pronghorn::Body;
    ///
    /// let body = Body::new(Full::new(Bytes::from("hello")));
    /// assert_eq!(body.size_hint().exact(), Some(5));
    /// assert_eq!(format!("{body:?}"), "Body::Full(5)");
    /// ```
    pub fn new<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        use http_body_util::{BodyExt, Empty, Full};

        let body = match downcast::<Body, _>(body) {
            Ok(body) => return body,
            Err(body) => body,
        };
        let body = match downcast::<String, _>(body) {
            Ok(text) => return Self::full(text),
            Err(body) => body,
        };
        let body = match downcast::<Full<Bytes>, _>(body) {
            Ok(full) => {
                // A full body's one frame is ready at once.
                let mut full = std::pin::pin!(full);
                let waker = &mut Context::from_waker(std::task::Waker::noop());
                return match http_body::Body::poll_frame(full.as_mut(), waker) {
                    Poll::Ready(Some(Ok(frame))) => {
                        Self::full(frame.into_data().unwrap_or_default())
                    }
                    _ => Self::empty(),
                };
            }
            Err(body) => body,
        };
        let body = match downcast::<Empty<Bytes>, _>(body) {
            Ok(_) => return Self::empty(),
            Err(body) => body,
        };
        #[cfg(feature = "server")]
        let body = match downcast::<hyper::body::Incoming, _>(body) {
            Ok(incoming) => {
                return Self {
                    kind: Kind::Incoming(incoming),
                };
            }
            Err(body) => body,
        };
        Self {
            kind: Kind::Stream(Box::pin(body.map_err(Into::into))),
        }
    }
}

impl Body {
    /// A streaming body from a stream of byte chunks; each chunk is sent as
    /// it comes.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use pronghorn::Body;
    ///
    /// let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from("a")), Ok(Bytes::from("b"))]);
    /// let body = Body::from_stream(chunks);
    /// # let _ = body;
    /// ```
    pub fn from_stream<S, D, E>(stream: S) -> Self
    where
        S: futures_util::Stream<Item = Result<D, E>> + Send + 'static,
        D: Into<Bytes> + 'static,
        E: Into<BoxError> + 'static,
    {
        use futures_util::TryStreamExt;
        let frames = stream
            .map_ok(|data| Frame::data(data.into()))
            .map_err(Into::into);
        Self {
            kind: Kind::Stream(Box::pin(http_body_util::StreamBody::new(frames))),
        }
    }
}

impl Default for Body {
    fn default() -> Self {
        Self::empty()
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Empty => f.write_str("Body::Empty"),
            Kind::Full(data) => f
                .debug_tuple("Body::Full")
                .field(&data.as_ref().map_or(0, Bytes::len))
                .finish(),
            #[cfg(feature = "server")]
            Kind::Incoming(_) => f.write_str("Body::Incoming"),
            Kind::Stream(_) => f.write_str("Body::Stream"),
        }
    }
}

macro_rules! full_from {
    ($($ty:ty),*) => {$(
        impl From<$ty> for Body {
            #[inline]
            fn from(data: $ty) -> Self {
                Self::full(data)
            }
        }
    )*};
}

full_from!(Bytes, String, &'static str, Vec<u8>, &'static [u8]);

/// A pronghorn body inside axum's, for an early answer of a
/// [`PrefixLayer`](crate::PrefixLayer) in front of an axum router. Boxed,
/// as any body axum wraps.
#[cfg(feature = "axum")]
impl From<Body> for axum_core::body::Body {
    fn from(body: Body) -> Self {
        Self::new(body)
    }
}

impl From<()> for Body {
    fn from(_: ()) -> Self {
        Self::empty()
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    #[inline]
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(data) => Poll::Ready(data.take().map(|data| Ok(Frame::data(data)))),
            #[cfg(feature = "server")]
            Kind::Incoming(incoming) => Pin::new(incoming).poll_frame(cx).map_err(Into::into),
            Kind::Stream(stream) => stream.as_mut().poll_frame(cx),
        }
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Empty => true,
            Kind::Full(data) => data.is_none(),
            #[cfg(feature = "server")]
            Kind::Incoming(incoming) => incoming.is_end_stream(),
            Kind::Stream(stream) => stream.is_end_stream(),
        }
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty => SizeHint::with_exact(0),
            Kind::Full(data) => SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64)),
            #[cfg(feature = "server")]
            Kind::Incoming(incoming) => incoming.size_hint(),
            Kind::Stream(stream) => stream.size_hint(),
        }
    }
}
