//! Each step of a request's run: a prefix, the handler (or the
//! WebSocket handshake, or the answer no route gives), a postfix, a
//! monitor; and what they hand the user's code.

use std::{
    any::Any,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
    task::{Context, Poll},
};

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};

use crate::router::request::{
    compiled::lookup::{COPIED, Target, bind},
    compiled::{CompiledRoute, Handling, Hook, Tables},
    erased::{Done, ErasedMonitor, ErasedPostfix, ErasedPrefix},
    route::Route,
};

use crate::{
    body::Body,
    handler::{Allowed, Answers, ErasedHandler, Extraction, MatchedPath, RouteContext},
    head::RequestHead,
    monitor::Exchange,
    monitor::route::Failure,
    panic::{log_monitor_panic, panic_message},
    params::{Captures, Params, params_of},
    step::Step,
};

use super::{Pending, Pipeline, Stage};

/// The answer to a request no route's handler answers: 405 with `Allow`,
/// 426 for a plain GET to a WebSocket route, 404.
pub(super) fn fixed_answer(target: &Target, answers: Answers) -> Response<Body> {
    match target {
        Target::MethodNotAllowed { allow, .. } => answers.method_not_allowed_allowing(allow),
        Target::UpgradeRequired { .. } => Answers::upgrade_required(),
        _ => answers.not_found(),
    }
}

/// What a handler reads beside the request: the route's pattern,
/// parameters, body limits and shape of rejections, the router's state.
#[inline(always)]
pub(super) fn route_context<'a>(
    router: &'a Tables,
    head: Option<&'a RequestHead>,
    captures: &'a Captures,
    pattern: &'a str,
    names: &'a [Box<str>],
    extraction: &'a Extraction,
) -> RouteContext<'a> {
    let (params, params_in_request) = match head {
        Some(head) => (params_of(head, names, captures), false),
        // A route without hooks keeps no copy of the head: its handler
        // reads its parameters in the request, which no step has changed.
        None => (Params::new("", names, captures), !names.is_empty()),
    };
    RouteContext::new(
        pattern,
        params,
        params_in_request,
        router.state(),
        extraction,
        head,
    )
}

/// Logs a panic of `step` and makes it the request's failure.
#[cold]
pub(super) fn panicked(step: &'static str, panic: &(dyn Any + Send)) -> Box<Failure> {
    let message = panic_message(panic).to_owned();
    error_limited!(step, panic = %message, "pronghorn: a {step} panicked; answering 500");
    Box::new(Failure::Panic { step, message })
}

/// Puts the route's pattern in the response's extensions, for the layers
/// outside the router, unless a router mounted below this one put its own.
#[cold]
pub(super) fn expose_matched_path(
    response: &mut Response<Body>,
    request: Option<&Request<Body>>,
    pattern: Option<&str>,
) {
    if response.extensions().get::<MatchedPath>().is_some() {
        return;
    }
    // A prefix that took the request and answered leaves none.
    let none = http::Extensions::new();
    let extensions = request.map_or(&none, Request::extensions);
    if let Some(matched) = pattern.and_then(|pattern| MatchedPath::of(extensions, pattern)) {
        response.extensions_mut().insert(matched);
    }
}

/// Applies staged headers and HEAD's empty body: the response is final.
// Inlined, the check alone: most responses have nothing to apply.
#[inline(always)]
pub(super) fn finish(
    response: &mut Response<Body>,
    staged: Option<Box<HeaderMap>>,
    head_request: bool,
) {
    if staged.is_some() || head_request {
        apply(response, staged, head_request);
    }
}

#[inline(never)]
fn apply(response: &mut Response<Body>, staged: Option<Box<HeaderMap>>, head_request: bool) {
    // Each staged name's values replace the response's of that name.
    if let Some(staged) = staged {
        response.headers_mut().extend(*staged);
    }
    if head_request {
        let size = http_body::Body::size_hint(response.body()).exact();
        if let Some(size) = size {
            if !response.headers().contains_key(header::CONTENT_LENGTH) {
                response
                    .headers_mut()
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(size));
            }
        }
        *response.body_mut() = Body::empty();
    }
}

