//! The compiled router as a tower `Service`, and its response future.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use http::{Method, Request, Response};
use tower_service::Service;

use super::{
    compiled::{Inner, Target},
    params::{Captures, Params},
    pipeline::Pipeline,
};
use crate::Body;

/// A compiled, immutable router: a tower `Service` that is always ready,
/// never fails (`Error = Infallible`) and clones by an `Arc` bump.
///
/// Built by [`Router::compile`](super::Router::compile); see the
/// [module docs](crate::router) for the matching rules. A request whose
/// steps are all synchronous is answered inside `call`: its response
/// future is ready on its first poll.
///
/// ```
/// use std::{pin::pin, task::{Context, Poll, Waker}};
/// use http::{Request, StatusCode};
/// use pronghorn::Router;
/// use tower::Service;
///
/// let mut router = Router::<String>::new()
///     .get("/users/{id}", |id: pronghorn::handler::Path<u32>| format!("user {}", id.0))
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/users/7").body(String::new()).unwrap();
/// let future = pin!(router.call(request));
/// let Poll::Ready(Ok(response)) = future.poll(&mut Context::from_waker(Waker::noop())) else {
///     unreachable!("a synchronous request is answered in `call`");
/// };
/// assert_eq!(response.status(), StatusCode::OK);
///
/// // A path no route takes: 404; a method no route takes there: 405.
/// let request = Request::post("/users/7").body(String::new()).unwrap();
/// let future = pin!(router.call(request));
/// let Poll::Ready(Ok(response)) = future.poll(&mut Context::from_waker(Waker::noop())) else {
///     unreachable!();
/// };
/// assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
/// assert_eq!(response.headers()["allow"], "GET, HEAD");
/// ```
pub struct CompiledRouter<B> {
    pub(super) inner: Arc<Inner<B>>,
}

impl<B> Clone for CompiledRouter<B> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<B> fmt::Debug for CompiledRouter<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<_> = self
            .inner
            .routes
            .iter()
            .map(|r| &*r.pattern.source)
            .collect();
        f.debug_struct("CompiledRouter")
            .field("routes", &routes)
            .field("prefixes", &self.inner.prefixes.len())
            .field("postfixes", &self.inner.postfixes.len())
            .field("monitors", &self.inner.monitors.len())
            .finish()
    }
}

impl<B> CompiledRouter<B> {
    /// The route that answers `method` and `path`, as a request would find
    /// it (HEAD falls back to GET), with its parameters; `None` where the
    /// request would get 404 or 405. For tests, tools and benchmarks: the
    /// service itself does the same lookup.
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::Router;
    ///
    /// let router = Router::<String>::new().get("/users/{id}", || "user").compile().unwrap();
    /// let found = router.at(&Method::GET, "/users/7").unwrap();
    /// assert_eq!(found.pattern(), "/users/{id}");
    /// assert_eq!(found.params().get_raw("id"), Some("7"));
    /// assert!(router.at(&Method::POST, "/users/7").is_none());
    /// ```
    pub fn at<'a>(&'a self, method: &Method, path: &'a str) -> Option<Match<'a>> {
        let mut captures = Captures::new();
        match self.inner.find(method, path, false, &mut captures) {
            Some(Target::Route { id, .. }) => {
                let pattern = &self.inner.routes[id].pattern;
                Some(Match {
                    pattern: &pattern.source,
                    names: &pattern.names,
                    path,
                    captures,
                })
            }
            _ => None,
        }
    }
}

/// A route found by [`CompiledRouter::at`].
pub struct Match<'a> {
    pattern: &'a str,
    names: &'a [Box<str>],
    path: &'a str,
    captures: Captures,
}

impl Match<'_> {
    /// The pattern of the route, as registered.
    pub fn pattern(&self) -> &str {
        self.pattern
    }

    /// The parameters the path bound.
    pub fn params(&self) -> Params<'_> {
        Params::new(self.path, self.names, &self.captures)
    }
}

impl fmt::Debug for Match<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Match")
            .field("pattern", &self.pattern)
            .field("params", &self.params())
            .finish()
    }
}

impl<B> Service<Request<B>> for CompiledRouter<B>
where
    B: 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture<B>;

    #[inline]
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture<B> {
        ResponseFuture::new(&self.inner, request)
    }
}

/// Response future of [`CompiledRouter`].
///
/// The router runs a request's pipeline in `call`, as far as its steps
/// answer synchronously: a fully synchronous request is already answered,
/// and the future is ready on its first poll without having held anything
/// but the response. Only when a step returns a future is the pipeline's
/// state moved into the future (one box, beside the step's own boxed
/// future), and polling continues from that step.
pub struct ResponseFuture<B> {
    kind: Kind<B>,
}

enum Kind<B> {
    Ready(Option<Response<Body>>),
    Running(Arc<Inner<B>>, Box<Pipeline<B>>),
}

impl<B: 'static> ResponseFuture<B> {
    #[inline]
    pub(super) fn new(router: &Arc<Inner<B>>, request: Request<B>) -> Self {
        Pipeline::start(router, request)
    }

    /// The future of a request answered in its first run: the response
    /// moves into it once, on its way out.
    #[inline(always)]
    pub(super) fn ready(response: Option<Response<Body>>) -> Self {
        Self {
            kind: Kind::Ready(response),
        }
    }

    /// The future of a request whose pending step has been polled once in
    /// `call`: it is polled next, with the caller's waker, on the first
    /// poll of the future.
    // Out of line: only a suspension comes here.
    #[inline(never)]
    pub(super) fn running(router: &Arc<Inner<B>>, pipeline: Pipeline<B>) -> Self {
        Self {
            kind: Kind::Running(Arc::clone(router), Box::new(pipeline)),
        }
    }
}

impl<B: 'static> Future for ResponseFuture<B> {
    type Output = Result<Response<Body>, Infallible>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.kind {
            Kind::Ready(response) => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            Kind::Running(router, pipeline) => pipeline.run(router, cx).map(|()| {
                Ok(pipeline
                    .response
                    .take()
                    .expect("future polled after completion"))
            }),
        }
    }
}

impl<B> fmt::Debug for ResponseFuture<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ResponseFuture");
        match &self.kind {
            Kind::Ready(_) => debug.field("state", &"Ready"),
            Kind::Running(_, pipeline) => debug
                .field("method", pipeline.head.method())
                .field("path", &pipeline.head.path())
                .field("stage", &pipeline.stage),
        };
        debug.finish()
    }
}
