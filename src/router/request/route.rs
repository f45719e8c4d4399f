//! What a path-scoped hook sees of the match: [`Route`].

use std::fmt;

use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Uri};

use crate::{
    body::Body,
    handler::RequestContext,
    head::RequestHead,
    params::{Captures, Params, params_of},
};

use super::kept::KeptHeaders;

/// What a path-scoped hook sees of the match: the request head, the matched
/// route's pattern, and the parameters bound along the hook's *own* pattern.
/// A prefix hook can also stage response headers.
///
/// ```
/// use std::ops::ControlFlow;
/// use http::{HeaderName, HeaderValue, Request, StatusCode};
/// use pronghorn::{Body, Router, router::Route};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/teams/{team}/members/{id}", || "member")
///     // The hook's own pattern binds `team`; the route's binds both.
///     .prefix("/teams/{team}", |_: &mut Request<Body>, route: &mut Route<'_>| {
///         assert_eq!(route.pattern(), Some("/teams/{team}/members/{id}"));
///         if route.params().get_raw("team") == Some("closed") {
///             return ControlFlow::Break(StatusCode::FORBIDDEN);
///         }
///         let team = HeaderValue::from_str(route.params().get_raw("team").unwrap()).unwrap();
///         route.stage_header(HeaderName::from_static("x-team"), team);
///         ControlFlow::Continue(())
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/teams/blue/members/7").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.headers()["x-team"], "blue");
///
/// let request = Request::get("/teams/closed/members/7").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::FORBIDDEN);
/// # }
/// ```
pub struct Route<'a> {
    head: &'a RequestHead,
    pattern: Option<&'a str>,
    /// The names of the hook's parameters, and what the path bound.
    names: &'a [Box<str>],
    captures: &'a Captures,
    /// The router's state, for a prefix's extractors.
    state: &'a http::Extensions,
    /// The state of the hook's own router, read first.
    own_state: Option<&'a http::Extensions>,
    /// How the route's router answers rejections, for a prefix's
    /// extractors.
    rejection: Option<&'a crate::handler::Shape>,
    /// How the route's router words rejections.
    answers: crate::handler::Answers,
    /// The request's headers, for a postfix; a prefix has the request.
    headers: Option<&'a HeaderMap>,
    /// Where a prefix stages headers; `None` for other hooks.
    staged: Option<&'a mut Option<Box<HeaderMap>>>,
    /// Where a prefix that takes the request keeps a copy of its headers
    /// for the monitors, should it answer in the handler's stead; `None`
    /// for other hooks, and when no monitor runs.
    kept: Option<&'a mut KeptHeaders>,
}

impl<'a> Route<'a> {
    /// What a hook sees of a request with `head`, whose route has
    /// `pattern`: the hook's own parameters (`names`, bound in
    /// `captures`), the router's `state` and the hook's router's
    /// (`own_state`, read first), the router's `answers`; no headers,
    /// staging or rejection shape, which `for_prefix` and `for_postfix`
    /// add.
    #[inline(always)]
    pub(super) fn new(
        head: &'a RequestHead,
        pattern: Option<&'a str>,
        names: &'a [Box<str>],
        captures: &'a Captures,
        state: &'a http::Extensions,
        own_state: Option<&'a http::Extensions>,
        answers: crate::handler::Answers,
    ) -> Self {
        Route {
            head,
            pattern,
            names,
            captures,
            state,
            own_state,
            rejection: None,
            answers,
            headers: None,
            staged: None,
            kept: None,
        }
    }

    /// The same, for a prefix: its extractors' rejections shaped by
    /// `rejection` and worded by `answers`, its headers staged in
    /// `staged`, the request's headers kept for the monitors in `kept`.
    #[inline(always)]
    pub(super) fn for_prefix(
        self,
        rejection: Option<&'a crate::handler::Shape>,
        answers: crate::handler::Answers,
        staged: &'a mut Option<Box<HeaderMap>>,
        kept: Option<&'a mut KeptHeaders>,
    ) -> Self {
        Route {
            rejection,
            answers,
            staged: Some(staged),
            kept,
            ..self
        }
    }

    /// The same, for a postfix: the request's `headers`, if it still has
    /// them.
    #[inline(always)]
    pub(super) fn for_postfix(self, headers: Option<&'a HeaderMap>) -> Self {
        Route { headers, ..self }
    }

    /// Where a prefix keeps the request's headers for the monitors.
    #[inline]
    pub(super) fn kept(&mut self) -> Option<&mut KeptHeaders> {
        self.kept.as_deref_mut()
    }

    /// Where a prefix stages headers.
    #[inline]
    pub(super) fn staged(&mut self) -> Option<&mut Option<Box<HeaderMap>>> {
        self.staged.as_deref_mut()
    }

    /// The request method.
    pub fn method(&self) -> &'a Method {
        self.head.method()
    }

    /// The request URI.
    pub fn uri(&self) -> &'a Uri {
        self.head.uri()
    }

    /// The request path, still percent-encoded.
    pub fn path(&self) -> &'a str {
        self.head.path()
    }

    /// The request's headers as the handler received them, for a postfix
    /// (a CORS postfix echoing `Origin`, say); `None` for a prefix, which
    /// reads the request it is handed.
    pub fn headers(&self) -> Option<&'a HeaderMap> {
        self.headers
    }

    /// The pattern of the matched route (`None` where no route matched, as
    /// for a 404; for an automatic `OPTIONS` answer, the pattern the path
    /// matched).
    pub fn pattern(&self) -> Option<&'a str> {
        self.pattern
    }

    /// The parameters of the hook's own pattern.
    pub fn params(&self) -> Params<'a> {
        params_of(self.head, self.names, self.captures)
    }

    /// What a prefix's extractors read: the request's head where it lies,
    /// the hook's parameters, the router's state.
    pub(crate) fn extraction<'r>(&self, request: &'r Request<Body>) -> RequestContext<'r>
    where
        'a: 'r,
    {
        RequestContext::of_hook(
            request,
            self.pattern.unwrap_or(""),
            self.params(),
            self.state,
            self.own_state,
            self.rejection,
            self.answers,
        )
    }

    /// Stages a header for the response that goes out, whatever it is —
    /// an early answer, the handler's response or an error — where it wins
    /// over a header of the same name. Only prefix hooks stage headers.
    pub fn stage_header(&mut self, name: HeaderName, value: HeaderValue) {
        if let Some(staged) = self.staged.as_deref_mut() {
            staged.get_or_insert_with(Box::default).insert(name, value);
        }
    }
}

impl fmt::Debug for Route<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("method", self.method())
            .field("path", &self.path())
            .field("pattern", &self.pattern)
            .field("params", &self.params())
            .finish()
    }
}