/// What a hook at `pattern` sees of the request: the head, its own
/// parameters and state, the router's answers; no headers, staging or
/// rejection shape, which the prefix and postfix steps add as they have.
#[inline(always)]
fn hook_route<'a, H: ?Sized>(
    head: &'a Option<RequestHead>,
    pattern: Option<&'a str>,
    hook: &'a Hook<H>,
    captures: &'a Captures,
    router: &'a Tables,
) -> Route<'a> {
    Route::new(
        head.as_ref().expect(COPIED),
        pattern,
        hook.pattern().names(),
        captures,
        router.state(),
        hook.own_state().map(|state| &**state),
        router.answers(),
    )
}

impl Pipeline {
    /// Runs one prefix: it lets the request through (`true`), answers, or
    /// suspends.
    #[inline(always)]
    pub(super) fn prefix(
        &mut self,
        hook: &Hook<dyn ErasedPrefix>,
        pattern: Option<&str>,
        router: &Tables,
        answered_by: Option<&CompiledRoute>,
    ) -> bool {
        let mut route = hook_route(&self.head, pattern, hook, &self.hook_captures, router)
            .for_prefix(
                answered_by.and_then(|route| route.extraction().rejection()),
                answered_by.map_or(router.answers(), |route| route.extraction().answers()),
                &mut self.staged,
                self.clock.is_some().then_some(&mut self.kept_headers),
            );
        match hook
            .hook()
            .call(&mut self.request, &mut self.response, &mut route)
        {
            Some(future) => self.pending = Pending::Prefix(future),
            // The prefix answered.
            None if self.response.is_some() => {
                self.stage = Stage::Finish;
                self.note_error("prefix");
            }
            None => return true,
        }
        false
    }

    /// Runs the handler, or gives the answer a request without one gets
    /// (a WebSocket handshake, an automatic OPTIONS); `Pending` when the
    /// handler's future, polled once, is not ready.
    pub(super) fn handler(
        &mut self,
        router: &Tables,
        route: Option<&CompiledRoute>,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        self.stage = Stage::Finish;
        let Some(route) = route else {
            return self.without_route(router, cx);
        };
        let (pattern, names) = (route.pattern().source(), route.pattern().names());
        // Without the `ws` feature the match has one arm.
        #[cfg_attr(not(feature = "ws"), allow(clippy::infallible_destructuring_match))]
        let handler = match &route.handling() {
            Handling::Http(handler) => handler,
            #[cfg(feature = "ws")]
            Handling::WebSocket(websocket) => {
                self.handshake(router, route, websocket);
                return Poll::Ready(());
            }
        };
        self.call(router, handler, pattern, names, route.extraction(), cx)
    }

    /// Answers a WebSocket handshake to `route`: 101 and the connection to
    /// spawn, or the refusal.
    // Out of line: the handshake's code does not lengthen every request's.
    #[cfg(feature = "ws")]
    #[inline(never)]
    pub(super) fn handshake(
        &mut self,
        router: &Tables,
        route: &CompiledRoute,
        websocket: &crate::router::request::compiled::WebSocketRoute,
    ) {
        let context = route_context(
            router,
            self.head.as_ref(),
            &self.captures,
            route.pattern().source(),
            route.pattern().names(),
            route.extraction(),
        );
        let request =
            (self.request.as_mut()).expect("the request is present until the handler runs");
        self.response = Some(crate::ws::handshake(
            request,
            context,
            &**websocket.handler(),
            *websocket.limits(),
            websocket.protocols(),
            &mut self.connection,
        ));
    }

    /// The answer to a request no route matched that reached the handler's
    /// stage: the fallback's, or for OPTIONS the automatic one.
    #[inline(never)]
    pub(super) fn without_route(&mut self, router: &Tables, cx: &mut Context<'_>) -> Poll<()> {
        match &self.target {
            &Target::Fallback { id } => {
                let fallback = router.fallback(id);
                let names = fallback.base().names();
                self.call(
                    router,
                    fallback.handler(),
                    "",
                    names,
                    fallback.extraction(),
                    cx,
                )
            }
            Target::MethodNotAllowed {
                options: false,
                route,
                allow,
            } if router.route(*route).refusal().is_some() => {
                let route = router.route(*route);
                let head = self.head.as_ref().expect(COPIED);
                bind(route.pattern(), head.path(), &mut self.captures);
                let request =
                    (self.request.as_mut()).expect("the request is present until the handler runs");
                request.extensions_mut().insert(Allowed::new(allow.clone()));
                let refusal = route.refusal().expect("checked above");
                let pattern = &route.pattern();
                let extraction = &route.extraction();
                self.call(
                    router,
                    refusal,
                    pattern.source(),
                    pattern.names(),
                    extraction,
                    cx,
                )
            }
            Target::MethodNotAllowed { options: false, .. } => {
                let answer = (router.method_not_allowed())
                    .expect("a 405 reaches the handler's stage with its handler");
                self.call(router, answer.handler(), "", &[], answer.extraction(), cx)
            }
            Target::MethodNotAllowed { allow, .. } => {
                // An automatic OPTIONS answer: no prefix answered it.
                self.response = Some(Answers::options(allow));
                Poll::Ready(())
            }
            target => {
                // An OPTIONS no prefix answered on a path no route serves.
                self.response = Some(fixed_answer(target, router.answers()));
                Poll::Ready(())
            }
        }
    }

