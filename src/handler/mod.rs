//! Handlers: closures and functions that answer a request, taking
//! extractors as arguments.
//!
//! A handler takes up to eight extractors that read the request head
//! ([`FromRequestHead`]: [`Path`], [`Query`], [`Header`], [`State`],
//! [`RouteParams`], [`RawPathParams`], [`RawQuery`], [`Extension`],
//! [`ConnectInfo`], [`MatchedPath`], [`OriginalUri`], `Method`, `Uri`,
//! `HeaderMap`, and `Option` of any:
//! `None` when the request lacks the value, see
//! [`FromRequestHead::from_head_optional`]) and,
//! as its last argument, at most one that reads the body
//! ([`FromRequestBody`]: `Bytes`, `String`, `Json<T>`, [`Form<T>`], a
//! streaming [`Body`], or the whole `Request<Body>`). It returns
//! something that is [`IntoResponse`] — directly (synchronous), as a future
//! (asynchronous), or as a [`Step`] (decided per request).
//!
//! A synchronous handler costs no allocation of the router's own: it is
//! called inside the router's `Service::call`, and the response future is
//! ready when first polled (see the
//! [router](crate::router#when-the-steps-run)). Only the future of an
//! asynchronous handler is boxed, and only when it is called. A body
//! extractor reads the body through a [`BodyFuture`], a named future polled
//! once in place: a body that is already complete costs no suspension and
//! no allocation beyond collecting it; only a body still arriving makes the
//! handler's call a boxed future.
//!
//! The body limit answers 413, the body timeout 408. Served by `serve`, a
//! body extractor also waits for room while the server's extractors are
//! reading other bodies up to its allowance (`Serve::body_buffer`; 503 at
//! the body timeout), and over HTTP/2 answers 503 at once when its
//! connection is (`Serve::http2_body_buffer`): clients cannot hold a body
//! limit's worth of memory on every connection and every stream.
//!
//! An extractor that refuses a request answers it with a [`Rejection`]:
//! its status (400, 413, 415, 422, …) and a plain-text message. A handler
//! answers a rejection itself by taking `Result<E, ERejection>`
//! (`Result<Json<T>, JsonRejection>`, [`PathRejection`],
//! [`QueryRejection`], [`HeaderRejection`], [`FormRejection`],
//! [`StringRejection`], [`BytesRejection`]); a router answers all of its
//! own in one shape with [`Router::rejection`](crate::Router::rejection).

mod allowance;
mod answers;
#[cfg(feature = "axum")]
mod axum;
mod body_limit;
mod extract;
mod from_request;
mod layered;
mod mounted;
mod nested;
mod response;
mod response_parts;

use std::{
    future::Future,
    marker::PhantomData,
    pin::Pin,
    task::{Context, Poll},
};

use http::Response;

#[cfg(feature = "ws")]
pub(crate) use self::allowance::Reservation;
#[cfg(feature = "ws")]
pub(crate) use self::allowance::STEP;
#[cfg(feature = "server")]
pub(crate) use self::allowance::{BodyAllowance, ServerAllowance, UNCOUNTED};
#[cfg(feature = "axum")]
pub use self::axum::{Axum, AxumBodyLayer, AxumBodyService, OfAxum};
#[cfg(feature = "json")]
pub use self::extract::{Json, JsonRejection};

