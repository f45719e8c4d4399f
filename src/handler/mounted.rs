//! A tower `Service` answering in a handler's stead: what
//! [`Router::route_service`](crate::Router::route_service),
//! [`nest_service`](crate::Router::nest_service) and
//! [`fallback_service`](crate::Router::fallback_service) mount.

use std::{convert::Infallible, task::Context};

use http::{HeaderValue, Request, Response, Uri, header, uri::PathAndQuery};
use tower_service::Service;

use super::{
    Handler, IntoResponse, MatchedPath, NestedPath, OriginalUri,
    extract::{RouteContext, copy_head},
};
use crate::{body::Body, step::BoxFuture, step::Step};

/// The name of the catch-all that holds the path below a nested service's
/// base.
const NESTED_PATH: &str = "nested_path";

/// How the pattern of a service nested below a base ends.
pub(crate) const NESTED_PATTERN_END: &str = "/{*nested_path}";

/// A tower `Service` the router can answer with, in a handler's stead
/// ([`Router::route_service`](crate::Router::route_service),
/// [`nest_service`](crate::Router::nest_service),
/// [`fallback_service`](crate::Router::fallback_service), …): it takes a
/// `Request<Body>`, answers anything [`IntoResponse`] (a `Response` whose
/// body yields `Bytes`, as tower-http's services answer, or a handler's
/// answer), never fails, and can be cloned for each request and shared
/// between threads.
///
/// Every such service is one: the trait only names the bound, which axum
/// writes as `T: Service<Request, Error = Infallible> + Clone + Send +
/// Sync + 'static, T::Response: IntoResponse, T::Future: Send + 'static`.
///
/// ```
/// use std::convert::Infallible;
/// use http::Request;
/// use pronghorn::{Body, handler::RouteService};
///
/// fn mountable<S: RouteService>(_: &S) {}
///
/// mountable(&tower::service_fn(|request: Request<Body>| async move {
///     Ok::<_, Infallible>(format!("{} {}", request.method(), request.uri()))
/// }));
/// ```
pub trait RouteService:
    Service<Request<Body>, Response: IntoResponse, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> RouteService for S where
    S: Service<Request<Body>, Response: IntoResponse, Error = Infallible, Future: Send + 'static>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// Marker of a service mounted as a handler.
pub(crate) struct FromService;

/// A service mounted in the router; `nested` when it sees the path below
/// its base, as [`Router::nest_service`](crate::Router::nest_service)
/// mounts it.
#[derive(Clone)]
pub(crate) struct Mounted<S> {
    pub(crate) service: S,
    pub(crate) nested: bool,
}

impl<S> Mounted<S> {
    /// A service answering one route, which sees the path as it came.
    pub(crate) fn at_route(service: S) -> Self {
        Self {
            service,
            nested: false,
        }
    }
}

impl<S: RouteService> Handler<FromService> for Mounted<S> {
    // Its parameters are read before the copy of the request is rebased.
    const READS_PARAMS_FIRST: bool = true;

    /// The service owns its request: it gets a copy of the head, which
    /// the router keeps for the steps after it, and the body.
    fn call(
        &self,
        request: &mut Request<Body>,
        route: RouteContext<'_>,
        _: &mut Context<'_>,
    ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
        let body = std::mem::take(request.body_mut());
        let params = route.params(request);
        let mut request = Request::from_parts(copy_head(request), body);
        MatchedPath::insert(&mut request, route.pattern(), self.nested);
        // The path asked for, and the path the service sees.
        let paths = self.nested.then(|| {
            let original = request.uri().path().to_owned();
            rebase(&mut request, params.get_raw(NESTED_PATH).unwrap_or(""));
            (original, request.uri().path().to_owned())
        });
        if !self.nested && route.extraction().nesting().bases() > 0 {
            let nest_bases = route.extraction().nesting().bases();
            let (mut parts, body) = request.into_parts();
            super::nested::strip_bases(&mut parts.uri, &mut parts.extensions, nest_bases);
            if let Some(path) = route.extraction().nesting().path() {
                NestedPath::insert(&mut parts.extensions, path);
            }
            request = Request::from_parts(parts, body);
        }
        // A clone for this request, made ready, called: as tower's
        // `oneshot` does.
        let mut service = self.service.clone();
        Step::Pending(Box::pin(async move {
            let Ok(()) = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
            let Ok(response) = service.call(request).await;
            let mut response = response.into_response();
            if let Some((original, seen)) = paths {
                restore_base(&mut response, &seen, &original);
            }
            response
        }))
    }
}

/// Points a nested service's redirect from the path it saw to the same
/// path with a slash (`/docs` to `/docs/`, as tower-http's `ServeDir` does
/// for a directory) at the path the client asked for, base included
/// (`/static/docs/`). Any other redirect is the service's own business.
fn restore_base<B>(response: &mut Response<B>, seen: &str, original: &str) {
    if !response.status().is_redirection() || seen.ends_with('/') {
        return;
    }
    let Some(location) = response.headers().get(header::LOCATION) else {
        return;
    };
    let Ok(location) = location.to_str() else {
        return;
    };
    let (path, query) = match location.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (location, None),
    };
    if path.strip_suffix('/') != Some(seen) {
        return;
    }
    // One leading slash: `//static/docs/` would name a host.
    let original = original.trim_start_matches('/');
    let restored = match query {
        Some(query) => format!("/{original}/?{query}"),
        None => format!("/{original}/"),
    };
    if let Ok(restored) = HeaderValue::try_from(restored) {
        response.headers_mut().insert(header::LOCATION, restored);
    }
}

/// Points `request` at `/{below}`, keeping its query and a trailing slash
/// (a service such as tower-http's `ServeDir` tells a directory by it), and
/// keeps the URI it came with as an [`OriginalUri`] (unless an outer layer
/// kept one).
fn rebase(request: &mut Request<Body>, below: &str) {
    let uri = request.uri().clone();
    let slash = match !below.is_empty() && uri.path().ends_with('/') {
        true => "/",
        false => "",
    };
    let path = match uri.query() {
        Some(query) => format!("/{below}{slash}?{query}"),
        None => format!("/{below}{slash}"),
    };
    let mut parts = uri.clone().into_parts();
    // The path came from a valid URI: it is a valid path still.
    if let Ok(path) = PathAndQuery::try_from(path) {
        parts.path_and_query = Some(path);
        if let Ok(rebased) = Uri::from_parts(parts) {
            *request.uri_mut() = rebased;
        }
    }
    if request.extensions().get::<OriginalUri>().is_none() {
        request.extensions_mut().insert(OriginalUri(uri));
    }
}
