//! [`BodyMonitorLayer`]: a monitor layer whose hook is called again when
//! the response body ends.

use std::{
    fmt,
    future::Future,
    marker::PhantomData,
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::Bytes;
use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::{Exchange, MonitorHook, MonitorLayer, future::observe_unawaited, sent_head, watch};
use crate::{body::Body, body::BoxError, clock::Clock, head::RequestHead, hook::FnSync};

impl<H, M> MonitorLayer<H, M> {
    /// The same hook, called twice: when the response head is ready, and
    /// again when the response body has ended, with
    /// [`Exchange::body_end`] telling the bytes sent, the times to the
    /// first and last byte, and whether the body was sent whole, failed,
    /// or was dropped before its end.
    ///
    /// The response's body becomes a [`Body`] (boxed unless it is one, or
    /// full, or empty) wrapped to watch it: one allocation more per
    /// request. Nothing waits for the hook: an asynchronous answer is
    /// polled once, in both calls. The second call sees the status, not
    /// the response headers, which have gone out.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use http::{Request, Response};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Body, Exchange, MonitorLayer};
    /// use tower::{ServiceBuilder, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let sent = Arc::new(Mutex::new(Vec::new()));
    /// let log = sent.clone();
    /// let service = ServiceBuilder::new()
    ///     .layer(MonitorLayer::new(move |x: &Exchange<'_, Response<Body>, _>| {
    ///         if let Some(end) = x.body_end() {
    ///             log.lock().unwrap().push(end.bytes());
    ///         }
    ///     }).to_body_end())
    ///     .service(service_fn(|_: Request<String>| async {
    ///         Ok::<_, std::convert::Infallible>(Response::new("hello".to_owned()))
    ///     }));
    /// let response = service.oneshot(Request::new(String::new())).await.unwrap();
    /// response.into_body().collect().await.unwrap();
    /// assert_eq!(*sent.lock().unwrap(), [5]);
    /// # }
    /// ```
    pub fn to_body_end(self) -> BodyMonitorLayer<H, M> {
        BodyMonitorLayer {
            hook: self.into_hook(),
            _marker: PhantomData,
        }
    }
}

/// A [`MonitorLayer`] whose hook is called again when the response body
/// ends: made by [`MonitorLayer::to_body_end`].
pub struct BodyMonitorLayer<H, M = FnSync> {
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

impl<H: Clone, M> Clone for BodyMonitorLayer<H, M> {
    fn clone(&self) -> Self {
        Self {
            hook: self.hook.clone(),
            _marker: PhantomData,
        }
    }
}

impl<H, M> fmt::Debug for BodyMonitorLayer<H, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyMonitorLayer")
            .field("hook", &std::any::type_name::<H>())
            .finish()
    }
}

impl<S, H: Clone, M> Layer<S> for BodyMonitorLayer<H, M> {
    type Service = BodyMonitor<S, H, M>;

    fn layer(&self, inner: S) -> Self::Service {
        BodyMonitor {
            inner,
            hook: self.hook.clone(),
            _marker: PhantomData,
        }
    }
}

/// The service of a [`BodyMonitorLayer`]: its responses have a [`Body`]
/// watched to its end.
pub struct BodyMonitor<S, H, M = FnSync> {
    inner: S,
    hook: H,
    _marker: PhantomData<fn() -> M>,
}

impl<S: Clone, H: Clone, M> Clone for BodyMonitor<S, H, M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            hook: self.hook.clone(),
            _marker: PhantomData,
        }
    }
}

impl<S: fmt::Debug, H, M> fmt::Debug for BodyMonitor<S, H, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyMonitor")
            .field("inner", &self.inner)
            .field("hook", &std::any::type_name::<H>())
            .finish()
    }
}

impl<S, H, M, B, RB> Service<Request<B>> for BodyMonitor<S, H, M>
where
    S: Service<Request<B>, Response = Response<RB>>,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
    H: MonitorHook<Response<Body>, S::Error, M> + Clone + Send + 'static,
    M: 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BodyMonitorFuture<S::Future, H, M, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let head = RequestHead::of(&request);
        let clock = Clock::start();
        BodyMonitorFuture {
            inner: self.inner.call(request),
            state: Some((self.hook.clone(), head, clock)),
            _marker: PhantomData,
        }
    }
}

pin_project! {
    /// The response future of [`BodyMonitor`]. Dropped before the inner
    /// service answered, it runs the hook with a cancelled exchange.
    pub struct BodyMonitorFuture<F, H, M, E>
    where
        H: MonitorHook<Response<Body>, E, M>,
    {
        #[pin]
        inner: F,
        // The hook and what it reads, until the inner service answers.
        state: Option<(H, RequestHead, Clock)>,
        _marker: PhantomData<fn() -> (M, E)>,
    }

    impl<F, H, M, E> PinnedDrop for BodyMonitorFuture<F, H, M, E>
    where
        H: MonitorHook<Response<Body>, E, M>,
    {
        fn drop(this: Pin<&mut Self>) {
            // Not while a panic unwinds: a hook's panic would abort.
            if std::thread::panicking() {
                return;
            }
            if let Some((mut hook, head, clock)) = this.project().state.take() {
                observe_unawaited(&mut hook, |hook| {
                    hook.call(&Exchange::<Response<Body>, E>::new(&head, None, &clock))
                });
            }
        }
    }
}

impl<F, H, M, E> fmt::Debug for BodyMonitorFuture<F, H, M, E>
where
    H: MonitorHook<Response<Body>, E, M>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyMonitorFuture")
            .field("answered", &self.state.is_none())
            .finish()
    }
}

impl<F, H, M, RB, E> Future for BodyMonitorFuture<F, H, M, E>
where
    F: Future<Output = Result<Response<RB>, E>>,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
    H: MonitorHook<Response<Body>, E, M> + Send + 'static,
    M: 'static,
{
    type Output = Result<Response<Body>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let outcome = ready!(this.inner.poll(cx)).map(|response| response.map(Body::new));
        let (mut hook, head, clock) = this.state.take().expect("future polled after completion");
        observe_unawaited(&mut hook, |hook| {
            let exchange = Exchange::new(&head, Some(outcome.as_ref()), &clock);
            hook.call(&exchange.with_end_to_follow(outcome.is_ok()))
        });
        let Ok(mut response) = outcome else {
            return Poll::Ready(outcome);
        };
        let sent = sent_head(&response);
        watch(&mut response, clock.fixed_start(), move |end| {
            let exchange = Exchange::<_, E>::new(&head, Some(Ok(&sent)), &clock);
            observe_unawaited(&mut hook, |hook| {
                hook.call(&exchange.with_body_end(Some(&end)))
            });
        });
        Poll::Ready(Ok(response))
    }
}
