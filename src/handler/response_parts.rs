//! [`IntoResponseParts`]: headers, extensions and such set on an answer,
//! composed in tuples before it as axum composes them.

use std::convert::Infallible;

use http::{Extensions, HeaderMap, HeaderName, HeaderValue, Response, StatusCode};

use super::{
    extract::Extension,
    response::{IntoResponse, IntoResponseFailed, Redirect, internal_error},
};
use crate::body::Body;

/// Something that sets parts of a response — headers, extensions — and
/// can go before the answer in a tuple, as axum's `IntoResponseParts`:
/// `(parts…, answer)`, `(StatusCode, parts…, answer)`,
/// `(http::response::Parts, parts…, answer)`,
/// `(Response<()>, parts…, answer)` and `(ForceStatusCode, parts…, answer)`,
/// with up to 16 parts.
///
/// The parts apply in their order, after the answer is built. When a part
/// fails (a header that is not valid), its error is the answer, marked
/// [`IntoResponseFailed`], and no status around it replaces its own; when
/// the answer itself failed, the parts are not applied.
///
/// Implemented for `HeaderMap`, an array of header pairs, [`AppendHeaders`],
/// `Extensions`, [`Extension<T>`], [`IntoResponseFailed`], `()`, `Option`s
/// and tuples of parts, and `TypedHeader` (feature `typed-header`).
///
/// ```
/// use http::{HeaderMap, StatusCode, header};
/// use pronghorn::handler::{IntoResponse, IntoResponseParts, ResponseParts};
///
/// /// A request id, set as a header on whatever it goes before.
/// struct RequestId(&'static str);
///
/// impl IntoResponseParts for RequestId {
///     type Error = std::convert::Infallible;
///
///     fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Self::Error> {
///         parts.headers_mut().insert("x-request-id", self.0.parse().unwrap());
///         Ok(parts)
///     }
/// }
///
/// let response = (StatusCode::CREATED, RequestId("7"), [(header::ETAG, "\"1\"")], "made").into_response();
/// assert_eq!(response.status(), StatusCode::CREATED);
/// assert_eq!(response.headers()["x-request-id"], "7");
/// assert_eq!(response.headers()["etag"], "\"1\"");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot set parts of a response",
    label = "not a response part",
    note = "parts are headers (`HeaderMap`, `[(K, V); N]`, `AppendHeaders`), `Extensions`, `Extension<T>`, and tuples and `Option`s of them; the answer itself goes last in the tuple"
)]
pub trait IntoResponseParts {
    /// What answers instead when the parts cannot be set.
    type Error: IntoResponse;

    /// Sets the parts on `parts`.
    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Self::Error>;
}

/// The response being built, as [`IntoResponseParts`] sees it: its status,
/// headers and extensions (its body is not theirs to change).
#[derive(Debug)]
pub struct ResponseParts {
    response: Response<Body>,
}

impl ResponseParts {
    /// The status.
    pub fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// The status, to change.
    pub fn status_mut(&mut self) -> &mut StatusCode {
        self.response.status_mut()
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        self.response.headers()
    }

    /// The headers, to change.
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        self.response.headers_mut()
    }

    /// The extensions.
    pub fn extensions(&self) -> &Extensions {
        self.response.extensions()
    }

    /// The extensions, to change.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        self.response.extensions_mut()
    }
}

/// Each name's values replace those of the same name.
impl IntoResponseParts for HeaderMap {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        parts.headers_mut().extend(self);
        Ok(parts)
    }
}

/// A header that is not valid answers 500, logged with which of the pairs
/// it is (counted from 0).
impl<K, V, const N: usize> IntoResponseParts for [(K, V); N]
where
    K: TryInto<HeaderName>,
    V: TryInto<HeaderValue>,
{
    type Error = InvalidHeader;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, InvalidHeader> {
        let map = parts.headers_mut();
        for (index, (name, value)) in self.into_iter().enumerate() {
            let invalid = |part| InvalidHeader {
                index,
                count: N,
                part,
            };
            map.insert(
                name.try_into().map_err(|_| invalid("name"))?,
                value.try_into().map_err(|_| invalid("value"))?,
            );
        }
        Ok(parts)
    }
}

/// The error of a header pair that is not a valid header: answers 500
/// ("Internal Server Error") and logs which pair, and whether its name or
/// its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidHeader {
    index: usize,
    count: usize,
    part: &'static str,
}

impl std::fmt::Display for InvalidHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self { index, count, part } = self;
        write!(
            f,
            "the {part} of response header {index} (of {count}, counted from 0) is not valid"
        )
    }
}

impl std::error::Error for InvalidHeader {}

/// Logs the fault, answers 500.
impl IntoResponse for InvalidHeader {
    #[cold]
    fn into_response(self) -> Response<Body> {
        error_limited!("pronghorn: {self}; answering 500");
        internal_error()
    }
}

