//! [`Exchange`]: what a monitor sees of one request.

use std::{fmt, time::Duration};

use http::{HeaderMap, Method, Response, StatusCode, Uri};

use crate::{
    clock::Clock,
    head::RequestHead,
    monitor::BodyEnd,
    params::{Captures, Params, params_of},
};

/// What a monitor sees of one request: its head, the outcome, and the time
/// the inner service took.
///
/// `R` is the response type and `E` the error type of the inner service.
///
/// Behind a [`MonitorLayer`](crate::MonitorLayer) there is a response or an
/// error — or neither when the request was cancelled: its response future
/// was dropped before it answered (the client went away, an outer timeout
/// fired). Behind the router there is a response, and a
/// [`Failure`](crate::router::Failure) too when a step failed (a panic
/// answered with 500, an error value); a cancelled request has the
/// cancelled failure and no response. The router also tells the pattern
/// of the matched route.
///
/// ```
/// use std::{future::pending, sync::{Arc, Mutex}};
/// use http::{Request, Response};
/// use pronghorn::{Exchange, MonitorLayer};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// type Outcome = Result<Response<String>, &'static str>;
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let layer = MonitorLayer::new(move |exchange: &Exchange<'_, Response<String>, &'static str>| {
///     let what = match exchange.outcome() {
///         Some(Ok(response)) => response.status().to_string(),
///         Some(Err(error)) => format!("failed: {error}"),
///         None => "cancelled".to_owned(),
///     };
///     log.lock().unwrap().push(format!("{} {what}", exchange.path()));
/// });
/// let service = layer.layer(service_fn(|request: Request<()>| async move {
///     match request.uri().path() {
///         "/ok" => Ok(Response::new(String::new())),
///         "/slow" => pending::<Outcome>().await,
///         _ => Err("no such thing"),
///     }
/// }));
///
/// let _ = service.clone().oneshot(Request::get("/ok").body(()).unwrap()).await;
/// let _ = service.clone().oneshot(Request::get("/bad").body(()).unwrap()).await;
/// // An outer timeout drops the response future before it answers.
/// let slow = service.oneshot(Request::get("/slow").body(()).unwrap());
/// let _ = tokio::time::timeout(std::time::Duration::ZERO, slow).await;
/// assert_eq!(*seen.lock().unwrap(), ["/ok 200 OK", "/bad failed: no such thing", "/slow cancelled"]);
/// # }
/// ```
pub struct Exchange<'a, R, E> {
    head: &'a RequestHead,
    response: Option<&'a R>,
    error: Option<&'a E>,
    pattern: Option<&'a str>,
    /// The names of the monitor's own parameters, behind the router, and
    /// what the path bound: read into [`Params`] only when asked.
    names: &'a [Box<str>],
    captures: &'a Captures,
    /// The request's headers, behind the router.
    request_headers: Option<&'a HeaderMap>,
    /// How the response body ended, in the call that reports it.
    body_end: Option<&'a BodyEnd>,
    /// Whether the monitor is called again when the body ends: a monitor
    /// registered to hear of it, in the call at the head of a response.
    end_follows: bool,
    cancelled: bool,
    clock: &'a Clock,
}

impl<'a, R, E> Exchange<'a, R, E> {
    /// The exchange of a request answered with `outcome`, or cancelled
    /// (`None`).
    pub(crate) fn new(
        head: &'a RequestHead,
        outcome: Option<Result<&'a R, &'a E>>,
        clock: &'a Clock,
    ) -> Self {
        let (response, error) = match outcome {
            Some(Ok(response)) => (Some(response), None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        };
        Self {
            head,
            response,
            error,
            pattern: None,
            names: &[],
            captures: &Captures::NONE,
            request_headers: None,
            body_end: None,
            end_follows: false,
            cancelled: outcome.is_none(),
            clock,
        }
    }

    /// The exchange of a request the router answered with `response`, or
    /// that was cancelled (no response), for a monitor whose pattern's
    /// parameters `names` bound `captures`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the parts of the exchange the router keeps apart, borrowed where they lie"
    )]
    pub(crate) fn routed(
        head: &'a RequestHead,
        request_headers: Option<&'a HeaderMap>,
        response: Option<&'a R>,
        error: Option<&'a E>,
        pattern: Option<&'a str>,
        names: &'a [Box<str>],
        captures: &'a Captures,
        body_end: Option<&'a BodyEnd>,
        clock: &'a Clock,
    ) -> Self {
        Self {
            head,
            response,
            error,
            pattern,
            names,
            captures,
            request_headers,
            body_end,
            end_follows: false,
            cancelled: response.is_none(),
            clock,
        }
    }

    /// The pattern of the route that answered, behind the router, or of
    /// the route the path matched for an automatic OPTIONS answer or a 426;
    /// `None` for a 404 or 405 and behind a
    /// [`MonitorLayer`](crate::MonitorLayer). It is the pattern in the
    /// monitor's own router: a router mounted in another with
    /// [`nest_service`](crate::Router::nest_service) does not see the base
    /// (its handlers' [`MatchedPath`](crate::handler::MatchedPath) does).
    #[inline]
    pub fn pattern(&self) -> Option<&'a str> {
        self.pattern
    }

    /// The parameters bound along the monitor's own pattern, behind the
    /// router (raw with [`Params::get_raw`], decoded with [`Params::get`]);
    /// none behind a [`MonitorLayer`](crate::MonitorLayer).
    #[inline]
    pub fn params(&self) -> Params<'a> {
        params_of(self.head, self.names, self.captures)
    }

    /// The request's headers as the handler received them, behind the
    /// router (kept, not copied, while the handler borrowed them), or as
    /// they were when a prefix answered. A prefix that takes the request
    /// by value (every asynchronous one does) may answer early, fail or
    /// never give it back: the router keeps a copy of the headers from
    /// before it ran, when monitors are to run, and the monitors see that.
    /// `None` behind a [`MonitorLayer`](crate::MonitorLayer), whose inner
    /// service took the request.
    #[inline]
    pub fn request_headers(&self) -> Option<&'a HeaderMap> {
        self.request_headers
    }

    /// The exchange as a monitor that asked to hear of the body's end
    /// sees it then.
    pub(crate) fn with_body_end(mut self, end: Option<&'a BodyEnd>) -> Self {
        self.body_end = end;
        self
    }

    /// The exchange at the head of a response whose body's end the
    /// monitor hears of too, in a second call.
    pub(crate) fn with_end_to_follow(mut self, follows: bool) -> Self {
        self.end_follows = follows;
        self
    }

    /// How the response body ended, in the second call of a monitor that
    /// asked to hear of it
    /// ([`Router::monitor_body`](crate::Router::monitor_body)); `None` in
    /// the call made when the response head is ready.
    #[inline]
    pub fn body_end(&self) -> Option<&'a BodyEnd> {
        self.body_end
    }

    /// The request head.
    #[inline]
    pub fn head(&self) -> &'a RequestHead {
        self.head
    }

    /// The request method.
    #[inline]
    pub fn method(&self) -> &'a Method {
        self.head.method()
    }

    /// The request URI.
    #[inline]
    pub fn uri(&self) -> &'a Uri {
        self.head.uri()
    }

    /// The request path, still percent-encoded.
    #[inline]
    pub fn path(&self) -> &'a str {
        self.head.path()
    }

    /// The error if there is one, else the response; `None` when the
    /// request was cancelled behind a [`MonitorLayer`](crate::MonitorLayer)
    /// (the router reports its cancelled failure as the error).
    #[inline]
    pub fn outcome(&self) -> Option<Result<&'a R, &'a E>> {
        match (self.error, self.response) {
            (Some(error), _) => Some(Err(error)),
            (None, Some(response)) => Some(Ok(response)),
            (None, None) => None,
        }
    }

    /// The response, unless the inner service failed or the request was
    /// cancelled.
    #[inline]
    pub fn response(&self) -> Option<&'a R> {
        self.response
    }

    /// Whether the response future was dropped before the request was
    /// answered: no response goes out.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// The error, if a step failed.
    #[inline]
    pub fn error(&self) -> Option<&'a E> {
        self.error
    }

    /// The time from the call of the inner service to its answer.
    ///
    /// The clock is read at the first call, when the monitors run, and the
    /// figure kept: a monitor that never asks costs no clock read.
    #[inline]
    pub fn elapsed(&self) -> Duration {
        self.clock.elapsed()
    }
}

