//! Parsing a route pattern into segments.

use super::error::RouteError;
use crate::{
    params::MAX_PARAMETERS,
    router::request::pattern::{Part, Pattern, Segment},
};

impl Pattern {
    pub(crate) fn parse(source: &str) -> Result<Self, RouteError> {
        let error_pattern = || source.to_owned();
        if !source.starts_with('/') {
            return Err(RouteError::MissingLeadingSlash {
                pattern: error_pattern(),
            });
        }
        // What no request path holds: such a route would never match.
        let invalid = |c: char| matches!(c, '?' | '#' | ' ') || c.is_ascii_control();
        if let Some((at, character)) = source.char_indices().find(|&(_, c)| invalid(c)) {
            return Err(RouteError::InvalidCharacter {
                pattern: error_pattern(),
                character,
                at,
            });
        }
        let mut segments = Vec::new();
        let mut names: Vec<Box<str>> = Vec::new();
        let mut offset = 0;
        for raw in source.split('/') {
            let start = offset;
            offset += raw.len() + 1;
            if raw.is_empty() {
                continue;
            }
            if segments.contains(&Segment::CatchAll) && !is_static(raw) {
                return Err(RouteError::AfterCatchAll {
                    pattern: error_pattern(),
                    segment: raw.to_owned(),
                });
            }
            if let Some(suggestion) = foreign_parameter(raw) {
                return Err(RouteError::ForeignParameter {
                    pattern: error_pattern(),
                    segment: raw.to_owned(),
                    suggestion,
                });
            }
            let segment = parse_segment(source, raw, start, &mut names)?;
            segments.push(segment);
        }
        if names.len() > MAX_PARAMETERS {
            return Err(RouteError::TooManyParameters {
                pattern: error_pattern(),
            });
        }
        Ok(Self::new(source, segments, names))
    }
}

/// Whether a raw pattern segment is static (its braces all doubled).
fn is_static(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'}' if bytes.get(i + 1) == Some(&bytes[i]) => i += 2,
            b'{' | b'}' => return false,
            _ => i += 1,
        }
    }
    true
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The segment in pronghorn's syntax, if `raw` is a parameter in the
/// syntax of routers that write `:name` and `*name`.
fn foreign_parameter(raw: &str) -> Option<String> {
    let (sigil, name) = raw.split_at_checked(1)?;
    let starts_name = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let is_name = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    match sigil {
        ":" if starts_name && is_name => Some(format!("{{{name}}}")),
        "*" if starts_name && is_name => Some(format!("{{*{name}}}")),
        _ => None,
    }
}

/// The parameter whose `{` is at `i` in the segment `raw` (at `start` in
/// `pattern`): whether it is a catch-all, its name, checked against the
/// `names` before it, and where the segment goes on after its `}`.
fn parameter<'a>(
    pattern: &str,
    raw: &'a str,
    i: usize,
    start: usize,
    names: &[Box<str>],
) -> Result<(bool, &'a str, usize), RouteError> {
    let Some(length) = raw[i + 1..].find('}') else {
        return Err(RouteError::UnbalancedBrace {
            pattern: pattern.to_owned(),
            at: start + i,
        });
    };
    let inside = &raw[i + 1..i + 1 + length];
    let (is_catch_all, name) = match inside.strip_prefix('*') {
        Some(name) => (true, name),
        None => (false, inside),
    };
    if name.is_empty() {
        return Err(RouteError::EmptyParameter {
            pattern: pattern.to_owned(),
        });
    }
    if !valid_name(name) {
        return Err(RouteError::InvalidName {
            pattern: pattern.to_owned(),
            name: name.to_owned(),
        });
    }
    if names.iter().any(|known| **known == *name) {
        return Err(RouteError::DuplicateParameter {
            pattern: pattern.to_owned(),
            name: name.to_owned(),
        });
    }
    Ok((is_catch_all, name, i + 2 + length))
}

/// One segment of `pattern`, `raw`, at `start` in it: a static text, a
/// catch-all, or literals and parameters; its parameters' names are added
/// to `names`.
fn parse_segment(
    pattern: &str,
    raw: &str,
    start: usize,
    names: &mut Vec<Box<str>>,
) -> Result<Segment, RouteError> {
    let bytes = raw.as_bytes();
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut catch_all = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                literal.push('{');
                i += 2;
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                literal.push('}');
                i += 2;
            }
            b'}' => {
                return Err(RouteError::UnbalancedBrace {
                    pattern: pattern.to_owned(),
                    at: start + i,
                });
            }
            b'{' => {
                let (is_catch_all, name, end) = parameter(pattern, raw, i, start, names)?;
                if is_catch_all {
                    if i != 0 || end != bytes.len() {
                        return Err(RouteError::CatchAllNotAlone {
                            pattern: pattern.to_owned(),
                        });
                    }
                    catch_all = true;
                } else {
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal).into()));
                    } else if parts.last() == Some(&Part::Param) {
                        return Err(RouteError::AdjacentParameters {
                            pattern: pattern.to_owned(),
                            segment: raw.to_owned(),
                        });
                    }
                    parts.push(Part::Param);
                }
                names.push(name.into());
                i = end;
            }
            _ => {
                // Copy the run of ordinary characters up to the next brace.
                let run = raw[i..].find(['{', '}']).unwrap_or(raw.len() - i);
                literal.push_str(&raw[i..i + run]);
                i += run;
            }
        }
    }
    if catch_all {
        return Ok(Segment::CatchAll);
    }
    if parts.is_empty() {
        return Ok(Segment::Static(literal.into()));
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal.into()));
    }
    Ok(Segment::Dynamic(parts.into()))
}
