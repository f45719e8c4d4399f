//! Path-scoped hooks: the traits closures implement, and what they answer.
//! The forms the router stores them as are in `erased.rs`.

use std::{future::Future, ops::ControlFlow};

use http::{HeaderMap, HeaderName, HeaderValue, Request, Response};

use super::route::Route;
use crate::{
    body::Body,
    handler::{ByType, HeadArgument, HeadExtractors, IntoResponse, error_response, for_each_arity},
    hook::{FnAsync, FnEdit, FnExtract, FnStep, FnSync},
    step::BoxFuture,
    step::Step,
};

/// What a router prefix hook answers: the request to pass on, or a response.
///
/// Implemented for `Request<Body>` (pass on), `ControlFlow<R, Request<Body>>`
/// (`Break` answers with `R: IntoResponse`), and `Result<T, E>` where `E:
/// IntoResponse` is the answer on failure.
///
/// ```
/// use http::{Request, StatusCode};
/// use pronghorn::{Body, Router, router::Route};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/admin/stats", || "all fine")
///     // `?` style: an `Err` answers in the handler's stead.
///     .prefix("/admin", |request: Request<Body>, _: &mut Route<'_>| {
///         match request.headers().get("x-role").map(|role| role.as_bytes()) {
///             Some(b"admin") => Ok(request),
///             Some(_) => Err(StatusCode::FORBIDDEN),
///             None => Err(StatusCode::UNAUTHORIZED),
///         }
///     })
///     .compile()
///     .unwrap();
///
/// let ask = |role: &str| Request::get("/admin/stats").header("x-role", role).body(String::new()).unwrap();
/// assert_eq!(router.clone().oneshot(ask("admin")).await.unwrap().status(), StatusCode::OK);
/// assert_eq!(router.clone().oneshot(ask("guest")).await.unwrap().status(), StatusCode::FORBIDDEN);
/// let anonymous = Request::get("/admin/stats").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(anonymous).await.unwrap().status(), StatusCode::UNAUTHORIZED);
/// # }
/// ```
pub trait PrefixOutput {
    /// Converts into pass-on or answer.
    fn into_flow(self) -> ControlFlow<Response<Body>, Request<Body>>;
}

impl PrefixOutput for Request<Body> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>, Request<Body>> {
        ControlFlow::Continue(self)
    }
}

impl<R: IntoResponse> PrefixOutput for ControlFlow<R, Request<Body>> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>, Request<Body>> {
        match self {
            ControlFlow::Continue(request) => ControlFlow::Continue(request),
            ControlFlow::Break(answer) => ControlFlow::Break(answer.into_response()),
        }
    }
}

/// A prefix's answer with response headers to stage, as
/// [`Route::stage_header`] stages them: for an asynchronous prefix, whose
/// future cannot hold the `Route`, to stage headers it decides after an
/// await. They go out on whatever response goes out, and win over a
/// header of the same name.
///
/// ```
/// use http::{HeaderName, HeaderValue, Request};
/// use pronghorn::{Body, Router, router::{Route, Staged}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", || "hello")
///     .prefix("/", |request: Request<Body>, _: &mut Route<'_>| async move {
///         // A lookup that takes a while decides the header.
///         tokio::task::yield_now().await;
///         let quota = HeaderValue::from_static("99");
///         Staged::new(request).header(HeaderName::from_static("x-quota"), quota)
///     })
///     .compile()
///     .unwrap();
///
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.headers()["x-quota"], "99");
/// # }
/// ```
#[derive(Debug)]
pub struct Staged<T> {
    output: T,
    headers: HeaderMap,
}

impl<T> Staged<T> {
    /// `output`, with no header staged yet.
    pub fn new(output: T) -> Self {
        Self {
            output,
            headers: HeaderMap::new(),
        }
    }

    /// Stages `name: value`.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }
}

/// Headers a prefix staged in its answer, on their way to the pipeline in
/// the request it lets through.
#[derive(Clone, Debug)]
pub(crate) struct StagedHeaders(HeaderMap);

impl<T: PrefixOutput> PrefixOutput for Staged<T> {
    fn into_flow(self) -> ControlFlow<Response<Body>, Request<Body>> {
        if self.headers.is_empty() {
            return self.output.into_flow();
        }
        match self.output.into_flow() {
            ControlFlow::Continue(mut request) => {
                request.extensions_mut().insert(StagedHeaders(self.headers));
                ControlFlow::Continue(request)
            }
            // The answer is the response that goes out: the headers go on
            // it now.
            ControlFlow::Break(mut response) => {
                response.headers_mut().extend(self.headers);
                ControlFlow::Break(response)
            }
        }
    }
}

