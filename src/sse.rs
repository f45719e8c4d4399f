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
use tokio::time::{Instant, Sleep, sleep};

use crate::{Body, BoxError, IntoResponse};

/// One server-sent event.
///
/// ```
/// use pronghorn::sse::Event;
///
/// let event = Event::default().event("tick").id("7").data("one\ntwo");
/// assert_eq!(event.to_string(), "event: tick\nid: 7\ndata: one\ndata: two\n\n");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
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
    /// The event type (`event:`).
    pub fn event(mut self, event: &str) -> Self {
        self.event = Some(one_line(event));
        self
    }

    /// The event id (`id:`).
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(one_line(id));
        self
    }

    /// The data; several lines become several `data:` fields.
    pub fn data(mut self, data: &str) -> Self {
        self.data = Some(data.to_owned());
        self
    }

    /// How long the client should wait before reconnecting (`retry:`).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
            for line in data.split('\n') {
                writeln!(f, "data: {}", line.trim_end_matches('\r'))?;
            }
        }
        writeln!(f)
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
/// use pronghorn::{Router, sse::{Event, Sse}};
///
/// let router = Router::<String>::new()
///     .get("/events", || {
///         let events = futures_util::stream::iter((0..3).map(|n| Ok::<_, Infallible>(Event::default().data(&n.to_string()))));
///         Sse::new(events).keep_alive(Duration::from_secs(15))
///     })
///     .compile()
///     .unwrap();
/// ```
pub struct Sse<S> {
    events: S,
    keep_alive: Option<Duration>,
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

    /// Sends a keep-alive comment after `interval` without an event.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = Some(interval);
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
            keep_alive: self.keep_alive.map(|interval| KeepAlive {
                interval,
                timer: Box::pin(sleep(interval)),
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

struct KeepAlive {
    interval: Duration,
    timer: Pin<Box<Sleep>>,
}

pin_project! {
    struct EventStream<S> {
        #[pin]
        events: S,
        keep_alive: Option<KeepAlive>,
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
                    keep_alive
                        .timer
                        .as_mut()
                        .reset(Instant::now() + keep_alive.interval);
                }
                Poll::Ready(Some(Ok(Bytes::from(event.to_string()))))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if let Some(keep_alive) = this.keep_alive {
                    if keep_alive.timer.as_mut().poll(cx).is_ready() {
                        keep_alive
                            .timer
                            .as_mut()
                            .reset(Instant::now() + keep_alive.interval);
                        return Poll::Ready(Some(Ok(Bytes::from_static(b": keep-alive\n\n"))));
                    }
                }
                Poll::Pending
            }
        }
    }
}