impl<'a, B, E> Exchange<'a, Response<B>, E> {
    /// The response status, unless the inner service failed or the request
    /// was cancelled.
    #[inline]
    pub fn status(&self) -> Option<StatusCode> {
        self.response().map(Response::status)
    }

    /// The response headers, unless the inner service failed or the
    /// request was cancelled.
    #[inline]
    pub fn headers(&self) -> Option<&'a HeaderMap> {
        self.response().map(Response::headers)
    }
}

/// What the ready-made monitors report, measured one way for all.
impl<B: http_body::Body, E> Exchange<'_, Response<B>, E> {
    /// Whether a ready-made monitor skips this call, so that it reports
    /// each request once however it was registered. One that reports at
    /// the body's end (`at_body_end`) skips the call at the head when the
    /// body's end is to follow (else it reports at the head: with
    /// [`Router::monitor`](crate::Router::monitor) no end follows); one
    /// that reports at the head skips the call at the body's end (made
    /// when it was registered with
    /// [`Router::monitor_body`](crate::Router::monitor_body)).
    pub(crate) fn skips(&self, at_body_end: bool) -> bool {
        match at_body_end {
            true => self.body_end.is_none() && self.end_follows,
            false => self.body_end.is_some(),
        }
    }

    /// The request's duration: to the body's last byte once it ended, to
    /// the response head before.
    pub(crate) fn duration(&self) -> Duration {
        self.body_end
            .map_or_else(|| self.elapsed(), BodyEnd::time_to_last_byte)
    }

    /// The bytes of the body: those sent once it ended, those it says it
    /// holds before (a full body), if it knows.
    pub(crate) fn body_bytes(&self) -> Option<u64> {
        match self.body_end {
            Some(end) => Some(end.bytes()),
            None => (self.response()).and_then(|response| response.body().size_hint().exact()),
        }
    }
}

impl<R, E> Clone for Exchange<'_, R, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R, E> Copy for Exchange<'_, R, E> {}

impl<R: fmt::Debug, E: fmt::Debug> fmt::Debug for Exchange<'_, R, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchange")
            .field("head", self.head)
            .field("response", &self.response)
            .field("error", &self.error)
            .field("pattern", &self.pattern)
            .field("params", &self.params())
            .field("body_end", &self.body_end)
            .field("cancelled", &self.cancelled)
            .field("elapsed", &self.elapsed())
            .finish()
    }
}