    /// Calls `handler` for the route of `pattern`, whose parameters are
    /// `names`; `Pending` when its future, polled once, is not ready.
    #[inline(always)]
    pub(super) fn call(
        &mut self,
        router: &Tables,
        handler: &Arc<dyn ErasedHandler>,
        pattern: &str,
        names: &[Box<str>],
        extraction: &Extraction,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let context = route_context(
            router,
            self.head.as_ref(),
            &self.captures,
            pattern,
            names,
            extraction,
        );
        // The stage names the handler for a panic's report until it has
        // answered.
        self.stage = Stage::Handler;
        // The request stays here, for the postfixes and monitors: the
        // handler reads its head in place, and takes its body if it reads
        // it.
        let request =
            (self.request.as_mut()).expect("the request is present until the handler runs");
        match handler.call(request, context, cx, &mut self.response) {
            None => {
                self.stage = Stage::Postfix(0);
                self.note_error("handler");
                Poll::Ready(())
            }
            Some(future) => {
                // The stage moves on when the future answers.
                self.pending = Pending::Handler(future);
                Poll::Pending
            }
        }
    }

    /// Runs one postfix: it passes the response on (`true`), replaces it,
    /// or suspends.
    #[inline(always)]
    pub(super) fn postfix(
        &mut self,
        hook: &Hook<dyn ErasedPostfix>,
        pattern: Option<&str>,
        router: &Tables,
    ) -> bool {
        let route = hook_route(&self.head, pattern, hook, &self.hook_captures, router)
            .for_postfix(self.request.as_ref().map(Request::headers));
        match hook.hook().call(&route, &mut self.response) {
            Step::Ready(Done::Continue) => return true,
            Step::Ready(Done::Answered) => {
                self.stage = Stage::Finish;
                self.note_error("postfix");
            }
            Step::Pending(future) => self.pending = Pending::Postfix(future),
        }
        false
    }

    /// Runs one monitor, isolated: a panic is logged and changes nothing;
    /// `false` when it suspends.
    #[inline(always)]
    pub(super) fn monitor(
        &mut self,
        hook: &Hook<dyn ErasedMonitor>,
        pattern: Option<&str>,
    ) -> bool {
        if hook.body_end() || self.body_end.is_some() {
            // A monitor called again when the body ends; then, only those.
            if !hook.body_end() {
                return true;
            }
            self.watch_body = true;
        }
        // The body's end follows the head of a response with a body (not
        // a WebSocket's 101, whose monitors run once, at the connection's
        // end).
        let end_follows = hook.body_end()
            && self.body_end.is_none()
            && (self.response.as_ref())
                .is_some_and(|response| response.status() != StatusCode::SWITCHING_PROTOCOLS);
        let request_headers =
            (self.request.as_ref().map(Request::headers)).or(self.kept_headers.get());
        let exchange = Exchange::routed(
            self.head.as_ref().expect(COPIED),
            request_headers,
            self.response.as_ref(),
            self.failure.as_deref(),
            pattern,
            hook.pattern().names(),
            &self.hook_captures,
            self.body_end.as_deref(),
            self.clock
                .as_ref()
                .expect("a request with monitors has a clock"),
        )
        .with_end_to_follow(end_follows);
        match catch_unwind(AssertUnwindSafe(|| hook.hook().call(&exchange))) {
            Ok(Step::Ready(())) => {}
            Ok(Step::Pending(future)) => {
                self.pending = Pending::Monitor(future);
                return false;
            }
            Err(panic) => log_monitor_panic(panic.as_ref()),
        }
        true
    }
}