/// Headers alone, on an empty 200, as axum's: `[(header::LOCATION, "/")]`.
impl<K, V, const N: usize> IntoResponse for [(K, V); N]
where
    K: TryInto<HeaderName>,
    V: TryInto<HeaderValue>,
{
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

/// Headers appended to those of the same name rather than replacing them,
/// as axum's `AppendHeaders`: two `set-cookie` lines, for one.
///
/// ```
/// use http::header::SET_COOKIE;
/// use pronghorn::handler::{AppendHeaders, IntoResponse};
///
/// let response = (AppendHeaders([(SET_COOKIE, "a=1"), (SET_COOKIE, "b=2")]), "hi").into_response();
/// assert_eq!(response.headers().get_all(SET_COOKIE).iter().count(), 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AppendHeaders<I>(pub I);

impl<I, K, V> IntoResponseParts for AppendHeaders<I>
where
    I: IntoIterator<Item = (K, V)>,
    K: TryInto<HeaderName>,
    V: TryInto<HeaderValue>,
{
    type Error = InvalidHeader;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, InvalidHeader> {
        let map = parts.headers_mut();
        let pairs: Vec<(K, V)> = self.0.into_iter().collect();
        let count = pairs.len();
        for (index, (name, value)) in pairs.into_iter().enumerate() {
            let invalid = |part| InvalidHeader { index, count, part };
            map.append(
                name.try_into().map_err(|_| invalid("name"))?,
                value.try_into().map_err(|_| invalid("value"))?,
            );
        }
        Ok(parts)
    }
}

impl<I, K, V> IntoResponse for AppendHeaders<I>
where
    I: IntoIterator<Item = (K, V)>,
    K: TryInto<HeaderName>,
    V: TryInto<HeaderValue>,
{
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

/// Its extensions on an empty 200.
impl IntoResponse for Extensions {
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

impl IntoResponseParts for Extensions {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        parts.extensions_mut().extend(self);
        Ok(parts)
    }
}

/// The value goes in the response's extensions, for a layer outside to
/// read.
impl<T: Clone + Send + Sync + 'static> IntoResponseParts for Extension<T> {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        parts.extensions_mut().insert(self.0);
        Ok(parts)
    }
}

impl<T: Clone + Send + Sync + 'static> IntoResponse for Extension<T> {
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

/// Marks the answer as one that could not be built, so that no status
/// around it replaces its own.
impl IntoResponseParts for IntoResponseFailed {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        parts.extensions_mut().insert(self);
        Ok(parts)
    }
}

impl IntoResponseParts for () {
    type Error = Infallible;

    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        Ok(parts)
    }
}

impl<T: IntoResponseParts> IntoResponseParts for Option<T> {
    type Error = T::Error;

    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, T::Error> {
        match self {
            Some(part) => part.into_response_parts(parts),
            None => Ok(parts),
        }
    }
}

#[cfg(feature = "typed-header")]
impl<T: headers::Header> IntoResponseParts for super::TypedHeader<T> {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        headers::HeaderMapExt::typed_insert(parts.headers_mut(), self.0);
        Ok(parts)
    }
}

#[cfg(feature = "typed-header")]
impl<T: headers::Header> IntoResponse for super::TypedHeader<T> {
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

/// Sets the redirect's status and `location`.
impl IntoResponseParts for Redirect {
    type Error = Response<Body>;

