//! Parsing one route pattern into segments, and matching one segment.

use std::sync::Arc;

use super::RouteError;
use crate::params::MAX_PARAMETERS;

/// A piece of a segment that holds parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Part {
    Literal(Box<str>),
    Param,
}

/// One `/`-separated segment of a pattern. Parameter names are kept apart
/// (in [`Pattern::names`]) so that patterns differing only in names have
/// equal segments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Segment {
    /// Shared by the routes of one compile that have it (see
    /// [`Pattern::intern`]).
    Static(Arc<str>),
    /// Literal text and parameters, never two parameters in a row.
    Dynamic(Box<[Part]>),
    CatchAll,
}

/// A parsed, validated pattern.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    pub(crate) source: Arc<str>,
    pub(crate) segments: Box<[Segment]>,
    /// Parameter names in capture order.
    pub(crate) names: Arc<[Box<str>]>,
    /// The static segments after a catch-all, if there is one: what the
    /// path's last segments must be, worked out once here.
    pub(crate) suffix: Option<Arc<[Box<str>]>>,
}

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
        let suffix = (segments.iter().position(|s| *s == Segment::CatchAll)).map(|at| {
            (segments[at + 1..].iter())
                .map(|segment| match segment {
                    Segment::Static(text) => Box::from(&**text),
                    _ => unreachable!("validated: only static segments follow a catch-all"),
                })
                .collect()
        });
        Ok(Self {
            source: source.into(),
            segments: segments.into(),
            names: names.into(),
            suffix,
        })
    }

    /// Shares its static segments' text with equal text in `seen`, and adds
    /// what is new there: most routes of a table repeat most of their
    /// segments (`api`, `v1`, `items`), and one allocation each is a good
    /// part of what a route costs.
    pub(crate) fn intern<S: std::hash::BuildHasher>(
        &mut self,
        seen: &mut std::collections::HashSet<Arc<str>, S>,
    ) {
        for segment in &mut self.segments {
            if let Segment::Static(text) = segment {
                match seen.get(text) {
                    Some(shared) => *text = shared.clone(),
                    None => {
                        seen.insert(text.clone());
                    }
                }
            }
        }
    }

    /// The path this pattern matches if it has no parameters, normalised
    /// (`/` and the static segments joined by `/`).
    pub(crate) fn static_path(&self) -> Option<String> {
        let mut path = String::new();
        for segment in &self.segments {
            let Segment::Static(text) = segment else {
                return None;
            };
            path.push('/');
            path.push_str(text);
        }
        if path.is_empty() {
            path.push('/');
        }
        Some(path)
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
                let end = i + 2 + length;
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

/// Matches one path segment against a dynamic segment's parts, pushing the
/// byte range of each capture (offset by `base`) through `capture`.
///
/// A parameter followed by literal text captures up to the first occurrence
/// of that text; a parameter at the end captures the rest. No capture is
/// empty, and no other split is tried.
#[inline]
pub(crate) fn match_parts(
    parts: &[Part],
    segment: &str,
    base: usize,
    mut capture: impl FnMut(usize, usize),
) -> bool {
    // The usual case, a whole-segment parameter: no search.
    if let [Part::Param] = parts {
        if segment.is_empty() {
            return false;
        }
        capture(base, base + segment.len());
        return true;
    }
    let mut position = 0;
    for (index, part) in parts.iter().enumerate() {
        let rest = &segment[position..];
        match part {
            Part::Literal(literal) => {
                if !rest.starts_with(&**literal) {
                    return false;
                }
                position += literal.len();
            }
            Part::Param => {
                let length = match parts.get(index + 1) {
                    Some(Part::Literal(next)) => match rest.find(&**next) {
                        Some(length) => length,
                        None => return false,
                    },
                    _ => rest.len(),
                };
                if length == 0 {
                    return false;
                }
                capture(base + position, base + position + length);
                position += length;
            }
        }
    }
    position == segment.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captures(pattern: &str, segment: &str) -> Option<Vec<String>> {
        let parsed = Pattern::parse(pattern).unwrap();
        let Segment::Dynamic(parts) = &parsed.segments[0] else {
            panic!("not dynamic")
        };
        let mut out = Vec::new();
        match_parts(parts, segment, 0, |a, b| out.push(segment[a..b].to_owned())).then_some(out)
    }

    #[test]
    fn segments_split_at_the_first_occurrence_of_the_following_literal() {
        assert_eq!(
            captures("/{base}.{ext}", "report.final.json").unwrap(),
            ["report", "final.json"]
        );
        assert_eq!(captures("/{slug}.json", "a.b.json").unwrap(), ["a.b"]);
        assert_eq!(
            captures("/pre{id}.json", "prevalue.json").unwrap(),
            ["value"]
        );
        assert_eq!(
            captures("/{first}-{second}.tail", "left-right.tail").unwrap(),
            ["left", "right"]
        );
        assert_eq!(captures("/v{major}.{minor}", "v1.2").unwrap(), ["1", "2"]);
        assert_eq!(captures("/pre{id}.json", "value.json"), None);
        assert_eq!(captures("/p{id}", "p"), None);
        assert_eq!(
            captures("/{a}.json", "x.json.json"),
            None,
            "no other split is tried"
        );
        assert_eq!(captures("/{a}-{b}", "-x"), None, "captures are never empty");
    }

    #[test]
    fn literal_braces_and_static_paths() {
        let pattern = Pattern::parse("/a/{{x}}//b/").unwrap();
        assert_eq!(pattern.static_path().as_deref(), Some("/a/{x}/b"));
        assert_eq!(
            Pattern::parse("/").unwrap().static_path().as_deref(),
            Some("/")
        );
        assert_eq!(Pattern::parse("/a/{id}").unwrap().static_path(), None);
    }
}