/// Why extractors refuse requests, named as in axum's
/// `extract::rejection`: each extractor's rejection an enum of its faults
/// (`JsonRejection::JsonDataError(_)`, `FormRejection::InvalidFormContentType(_)`,
/// `PathRejection::FailedToDeserializePathParams(_)`, …), every one with
/// its `status()` and `body_text()`, worded as the router answers
/// ([`Answers::Axum`](crate::router::Answers) gives axum's words).
///
/// ```
/// use http::{Request, StatusCode, header};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Json, handler::rejection::JsonRejection, router::Answers};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .post("/", |body: Result<Json<u32>, JsonRejection>| match body {
///         Ok(Json(n)) => (StatusCode::OK, n.to_string()),
///         Err(JsonRejection::JsonDataError(error)) => (StatusCode::BAD_REQUEST, error.body_text()),
///         Err(other) => (other.status(), other.body_text()),
///     })
///     .answers(Answers::Axum)
///     .compile()
///     .unwrap();
/// let request = Request::post("/")
///     .header(header::CONTENT_TYPE, "application/json")
///     .body("\"seven\"".to_owned())
///     .unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// let text = response.into_body().collect().await.unwrap().to_bytes();
/// assert!(text.starts_with(b"Failed to deserialize the JSON body into the target type"));
/// # }
/// ```
pub mod rejection {
    pub use super::extract::{
        BytesRejection, ExtensionRejection, FailedToBufferBody, FailedToDeserializeForm,
        FailedToDeserializeFormBody, FailedToDeserializePathParams, FailedToDeserializeQueryString,
        FormRejection, HeaderRejection, InvalidFormContentType, InvalidUtf8,
        InvalidUtf8InPathParam, LengthLimitError, MatchedPathMissing, MatchedPathRejection,
        MissingExtension, MissingPathParams, NestedPathRejection, PathErrorKind, PathRejection,
        QueryRejection, RawFormRejection, RawPathParamsRejection, Rejection, StringRejection,
        UnknownBodyError,
    };
    #[cfg(feature = "json")]
    pub use super::extract::{
        JsonDataError, JsonRejection, JsonSyntaxError, MissingJsonContentType,
    };
}
#[cfg(feature = "multipart")]
#[cfg_attr(docsrs, doc(cfg(feature = "multipart")))]
pub use self::extract::{Field, Multipart, MultipartError};
#[cfg(feature = "typed-header")]
#[cfg_attr(docsrs, doc(cfg(feature = "typed-header")))]
pub use self::extract::{TypedHeader, TypedHeaderRejection, TypedHeaderRejectionReason};
#[cfg(feature = "ws")]
pub(crate) use self::extract::{rejection_enum, rejection_variants};
pub(crate) use self::{
    answers::Allowed,
    extract::{
        DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, Extraction, Fault, HeadExtractors, OuterState,
        Refusal, RouteInfo, Shape, for_each_arity, state_type,
    },
    layered::wrap,
    mounted::{Mounted, NESTED_PATTERN_END},
    nested::{NOT_NESTED, Nesting, StripBase},
    response::{ErrorValue, error_response, internal_error},
};
pub use self::{
    answers::Answers,
    body_limit::DefaultBodyLimit,
    extract::{
        AddExtension, BodyFuture, ByType, BytesRejection, ConnectInfo, Connected, Extension, Form,
        FormRejection, FromRef, FromRequestBody, FromRequestHead, HasRejection, HeadArgument,
        Header, HeaderRejection, MatchedPath, MockConnectInfo, MockConnectInfoService, NamedHeader,
        Needs, NestedPath, OriginalUri, Path, PathErrorKind, PathRejection, Query, QueryRejection,
        RawForm, RawPathParams, RawPathParamsIter, RawQuery, Rejection, RequestContext,
        RouteContext, RouteParams, State, StateSource, StateType, StringRejection, WithRejection,
        WithRejectionFuture, headers,
    },
    from_request::{FromRequest, RequestExt},
    layered::{
        Endpoint, EndpointFuture, FromLayered, Layered, NeedsOf, NeverFails, OfEndpoint,
        RouteLayer, RouteMatch,
    },
    mounted::RouteService,
    response::{ErrorResponse, Html, IntoResponse, IntoResponseFailed, Redirect, Result},
    response_parts::{
        AppendHeaders, ForceStatusCode, IntoResponseParts, InvalidHeader, NoContent, ResponseParts,
    },
};
/// A request with pronghorn's body, as axum's `extract::Request`.
#[doc(no_inline)]
pub use crate::body::Request;
/// Derives [`FromRef`](trait@FromRef) of a state struct for the type of
/// each of its fields, as axum's derive does (feature `macros`): under a
/// `Router<AppState>`, a handler reads a field as `State<FieldType>`.
/// `#[from_ref(skip)]` leaves a field out.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{FromRef, State}, router::get};
/// use tower::ServiceExt;
///
/// #[derive(Clone, FromRef)]
/// struct AppState {
///     greeting: &'static str,
///     visits: u64,
///     #[from_ref(skip)]
///     farewell: &'static str,
/// }
///
/// async fn hello(State(greeting): State<&'static str>, State(visits): State<u64>) -> String {
///     format!("{greeting} #{visits}")
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let state = AppState { greeting: "hello", visits: 7, farewell: "bye" };
/// let app = Router::new().route("/", get(hello)).with_state(state);
/// let response = app.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello #7");
/// # }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use pronghorn_macros::FromRef;
/// Derives an extractor that reads through another, as axum's derives do
/// (feature `macros`): `#[derive(FromRequest)]` a body extractor,
/// `#[derive(FromRequestParts)]` one of the head, each a one-field tuple
/// struct with `#[from_request(via(Extractor))]` and, to answer the
/// extractor's rejection as a type of yours made from it,
/// `rejection(Type)`.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{IntoResponse, Router, handler::{FromRequest, FromRequestParts, JsonRejection, PathRejection}};
/// use tower::ServiceExt;
///
/// #[derive(FromRequest)]
/// #[from_request(via(pronghorn::handler::Json), rejection(ApiError))]
/// struct Json<T>(T);
///
/// #[derive(FromRequestParts)]
/// #[from_request(via(pronghorn::handler::Path), rejection(ApiError))]
/// struct Id(u32);
///
/// struct ApiError(StatusCode, String);
///
/// impl From<JsonRejection> for ApiError {
///     fn from(rejection: JsonRejection) -> Self {
///         ApiError(rejection.status(), format!("bad body: {}", rejection.message()))
///     }
/// }
///
/// impl From<PathRejection> for ApiError {
///     fn from(rejection: PathRejection) -> Self {
///         ApiError(StatusCode::NOT_FOUND, rejection.kind().to_string())
///     }
/// }
///
/// impl IntoResponse for ApiError {
///     fn into_response(self) -> http::Response<pronghorn::Body> {
///         (self.0, self.1).into_response()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .put("/items/{id}", |Id(id): Id, Json(name): Json<String>| format!("{id} is {name}"))
///     .compile()
///     .unwrap();
/// let put = |path: &str, body: &str| {
///     Request::put(path).header("content-type", "application/json").body(body.to_owned()).unwrap()
/// };
/// let response = router.clone().oneshot(put("/items/7", r#""seven""#)).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "7 is seven");
/// let response = router.clone().oneshot(put("/items/x", r#""x""#)).await.unwrap();
/// assert_eq!(response.status(), StatusCode::NOT_FOUND);
/// let response = router.oneshot(put("/items/7", "[7]")).await.unwrap();
/// assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
/// let text = response.into_body().collect().await.unwrap().to_bytes();
/// assert!(text.starts_with(b"bad body: invalid JSON body: invalid type"));
/// # }
/// ```
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use pronghorn_macros::{FromRequest, FromRequestParts};

