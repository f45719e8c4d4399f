//! The end of a response body, for monitors that ask to hear of it: a body
//! wrapper that counts what goes out and reports how it ended.

use std::{
    fmt,
    pin::Pin,
    task::{Context, Poll},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::Response;
use http_body::{Body as _, Frame, SizeHint};

use crate::{body::Body, body::BoxError};

/// How a response body ended, as a monitor that asked to hear of it sees
/// it: what went out, when, and whether it all did.
///
/// The times count from when the request reached the router (or the
/// [`MonitorLayer`](crate::MonitorLayer)), as
/// [`Exchange::elapsed`](crate::Exchange::elapsed) does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyEnd {
    bytes: u64,
    first_byte: Option<Duration>,
    last_byte: Duration,
    ended: Ended,
}

impl BodyEnd {
    /// The bytes of body data handed to the server to send.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// When the first byte of the body was handed to the server; `None`
    /// for a body that sent no data.
    pub fn time_to_first_byte(&self) -> Option<Duration> {
        self.first_byte
    }

    /// When the body ended: its last byte handed to the server, its error,
    /// or its drop.
    pub fn time_to_last_byte(&self) -> Duration {
        self.last_byte
    }

    /// How the body ended.
    pub fn ended(&self) -> &Ended {
        &self.ended
    }
}

/// How a response body ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// It was sent whole.
    Complete,
    /// It failed with this error while being sent (a stream's error): the
    /// client got a body cut short.
    Failed(String),
    /// It was dropped before its end: the client went away, or the server
    /// closed the connection (a shutdown's deadline, a write that failed).
    Dropped,
}

impl Ended {
    /// A short name, fit for a metric's label: `"complete"`, `"failed"`
    /// or `"dropped"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Ended::Complete => "complete",
            Ended::Failed(_) => "failed",
            Ended::Dropped => "dropped",
        }
    }
}

/// What a monitor called after the response went out sees of it: its
/// status and version; its headers have gone out.
pub(crate) fn sent_head(response: &Response<Body>) -> Response<Body> {
    let mut kept = Response::new(Body::empty());
    *kept.status_mut() = response.status();
    *kept.version_mut() = response.version();
    kept
}

/// Wraps `response`'s body, sent for a request that arrived at `start`,
/// so that `on_end` hears how it ends.
pub(crate) fn watch<F>(response: &mut Response<Body>, start: Instant, on_end: F)
where
    F: FnOnce(BodyEnd) + Send + 'static,
{
    let body = std::mem::take(response.body_mut());
    *response.body_mut() = Body::new(Watched::new(body, start, on_end));
}

/// A response body that reports its end to `F`, once.
struct Watched<F: FnOnce(BodyEnd)> {
    inner: Body,
    start: Instant,
    bytes: u64,
    first_byte: Option<Duration>,
    on_end: Option<F>,
}

// `on_end` is never pinned: it is taken out and called by value.
impl<F: FnOnce(BodyEnd)> Unpin for Watched<F> {}

impl<F: FnOnce(BodyEnd)> Watched<F> {
    /// Watches `inner`, sent for a request that arrived at `start`.
    fn new(inner: Body, start: Instant, on_end: F) -> Self {
        Self {
            inner,
            start,
            bytes: 0,
            first_byte: None,
            on_end: Some(on_end),
        }
    }

    fn end(&mut self, ended: Ended) {
        if let Some(on_end) = self.on_end.take() {
            on_end(BodyEnd {
                bytes: self.bytes,
                first_byte: self.first_byte,
                last_byte: self.start.elapsed(),
                ended,
            });
        }
    }
}

impl<F: FnOnce(BodyEnd)> http_body::Body for Watched<F> {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if !data.is_empty() {
                        this.first_byte.get_or_insert_with(|| this.start.elapsed());
                        this.bytes += data.len() as u64;
                    }
                }
                if this.inner.is_end_stream() {
                    this.end(Ended::Complete);
                }
            }
            Poll::Ready(Some(Err(error))) => this.end(Ended::Failed(error.to_string())),
            Poll::Ready(None) => this.end(Ended::Complete),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<F: FnOnce(BodyEnd)> Drop for Watched<F> {
    fn drop(&mut self) {
        // Not while a panic unwinds: a monitor's panic would abort.
        if std::thread::panicking() {
            return;
        }
        // A body with nothing left to send is complete even if the server
        // never polled it (an empty body, the answer to HEAD).
        let ended = if self.inner.is_end_stream() {
            Ended::Complete
        } else {
            Ended::Dropped
        };
        self.end(ended);
    }
}

impl<F: FnOnce(BodyEnd)> fmt::Debug for Watched<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watched")
            .field("inner", &self.inner)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}