    fn into_response_parts(
        self,
        mut parts: ResponseParts,
    ) -> Result<ResponseParts, Response<Body>> {
        let Ok(location) = HeaderValue::try_from(self.location()) else {
            error_limited!(
                "pronghorn: a redirect's location is not valid header text; answering 500"
            );
            return Err(internal_error());
        };
        *parts.status_mut() = self.status_code();
        parts.headers_mut().insert(http::header::LOCATION, location);
        Ok(parts)
    }
}

/// Sets the status whatever the answer it goes before, even one that
/// could not be built ([`IntoResponseFailed`]), as axum's
/// `ForceStatusCode`.
///
/// ```
/// use http::StatusCode;
/// use pronghorn::handler::{ForceStatusCode, IntoResponse};
///
/// let response = (ForceStatusCode(StatusCode::CREATED), [("bad\nname", "x")], ()).into_response();
/// assert_eq!(response.status(), StatusCode::CREATED);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForceStatusCode(pub StatusCode);

impl IntoResponse for ForceStatusCode {
    fn into_response(self) -> Response<Body> {
        (self, ()).into_response()
    }
}

impl<R: IntoResponse> IntoResponse for (ForceStatusCode, R) {
    fn into_response(self) -> Response<Body> {
        let mut response = self.1.into_response();
        *response.status_mut() = self.0.0;
        response
    }
}

/// An empty `204 No Content`, as axum's `NoContent`.
///
/// ```
/// use http::StatusCode;
/// use pronghorn::handler::{IntoResponse, NoContent};
///
/// assert_eq!(NoContent.into_response().status(), StatusCode::NO_CONTENT);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoContent;

impl IntoResponse for NoContent {
    fn into_response(self) -> Response<Body> {
        StatusCode::NO_CONTENT.into_response()
    }
}

/// Applies `parts` to `response` unless building it failed; a part that
/// fails answers instead, marked [`IntoResponseFailed`]. Tells whether the
/// parts were applied, for a status or template around them to go on.
#[inline]
fn apply<P: IntoResponseParts>(parts: P, response: Response<Body>) -> (Response<Body>, bool) {
    if response.extensions().get::<IntoResponseFailed>().is_some() {
        return (response, false);
    }
    match parts.into_response_parts(ResponseParts { response }) {
        Ok(parts) => (parts.response, true),
        Err(error) => (failed(error), false),
    }
}

#[cold]
fn failed<E: IntoResponse>(error: E) -> Response<Body> {
    let mut response = error.into_response();
    response.extensions_mut().insert(IntoResponseFailed);
    response
}

/// The status, headers and extensions of `template` go on `response`.
fn with_template(template: http::response::Parts, mut response: Response<Body>) -> Response<Body> {
    *response.status_mut() = template.status;
    response.headers_mut().extend(template.headers);
    response.extensions_mut().extend(template.extensions);
    response
}

/// Its status, headers and extensions on an empty body.
impl IntoResponse for http::response::Parts {
    fn into_response(self) -> Response<Body> {
        with_template(self, ().into_response())
    }
}

/// The status, headers and extensions go on `R`'s response, unless
/// building it failed.
impl<R: IntoResponse> IntoResponse for (http::response::Parts, R) {
    fn into_response(self) -> Response<Body> {
        (self.0, (), self.1).into_response()
    }
}

impl<R: IntoResponse> IntoResponse for (Response<()>, R) {
    fn into_response(self) -> Response<Body> {
        (self.0.into_parts().0, (), self.1).into_response()
    }
}

impl<R: IntoResponse> IntoResponse for (R,) {
    #[inline]
    fn into_response(self) -> Response<Body> {
        self.0.into_response()
    }
}

macro_rules! parts_tuples {
    ($($part:ident),+) => {
        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts),+> IntoResponseParts for ($($part,)+) {
            type Error = Response<Body>;

            fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Response<Body>> {
                let ($($part,)+) = self;
                $(let parts = $part.into_response_parts(parts).map_err(failed)?;)+
                Ok(parts)
            }
        }

        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts,)+ R: IntoResponse> IntoResponse for ($($part,)+ R) {
            #[inline]
            fn into_response(self) -> Response<Body> {
                let ($($part,)+ answer) = self;
                apply(($($part,)+), answer.into_response()).0
            }
        }

        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts,)+ R: IntoResponse> IntoResponse for (StatusCode, $($part,)+ R) {
            #[inline]
            fn into_response(self) -> Response<Body> {
                let (status, $($part,)+ answer) = self;
                let (mut response, applied) = apply(($($part,)+), answer.into_response());
                if applied {
                    *response.status_mut() = status;
                }
                response
            }
        }

        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts,)+ R: IntoResponse> IntoResponse for (http::response::Parts, $($part,)+ R) {
            fn into_response(self) -> Response<Body> {
                let (template, $($part,)+ answer) = self;
                match apply(($($part,)+), answer.into_response()) {
                    (response, true) => with_template(template, response),
                    (response, false) => response,
                }
            }
        }

        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts,)+ R: IntoResponse> IntoResponse for (Response<()>, $($part,)+ R) {
            fn into_response(self) -> Response<Body> {
                let (template, $($part,)+ answer) = self;
                (template.into_parts().0, $($part,)+ answer).into_response()
            }
        }

        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts,)+ R: IntoResponse> IntoResponse for (ForceStatusCode, $($part,)+ R) {
            fn into_response(self) -> Response<Body> {
                let (ForceStatusCode(status), $($part,)+ answer) = self;
                let mut response = apply(($($part,)+), answer.into_response()).0;
                *response.status_mut() = status;
                response
            }
        }
    };
}

parts_tuples!(T1);
parts_tuples!(T1, T2);
parts_tuples!(T1, T2, T3);
parts_tuples!(T1, T2, T3, T4);
parts_tuples!(T1, T2, T3, T4, T5);
parts_tuples!(T1, T2, T3, T4, T5, T6);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8, T9);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13);
parts_tuples!(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14);
parts_tuples!(
    T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15
);
parts_tuples!(
    T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15, T16
);