use crate::{
    body::Body,
    hook::{FnAsync, FnStep, FnSync},
    step::Step,
};

pub use crate::step::BoxFuture;
use crate::step::ResponseStep;

/// Marker of a handler whose last argument reads the body.
#[derive(Debug)]
pub enum WithBody {}

/// A function that answers requests, taking extractors.
///
/// Implemented for closures and fns taking up to eight [`FromRequestHead`]
/// arguments and, last, at most one [`FromRequestBody`]; returning an
/// [`IntoResponse`] value, a future of one, or a [`Step`] of one. `M` tells
/// the implementations apart and is inferred; `S` is the state type of the
/// router it is registered with ([`ByType`] where the router names none),
/// which its [`State`] arguments read (see [`FromRef`](trait@FromRef)).
///
/// A synchronous handler answers inside the router's `call`; an
/// asynchronous one suspends only if its future is still pending once
/// polled; one that answers a [`Step`] decides per request.
///
/// ```
/// use std::{future::Ready, pin::pin, task::{Context, Poll, Waker}};
/// use http::{Request, StatusCode};
/// use pronghorn::{Router, Step, handler::Path};
/// use tower::Service;
///
/// /// A cache hit answers now; a miss answers later (here at once, for
/// /// the example).
/// fn lookup(Path(id): Path<u32>) -> Step<String, Ready<String>> {
///     if id == 1 {
///         Step::Ready("cached".to_owned())
///     } else {
///         Step::Pending(std::future::ready(format!("loaded {id}")))
///     }
/// }
///
/// let mut router = Router::new()
///     .get("/sync", || "now")
///     .get("/async", || async { tokio::task::yield_now().await; "later" })
///     .get("/items/{id}", lookup)
///     .compile()
///     .unwrap();
///
/// for path in ["/sync", "/items/1", "/items/2"] {
///     let future = pin!(router.call(Request::get(path).body(String::new()).unwrap()));
///     let Poll::Ready(Ok(response)) = future.poll(&mut Context::from_waker(Waker::noop())) else {
///         unreachable!("{path}: answered on the first poll");
///     };
///     assert_eq!(response.status(), StatusCode::OK);
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handler of pronghorn's",
    label = "not a handler",
    note = "a handler is a `Fn` that is `Clone + Send + Sync + 'static`; its arguments are pronghorn extractors (only the last may read the body), and it answers an `IntoResponse`, a future of one, or a `Step` of one",
    note = "an `axum::extract::Path` is not pronghorn's `pronghorn::handler::Path`; an answer that is not `pronghorn::IntoResponse` (an axum response needs the `axum` feature and `Axum(..)`) fails here too",
    note = "to be told which part is wrong, write the handler as a function and put `#[pronghorn::debug_handler]` on it (feature `macros`)"
)]
pub trait Handler<M, S = ByType>: Clone + Send + Sync + 'static {
    /// Calls the handler on `request`, which stays where it is, for the
    /// postfixes and monitors after the handler: extractors read its head
    /// in place, a body extractor takes its body, and a handler that must
    /// own the request (a tower service, the whole `Request` as an
    /// argument) copies its head. `cx` is the context of the poll that
    /// runs it, so a body that is already complete is read without a
    /// suspension. The router polls the future of an answer once with the
    /// same context (where the handler has not already), so that a future
    /// that completes at once answers without a suspension too.
    fn call(
        &self,
        request: &mut Request<Body>,
        route: RouteContext<'_>,
        cx: &mut Context<'_>,
    ) -> Step<Response<Body>, BoxFuture<Response<Body>>>;

    /// Adds what the handler's extractors need of its router and route.
    #[doc(hidden)]
    #[inline]
    fn needs(needs: &mut Needs) {
        let _ = needs;
    }

    /// Adds what this handler needs of its router and route: its type's
    /// [`needs`](Handler::needs), and what a handler made of others (a
    /// method router) needs of them.
    #[doc(hidden)]
    #[inline]
    fn value_needs(&self, needs: &mut Needs) {
        Self::needs(needs);
    }

    /// Whether [`call`](Handler::call) polls a future it answers with once,
    /// with its context, before answering `Step::Pending`, as the handlers
    /// that read a body do (they poll the body in place), or answers none;
    /// the router polls the future of any other handler once itself.
    #[doc(hidden)]
    const POLLS_ITS_FUTURE: bool = false;

    /// Whether [`call`](Handler::call) reads the route's parameters (in
    /// [`RouteContext::with_request`] of the request it is handed) before
    /// it changes that request's URI, if it ever does. The router then
    /// keeps no copy of the path for them when no hook needs one. A handler
    /// of your own keeps the default, and its parameters are read in a
    /// copy of the path as received, whatever it does to the request.
    #[doc(hidden)]
    const READS_PARAMS_FIRST: bool = false;

    /// Whether the handler is wrapped in tower layers, which take the
    /// request by value and read the route from its extensions.
    #[doc(hidden)]
    const LAYERED: bool = false;

    /// Wraps the handler in a tower `layer`, for this handler alone: the
    /// layer sees the requests the router hands the handler (with the
    /// route's [`MatchedPath`] in their extensions) and what the handler
    /// answers. The layered handler is registered as any other.
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Router, handler::Handler};
    /// use tower::ServiceExt;
    /// use tower_http::timeout::TimeoutLayer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let slow = || async {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    ///     "late"
    /// };
    /// let timeout = TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, Duration::from_millis(10));
    /// let router = Router::new()
    ///     .get("/slow", slow.layer(timeout))
    ///     .get("/fast", || "fast")
    ///     .compile()
    ///     .unwrap();
    /// let request = Request::get("/slow").body(String::new()).unwrap();
    /// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::REQUEST_TIMEOUT);
    /// # }
    /// ```
    #[allow(
        clippy::type_complexity,
        reason = "the service of the layer the router puts around the handler, named"
    )]
    fn layer<L, K>(
        self,
        layer: L,
    ) -> Layered<<L::Layer as tower_layer::Layer<Endpoint>>::Service, (Self, M, S)>
    where
        Self: Sized,
        M: 'static,
        S: 'static,
        L: RouteLayer<K>,
    {
        let handler: std::sync::Arc<dyn ErasedHandler> =
            std::sync::Arc::new(TypedHandler::<_, M, S>::new(self));
        Layered::new(tower_layer::Layer::layer(
            &layer.into_route_layer(),
            Endpoint::new(handler),
        ))
    }
}

