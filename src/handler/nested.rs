//! What a route below a [`nest`](crate::Router::nest)'s base sees: the
//! request's URI without the base's segments, as axum's `nest` strips
//! them, the whole URI kept as an [`OriginalUri`]. The URI is rebuilt only
//! where something reads it: the `Uri` and `Request` extractors, a routed
//! service, and the tower layers of a nested router, each below the layers
//! of the routers it was nested in.

use std::{
    convert::Infallible,
    sync::Arc,
    task::{Context, Poll},
};

use http::{Request, Response, Uri, uri::PathAndQuery};
use tower_layer::Layer;
use tower_service::Service;

use super::{Endpoint, EndpointFuture, OriginalUri};
use crate::body::Body;

/// Where a route was nested: how many leading segments of its path its
/// nest bases make, which the URI its handler sees is without, and the
/// bases' patterns joined, which [`NestedPath`](super::NestedPath) reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Nesting {
    bases: u16,
    path: Option<Arc<str>>,
}

/// A route nested nowhere.
pub(crate) static NOT_NESTED: Nesting = Nesting {
    bases: 0,
    path: None,
};

impl Nesting {
    /// The segments of the route's nest bases.
    #[inline]
    pub(crate) fn bases(&self) -> u16 {
        self.bases
    }

    /// The bases' patterns, joined as axum joins them: `/api/v2` for
    /// `/v2` nested at `/api`; `None` where the route was not nested.
    pub(crate) fn path(&self) -> Option<&Arc<str>> {
        self.path.as_ref()
    }

    /// This nesting below a further base, outside it, of `segments`
    /// segments. A base of none (`nest("/", …)`, a merge) changes nothing.
    pub(crate) fn under(self, base: &str, segments: u16) -> Self {
        if segments == 0 {
            return self;
        }
        let path = match self.path {
            Some(inner) => format!("{}{inner}", base.trim_end_matches('/')).into(),
            None => Arc::from(base),
        };
        Self {
            bases: self.bases.saturating_add(segments),
            path: Some(path),
        }
    }
}

/// How many leading segments of a request's path the layers of its nest
/// bases took away already, in its extensions: what is left for the
/// handler to take away is the rest of its bases'.
#[derive(Clone, Copy, Debug)]
struct Stripped(u16);

/// `path` without its first `segments` segments: `/baz` of `/foo/bar/baz`
/// without two, `/` when nothing is left. Empty segments count for none.
fn below(path: &str, segments: u16) -> &str {
    let mut rest = path;
    for _ in 0..segments {
        let segment = rest.trim_start_matches('/');
        rest = &segment[segment.find('/').unwrap_or(segment.len())..];
    }
    rest
}

/// `uri` without the first `segments` segments of its path, its query
/// kept.
fn strip(uri: &Uri, segments: u16) -> Uri {
    let rest = match below(uri.path(), segments) {
        "" => "/",
        rest => rest,
    };
    let path = match uri.query() {
        Some(query) => format!("{rest}?{query}"),
        None => rest.to_owned(),
    };
    let mut parts = uri.clone().into_parts();
    // The rest of a valid path, its query after it, is a valid one.
    match PathAndQuery::try_from(path) {
        Ok(path) => {
            parts.path_and_query = Some(path);
            Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
        }
        Err(_) => uri.clone(),
    }
}

/// The segments of a route's `bases` (all its nest bases, outermost
/// first) that the layers of `request` have not taken away yet.
fn left(extensions: &http::Extensions, bases: u16) -> u16 {
    let taken = extensions.get::<Stripped>().map_or(0, |taken| taken.0);
    bases.saturating_sub(taken)
}

/// The URI a handler below nest bases of `bases` segments sees of a
/// request with `uri` and `extensions`: `None` when it is the request's
/// own.
pub(crate) fn seen_uri(uri: &Uri, extensions: &http::Extensions, bases: u16) -> Option<Uri> {
    if bases == 0 {
        return None;
    }
    match left(extensions, bases) {
        0 => None,
        left => Some(strip(uri, left)),
    }
}

/// Points a request's `uri`, below nest bases of `bases` segments, at the
/// URI its route sees, keeping the URI it came with as an [`OriginalUri`]
/// in its `extensions` (unless an outer layer kept one).
pub(crate) fn strip_bases(uri: &mut Uri, extensions: &mut http::Extensions, bases: u16) {
    let Some(seen) = seen_uri(uri, extensions, bases) else {
        return;
    };
    let original = std::mem::replace(uri, seen);
    if extensions.get::<OriginalUri>().is_none() {
        extensions.insert(OriginalUri(original));
    }
    extensions.insert(Stripped(bases));
}

/// The layer `nest` puts between the layers of the router nested and
/// those of the router it is nested in: what is below it sees the URI
/// without the base's `segments`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StripBase {
    segments: u16,
}

impl StripBase {
    /// The layer of a base of `segments` segments.
    pub(crate) fn new(segments: u16) -> Self {
        Self { segments }
    }
}

impl<S> Layer<S> for StripBase {
    type Service = StripBaseService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        StripBaseService {
            inner,
            segments: self.segments,
        }
    }
}

/// The service of [`StripBase`].
#[derive(Clone, Debug)]
pub(crate) struct StripBaseService<S> {
    inner: S,
    segments: u16,
}

impl Service<Request<Body>> for StripBaseService<Endpoint> {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = EndpointFuture;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::<Request<Body>>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, request: Request<Body>) -> EndpointFuture {
        let taken = request
            .extensions()
            .get::<Stripped>()
            .map_or(0, |taken| taken.0);
        let (mut parts, body) = request.into_parts();
        strip_bases(&mut parts.uri, &mut parts.extensions, taken + self.segments);
        let request = Request::from_parts(parts, body);
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_takes_away_leading_segments() {
        assert_eq!(below("/foo/bar/baz", 2), "/baz");
        assert_eq!(below("/foo", 1), "");
        assert_eq!(below("/a/", 1), "/");
        assert_eq!(below("/foo/bar", 0), "/foo/bar");
        assert_eq!(below("/foo", 3), "");
    }

    #[test]
    fn strip_keeps_the_query() {
        let uri: Uri = "/api/users?page=2".parse().unwrap();
        assert_eq!(strip(&uri, 1), "/users?page=2");
        assert_eq!(strip(&uri, 2), "/?page=2");
    }

    #[test]
    fn a_request_stripped_by_a_layer_is_not_stripped_again() {
        let (mut uri, mut extensions) = ("/a/b/c".parse().unwrap(), http::Extensions::new());
        strip_bases(&mut uri, &mut extensions, 1);
        assert_eq!(uri, "/b/c");
        assert_eq!(seen_uri(&uri, &extensions, 2).unwrap(), "/c");
        assert_eq!(extensions.get::<OriginalUri>().unwrap().0, "/a/b/c");
    }
}
