//! A value an outer layer put in the request: [`Extension`], an extractor
//! and a layer ([`AddExtension`]).

use http::{Request, Response, StatusCode};

use super::{
    FromRequestHead, Rejection, RequestContext,
    rejection::{rejection_enum, rejection_variants, set_up_wrong},
};
use crate::body::Body;

/// A value an outer layer put in the request's extensions (with
/// `tower_http::add_extension`, `request.extensions_mut().insert(..)`, or
/// an `Extension` given as a layer, as axum's is), cloned for the handler.
///
/// A request without one answers 500, and the log names the type: the
/// value is missing because the server is set up wrong, not because of
/// anything the client sent (with axum's answers, in axum's words).
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Extension};
/// use tower::ServiceExt;
///
/// #[derive(Clone)]
/// struct User(&'static str);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/me", |Extension(User(name)): Extension<User>| format!("hello {name}"))
///     .compile()
///     .unwrap();
///
/// let mut request = Request::get("/me").body(String::new()).unwrap();
/// request.extensions_mut().insert(User("ada"));
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello ada");
///
/// let request = Request::get("/me").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::INTERNAL_SERVER_ERROR);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extension<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromRequestHead for Extension<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::find(context).map_err(|rejection| set_up_wrong(context.answers, rejection))
    }
}

/// The value, or why there is none, for the handler to answer itself.
// Niche: not among the extractors the compiler suggests.
#[diagnostic::do_not_recommend]
impl<T: Clone + Send + Sync + 'static> FromRequestHead
    for Result<Extension<T>, ExtensionRejection>
{
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Extension::find(context)
            .map_err(|rejection| ExtensionRejection::of(rejection.worded(context.answers))))
    }
}

impl<T: Clone + Send + Sync + 'static> Extension<T> {
    /// The request's value of type `T`, or the rejection of its absence
    /// (logged: a layer is missing).
    fn find(context: &RequestContext<'_>) -> Result<Self, Rejection> {
        match context.extensions().get::<T>() {
            Some(value) => Ok(Extension(value.clone())),
            None => {
                error_limited!(
                    extension = std::any::type_name::<T>(),
                    "pronghorn: a handler asked for a request extension no layer inserted"
                );
                Err(Rejection::new(
                    "Extension",
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error",
                )
                .or_as_axum(format!(
                    "Missing request extension: Extension of type `{}` was not found. \
                     Perhaps you forgot to add it? See `axum::Extension`.",
                    std::any::type_name::<T>()
                )))
            }
        }
    }
}

rejection_variants! {
    /// A request without the extension asked for (500).
    MissingExtension;
}

rejection_enum! {
    /// Why `Extension` refused a request, as axum's `ExtensionRejection`,
    /// for a handler that takes `Result<Extension<T>, ExtensionRejection>`
    /// to answer it itself.
    ExtensionRejection ("`Extension`") {
        /// No layer put a value of the type in the request.
        MissingExtension(MissingExtension),
    } from |rejection| Self::MissingExtension(MissingExtension(rejection))
}

/// An `Extension` is a layer as well, as axum's is: it puts its value in
/// each request's extensions, for the handlers and layers below.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::Extension};
/// use tower::ServiceExt;
///
/// #[derive(Clone)]
/// struct Pool(&'static str);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |Extension(Pool(name)): Extension<Pool>| name)
///     .layer(Extension(Pool("main")))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "main");
/// # }
/// ```
impl<S, T: Clone> tower_layer::Layer<S> for Extension<T> {
    type Service = AddExtension<S, T>;

    fn layer(&self, inner: S) -> AddExtension<S, T> {
        AddExtension {
            inner,
            value: self.0.clone(),
        }
    }
}

/// The service of an [`Extension`] given as a layer.
#[derive(Clone, Debug)]
pub struct AddExtension<S, T> {
    inner: S,
    value: T,
}

impl<S, T, B> tower_service::Service<Request<B>> for AddExtension<S, T>
where
    S: tower_service::Service<Request<B>>,
    T: Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    #[inline]
    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        request.extensions_mut().insert(self.value.clone());
        self.inner.call(request)
    }
}