/// A synchronous handler's answer.
#[inline]
fn now<R: IntoResponse>(value: R) -> ResponseStep {
    Step::Ready(value.into_response())
}

/// An asynchronous handler's answer: its future, boxed.
#[inline]
fn later<F>(future: F) -> ResponseStep
where
    F: Future + Send + 'static,
    F::Output: IntoResponse + 'static,
{
    Step::<F::Output, F>::Pending(future).erase(IntoResponse::into_response)
}

/// A synchronous handler's answer, inside the future of a handler that
/// read its body.
fn resolve_now<R: IntoResponse>(value: R) -> std::future::Ready<Response<Body>> {
    std::future::ready(value.into_response())
}

/// An asynchronous handler's answer, awaited inside the future of a handler
/// that read its body (no box of its own).
async fn resolve_later<F>(future: F) -> Response<Body>
where
    F: Future,
    F::Output: IntoResponse,
{
    future.await.into_response()
}

/// Polls a pending answer's future once with `cx`: one that completes at
/// once answers now, and one still pending has the waker of `cx`.
#[inline]
fn first_poll(answer: ResponseStep, cx: &mut Context<'_>) -> ResponseStep {
    match answer {
        Step::Pending(mut future) => match future.as_mut().poll(cx) {
            Poll::Ready(response) => Step::Ready(response),
            Poll::Pending => Step::Pending(future),
        },
        ready @ Step::Ready(_) => ready,
    }
}

