//! The route's parameters: [`Path`], deserialized as a type, and
//! [`RouteParams`], as they are; and [`PathRejection`], why `Path` refused.

// A rejection is the response that answers the request: see `mod.rs`.
#![expect(
    clippy::result_large_err,
    reason = "a rejection is the response that answers the request: boxing it would allocate on every rejection"
)]

use std::{borrow::Cow, fmt};

use http::{Response, StatusCode};

use super::{
    FromRequestHead, Needs, PathNeeds, Rejection, RequestContext,
    de::{self, optional},
    rejection::{Fault, bad_request, rejection_enum, rejection_variants},
};
use crate::{
    body::Body,
    handler::{Answers, IntoResponse},
    params::{DecodeError, Params},
};

/// Route parameters by name, decoded and owned. Allocates; prefer
/// [`Path`] for typed values. A value that does not decode (`%FF`, not
/// UTF-8) answers 400 naming the parameter.
///
/// ```
/// use http::{Request, StatusCode};
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::RouteParams};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/{owner}/{repo}", |params: RouteParams| {
///         format!("{} by {}", params.get("repo").unwrap_or("?"), params.get("owner").unwrap_or("?"))
///     })
///     .compile()
///     .unwrap();
///
/// let request = Request::get("/ada/my%20engine").body(String::new()).unwrap();
/// let response = router.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "my engine by ada");
///
/// let request = Request::get("/ada/%FF").body(String::new()).unwrap();
/// assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::BAD_REQUEST);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteParams(pub Vec<(String, String)>);

impl RouteParams {
    /// The decoded value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl FromRequestHead for RouteParams {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        decode_each(&context.params)
            .map(|decoded| match decoded {
                Ok((name, value)) => Ok((name.to_owned(), value.into_owned())),
                Err((name, _, error)) => Err(context.reject(bad_request(
                    "RouteParams",
                    format!("route parameter `{name}`: {error}"),
                ))),
            })
            .collect::<Result<_, _>>()
            .map(RouteParams)
    }
}

/// The route's parameters, by name in the pattern's order, each
/// percent-decoded, as axum's `RawPathParams`: for a handler (or a layer)
/// that reads parameters whatever the route. A value that is not UTF-8
/// once decoded answers 400.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::RawPathParams};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/users/{user}/teams/{team}", |params: RawPathParams| {
///         params.iter().map(|(key, value)| format!("{key}={value}")).collect::<Vec<_>>().join(" ")
///     })
///     .compile()
///     .unwrap();
/// let request = Request::get("/users/ada%20l/teams/7").body(String::new()).unwrap();
/// let response = router.oneshot(request).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "user=ada l team=7");
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawPathParams(Vec<(Box<str>, String)>);

impl RawPathParams {
    /// The parameters, as `(name, value)` pairs.
    pub fn iter(&self) -> RawPathParamsIter<'_> {
        RawPathParamsIter(self.0.iter())
    }

    /// The parameters of the route `context` is for.
    fn of(context: &RequestContext<'_>) -> Result<Self, RawPathParamsRejection> {
        decode_each(&context.params)
            .map(|decoded| match decoded {
                Ok((name, value)) => Ok((Box::from(name), value.into_owned())),
                Err((name, _, _)) => Err(RawPathParamsRejection::InvalidUtf8InPathParam(
                    InvalidUtf8InPathParam(
                        bad_request(
                            "RawPathParams",
                            format!("route parameter `{name}` is not UTF-8 once decoded"),
                        )
                        .or_as_axum(format!("Invalid UTF-8 in `{name}`"))
                        .worded(context.answers),
                    ),
                )),
            })
            .collect::<Result<_, _>>()
            .map(RawPathParams)
    }
}

/// Each of `params`, percent-decoded, in the pattern's order; one that
/// does not decode as its name, its raw value and why.
fn decode_each<'p, 'a: 'p>(
    params: &'p Params<'a>,
) -> impl Iterator<Item = Result<(&'a str, Cow<'a, str>), (&'a str, &'a str, DecodeError)>> + 'p {
    params
        .iter_raw()
        .map(|(name, raw)| match crate::params::decode(raw) {
            Ok(value) => Ok((name, value)),
            Err(error) => Err((name, raw, error)),
        })
}

impl<'a> IntoIterator for &'a RawPathParams {
    type Item = (&'a str, &'a str);
    type IntoIter = RawPathParamsIter<'a>;