/// Moves the headers a prefix staged in its [`Staged`] answer from the
/// request it let through to `staged`.
#[cold]
pub(crate) fn take_staged(request: &mut Request<Body>, staged: &mut Option<Box<HeaderMap>>) {
    if let Some(StagedHeaders(headers)) = request.extensions_mut().remove() {
        staged.get_or_insert_with(Box::default).extend(headers);
    }
}

impl<T: PrefixOutput, E: IntoResponse> PrefixOutput for Result<T, E> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>, Request<Body>> {
        match self {
            Ok(output) => output.into_flow(),
            Err(error) => ControlFlow::Break(error_response(error)),
        }
    }
}

/// A postfix answer that replaces the response and skips the postfixes
/// after this one (as the `Err` of a `Result` does).
///
/// ```
/// use http::{HeaderValue, Request, Response, StatusCode};
/// use pronghorn::{Body, Router, router::{Priority, Replace, Route, Scope}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", || "hello")
///     .postfix(Scope::new("/").priority(Priority::HIGH), |_: &Route<'_>, _: Response<Body>| {
///         Replace((StatusCode::SERVICE_UNAVAILABLE, "down for maintenance"))
///     })
///     .postfix("/", |_: &Route<'_>, response: &mut Response<Body>| {
///         response.headers_mut().insert("x-late", HeaderValue::from_static("yes"));
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
/// assert!(!response.headers().contains_key("x-late"));
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Replace<R>(pub R);

/// What a router postfix hook answers: the response, modified
/// (`Response<Body>`), or a replacement that ends the postfix chain
/// ([`Replace`], or the `Err` of a `Result`).
pub trait PostfixOutput {
    /// `Continue` with the response, or `Break` with its replacement.
    fn into_flow(self) -> ControlFlow<Response<Body>, Response<Body>>;
}

impl PostfixOutput for Response<Body> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>, Response<Body>> {
        ControlFlow::Continue(self)
    }
}

impl<R: IntoResponse> PostfixOutput for Replace<R> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>, Response<Body>> {
        ControlFlow::Break(self.0.into_response())
    }
}

impl<T: PostfixOutput, E: IntoResponse> PostfixOutput for Result<T, E> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>, Response<Body>> {
        match self {
            Ok(output) => output.into_flow(),
            Err(error) => ControlFlow::Break(error_response(error)),
        }
    }
}

pub(crate) type PrefixFlow = ControlFlow<Response<Body>, Request<Body>>;
pub(crate) type PostfixFlow = ControlFlow<Response<Body>, Response<Body>>;

/// A prefix hook for the router: `Fn(Request<Body>, &mut Route<'_>) -> X`
/// where `X` is a [`PrefixOutput`], a future of one, or a [`Step`] of one;
/// or `Fn(&mut Request<Body>, &mut Route<'_>) -> V` with `V` a
/// [`RouteVerdict`] (`()`, `ControlFlow<R>`, `Result<(), E>`), which looks
/// at (or edits) the request where it lies (synchronous, and the request is
/// not moved in and out).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prefix hook for the router",
    label = "not a prefix hook",
    note = "a router prefix is `Fn(Request<Body>, &mut Route<'_>)` answering a `PrefixOutput` (the request, `ControlFlow<R, Request<Body>>`, a `Result`), a future or a `Step` of one; or `Fn(&mut Request<Body>, &mut Route<'_>)` answering `()`, `ControlFlow<R>` or `Result<(), E>`, with `R`, `E: IntoResponse`",
    note = "the request's body is pronghorn's `Body`, whatever body the server received"
)]
pub trait RoutePrefix<M>: Send + Sync + 'static {
    #[doc(hidden)]
    fn call(
        &self,
        request: Request<Body>,
        route: &mut Route<'_>,
    ) -> Step<PrefixFlow, BoxFuture<PrefixFlow>>;

    /// Answers from a look at `request` where it lies, for a hook that
    /// works in place; any other answers `None` and is `call`ed with the
    /// request.
    #[doc(hidden)]
    #[inline]
    fn inspect(
        &self,
        request: &mut Request<Body>,
        route: &mut Route<'_>,
    ) -> Option<ControlFlow<Response<Body>>> {
        let _ = (request, route);
        None
    }
}

