use std::{future::Future, ops::ControlFlow};

use http::{Request, Response};

use crate::{
    body::Body,
    handler::IntoResponse,
    hook::{FnAsync, FnEdit, FnStep, FnSync},
    step::Never,
    step::Step,
};

/// A hook that runs before the inner service: let the request through, or
/// answer.
///
/// `B` is the request body type and `R` the response type of the inner
/// service (an early answer takes its place). `M` is a marker that keeps the
/// closure implementations apart (see [`hook`](crate::hook)); a type that
/// implements this trait itself leaves it at its default.
///
/// Implemented for closures `FnMut(Request<B>) -> X` where `X` is
///
/// - `ControlFlow<R, Request<B>>`: synchronous;
/// - a future of it: asynchronous;
/// - a [`Step`] of it: decided per request;
///
/// and for closures `FnMut(&mut Request<B>) -> V` that look at (or edit)
/// the request where it lies, as tower-http's `ValidateRequest` does:
/// synchronous, and the request is not moved in and out of the closure.
/// `V` is a [`Verdict`]: `ControlFlow<R>` (`Continue(())` lets the request
/// through), or `Result<(), E>` (`Ok(())` lets it through), whose error is
/// any [`IntoResponse`] — a status, a text, an error type of the
/// application, as a router prefix may answer — when the inner service
/// answers `Response<RB>` with a body `RB: From<Body>`.
///
/// ```
/// use http::{Request, Response, StatusCode, header};
/// use pronghorn::{Body, IntoResponse, PrefixLayer};
/// use tower::{service_fn, ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let service = ServiceBuilder::new()
///     .layer(PrefixLayer::new(|request: &mut Request<Body>| {
///         match request.headers().contains_key(header::AUTHORIZATION) {
///             true => Ok(()),
///             false => Err((StatusCode::UNAUTHORIZED, "who are you?")),
///         }
///     }))
///     .service(service_fn(|_: Request<Body>| async {
///         Ok::<_, std::convert::Infallible>("hello".into_response())
///     }));
/// let response = service.oneshot(Request::new(Body::empty())).await.unwrap();
/// assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
/// # }
/// ```
///
/// # Example
///
/// A hook that answers from memory when it can and asks elsewhere when it
/// cannot, implemented on a type:
///
/// ```
/// use std::{future::Future, ops::ControlFlow, pin::Pin};
/// use http::{Request, Response};
/// use pronghorn::{PrefixHook, Step};
///
/// struct Cached {
///     hit: &'static str,
/// }
///
/// type Flow = ControlFlow<Response<String>, Request<String>>;
///
/// impl PrefixHook<String, Response<String>> for Cached {
///     type Future = Pin<Box<dyn Future<Output = Flow> + Send>>;
///
///     fn call(&mut self, request: Request<String>) -> Step<Flow, Self::Future> {
///         if request.uri().path() == self.hit {
///             Step::Ready(ControlFlow::Break(Response::new("from cache".to_owned())))
///         } else {
///             Step::Pending(Box::pin(async move { ControlFlow::Continue(request) }))
///         }
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prefix hook for a service that answers `{R}`",
    label = "not a prefix hook here",
    note = "a `PrefixLayer` hook is `FnMut(Request<B>) -> ControlFlow<R, Request<B>>` or `FnMut(&mut Request<B>) -> ControlFlow<R>`, or a future or a `Step` of the first; its early answer `R` must be the inner service's response type, here `{R}`",
    note = "to answer any `IntoResponse` (a `StatusCode`, a text) when the inner service answers `Response<pronghorn::Body>`, return `Result<(), E>` from `FnMut(&mut Request<B>)`, or convert with `IntoResponse::into_response`; behind a layer that changes the body (tower-http's `CompressionLayer`), put `.map_response(IntoResponse::into_response)` between them"
)]
pub trait PrefixHook<B, R, M = crate::hook::Custom> {
    /// The future of an asynchronous answer.
    type Future: Future<Output = ControlFlow<R, Request<B>>>;

    /// Lets `request` through (`Continue`) or answers it (`Break`).
    fn call(&mut self, request: Request<B>) -> Step<ControlFlow<R, Request<B>>, Self::Future>;

    /// Answers from a look at `request` where it lies, for a hook that
    /// works in place; any other answers `None` and is `call`ed with the
    /// request.
    #[doc(hidden)]
    #[inline]
    fn inspect(&mut self, request: &mut Request<B>) -> Option<ControlFlow<R>> {
        let _ = request;
        None
    }
}

impl<F, B, R> PrefixHook<B, R, FnSync> for F
where
    F: FnMut(Request<B>) -> ControlFlow<R, Request<B>>,
{
    type Future = Never<ControlFlow<R, Request<B>>>;

    #[inline]
    fn call(&mut self, request: Request<B>) -> Step<ControlFlow<R, Request<B>>, Self::Future> {
        Step::Ready(self(request))
    }
}

