//! The query string: [`Query`], and [`QueryRejection`], why it refused.

use std::borrow::Cow;

use http::{Response, Uri};

use super::{
    FromRequestHead, Rejection, RequestContext,
    de::{self, optional},
    rejection::{bad_request, rejection_enum, rejection_variants},
};
use crate::body::Body;

/// The query string, deserialized with serde from `application/x-www-form-urlencoded`
/// pairs (`+` is a space): a struct or map by key, or `Vec<(String, String)>`
/// for every pair in order, repeated keys included (a struct's field given
/// twice answers 400, and a map keeps the last value). A missing query is
/// an empty one. Escapes are read as `form_urlencoded` (and axum) reads
/// them: a malformed one (`?next=%ZZ`) stays as text, bytes that are not
/// UTF-8 become U+FFFD. A value that does not parse answers 400 naming the
/// key. `Option<Query<T>>` is `None` when the query lacks a field `T`
/// needs, and still answers 400 for a malformed value.
///
/// ```
/// use pronghorn::{Router, handler::Query};
///
/// #[derive(serde::Deserialize)]
/// struct Page {
///     page: u32,
///     per_page: Option<u32>,
/// }
///
/// let router = Router::new()
///     .get("/items", |Query(page): Query<Page>| format!("{} {:?}", page.page, page.per_page))
///     .compile()
///     .unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Query<T>(pub T);

/// Decodes one form-encoded component as `form_urlencoded` (and so axum)
/// reads it: `+` is a space, then lenient percent-decoding (a malformed
/// escape stays as text, bytes that are not UTF-8 become U+FFFD).
fn form_decode(raw: &str) -> Result<Cow<'_, str>, de::Error> {
    let spaced = if raw.contains('+') {
        Cow::Owned(raw.replace('+', " "))
    } else {
        Cow::Borrowed(raw)
    };
    Ok(match &spaced {
        Cow::Borrowed(text) => crate::params::percent_decode_lenient(text),
        Cow::Owned(text) => Cow::Owned(crate::params::percent_decode_lenient(text).into_owned()),
    })
}

impl<T: serde::de::DeserializeOwned> FromRequestHead for Query<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::deserialize(context).map_err(|error| context.reject(Self::rejection(error)))
    }

    /// `None` when the query string lacks what `T` needs, or has keys `T`
    /// refuses; 400 when a value does not parse.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        optional(context, Self::deserialize(context), Self::rejection)
    }
}

/// The query, or why it does not read as `T`, for the handler to answer
/// itself.
impl<T: serde::de::DeserializeOwned> FromRequestHead for Result<Query<T>, QueryRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Query::deserialize(context).map_err(|error| {
            QueryRejection::of(Query::<T>::rejection(error).worded(context.answers))
        }))
    }
}

impl<T: serde::de::DeserializeOwned> Query<T> {
    fn deserialize(context: &RequestContext<'_>) -> Result<Self, de::Error> {
        from_pairs(context.uri().query().unwrap_or("")).map(Query)
    }

    /// The query of `uri`, outside a router, as axum's
    /// `Query::try_from_uri`: what the extractor would read of a request
    /// with that URI.
    ///
    /// ```
    /// use pronghorn::handler::Query;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Page { page: u32 }
    ///
    /// let uri = "/items?page=2".parse().unwrap();
    /// assert_eq!(Query::<Page>::try_from_uri(&uri).unwrap().0.page, 2);
    /// let bad = "/items?page=x".parse().unwrap();
    /// assert_eq!(Query::<Page>::try_from_uri(&bad).unwrap_err().status(), http::StatusCode::BAD_REQUEST);
    /// ```
    pub fn try_from_uri(uri: &Uri) -> Result<Self, QueryRejection> {
        from_pairs(uri.query().unwrap_or(""))
            .map(Query)
            .map_err(|error| QueryRejection::of(Self::rejection(error)))
    }

    fn rejection(error: de::Error) -> Rejection {
        let axum = format!("Failed to deserialize query string: {}", error.with_path());
        bad_request("Query", format!("invalid query string: {error}")).or_as_axum(axum)
    }
}

/// `T` from `key=value&…` text, as a query string or a form writes it.
pub(super) fn from_pairs<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, de::Error> {
    let pairs = || text.split('&').filter(|pair| !pair.is_empty());
    let decoded = pairs().map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        Ok((form_decode(key)?, form_decode(value)?))
    });
    T::deserialize(de::Pairs::new(decoded, pairs().count()))
}

/// The query string as it came (still percent-encoded), `None` for a
/// request without one, as axum's `RawQuery`: for a handler that reads it
/// itself. It never refuses a request.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::RawQuery};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/", |RawQuery(query): RawQuery| query.unwrap_or_else(|| "none".to_owned()))
///     .compile()
///     .unwrap();
/// let response = router.clone().oneshot(Request::get("/?a=1&b=%20").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "a=1&b=%20");
/// let response = router.oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "none");
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawQuery(pub Option<String>);

// Niche: not among the extractors the compiler suggests.
#[diagnostic::do_not_recommend]
impl FromRequestHead for RawQuery {
    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(RawQuery(context.uri().query().map(str::to_owned)))
    }
}

rejection_variants! {
    /// A query string that does not read as the `Query`'s type (400).
    FailedToDeserializeQueryString;
}

rejection_enum! {
    /// Why `Query` refused a request, as axum's `QueryRejection`, for a
    /// handler that takes `Result<Query<T>, QueryRejection>` to answer it
    /// itself.
    QueryRejection ("`Query`") {
        /// The query string does not read as the type.
        FailedToDeserializeQueryString(FailedToDeserializeQueryString),
    } from |rejection| Self::FailedToDeserializeQueryString(FailedToDeserializeQueryString(rejection))
}