    fn into_iter(self) -> RawPathParamsIter<'a> {
        self.iter()
    }
}

/// The iterator of [`RawPathParams::iter`]: `(name, value)` pairs.
#[derive(Debug)]
pub struct RawPathParamsIter<'a>(std::slice::Iter<'a, (Box<str>, String)>);

impl<'a> Iterator for RawPathParamsIter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(name, value)| (&**name, value.as_str()))
    }
}

// Niche: not among the extractors the compiler suggests.
#[diagnostic::do_not_recommend]
impl FromRequestHead for RawPathParams {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::of(context).map_err(|rejection| context.reject(rejection.into()))
    }
}

/// The parameters, or why they did not decode, for the handler to answer
/// itself.
#[diagnostic::do_not_recommend]
impl FromRequestHead for Result<RawPathParams, RawPathParamsRejection> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(RawPathParams::of(context))
    }
}

rejection_variants! {
    /// A route parameter that is not UTF-8 once percent-decoded (400).
    InvalidUtf8InPathParam;
}

rejection_enum! {
    /// Why `RawPathParams` refused a request, as axum's
    /// `RawPathParamsRejection`, for a handler that takes
    /// `Result<RawPathParams, RawPathParamsRejection>` to answer it itself.
    RawPathParamsRejection ("`RawPathParams`") {
        /// A value did not decode.
        InvalidUtf8InPathParam(InvalidUtf8InPathParam),
        /// The request was not routed (as axum's; pronghorn hands every
        /// route's handler its parameters, none for a route without any).
        MissingPathParams(MissingPathParams),
    }
}

/// Typed route parameters, deserialized with serde: a struct or map by
/// name, a tuple in the order of the pattern, `Vec<(String, String)>` for
/// names and values, or one value for a pattern with one parameter. Values
/// are percent-decoded (borrowed when nothing is escaped); one that does
/// not decode or parse answers 400 naming the parameter. A type that cannot
/// read its route's parameters whatever the path (a tuple of another
/// length, a struct field no parameter names) is refused by
/// [`Router::compile`](crate::Router::compile), naming the route.
///
/// ```
/// use pronghorn::{Router, handler::Path};
///
/// #[derive(serde::Deserialize)]
/// struct File {
///     name: String,
///     ext: String,
/// }
///
/// let router = Router::new()
///     .get("/users/{id}", |Path(id): Path<u64>| format!("user {id}"))
///     .get("/posts/{user}/{post}", |Path((user, post)): Path<(u64, u32)>| format!("{user}/{post}"))
///     .get("/files/{name}.{ext}", |Path(file): Path<File>| format!("{} {}", file.name, file.ext))
///     .compile()
///     .unwrap();
///
/// // `/docs/{name}` names no `ext`: every request would fail.
/// let refused = Router::new().get("/docs/{name}", |Path(file): Path<File>| file.name).compile();
/// assert!(refused.unwrap_err().to_string().contains("missing field `ext`"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Path<T>(pub T);

impl<T: serde::de::DeserializeOwned> FromRequestHead for Path<T> {
    fn needs(needs: &mut Needs) {
        needs.path = Some(PathNeeds {
            type_name: std::any::type_name::<T>(),
            misfit: de::misfit::<T>,
        });
    }

    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Self::deserialize(context.params)
            .map_err(|error| context.reject(Self::rejection(error).into()))
    }

    /// `None` when the route's parameters do not fit `T` (a route without
    /// them); 400 when a value does not decode or parse.
    fn from_head_optional(context: &RequestContext<'_>) -> Result<Option<Self>, Response<Body>> {
        optional(context, Self::deserialize(context.params), |e| {
            Self::rejection(e).into()
        })
    }
}

/// The route's parameters, or why they do not read as `T`, for the handler
/// to answer itself.
impl<T: serde::de::DeserializeOwned> FromRequestHead for Result<Path<T>, PathRejection> {
    fn needs(needs: &mut Needs) {
        Path::<T>::needs(needs);
    }

    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        Ok(Path::deserialize(context.params)
            .map_err(|error| Path::<T>::rejection(error).worded(context.answers)))
    }
}

