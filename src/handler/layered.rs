//! Tower layers around a route's handler: the handler as a tower
//! `Service` ([`Endpoint`]), which the layers wrap, and the layered
//! service answering in the handler's stead ([`Layered`]).
//!
//! The router hands a layered route's request to its layers by value,
//! with the route's [`MatchedPath`] and a [`RouteMatch`] in its
//! extensions: what the handler at the bottom reads its parameters,
//! state and settings from, whatever the layers did to the request.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    marker::PhantomData,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, Waker},
};

use http::{Request, Response, Uri};
use tower_layer::Layer;
use tower_service::Service;

use super::{
    DefaultBodyLimit, ErasedHandler, Handler, MatchedPath, RouteService,
    extract::{Needs, RouteContext, RouteInfo},
    response::{IntoResponse, internal_error},
};
use crate::{
    body::Body,
    head::RequestHead,
    params::{Captures, Params},
    step::{BoxFuture, Step},
};

/// The route a request matched, in the request's extensions while the
/// route's tower layers have it: its pattern and its parameters, which the
/// handler below the layers reads, whatever the layers do to the path.
///
/// ```
/// use http::{Request, Response};
/// use http_body_util::BodyExt;
/// use pronghorn::{Body, Router, handler::RouteMatch};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/users/{id}", || "ada")
///     .layer(tower::util::MapResponseLayer::new(|response: Response<Body>| response))
///     .layer(tower::util::MapRequestLayer::new(|request: Request<Body>| {
///         let route = request.extensions().get::<RouteMatch>().unwrap();
///         assert_eq!(route.pattern(), "/users/{id}");
///         assert_eq!(route.params().get_raw("id"), Some("7"));
///         request
///     }))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/users/7").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "ada");
/// # }
/// ```
#[derive(Clone)]
pub struct RouteMatch {
    info: Arc<RouteInfo>,
    state: Arc<http::Extensions>,
    captures: Captures,
    /// The URI the parameters were captured in, as received (empty for a
    /// route without parameters).
    uri: Uri,
}

impl RouteMatch {
    /// The pattern of the route, as registered (nest bases included);
    /// empty for a fallback.
    pub fn pattern(&self) -> &str {
        self.info.pattern()
    }

    /// The route's parameters, as the path was received.
    pub fn params(&self) -> Params<'_> {
        Params::new(self.uri.path(), self.info.names(), &self.captures)
    }

    /// What the handler reads, as the router would hand it.
    pub(crate) fn context(&self) -> RouteContext<'_> {
        RouteContext::new(
            self.info.pattern(),
            Params::new(self.uri.path(), self.info.names(), &self.captures),
            false,
            &self.state,
            self.info.extraction(),
            // The request is the layers' own: nothing reads it after
            // the handler, and its `RouteMatch` is there already.
            None,
        )
    }
}

impl fmt::Debug for RouteMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteMatch")
            .field("pattern", &self.pattern())
            .field("params", &self.params())
            .finish()
    }
}

/// A route's handler as a tower `Service`: what the layers given to
/// [`Router::layer`](crate::Router::layer),
/// [`Router::route_layer`](crate::Router::route_layer),
/// [`MethodRouter::layer`](crate::router::MethodRouter::layer) and
/// [`Handler::layer`] wrap.
///
/// It answers the requests its router hands its layers, which carry the
/// route's parameters and the router's state in their extensions; a
/// request from anywhere else is answered 500. It is always ready and
/// never fails; a synchronous handler's answer is ready when the future
/// is first polled.
///
/// A layer that must name what it wraps names this type:
///
/// ```
/// use std::time::Duration;
/// use http::StatusCode;
/// use pronghorn::{Router, handler::Endpoint};
/// use tower_http::timeout::{Timeout, TimeoutLayer};
///
/// fn with_timeout(endpoint: Endpoint) -> Timeout<Endpoint> {
///     TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, Duration::from_secs(5)).layer(endpoint)
/// }
/// # use tower_layer::Layer;
/// let router = Router::new()
///     .get("/", || "home")
///     .layer(tower::layer::layer_fn(with_timeout))
///     .compile()
///     .unwrap();
/// # let _ = router;
/// ```
#[derive(Clone)]
pub struct Endpoint {
    handler: Arc<dyn ErasedHandler>,
}

