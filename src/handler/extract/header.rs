//! One header: [`Header`] of a [`NamedHeader`] (the [`headers`] named
//! here), and [`HeaderRejection`], why it refused.

use std::marker::PhantomData;

use http::{HeaderName, HeaderValue, Response};

use super::{
    FromRequestHead, RequestContext,
    rejection::{bad_request, named_rejections},
};
use crate::body::Body;

/// A header name known at compile time, for [`Header`].
///
/// ```
/// use http::HeaderName;
/// use pronghorn::handler::{Header, NamedHeader};
///
/// struct RequestId;
///
/// impl NamedHeader for RequestId {
///     const NAME: HeaderName = HeaderName::from_static("x-request-id");
/// }
///
/// fn handler(Header(id, _): Header<RequestId>) -> String {
///     format!("request {}", id.to_str().unwrap_or("?"))
/// }
/// # let _ = handler;
/// ```
pub trait NamedHeader {
    /// The header's name.
    const NAME: HeaderName;
}

/// The value of one request header; a missing header answers 400 naming
/// it. Take `Option<Header<N>>` where it may be absent. Names of common
/// headers are in [`headers`]; [`NamedHeader`] names one of your own.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{Header, headers::{Authorization, UserAgent}}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |Header(token, _): Header<Authorization>, agent: Option<Header<UserAgent>>| {
///         let agent = agent.as_ref().and_then(|Header(value, _)| value.to_str().ok());
///         format!("{} from {}", token.len(), agent.unwrap_or("someone"))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/").header("authorization", "secret").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "6 from someone");
///
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.status(), StatusCode::BAD_REQUEST);
/// let text = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(text, "missing request header `authorization`");
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Header<N>(pub HeaderValue, pub PhantomData<N>);

impl<N: NamedHeader> FromRequestHead for Header<N> {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::find(context).map_err(|rejection| context.reject(rejection.0))
    }
}

/// The header, or the rejection of a request without it, for the handler
/// to answer itself.
impl<N: NamedHeader> FromRequestHead for Result<Header<N>, HeaderRejection> {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Header::find(context).map_err(|HeaderRejection(rejection)| {
            HeaderRejection(rejection.worded(context.answers))
        }))
    }
}

impl<N: NamedHeader> Header<N> {
    fn find(context: &RequestContext<'_>) -> Result<Self, HeaderRejection> {
        match context.headers().get(N::NAME) {
            Some(value) => Ok(Header(value.clone(), PhantomData)),
            None => Err(HeaderRejection(
                bad_request("Header", format!("missing request header `{}`", N::NAME))
                    .or_as_axum(format!("Header of type `{}` was missing", N::NAME)),
            )),
        }
    }
}

/// Names of common headers, for [`Header`].
pub mod headers {
    use http::{HeaderName, header};

    use super::NamedHeader;

    macro_rules! named {
        ($($(#[$doc:meta])* $ty:ident => $name:expr),*) => {$(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;

            impl NamedHeader for $ty {
                const NAME: HeaderName = $name;
            }
        )*};
    }

    named! {
        /// `accept`
        Accept => header::ACCEPT,
        /// `authorization`
        Authorization => header::AUTHORIZATION,
        /// `content-type`
        ContentType => header::CONTENT_TYPE,
        /// `cookie`
        Cookie => header::COOKIE,
        /// `host`
        Host => header::HOST,
        /// `origin`
        Origin => header::ORIGIN,
        /// `user-agent`
        UserAgent => header::USER_AGENT
    }
}

named_rejections! {
    HeaderRejection: "`Header`";
}