impl<T: serde::de::DeserializeOwned> Path<T> {
    /// The parameters read as `T`, each value a string borrowed by what
    /// reads it, as axum hands them: the path's own text where it needed
    /// no decoding, else its decoded copy.
    fn deserialize(params: Params<'_>) -> Result<Self, de::Error> {
        let count = params.len();
        if !params.iter_raw().any(|(_, raw)| raw.contains('%')) {
            let pairs = params
                .iter_raw()
                .map(|(name, raw)| Ok((Cow::Borrowed(name), Cow::Borrowed(raw))));
            return T::deserialize(de::Pairs::of_path(pairs, count)).map(Path);
        }
        let decoded = decode_each(&params).collect::<Result<Vec<_>, _>>();
        let decoded = decoded.map_err(|(name, raw, error)| {
            de::Error::failed(de::Failed::not_utf8(
                name.to_owned(),
                raw.to_owned(),
                error.to_string(),
            ))
        })?;
        let pairs = (decoded.iter())
            .map(|(name, value)| Ok((Cow::Borrowed(*name), Cow::Borrowed(value.as_ref()))));
        T::deserialize(de::Pairs::of_path(pairs, count)).map(Path)
    }

    fn rejection(error: de::Error) -> PathRejection {
        let kind = match error.failure() {
            Some(failed) if failed.is_not_utf8() => PathErrorKind::InvalidUtf8InPathParam {
                key: failed.key().to_owned(),
            },
            Some(failed) => match (failed.expected(), failed.at()) {
                (Some(expected_type), de::At::Single) => PathErrorKind::ParseError {
                    value: failed.value().to_owned(),
                    expected_type,
                },
                (Some(expected_type), de::At::Index(index)) => PathErrorKind::ParseErrorAtIndex {
                    index,
                    value: failed.value().to_owned(),
                    expected_type,
                },
                (Some(expected_type), de::At::Key) => PathErrorKind::ParseErrorAtKey {
                    key: failed.key().to_owned(),
                    value: failed.value().to_owned(),
                    expected_type,
                },
                (None, _) => PathErrorKind::DeserializeError {
                    key: failed.key().to_owned(),
                    value: failed.value().to_owned(),
                    message: failed.detail().to_owned(),
                },
            },
            None => PathErrorKind::Message(error.message().to_owned()),
        };
        let rejection = bad_request("Path", format!("invalid route parameters: {error}"))
            .or_as_axum(format!("Invalid URL: {kind}"));
        PathRejection::FailedToDeserializePathParams(FailedToDeserializePathParams::new(
            rejection, kind,
        ))
    }
}

rejection_enum! {
    /// Why `Path` refused a request: a [`Rejection`] (400), for a handler that
    /// takes `Result<Path<T>, PathRejection>` to answer it itself, and the
    /// [kind](PathErrorKind) of fault: which parameter, with which value,
    /// did not read as which type.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use http_body_util::BodyExt;
    /// use pronghorn::{Router, handler::{Path, PathErrorKind, PathRejection}};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let router = Router::new()
    ///     .get("/users/{id}", |id: Result<Path<u32>, PathRejection>| match id {
    ///         Ok(Path(id)) => format!("user {id}"),
    ///         Err(rejection) => match rejection.kind() {
    ///             PathErrorKind::ParseError { value, expected_type } => {
    ///                 format!("`{value}` is no {expected_type}")
    ///             }
    ///             other => other.to_string(),
    ///         },
    ///     })
    ///     .compile()
    ///     .unwrap();
    /// let response = router.oneshot(Request::get("/users/ada").body(String::new()).unwrap()).await.unwrap();
    /// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "`ada` is no u32");
    /// # }
    /// ```
    PathRejection ("`Path`") {
        /// The parameters do not read as the type.
        FailedToDeserializePathParams(FailedToDeserializePathParams),
        /// The route has no parameters to read.
        MissingPathParams(MissingPathParams),
    }
}

/// Parameters that do not read as the `Path`'s type (400), and which
/// [kind](PathErrorKind) of fault it is.
#[derive(Clone, Debug)]
pub struct FailedToDeserializePathParams {
    rejection: Rejection,
    kind: PathErrorKind,
}

/// A `Path` on a route without parameters (500), as axum's; pronghorn
/// refuses such a route when it compiles, so only a `Path` read outside
/// a route meets it.
#[derive(Clone, Debug)]
pub struct MissingPathParams {
    rejection: Rejection,
    kind: PathErrorKind,
}