impl<F, B, R, V> PrefixHook<B, R, FnEdit> for F
where
    F: FnMut(&mut Request<B>) -> V,
    V: Verdict<R>,
{
    type Future = Never<ControlFlow<R, Request<B>>>;

    #[inline]
    fn call(&mut self, mut request: Request<B>) -> Step<ControlFlow<R, Request<B>>, Self::Future> {
        Step::Ready(match self(&mut request).into_flow() {
            ControlFlow::Continue(()) => ControlFlow::Continue(request),
            ControlFlow::Break(answer) => ControlFlow::Break(answer),
        })
    }

    #[inline]
    fn inspect(&mut self, request: &mut Request<B>) -> Option<ControlFlow<R>> {
        Some(self(request).into_flow())
    }
}

/// What a prefix that looks at the request where it lies
/// (`FnMut(&mut Request<B>) -> V`) answers, in front of a service that
/// answers `R`:
///
/// - `ControlFlow<R>`: `Continue(())` lets the request through, `Break`
///   answers with the inner service's own response type;
/// - `Result<(), E>`: `Ok(())` lets the request through, `Err` answers with
///   any [`IntoResponse`] — a status, a text, an error type of the
///   application, `?` included — when the inner service answers
///   `Response<RB>` with a body `RB: From<Body>` (pronghorn's [`Body`], and
///   axum's under the `axum` feature).
///
/// ```
/// use http::{Request, Response, StatusCode};
/// use pronghorn::{Body, IntoResponse, Prefix};
/// use tower::{service_fn, ServiceExt};
///
/// enum Denied {
///     NoKey,
///     UnknownKey,
/// }
///
/// impl IntoResponse for Denied {
///     fn into_response(self) -> Response<Body> {
///         match self {
///             Denied::NoKey => StatusCode::UNAUTHORIZED.into_response(),
///             Denied::UnknownKey => StatusCode::FORBIDDEN.into_response(),
///         }
///     }
/// }
///
/// fn check_key(request: &mut Request<Body>) -> Result<(), Denied> {
///     let key = request.headers().get("x-api-key").ok_or(Denied::NoKey)?;
///     if key != "k-1" {
///         return Err(Denied::UnknownKey);
///     }
///     Ok(())
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let inner = service_fn(|_: Request<Body>| async {
///     Ok::<_, std::convert::Infallible>("welcome".into_response())
/// });
/// let service = Prefix::new(inner, check_key);
/// let request = Request::get("/").header("x-api-key", "k-2").body(Body::empty()).unwrap();
/// let response = service.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::FORBIDDEN);
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a prefix answers in front of a service that answers `{R}`",
    label = "not a prefix's answer here",
    note = "a prefix that takes `&mut Request<B>` answers `()` (it lets every request through), `ControlFlow<R>` with `R` the inner service's response type, here `{R}`, or `Result<(), E>` with `E: IntoResponse` when the inner service answers `Response<RB>` with `RB: From<pronghorn::Body>`"
)]
pub trait Verdict<R> {
    /// Lets the request through (`Continue`) or answers it (`Break`).
    fn into_flow(self) -> ControlFlow<R>;
}

/// Lets every request through: a prefix that only looks, or edits.
impl<R> Verdict<R> for () {
    #[inline]
    fn into_flow(self) -> ControlFlow<R> {
        ControlFlow::Continue(())
    }
}

impl<R> Verdict<R> for ControlFlow<R> {
    #[inline]
    fn into_flow(self) -> ControlFlow<R> {
        self
    }
}

impl<E, RB> Verdict<Response<RB>> for Result<(), E>
where
    E: IntoResponse,
    RB: From<Body>,
{
    #[inline]
    fn into_flow(self) -> ControlFlow<Response<RB>> {
        match self {
            Ok(()) => ControlFlow::Continue(()),
            Err(answer) => ControlFlow::Break(answer.into_response().map(RB::from)),
        }
    }
}

impl<F, Fut, B, R> PrefixHook<B, R, FnAsync> for F
where
    F: FnMut(Request<B>) -> Fut,
    Fut: Future<Output = ControlFlow<R, Request<B>>>,
{
    type Future = Fut;

    #[inline]
    fn call(&mut self, request: Request<B>) -> Step<ControlFlow<R, Request<B>>, Fut> {
        Step::Pending(self(request))
    }
}

impl<F, Fut, B, R> PrefixHook<B, R, FnStep> for F
where
    F: FnMut(Request<B>) -> Step<ControlFlow<R, Request<B>>, Fut>,
    Fut: Future<Output = ControlFlow<R, Request<B>>>,
{
    type Future = Fut;

    #[inline]
    fn call(&mut self, request: Request<B>) -> Step<ControlFlow<R, Request<B>>, Fut> {
        self(request)
    }
}
