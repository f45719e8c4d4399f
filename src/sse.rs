//! Server-sent events: [`Sse`] turns a stream of [`Event`]s into a
//! `text/event-stream` response, with keep-alive comments while the stream
//! is quiet (feature `server`).

use std::{
    fmt,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use futures_util::Stream;
use http::{HeaderValue, Response, header};
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep, sleep_until};

use crate::{body::Body, body::BoxError, clock::FOREVER, handler::IntoResponse};

/// One server-sent event.
///
/// A browser's `EventSource` dispatches an event only when it has data:
/// one with a type or an id alone updates the stream's last id, or with
/// [`retry`](Event::retry) its reconnection delay, and is not seen by
/// listeners. `data("")` sends an event whose data is empty.
///
/// ```
/// use std::time::Duration;
/// use pronghorn::sse::Event;
///
/// let event = Event::default().event("tick").id("7").data("one\ntwo");
/// assert_eq!(event.to_string(), "event: tick\nid: 7\ndata: one\ndata: two\n\n");
///
/// // Only the reconnection delay, in milliseconds.
/// let retry = Event::default().retry(Duration::from_secs(3));
/// assert_eq!(retry.to_string(), "retry: 3000\n\n");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    comment: Option<String>,
    event: Option<String>,
    id: Option<String>,
    data: Option<String>,
    retry: Option<Duration>,
}

/// Line breaks would end a field early: they are dropped from single-line
/// fields.
fn one_line(text: &str) -> String {
    text.chars().filter(|c| *c != '\n' && *c != '\r').collect()
}

impl Event {
    /// The event type (`event:`). Line breaks are removed: they would end
    /// the field early.
    pub fn event(mut self, event: &str) -> Self {
        self.event = Some(one_line(event));
        self
    }

    /// The event id (`id:`). Line breaks are removed, as from
    /// [`event`](Event::event), and so is NUL: a client ignores an id that
    /// holds one.
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(one_line(id).replace('\0', ""));
        self
    }

    /// The data; several lines (ended by `\n`, `\r\n` or `\r`) become
    /// several `data:` fields, which the client joins with `\n`.
    pub fn data(mut self, data: &str) -> Self {
        self.data = Some(data.to_owned());
        self
    }

    /// A comment (`: text`), which clients ignore: a keep-alive, or a note
    /// for whoever reads the stream. Line breaks are removed.
    ///
    /// ```
    /// use pronghorn::sse::Event;
    ///
    /// assert_eq!(Event::default().comment("hi").to_string(), ": hi\n\n");
    /// ```
    pub fn comment(mut self, comment: &str) -> Self {
        self.comment = Some(one_line(comment));
        self
    }

    /// The data, `data` serialized as JSON (feature `json`), as axum's
    /// `Event::json_data`.
    ///
    /// ```
    /// use pronghorn::sse::Event;
    ///
    /// let event = Event::default().json_data(serde_json::json!({"n": 1})).unwrap();
    /// assert_eq!(event.to_string(), "data: {\"n\":1}\n\n");
    /// ```
    #[cfg(feature = "json")]
    pub fn json_data<T: serde::Serialize>(self, data: T) -> Result<Self, serde_json::Error> {
        Ok(self.data(&serde_json::to_string(&data)?))
    }

    /// The event as a writer of its data (`std::fmt::Write`), for data
    /// written piece by piece, as axum's `Event::into_data_writer`; line
    /// breaks split it into `data:` fields as [`data`](Event::data) does.
    /// [`EventDataWriter::into_event`] gives the event back. What the event
    /// held as data already is kept, the writes following it.
    ///
    /// ```
    /// use std::fmt::Write;
    /// use pronghorn::sse::Event;
    ///
    /// let mut writer = Event::default().event("sum").into_data_writer();
    /// write!(writer, "{} + {}", 1, 2).unwrap();
    /// writer.write_str("\n= 3").unwrap();
    /// let event = writer.into_event();
    /// assert_eq!(event.to_string(), "event: sum\ndata: 1 + 2\ndata: = 3\n\n");
    /// ```
    pub fn into_data_writer(self) -> EventDataWriter {
        EventDataWriter { event: self }
    }

    /// How long the client should wait before reconnecting (`retry:`).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(comment) = &self.comment {
            writeln!(f, ": {comment}")?;
        }
        if let Some(event) = &self.event {
            writeln!(f, "event: {event}")?;
        }
        if let Some(id) = &self.id {
            writeln!(f, "id: {id}")?;
        }
        if let Some(retry) = self.retry {
            writeln!(f, "retry: {}", retry.as_millis())?;
        }
        if let Some(data) = &self.data {
            // A client ends a line at `\r\n`, `\n` or a lone `\r`: each
            // line of the data is a field of its own.
            let mut rest = data.as_str();
            while let Some(end) = rest.find(['\r', '\n']) {
                writeln!(f, "data: {}", &rest[..end])?;
                let crlf = rest[end..].starts_with("\r\n");
                rest = &rest[end + if crlf { 2 } else { 1 }..];
            }
            writeln!(f, "data: {rest}")?;
        }
        writeln!(f)
    }
}