impl Endpoint {
    pub(crate) fn new(handler: Arc<dyn ErasedHandler>) -> Self {
        Self { handler }
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint").finish_non_exhaustive()
    }
}

/// The handler as a tower service, of requests with any body: a layer
/// whose service hands it another body type than pronghorn's (tower-http's
/// `RequestBodyLimitLayer` hands it a `Limited`, its
/// `RequestDecompressionLayer` a `DecompressionBody`, an axum layer axum's
/// `Body`) is taken as it is, its body made a [`Body`] here (a [`Body`]
/// stays as it is).
impl<B> Service<Request<B>> for Endpoint
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<crate::body::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = EndpointFuture;

    #[inline]
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<B>) -> EndpointFuture {
        // Resolved at compile time: a request with pronghorn's body is
        // answered where it lies, neither moved nor taken apart.
        match (&mut request as &mut dyn std::any::Any).downcast_mut::<Request<Body>>() {
            Some(request) => self.answer(request),
            None => self.answer(&mut request.map(Body::new)),
        }
    }
}

impl Endpoint {
    /// Runs the handler on `request`, which its router handed the layers.
    #[inline(always)]
    fn answer(&self, request: &mut Request<Body>) -> EndpointFuture {
        let Some(matched) = request.extensions().get::<RouteMatch>().cloned() else {
            error_limited!(
                "pronghorn: an `Endpoint` was called with a request its router did not hand it; answering 500"
            );
            return EndpointFuture::ready(internal_error());
        };
        // No waker here: a future still pending is polled again by the
        // layers, with theirs.
        let cx = &mut Context::from_waker(Waker::noop());
        let mut response = None;
        let mut context = matched.context();
        // The limit a `DefaultBodyLimit` layer set, over the route's.
        let limited;
        if let Some(set) = request.extensions().get::<DefaultBodyLimit>() {
            limited = context.extraction().with_limit(set.limit());
            context.read_through(&limited);
        }
        match (self.handler).call(request, context, cx, &mut response) {
            None => EndpointFuture::ready(response.unwrap_or_else(internal_error)),
            Some(future) => EndpointFuture {
                step: Step::Pending(future),
            },
        }
    }
}

/// The response future of an [`Endpoint`]: ready on its first poll when
/// the handler answered synchronously.
pub struct EndpointFuture {
    step: Step<Option<Response<Body>>, BoxFuture<Response<Body>>>,
}

impl EndpointFuture {
    fn ready(response: Response<Body>) -> Self {
        Self {
            step: Step::Ready(Some(response)),
        }
    }
}

impl fmt::Debug for EndpointFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.step {
            Step::Ready(_) => "Ready",
            Step::Pending(_) => "Pending",
        };
        f.debug_struct("EndpointFuture")
            .field("state", &state)
            .finish()
    }
}

impl Future for EndpointFuture {
    type Output = Result<Response<Body>, Infallible>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.step {
            Step::Ready(response) => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            Step::Pending(future) => future.as_mut().poll(cx).map(Ok),
        }
    }
}

/// Marker of a handler wrapped in tower layers.
#[derive(Debug)]
pub enum FromLayered {}

/// What a layered handler needs of its router: those of the handler it
/// wraps, `(H, M, S)`, or none, `()`, where the route keeps them itself.
#[doc(hidden)]
pub trait NeedsOf<S>: 'static {
    /// Adds them to `needs`.
    fn needs(needs: &mut Needs);
}

// Only the router's own wrapping makes a `Layered` of no handler's needs,
// and it erases it at once: its state type is `ByType`.
impl NeedsOf<super::ByType> for () {
    fn needs(_: &mut Needs) {}
}

impl<H: Handler<M, S>, M: 'static, S: 'static> NeedsOf<S> for (H, M, S) {
    fn needs(needs: &mut Needs) {
        H::needs(needs);
    }
}

