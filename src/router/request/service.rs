//! The compiled router as a tower `Service`: its `Service` impls (one
//! macro for the router's views), the request types it takes, and the
//! views of one body type for tests. Its response future is
//! `pipeline/future.rs`'s.

use std::{fmt, marker::PhantomData};

use http::Method;

use super::{
    compiled::CompiledRouter,
    compiled::lookup::{Target, is_path},
};

use crate::params::{Captures, Params};

impl CompiledRouter {
    /// The route that answers `method` and `path`, as a request would find
    /// it (HEAD falls back to GET), with its parameters; `None` where the
    /// request would get 404 or 405, as for a `path` not starting with `/`.
    /// For tests, tools and benchmarks: the service itself does the same
    /// lookup.
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::Router;
    ///
    /// let router = Router::new().get("/users/{id}", || "user").compile().unwrap();
    /// let found = router.at(&Method::GET, "/users/7").unwrap();
    /// assert_eq!(found.pattern(), "/users/{id}");
    /// assert_eq!(found.params().get_raw("id"), Some("7"));
    /// assert!(router.at(&Method::POST, "/users/7").is_none());
    /// ```
    pub fn at<'a>(&'a self, method: &Method, path: &'a str) -> Option<Match<'a>> {
        if !is_path(path) {
            return None;
        }
        let mut captures = Captures::new();
        match self.tables().find(method, path, false, &mut captures) {
            Some(Target::Route { id, .. }) => {
                let pattern = &self.tables().route(id).pattern();
                Some(Match {
                    pattern: pattern.source(),
                    names: pattern.names(),
                    path,
                    captures,
                })
            }
            _ => None,
        }
    }
}

impl CompiledRouter {
    /// The router as a service of requests with one body type, `B`: what a
    /// test that calls it through `tower::ServiceExt` names once.
    ///
    /// The router itself serves requests with any body, so `ready()` on it
    /// cannot tell which request type is meant (rustc's "type annotations
    /// needed … cannot satisfy `_: http_body::Body`"). This view serves
    /// one, inferred from the requests it is called with.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Body, Router};
    /// use tower::{Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut app = Router::new().get("/", || "home").compile().unwrap().into_service();
    /// for _ in 0..2 {
    ///     let request = Request::get("/").body(Body::empty()).unwrap();
    ///     let response = app.ready().await.unwrap().call(request).await.unwrap();
    ///     assert_eq!(response.status(), StatusCode::OK);
    /// }
    /// # }
    /// ```
    pub fn into_service<B>(self) -> RouterIntoService<B> {
        RouterIntoService {
            router: self,
            _body: PhantomData,
        }
    }

    /// A borrowed [`into_service`](Self::into_service): the router, as a
    /// service of requests with one body type, for as long as it is
    /// borrowed.
    ///
    /// ```
    /// use http::Request;
    /// use pronghorn::Router;
    /// use tower::{Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut router = Router::new().get("/", || "home").compile().unwrap();
    /// let request = Request::get("/").body(String::new()).unwrap();
    /// let response = router.as_service().ready().await.unwrap().call(request).await.unwrap();
    /// assert!(response.status().is_success());
    /// # }
    /// ```
    pub fn as_service<B>(&self) -> RouterAsService<'_, B> {
        RouterAsService {
            router: self,
            _body: PhantomData,
        }
    }
}

/// A [`CompiledRouter`] serving requests with one body type `B`, made by
/// [`CompiledRouter::into_service`].
pub struct RouterIntoService<B> {
    router: CompiledRouter,
    _body: PhantomData<fn(B)>,
}

/// A borrowed [`CompiledRouter`] serving requests with one body type `B`,
/// made by [`CompiledRouter::as_service`] and
/// [`Router::as_service`](crate::Router::as_service).
pub struct RouterAsService<'a, B> {
    router: &'a CompiledRouter,
    _body: PhantomData<fn(B)>,
}

impl<B> Clone for RouterIntoService<B> {
    fn clone(&self) -> Self {
        self.router.clone().into_service()
    }
}

impl<B> fmt::Debug for RouterIntoService<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RouterIntoService")
            .field(&self.router)
            .finish()
    }
}

impl<B> fmt::Debug for RouterAsService<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RouterAsService")
            .field(&self.router)
            .finish()
    }
}

/// `Service<Request<B>>`, for requests with any body `B`, for a type
/// that serves them with the compiled tables its accessor gives (`|this|
/// &this.inner`): the compiled router, its typed views, a `Router` served
/// as it is, a `Reloadable`'s live tables. Always ready, never failing.
macro_rules! serves_requests {
    ($(#[$attr:meta])* $ty:ty, |$this:ident| $tables:expr) => {
        $(#[$attr])*
        impl<B> ::tower_service::Service<::http::Request<B>> for $ty
        where
            B: ::http_body::Body<Data = ::bytes::Bytes> + Send + 'static,
            B::Error: Into<$crate::body::BoxError>,
        {
            type Response = ::http::Response<$crate::body::Body>;
            type Error = ::std::convert::Infallible;
            type Future = $crate::router::request::pipeline::future::ResponseFuture;

            #[inline]
            fn poll_ready(
                &mut self,
                _: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<Result<(), ::std::convert::Infallible>> {
                ::std::task::Poll::Ready(Ok(()))
            }

            #[inline]
            fn call(&mut self, request: ::http::Request<B>) -> Self::Future {
                let $this = self;
                $crate::router::request::pipeline::Pipeline::start($tables, request)
            }
        }
    };
}

pub(crate) use serves_requests;

serves_requests!(RouterIntoService<B>, |this| this.router.tables());
serves_requests!(RouterAsService<'_, B>, |this| this.router.tables());

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

serves_requests!(
    /// The router serves a request with any body: hyper's `Incoming`, a
    /// `String` in a test, an `http_body_util::Full`, pronghorn's own
    /// [`Body`](crate::body::Body). The body becomes a `Body` at the
    /// boundary, without an allocation for those; another is boxed.
    CompiledRouter,
    |this| this.tables()
);