/// An [`Event`] whose data is written piece by piece: see
/// [`Event::into_data_writer`].
#[derive(Debug)]
#[must_use = "the event is taken back with `into_event`"]
pub struct EventDataWriter {
    event: Event,
}

impl EventDataWriter {
    /// The event, with the data written.
    pub fn into_event(self) -> Event {
        self.event
    }
}

impl fmt::Write for EventDataWriter {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.event
            .data
            .get_or_insert_with(String::new)
            .push_str(text);
        Ok(())
    }
}

/// A `text/event-stream` response from a stream of events.
///
/// With [`keep_alive`](Sse::keep_alive), a comment line is sent whenever
/// the stream has been quiet for the interval, so that proxies keep the
/// connection open.
///
/// ```
/// use std::{convert::Infallible, time::Duration};
/// use http::{Request, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, sse::{Event, Sse}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/events", || {
///         let events = futures_util::stream::iter(
///             (0..3).map(|n| Ok::<_, Infallible>(Event::default().id(&n.to_string()).data("tick"))),
///         );
///         Sse::new(events).keep_alive(Duration::from_secs(15))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/events").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
/// // The body streams one event after the other; collected here.
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(body, "id: 0\ndata: tick\n\nid: 1\ndata: tick\n\nid: 2\ndata: tick\n\n");
/// # }
/// ```
pub struct Sse<S> {
    events: S,
    keep_alive: Option<KeepAlive>,
}

/// What [`Sse::keep_alive`] sends, and after how long a quiet stream sends
/// it: by default every 15 seconds, an empty comment (`:`), as axum's
/// `KeepAlive` does; a text of your own with [`text`](Self::text), or a
/// whole event with [`event`](Self::event). A `Duration` is a keep-alive
/// of that interval whose comment reads `keep-alive`.
///
/// ```
/// use std::time::Duration;
/// use pronghorn::sse::{Event, KeepAlive, Sse};
///
/// let events = futures_util::stream::empty::<Result<Event, std::convert::Infallible>>();
/// let sse = Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(5)).text("ping"));
/// # let _ = sse;
/// assert_eq!(KeepAlive::new().text("ping").frame(), ": ping\n\n");
/// assert_eq!(KeepAlive::default().frame(), ":\n\n");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeepAlive {
    /// `None`: off (an interval of zero).
    interval: Option<Duration>,
    /// The bytes sent, a comment or an event.
    frame: Bytes,
}

impl KeepAlive {
    /// Every 15 seconds, an empty comment.
    pub fn new() -> Self {
        Self {
            interval: Some(Duration::from_secs(15)),
            frame: Bytes::from_static(b":\n\n"),
        }
    }