/// The head extractors `$ty…`, or the refusal that answers the request.
macro_rules! try_extract {
    ($context:expr, $state:ident, $($ty:ident),*) => {
        let ($($ty,)*) = match <($($ty,)*) as HeadExtractors<$state>>::extract($context) {
            Ok(values) => values,
            Err(response) => return Step::Ready(response),
        };
    };
}

macro_rules! handler_impls {
    ($($ty:ident),*) => {
        handler_impls!(@kind FnSync, R, now, resolve_now, true, [R: IntoResponse], $($ty),*);
        handler_impls!(@kind FnAsync, Fut, later, resolve_later, false, [Fut: Future + Send + 'static, Fut::Output: IntoResponse + 'static], $($ty),*);
        handler_impls!(@step $($ty),*);
    };
    (@kind $kind:ident, $out:ident, $wrap:ident, $resolve:ident, $polls:literal, [$($bounds:tt)*], $($ty:ident),*) => {
        #[allow(
            non_snake_case,
            unused_variables,
            reason = "the extractors are named after their type parameters; a handler of no argument uses no context"
        )]
        impl<F, S, $out, $($ty,)*> Handler<($kind, ($($ty,)*)), S> for F
        where
            F: Fn($($ty),*) -> $out + Clone + Send + Sync + 'static,
            $($bounds)*,
            $($ty: HeadArgument<S>,)*
        {
            #[inline]
            fn call(
                &self,
                request: &mut Request<Body>,
                route: RouteContext<'_>,
                _: &mut Context<'_>,
            ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
                let context = &route.with_request(request);
                try_extract!(context, S, $($ty),*);
                $wrap(self($($ty),*))
            }

            // True for a synchronous handler, which answers no future (the
            // router then has no check to make); an asynchronous one's
            // future is polled by the router.
            const POLLS_ITS_FUTURE: bool = $polls;

            const READS_PARAMS_FIRST: bool = true;

            fn needs(needs: &mut Needs) {
                <($($ty,)*) as HeadExtractors<S>>::needs(needs);
            }
        }

        #[allow(
            non_snake_case,
            unused_variables,
            reason = "the extractors are named after their type parameters; a handler of no argument uses no context"
        )]
        impl<F, S, $out, $($ty,)* T> Handler<($kind, WithBody, ($($ty,)*), T), S> for F
        where
            F: Fn($($ty,)* T) -> $out + Clone + Send + Sync + 'static,
            $($bounds)*,
            $($ty: HeadArgument<S> + Send + 'static,)*
            T: FromRequestBody + Send + 'static,
        {
            // The body is polled in place with `cx`, and so is the handler's
            // future once the body is read: a body still arriving has been
            // polled inside the future answered.
            const POLLS_ITS_FUTURE: bool = true;

            const READS_PARAMS_FIRST: bool = true;

            fn needs(needs: &mut Needs) {
                <($($ty,)*) as HeadExtractors<S>>::needs(needs);
            }

            fn call(
                &self,
                request: &mut Request<Body>,
                route: RouteContext<'_>,
                cx: &mut Context<'_>,
            ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
                let body = std::mem::take(request.body_mut());
                let context = &route.with_request(request);
                try_extract!(context, S, $($ty),*);
                let mut body = T::from_body(body, context);
                match Pin::new(&mut body).poll(cx) {
                    Poll::Ready(Ok(body)) => first_poll($wrap(self($($ty,)* body)), cx),
                    Poll::Ready(Err(response)) => Step::Ready(response),
                    Poll::Pending => {
                        let handler = self.clone();
                        Step::Pending(Box::pin(async move {
                            match body.await {
                                Ok(body) => $resolve(handler($($ty,)* body)).await,
                                Err(response) => response,
                            }
                        }))
                    }
                }
            }
        }
    };
    (@step $($ty:ident),*) => {
        #[allow(
            non_snake_case,
            unused_variables,
            reason = "the extractors are named after their type parameters; a handler of no argument uses no context"
        )]
        impl<F, S, R, Fut, $($ty,)*> Handler<(FnStep, ($($ty,)*)), S> for F
        where
            F: Fn($($ty),*) -> Step<R, Fut> + Clone + Send + Sync + 'static,
            R: IntoResponse + 'static,
            Fut: Future<Output = R> + Send + 'static,
            $($ty: HeadArgument<S>,)*
        {
            #[inline]
            fn call(
                &self,
                request: &mut Request<Body>,
                route: RouteContext<'_>,
                _: &mut Context<'_>,
            ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
                let context = &route.with_request(request);
                try_extract!(context, S, $($ty),*);
                erase_step(self($($ty),*))
            }

            const READS_PARAMS_FIRST: bool = true;

            fn needs(needs: &mut Needs) {
                <($($ty,)*) as HeadExtractors<S>>::needs(needs);
            }
        }
    };
}