impl FailedToDeserializePathParams {
    /// The rejection of a fault of `kind`.
    pub(crate) fn new(rejection: Rejection, kind: PathErrorKind) -> Self {
        Self { rejection, kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &PathErrorKind {
        &self.kind
    }

    /// What was wrong, owned.
    pub fn into_kind(self) -> PathErrorKind {
        self.kind
    }
}

impl PathRejection {
    /// What was wrong, for a message of your own.
    pub fn kind(&self) -> &PathErrorKind {
        match self {
            Self::FailedToDeserializePathParams(inner) => &inner.kind,
            Self::MissingPathParams(inner) => &inner.kind,
        }
    }

    /// The same, worded as a router answering by `answers` words it.
    pub(crate) fn worded(self, answers: Answers) -> Self {
        match self {
            Self::FailedToDeserializePathParams(inner) => {
                Self::FailedToDeserializePathParams(FailedToDeserializePathParams {
                    rejection: inner.rejection.worded(answers),
                    ..inner
                })
            }
            Self::MissingPathParams(inner) => Self::MissingPathParams(MissingPathParams {
                rejection: inner.rejection.worded(answers),
                ..inner
            }),
        }
    }
}

macro_rules! path_variants {
    ($($name:ident),*) => {$(
        impl Fault for $name {
            fn rejection(&self) -> &Rejection {
                &self.rejection
            }

            fn into_rejection(self) -> Rejection {
                self.rejection
            }
        }

        impl $name {
            /// The status it answers.
            pub fn status(&self) -> StatusCode {
                self.rejection.status()
            }

            /// What it tells the client.
            pub fn body_text(&self) -> String {
                self.rejection.body_text()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.rejection.fmt(f)
            }
        }

        impl std::error::Error for $name {}

        impl IntoResponse for $name {
            fn into_response(self) -> Response<Body> {
                self.rejection.into_response()
            }
        }
    )*};
}

path_variants!(FailedToDeserializePathParams, MissingPathParams);

/// What kept a route's parameters from reading as a `Path`'s type, as
/// axum's `path::ErrorKind` tells it (its `Display` is axum's wording).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathErrorKind {
    /// The value of parameter `key` does not parse as `expected_type`
    /// (a field of a struct or map).
    ParseErrorAtKey {
        /// The parameter.
        key: String,
        /// Its value, percent-decoded.
        value: String,
        /// The type it was read as.
        expected_type: &'static str,
    },
    /// The value at `index` does not parse as `expected_type` (an element
    /// of a tuple or sequence).
    ParseErrorAtIndex {
        /// Its place among the parameters.
        index: usize,
        /// Its value, percent-decoded.
        value: String,
        /// The type it was read as.
        expected_type: &'static str,
    },
    /// The route's one value does not parse as `expected_type`.
    ParseError {
        /// The value, percent-decoded.
        value: String,
        /// The type it was read as.
        expected_type: &'static str,
    },
    /// The value of parameter `key` is not UTF-8 once percent-decoded.
    InvalidUtf8InPathParam {
        /// The parameter.
        key: String,
    },
    /// The value of parameter `key` was refused by its type's own
    /// deserializer (an enum's unknown variant, a validating newtype).
    DeserializeError {
        /// The parameter.
        key: String,
        /// Its value, percent-decoded.
        value: String,
        /// Why its type refused it.
        message: String,
    },
    /// Anything else.
    Message(String),
}

impl fmt::Display for PathErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathErrorKind::ParseErrorAtKey {
                key,
                value,
                expected_type,
            } => write!(
                f,
                "Cannot parse `{key}` with value `{value}` to a `{expected_type}`"
            ),
            PathErrorKind::ParseErrorAtIndex {
                index,
                value,
                expected_type,
            } => write!(
                f,
                "Cannot parse value at index {index} with value `{value}` to a `{expected_type}`"
            ),
            PathErrorKind::ParseError {
                value,
                expected_type,
            } => write!(f, "Cannot parse `{value}` to a `{expected_type}`"),
            PathErrorKind::InvalidUtf8InPathParam { key } => write!(f, "Invalid UTF-8 in `{key}`"),
            PathErrorKind::DeserializeError {
                key,
                value,
                message,
            } => write!(f, "Cannot parse `{key}` with value `{value}`: {message}"),
            PathErrorKind::Message(message) => f.write_str(message),
        }
    }
}