/// A handler wrapped in tower layers, as [`Handler::layer`] makes it: a
/// handler itself, to register with the router as any other.
pub struct Layered<S, N = ()> {
    service: S,
    _needs: PhantomData<fn() -> N>,
}

impl<S, N> Layered<S, N> {
    pub(crate) fn new(service: S) -> Self {
        Self {
            service,
            _needs: PhantomData,
        }
    }
}

impl<S: Clone, N> Clone for Layered<S, N> {
    fn clone(&self) -> Self {
        Self::new(self.service.clone())
    }
}

impl<S: fmt::Debug, N> fmt::Debug for Layered<S, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layered")
            .field("service", &self.service)
            .finish()
    }
}

// Not named in the error of a closure that is no handler: it is made by
// `Handler::layer`, never written.
#[diagnostic::do_not_recommend]
impl<S: RouteService, N: NeedsOf<St>, St> Handler<FromLayered, St> for Layered<S, N> {
    // The layered service's future is polled once in `call`.
    const POLLS_ITS_FUTURE: bool = true;

    // The parameters are read into the request's `RouteMatch` before the
    // layers see it.
    const READS_PARAMS_FIRST: bool = true;

    #[doc(hidden)]
    const LAYERED: bool = true;

    fn needs(needs: &mut Needs) {
        N::needs(needs);
    }

    fn call(
        &self,
        request: &mut Request<Body>,
        route: RouteContext<'_>,
        cx: &mut Context<'_>,
    ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
        let request = hand_over(request, &route);
        serve(self.service.clone(), request, cx)
    }
}

/// A tower layer the router can put around a route's handler
/// ([`Router::layer`](crate::Router::layer),
/// [`route_layer`](crate::Router::route_layer),
/// [`MethodRouter::layer`](crate::router::MethodRouter::layer)): any layer
/// of [`Endpoint`] whose service is a [`RouteService`] (taking pronghorn's
/// `Request<Body>`, or a request with any body, as tower-http's layers
/// do, and axum's own `map_request` and `map_response`), and with
/// feature `axum`, axum's `middleware::from_fn` and `from_fn_with_state`,
/// whose service takes axum's body only: the request's body is made
/// axum's at the boundary. `M` tells the two apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a layer the router can put around a handler",
    label = "not a layer of `pronghorn::handler::Endpoint` answering a `Request<pronghorn::Body>`",
    note = "a layer's service must take `http::Request<pronghorn::Body>` (or a request of any body) and never fail: wrap a fallible one in `HandleErrorLayer`, and give axum's middleware functions with feature `axum`"
)]
pub trait RouteLayer<M>: Send + Sync + 'static {
    /// The layer the router puts around the handler.
    type Layer: Layer<Endpoint, Service: RouteService> + Send + Sync + 'static;

    /// The layer the router puts around the handler.
    fn into_route_layer(self) -> Self::Layer;
}

/// The error of a service that never fails: [`Infallible`](std::convert::Infallible)
/// alone. The router answers every request, so a layer around a handler
/// must answer too; a fallible one is wrapped in
/// [`HandleErrorLayer`](crate::error_handling::HandleErrorLayer), which
/// turns its error into an answer.
#[diagnostic::on_unimplemented(
    message = "a layer around a handler can fail with `{Self}`, and the router must answer every request",
    label = "its service's error is `{Self}`, not `Infallible`",
    note = "put `HandleErrorLayer::new(|error| async move {{ … }})` outside it (`ServiceBuilder::new().layer(HandleErrorLayer::new(…)).layer(this)`), turning the error into an answer"
)]
pub trait NeverFails: private::Sealed {}

impl NeverFails for std::convert::Infallible {}

mod private {
    pub trait Sealed {}
    impl Sealed for std::convert::Infallible {}
}

/// The marker of a layer whose service takes pronghorn's request.
#[derive(Debug)]
pub enum OfEndpoint {}

impl<L> RouteLayer<OfEndpoint> for L
where
    L: Layer<Endpoint, Service: RouteService> + Send + Sync + 'static,
    <L::Service as Service<Request<Body>>>::Error: NeverFails,
{
    type Layer = L;

    fn into_route_layer(self) -> L {
        self
    }
}

