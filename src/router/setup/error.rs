use std::{error::Error, fmt};

/// A route or hook that [`Router::compile`](crate::Router::compile) refused.
///
/// Every variant names the pattern, or the type of state, it is about.
/// Bad routes are always reported here, when the table is compiled — never
/// as a panic, and never at request time.
///
/// ```
/// use pronghorn::{Router, RouteError};
///
/// let error = Router::new().get("/files/{name", || "").compile().unwrap_err();
/// assert!(matches!(error, RouteError::UnbalancedBrace { at: 7, .. }));
/// assert!(error.to_string().contains("/files/{name"));
///
/// let error = Router::new()
///     .get("/users/{id}", || "one")
///     .get("/users/{id}", || "two")
///     .compile()
///     .unwrap_err();
/// assert!(matches!(error, RouteError::DuplicateRoute { .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteError {
    /// The pattern does not start with `/`.
    MissingLeadingSlash {
        /// The pattern as registered.
        pattern: String,
    },
    /// A `{` without its `}`, or a `}` without its `{` (write `{{` and `}}`
    /// for literal braces).
    UnbalancedBrace {
        /// The pattern as registered.
        pattern: String,
        /// Byte offset of the offending brace.
        at: usize,
    },
    /// `{}` or `{*}`: a parameter needs a name.
    EmptyParameter {
        /// The pattern as registered.
        pattern: String,
    },
    /// A parameter name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    InvalidName {
        /// The pattern as registered.
        pattern: String,
        /// The name as written.
        name: String,
    },
    /// Two parameters with no literal text between them, as in `{a}{b}`:
    /// where one ends and the next begins would be a guess.
    AdjacentParameters {
        /// The pattern as registered.
        pattern: String,
        /// The segment holding them.
        segment: String,
    },
    /// The same parameter name twice in one pattern.
    DuplicateParameter {
        /// The pattern as registered.
        pattern: String,
        /// The repeated name.
        name: String,
    },
    /// A catch-all that shares its segment with other text, as in
    /// `/files/x{*rest}`.
    CatchAllNotAlone {
        /// The pattern as registered.
        pattern: String,
    },
    /// A character no request path holds, so that the route could never
    /// match: `?` (the query string takes no part in matching), `#`, a
    /// space or another ASCII control character (write it percent-encoded,
    /// as in `%20`).
    InvalidCharacter {
        /// The pattern as registered.
        pattern: String,
        /// The character.
        character: char,
        /// Its byte offset.
        at: usize,
    },
    /// A parameter or a second catch-all after a catch-all: only static
    /// segments may follow one.
    AfterCatchAll {
        /// The pattern as registered.
        pattern: String,
        /// The first segment after the catch-all that is not static.
        segment: String,
    },
    /// A service nested with [`Router::nest_service`](crate::Router::nest_service)
    /// at a base holding a catch-all: the service sees the path below its
    /// base, and a catch-all leaves none.
    NestedBelowCatchAll {
        /// The base as given.
        base: String,
    },
    /// A segment written in another router's parameter syntax, `:name` or
    /// `*name`: pronghorn's are `{name}` and `{*name}`. (A static segment
    /// cannot start with `:` or `*` followed by a name.)
    ForeignParameter {
        /// The pattern as registered.
        pattern: String,
        /// The segment as written.
        segment: String,
        /// The segment in pronghorn's syntax.
        suggestion: String,
    },
    /// A handler takes [`State<T>`](crate::handler::State) of a type that no
    /// router gave with [`Router::state`](crate::Router::state).
    MissingState {
        /// The pattern of the handler's route (empty for the fallback).
        pattern: String,
        /// The type's name.
        name: &'static str,
    },
    /// A handler takes [`Path<T>`](crate::handler::Path) with a `T` that
    /// cannot be read from its route's parameters, whatever the path: it
    /// takes another number of them (one value, a tuple), or has a field
    /// that no parameter names. Every request would fail.
    PathParameters {
        /// The pattern of the handler's route (empty for the fallback).
        pattern: String,
        /// The `T` of `Path<T>`, as `std::any::type_name` gives it.
        type_name: &'static str,
        /// What does not fit, as in ``missing field `user_id` ``.
        reason: String,
    },
    /// Two states of one type, given to this router or to routers nested or
    /// merged into it: a handler could not tell which it gets.
    DuplicateState {
        /// The type's name.
        name: &'static str,
    },
    /// More parameters in one pattern than [`MAX_PARAMETERS`](crate::router::MAX_PARAMETERS).
    TooManyParameters {
        /// The pattern as registered.
        pattern: String,
    },
    /// A route for the same method and the same pattern was registered
    /// before (patterns that differ only in parameter names are the same).
    DuplicateRoute {
        /// The method, or `*` for a route on any method.
        method: String,
        /// The pattern registered first.
        first: String,
        /// The pattern registered again.
        second: String,
    },
    /// Two fallbacks for the paths below one base: a router and one
    /// [merged](crate::Router::merge) into it, or two routers
    /// [nested](crate::Router::nest) at one base, each with its own.
    DuplicateFallback {
        /// The base, `/` for the root.
        base: String,
    },
    /// Two answers for 405 ([`Router::method_not_allowed`](crate::Router::method_not_allowed)):
    /// set twice, or by two routers nested or merged together (or by two
    /// modules of a [`Reloadable`](crate::router::Reloadable)).
    DuplicateMethodNotAllowed,
    /// A fallback's handler takes [`MatchedPath`](crate::handler::MatchedPath):
    /// no route matches the paths a fallback answers (`Option<MatchedPath>`
    /// is `None` there).
    FallbackMatchedPath {
        /// The base the fallback answers below, `/` for the root.
        base: String,
    },
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingLeadingSlash { pattern } => {
                write!(f, "route `{pattern}`: a pattern must start with `/`")
            }
            Self::UnbalancedBrace { pattern, at } => write!(
                f,
                "route `{pattern}`: unbalanced brace at byte {at} (write `{{{{` or `}}}}` for a literal brace)"
            ),
            Self::EmptyParameter { pattern } => {
                write!(
                    f,
                    "route `{pattern}`: a parameter needs a name, as in `{{id}}`"
                )
            }
            Self::InvalidName { pattern, name } => write!(
                f,
                "route `{pattern}`: `{name}` is not a valid parameter name (letters, digits and `_`, not starting with a digit)"
            ),
            Self::AdjacentParameters { pattern, segment } => write!(
                f,
                "route `{pattern}`: parameters in segment `{segment}` need literal text between them"
            ),
            Self::DuplicateParameter { pattern, name } => {
                write!(f, "route `{pattern}`: parameter `{name}` is named twice")
            }
            Self::CatchAllNotAlone { pattern } => write!(
                f,
                "route `{pattern}`: a catch-all `{{*name}}` must fill its whole segment"
            ),
            Self::InvalidCharacter {
                pattern,
                character: '?',
                ..
            } => write!(
                f,
                "route `{pattern}`: a path holds no `?`, the query string takes no part in matching (read it with `Query`)"
            ),
            Self::InvalidCharacter {
                pattern,
                character: '#',
                ..
            } => write!(
                f,
                "route `{pattern}`: a path holds no `#`, clients do not send the fragment"
            ),
            Self::InvalidCharacter {
                pattern,
                character,
                at,
            } => write!(
                f,
                "route `{pattern}`: a path holds no {character:?} (byte {at}); write it percent-encoded, as `%{:02X}`",
                u32::from(*character)
            ),
            Self::AfterCatchAll { pattern, segment } => write!(
                f,
                "route `{pattern}`: only static segments may follow a catch-all, found `{segment}`"
            ),
            Self::NestedBelowCatchAll { base } => write!(
                f,
                "nested service at `{base}`: a catch-all leaves no path below the base for the service (mount it with `route_service`)"
            ),
            Self::ForeignParameter {
                pattern,
                segment,
                suggestion,
            } => write!(
                f,
                "route `{pattern}`: `{segment}` is not a parameter here; write `{suggestion}`"
            ),
            Self::MissingState { pattern, name } => write!(
                f,
                "{}: its handler takes `State<{name}>`, and no router holds a `{name}` (give one with `Router::state`)",
                Subject(pattern),
                name = ShortType(name),
            ),
            Self::PathParameters {
                pattern,
                type_name,
                reason,
            } => write!(
                f,
                "{}: its handler takes `Path<{type_name}>`, which cannot read its route's parameters: {reason} (a tuple takes them in order, a struct by name, `RouteParams` any)",
                Subject(pattern),
                type_name = ShortType(type_name),
            ),
            Self::DuplicateState { name } => write!(
                f,
                "two states of type `{name}`: give each a type of its own (a newtype), so that handlers can tell them apart",
                name = ShortType(name),
            ),
            Self::TooManyParameters { pattern } => write!(
                f,
                "route `{pattern}`: more than {} parameters",
                crate::params::MAX_PARAMETERS
            ),
            Self::DuplicateFallback { base } => write!(
                f,
                "two fallbacks for the paths below `{base}`: keep one (a router nested or merged there has one of its own)"
            ),
            Self::DuplicateMethodNotAllowed => write!(
                f,
                "two answers for 405 (`method_not_allowed`): keep one (a router nested or merged has one of its own)"
            ),
            Self::FallbackMatchedPath { base } => write!(
                f,
                "the fallback below `{base}`: its handler takes `MatchedPath`, and no route matches the paths it answers (take `Option<MatchedPath>`, which is `None` there)"
            ),
            Self::DuplicateRoute {
                method,
                first,
                second,
            } => {
                if first == second {
                    write!(f, "route `{method} {second}` is registered twice")
                } else {
                    write!(
                        f,
                        "route `{method} {second}` conflicts with `{method} {first}`, registered before: they match the same paths"
                    )
                }
            }
        }
    }
}

impl Error for RouteError {}

/// What an error about a handler is about: its route, or the fallback
/// (whose pattern is empty).
struct Subject<'a>(&'a str);

impl fmt::Display for Subject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            "" => f.write_str("the fallback"),
            pattern => write!(f, "route `{pattern}`"),
        }
    }
}

/// A type's name as `std::any::type_name` gives it, written without the
/// paths of its types: `Arc<RwLock<Db>>` for
/// `alloc::sync::Arc<std::sync::poison::rwlock::RwLock<app::Db>>`.
struct ShortType<'a>(&'a str);

impl fmt::Display for ShortType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut short = String::with_capacity(self.0.len());
        // Where the path that is being written began.
        let mut path = 0;
        let mut rest = self.0;
        while let Some(c) = rest.chars().next() {
            if let Some(after) = rest.strip_prefix("::") {
                short.truncate(path);
                rest = after;
                continue;
            }
            short.push(c);
            if !(c.is_alphanumeric() || c == '_') {
                path = short.len();
            }
            rest = &rest[c.len_utf8()..];
        }
        f.write_str(&short)
    }
}