/// What a router prefix that looks at the request where it lies answers:
/// `()` (it lets the request through), `ControlFlow<R>` (`Continue(())`
/// lets it through, `Break(answer)` answers), or `Result<(), E>`, with
/// `R` and `E` any [`IntoResponse`].
///
/// ```
/// use http::{HeaderValue, Request, StatusCode};
/// use pronghorn::{Body, Router, router::Route};
///
/// let router = Router::new()
///     .get("/", || "home")
///     // Only ever lets the request through: no answer type to name.
///     .prefix("/", |request: &mut Request<Body>, _: &mut Route<'_>| {
///         request.headers_mut().insert("x-seen", HeaderValue::from_static("1"));
///     })
///     .prefix("/admin", |request: &mut Request<Body>, _: &mut Route<'_>| {
///         match request.headers().contains_key("x-admin") {
///             true => Ok(()),
///             false => Err(StatusCode::FORBIDDEN),
///         }
///     });
/// # router.compile().unwrap();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a router prefix that takes `&mut Request<Body>` answers",
    label = "not a prefix's answer",
    note = "it answers `()`, `ControlFlow<R>` or `Result<(), E>`, with `R` and `E` any `IntoResponse`"
)]
pub trait RouteVerdict {
    /// Lets the request through (`Continue`) or answers it (`Break`).
    fn into_flow(self) -> ControlFlow<Response<Body>>;
}

impl RouteVerdict for () {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>> {
        ControlFlow::Continue(())
    }
}

impl<R: IntoResponse> RouteVerdict for ControlFlow<R> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>> {
        self.map_break(IntoResponse::into_response)
    }
}

impl<E: IntoResponse> RouteVerdict for Result<(), E> {
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<Body>> {
        match self {
            Ok(()) => ControlFlow::Continue(()),
            Err(answer) => ControlFlow::Break(answer.into_response()),
        }
    }
}

impl<F, V> RoutePrefix<FnEdit> for F
where
    F: Fn(&mut Request<Body>, &mut Route<'_>) -> V + Send + Sync + 'static,
    V: RouteVerdict,
{
    #[inline]
    fn call(
        &self,
        request: Request<Body>,
        route: &mut Route<'_>,
    ) -> Step<PrefixFlow, BoxFuture<PrefixFlow>> {
        in_place(self, request, route)
    }

    #[inline]
    fn inspect(
        &self,
        request: &mut Request<Body>,
        route: &mut Route<'_>,
    ) -> Option<ControlFlow<Response<Body>>> {
        Some(self(request, route).into_flow())
    }
}

/// The call with the request of a prefix that works where the request
/// lies: its look, and the request handed back to go on.
#[inline]
fn in_place<H: RoutePrefix<M>, M>(
    hook: &H,
    mut request: Request<Body>,
    route: &mut Route<'_>,
) -> Step<PrefixFlow, BoxFuture<PrefixFlow>> {
    let flow = (hook.inspect(&mut request, route)).expect("a prefix in place answers in place");
    Step::Ready(flow.map_continue(|()| request))
}

macro_rules! extractor_prefixes {
    ($($ty:ident),+) => {
        /// A prefix whose arguments are head extractors (`Query`,
        /// `Header`, `State`, …), answering a [`RouteVerdict`]: it looks
        /// at the request where it lies. An extractor that refuses answers
        /// the request, as it would for a handler.
        #[allow(
            non_snake_case,
            reason = "the extractors are named after their type parameters"
        )]
        impl<F, V, $($ty,)+> RoutePrefix<(FnExtract, ($($ty,)+))> for F
        where
            F: Fn($($ty),+) -> V + Send + Sync + 'static,
            V: RouteVerdict,
            $($ty: HeadArgument<ByType> + 'static,)+
        {
            #[inline]
            fn call(
                &self,
                request: Request<Body>,
                route: &mut Route<'_>,
            ) -> Step<PrefixFlow, BoxFuture<PrefixFlow>> {
                in_place(self, request, route)
            }

            #[inline]
            fn inspect(
                &self,
                request: &mut Request<Body>,
                route: &mut Route<'_>,
            ) -> Option<ControlFlow<Response<Body>>> {
                let context = route.extraction(request);
                Some(match <($($ty,)+) as HeadExtractors<ByType>>::extract(&context) {
                    Ok(($($ty,)+)) => self($($ty),+).into_flow(),
                    Err(answer) => ControlFlow::Break(answer),
                })
            }
        }
    };
}

for_each_arity!(extractor_prefixes, nonempty);

