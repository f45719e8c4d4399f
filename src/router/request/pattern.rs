//! A route pattern as parsed, and matching one of its segments.

use std::sync::Arc;

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
    pub(in crate::router) source: Arc<str>,
    pub(in crate::router) segments: Box<[Segment]>,
    /// Parameter names in capture order.
    pub(in crate::router) names: Arc<[Box<str>]>,
    /// The static segments after a catch-all, if there is one: what the
    /// path's last segments must be, worked out once here.
    pub(in crate::router) suffix: Option<Arc<[Box<str>]>>,
}

impl Pattern {
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