    /// After `interval` without an event. Zero turns keep-alive off: a
    /// comment every time the stream has nothing to send would flood the
    /// connection; one too long to count, `Duration::MAX`, sends none
    /// either.
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = (!interval.is_zero()).then_some(interval.min(FOREVER));
        self
    }

    /// A comment line reading `text` (line breaks removed: they would end
    /// the comment early).
    pub fn text(mut self, text: &str) -> Self {
        self.frame = Bytes::from(format!(": {}\n\n", one_line(text)));
        self
    }

    /// `event` itself, in the comment's stead.
    pub fn event(mut self, event: Event) -> Self {
        self.frame = Bytes::from(event.to_string());
        self
    }

    /// The text sent, as it goes on the wire.
    pub fn frame(&self) -> &str {
        std::str::from_utf8(&self.frame).unwrap_or_default()
    }
}

impl Default for KeepAlive {
    fn default() -> Self {
        Self::new()
    }
}

/// A keep-alive after `interval`, whose comment reads `keep-alive`.
impl From<Duration> for KeepAlive {
    fn from(interval: Duration) -> Self {
        Self::new().interval(interval).text("keep-alive")
    }
}

impl<S> fmt::Debug for Sse<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sse")
            .field("keep_alive", &self.keep_alive)
            .finish()
    }
}

impl<S> Sse<S> {
    /// Events from `events`, no keep-alive.
    pub fn new(events: S) -> Self {
        Self {
            events,
            keep_alive: None,
        }
    }

    /// Sends a keep-alive after a quiet interval: a [`KeepAlive`], or a
    /// `Duration`, after which the comment `keep-alive` goes. An interval
    /// of zero turns keep-alive off: a comment every time the stream has
    /// nothing to send would flood the connection. One too long to count,
    /// `Duration::MAX`, sends none either.
    pub fn keep_alive(mut self, keep_alive: impl Into<KeepAlive>) -> Self {
        self.keep_alive = Some(keep_alive.into());
        self
    }
}

impl<S, E> IntoResponse for Sse<S>
where
    S: Stream<Item = Result<Event, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    fn into_response(self) -> Response<Body> {
        let stream = EventStream {
            events: self.events,
            keep_alive: (self.keep_alive).and_then(|keep_alive| {
                Some(Ticker {
                    interval: keep_alive.interval?,
                    frame: keep_alive.frame,
                    timer: None,
                })
            }),
        };
        let mut response = Response::new(Body::from_stream(stream));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

/// The keep-alive timer, started by the stream's first poll: the response
/// may be built outside the runtime that will send it; and what it sends.
struct Ticker {
    interval: Duration,
    frame: Bytes,
    timer: Option<Pin<Box<Sleep>>>,
}

impl Ticker {
    /// Starts the interval again, from now.
    fn restart(&mut self) {
        let deadline = Instant::now() + self.interval;
        match &mut self.timer {
            Some(timer) => timer.as_mut().reset(deadline),
            None => self.timer = Some(Box::pin(sleep_until(deadline))),
        }
    }

    /// Whether the interval has passed without an event; if so, starts it
    /// again.
    fn poll_due(&mut self, cx: &mut Context<'_>) -> bool {
        // The first poll starts the interval.
        if self.timer.is_none() {
            self.restart();
        }
        let timer = self.timer.as_mut().expect("the timer is started");
        if timer.as_mut().poll(cx).is_pending() {
            return false;
        }
        self.restart();
        true
    }
}

pin_project! {
    struct EventStream<S> {
        #[pin]
        events: S,
        keep_alive: Option<Ticker>,
    }
}

impl<S, E> Stream for EventStream<S>
where
    S: Stream<Item = Result<Event, E>>,
{
    type Item = Result<Bytes, E>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        match this.events.poll_next(cx) {
            Poll::Ready(Some(Ok(event))) => {
                if let Some(keep_alive) = this.keep_alive {
                    keep_alive.restart();
                }
                Poll::Ready(Some(Ok(Bytes::from(event.to_string()))))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if let Some(keep_alive) = this.keep_alive {
                    if keep_alive.poll_due(cx) {
                        return Poll::Ready(Some(Ok(keep_alive.frame.clone())));
                    }
                }
                Poll::Pending
            }
        }
    }
}