impl<F, O> RoutePrefix<FnSync> for F
where
    F: Fn(Request<Body>, &mut Route<'_>) -> O + Send + Sync + 'static,
    O: PrefixOutput,
{
    #[inline]
    fn call(
        &self,
        request: Request<Body>,
        route: &mut Route<'_>,
    ) -> Step<PrefixFlow, BoxFuture<PrefixFlow>> {
        Step::Ready(self(request, route).into_flow())
    }
}

impl<F, Fut> RoutePrefix<FnAsync> for F
where
    F: Fn(Request<Body>, &mut Route<'_>) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: PrefixOutput + 'static,
{
    #[inline]
    fn call(
        &self,
        request: Request<Body>,
        route: &mut Route<'_>,
    ) -> Step<PrefixFlow, BoxFuture<PrefixFlow>> {
        Step::<Fut::Output, Fut>::Pending(self(request, route)).erase(PrefixOutput::into_flow)
    }
}

impl<F, O, Fut> RoutePrefix<FnStep> for F
where
    F: Fn(Request<Body>, &mut Route<'_>) -> Step<O, Fut> + Send + Sync + 'static,
    O: PrefixOutput + 'static,
    Fut: Future<Output = O> + Send + 'static,
{
    #[inline]
    fn call(
        &self,
        request: Request<Body>,
        route: &mut Route<'_>,
    ) -> Step<PrefixFlow, BoxFuture<PrefixFlow>> {
        self(request, route).erase(PrefixOutput::into_flow)
    }
}

/// A postfix hook for the router: `Fn(&Route<'_>, Response<Body>) -> X`
/// where `X` is a [`PostfixOutput`], a future of one, or a [`Step`] of one;
/// or `Fn(&Route<'_>, &mut Response<Body>)`, which edits the response where
/// it lies (synchronous, and the response is not moved in and out).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a postfix hook for the router",
    label = "not a postfix hook",
    note = "a router postfix is `Fn(&Route<'_>, Response<Body>)` answering a `PostfixOutput` (the response, `Replace(..)`, a `Result`), a future or a `Step` of one; or `Fn(&Route<'_>, &mut Response<Body>)`"
)]
pub trait RoutePostfix<M>: Send + Sync + 'static {
    #[doc(hidden)]
    fn call(
        &self,
        route: &Route<'_>,
        response: Response<Body>,
    ) -> Step<PostfixFlow, BoxFuture<PostfixFlow>>;

    /// Edits `response` in place and answers `true`, for a hook that only
    /// edits; any other answers `false` and is `call`ed with the response.
    #[doc(hidden)]
    #[inline]
    fn edit(&self, route: &Route<'_>, response: &mut Response<Body>) -> bool {
        let _ = (route, response);
        false
    }
}

impl<F> RoutePostfix<FnEdit> for F
where
    F: Fn(&Route<'_>, &mut Response<Body>) + Send + Sync + 'static,
{
    #[inline]
    fn call(
        &self,
        route: &Route<'_>,
        mut response: Response<Body>,
    ) -> Step<PostfixFlow, BoxFuture<PostfixFlow>> {
        self(route, &mut response);
        Step::Ready(ControlFlow::Continue(response))
    }

    #[inline]
    fn edit(&self, route: &Route<'_>, response: &mut Response<Body>) -> bool {
        self(route, response);
        true
    }
}

impl<F, O> RoutePostfix<FnSync> for F
where
    F: Fn(&Route<'_>, Response<Body>) -> O + Send + Sync + 'static,
    O: PostfixOutput,
{
    #[inline]
    fn call(
        &self,
        route: &Route<'_>,
        response: Response<Body>,
    ) -> Step<PostfixFlow, BoxFuture<PostfixFlow>> {
        Step::Ready(self(route, response).into_flow())
    }
}

impl<F, Fut> RoutePostfix<FnAsync> for F
where
    F: Fn(&Route<'_>, Response<Body>) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: PostfixOutput + 'static,
{
    #[inline]
    fn call(
        &self,
        route: &Route<'_>,
        response: Response<Body>,
    ) -> Step<PostfixFlow, BoxFuture<PostfixFlow>> {
        Step::<Fut::Output, Fut>::Pending(self(route, response)).erase(PostfixOutput::into_flow)
    }
}

impl<F, O, Fut> RoutePostfix<FnStep> for F
where
    F: Fn(&Route<'_>, Response<Body>) -> Step<O, Fut> + Send + Sync + 'static,
    O: PostfixOutput + 'static,
    Fut: Future<Output = O> + Send + 'static,
{
    #[inline]
    fn call(
        &self,
        route: &Route<'_>,
        response: Response<Body>,
    ) -> Step<PostfixFlow, BoxFuture<PostfixFlow>> {
        self(route, response).erase(PostfixOutput::into_flow)
    }
}