/// Wraps `handler` in `layer`, as a handler.
pub(crate) fn wrap<L>(handler: &Arc<dyn ErasedHandler>, layer: &L) -> Arc<dyn ErasedHandler>
where
    L: Layer<Endpoint>,
    L::Service: RouteService,
{
    let service = layer.layer(Endpoint::new(Arc::clone(handler)));
    Arc::new(super::TypedHandler::new(Layered::<_, ()>::new(service)))
}

/// The request the layers take, by value: moved out of the router's
/// state, or with a copy of its headers left there for the steps after
/// the handler that read them. Its extensions carry the route's
/// [`MatchedPath`] and [`RouteMatch`], unless the layers of the same
/// route put them there already (a layer given to the router over one
/// given to the route).
fn hand_over(request: &mut Request<Body>, route: &RouteContext<'_>) -> Request<Body> {
    let info = route_info(route);
    let mut owned = match route.head().is_some() {
        false => std::mem::replace(request, Request::new(Body::empty())),
        true => {
            let mut owned = Request::new(std::mem::take(request.body_mut()));
            *owned.method_mut() = request.method().clone();
            *owned.uri_mut() = request.uri().clone();
            *owned.version_mut() = request.version();
            *owned.headers_mut() = request.headers().clone();
            *owned.extensions_mut() = std::mem::take(request.extensions_mut());
            owned
        }
    };
    // The parameters were captured in the path as received: the head's
    // copy, where the router kept one, else the request's own.
    carry_route(&mut owned, route, info, route.head().map(RequestHead::uri));
    owned
}

/// Puts the route's [`MatchedPath`] and [`RouteMatch`] (of `info`, its
/// parameters captured in `captured_in`, else in `request`'s own URI) in
/// `request`'s extensions, unless the layers of the same route put them
/// there already (a layer given to the router over one given to the
/// route).
pub(super) fn carry_route(
    request: &mut Request<Body>,
    route: &RouteContext<'_>,
    info: Arc<RouteInfo>,
    captured_in: Option<&Uri>,
) {
    let extensions = request.extensions();
    let fresh = (extensions.get::<RouteMatch>()).is_none_or(|m| !Arc::ptr_eq(&m.info, &info));
    if !fresh {
        return;
    }
    if let Some(matched) = MatchedPath::of_shared(extensions, info.pattern()) {
        request.extensions_mut().insert(matched);
    }
    let uri = match info.names().is_empty() {
        true => Uri::default(),
        false => captured_in.unwrap_or_else(|| request.uri()).clone(),
    };
    request.extensions_mut().insert(RouteMatch {
        captures: *route.captured_params().captures(),
        state: Arc::clone(route.state()),
        info,
        uri,
    });
}

/// The info of `route`: its router's, made for its layers, else copied.
pub(super) fn route_info(route: &RouteContext<'_>) -> Arc<RouteInfo> {
    match &route.extraction().layered() {
        Some(info) => Arc::clone(info),
        None => RouteInfo::of(route),
    }
}

/// Calls `service` on `request` as tower's `oneshot` does, polling its
/// future once with `cx`: an answer that is ready costs no suspension.
fn serve<S: RouteService>(
    mut service: S,
    request: Request<Body>,
    cx: &mut Context<'_>,
) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
    match service.poll_ready(cx) {
        Poll::Ready(Ok(())) => {
            let mut future: BoxFuture<Response<Body>> = Box::pin(answer(service.call(request)));
            match future.as_mut().poll(cx) {
                Poll::Ready(response) => Step::Ready(response),
                Poll::Pending => Step::Pending(future),
            }
        }
        Poll::Pending => Step::Pending(Box::pin(async move {
            let Ok(()) = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
            answer(service.call(request)).await
        })),
    }
}

/// The response of a service's future.
async fn answer<F, R>(future: F) -> Response<Body>
where
    F: Future<Output = Result<R, Infallible>>,
    R: IntoResponse,
{
    let Ok(response) = future.await;
    response.into_response()
}