/// A handler's [`Step`], its answer turned into a response.
#[inline]
fn erase_step<R, Fut>(step: Step<R, Fut>) -> ResponseStep
where
    R: IntoResponse + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    step.erase(IntoResponse::into_response)
}

for_each_arity!(handler_impls);

/// `Deref` and `DerefMut` to the value an extractor wraps, as axum's
/// extractors have them: `query.limit` for `query.0.limit`.
macro_rules! deref_to_value {
    ($($(#[$attr:meta])* $wrapper:ident),*) => {$(
        $(#[$attr])*
        impl<T> std::ops::Deref for $wrapper<T> {
            type Target = T;

            #[inline]
            fn deref(&self) -> &T {
                &self.0
            }
        }

        $(#[$attr])*
        impl<T> std::ops::DerefMut for $wrapper<T> {
            #[inline]
            fn deref_mut(&mut self) -> &mut T {
                &mut self.0
            }
        }
    )*};
}

deref_to_value!(
    Path,
    Query,
    Form,
    State,
    Extension,
    ConnectInfo,
    #[cfg(feature = "json")]
    Json
);

/// A handler with its marker erased, as the router stores it.
pub(crate) trait ErasedHandler: Send + Sync + 'static {
    /// Answers into `response`, or returns the future of the answer, polled
    /// once with `cx` (here, unless the handler has): it has the waker of
    /// `cx`. The answer is written in place rather than returned, so that
    /// it is not copied once more on its way through the `dyn` call.
    fn call(
        &self,
        request: &mut Request<Body>,
        route: RouteContext<'_>,
        cx: &mut Context<'_>,
        response: &mut Option<Response<Body>>,
    ) -> Option<BoxFuture<Response<Body>>>;

    /// [`Handler::READS_PARAMS_FIRST`] of the handler.
    fn reads_params_first(&self) -> bool;

    /// [`Handler::LAYERED`] of the handler.
    fn layered(&self) -> bool;
}

/// Marker of a value that is its own answer (an [`IntoResponse`] that is
/// `Clone`), as a [`Handler`]: the compiler infers it, no one names it.
#[derive(Debug)]
pub enum FromValue {}

/// A value that is its own answer is a handler, as in axum: each request
/// is answered with a clone of it, whatever it asks.
///
/// ```
/// use http::{Request, StatusCode};
/// use pronghorn::{Router, router::post};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .route("/items", post((StatusCode::CREATED, "made")))
///     .get("/", "home")
///     .compile()
///     .unwrap();
/// let request = Request::post("/items").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::CREATED);
/// # }
/// ```
// Not recommended: a closure that is not a handler would be told to be
// called, its answer being one.
#[diagnostic::do_not_recommend]
impl<T, S> Handler<FromValue, S> for T
where
    T: IntoResponse + Clone + Send + Sync + 'static,
{
    // It reads nothing of the request.
    const READS_PARAMS_FIRST: bool = true;

    #[inline]
    fn call(
        &self,
        _: &mut Request<Body>,
        _: RouteContext<'_>,
        _: &mut Context<'_>,
    ) -> Step<Response<Body>, BoxFuture<Response<Body>>> {
        Step::Ready(self.clone().into_response())
    }
}

/// A handler with its marker type, behind `dyn ErasedHandler`.
pub(crate) struct TypedHandler<H, M, S = ByType> {
    handler: H,
    _marker: PhantomData<fn() -> (M, S)>,
}

impl<H, M, S> TypedHandler<H, M, S> {
    pub(crate) fn new(handler: H) -> Self {
        Self {
            handler,
            _marker: PhantomData,
        }
    }
}

impl<H, M, S> ErasedHandler for TypedHandler<H, M, S>
where
    H: Handler<M, S>,
    M: 'static,
    S: 'static,
{
    #[inline]
    fn call(
        &self,
        request: &mut Request<Body>,
        route: RouteContext<'_>,
        cx: &mut Context<'_>,
        response: &mut Option<Response<Body>>,
    ) -> Option<BoxFuture<Response<Body>>> {
        match self.handler.call(request, route, cx) {
            Step::Ready(answer) => {
                *response = Some(answer);
                None
            }
            Step::Pending(mut future) => {
                if !H::POLLS_ITS_FUTURE {
                    if let Poll::Ready(answer) = future.as_mut().poll(cx) {
                        *response = Some(answer);
                        return None;
                    }
                }
                Some(future)
            }
        }
    }

    fn reads_params_first(&self) -> bool {
        H::READS_PARAMS_FIRST
    }

    fn layered(&self) -> bool {
        H::LAYERED
    }
}
