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
    source: Arc<str>,
    segments: Box<[Segment]>,
    /// Parameter names in capture order.
    names: Arc<[Box<str>]>,
    /// The static segments after a catch-all, if there is one: what the
    /// path's last segments must be, worked out once here.
    suffix: Option<Arc<[Box<str>]>>,
}

impl Pattern {
    /// The pattern `source`, parsed into `segments` (validated: only
    /// static segments follow a catch-all) with parameters `names`.
    pub(in crate::router) fn new(
        source: &str,
        segments: Vec<Segment>,
        names: Vec<Box<str>>,
    ) -> Self {
        let suffix = (segments.iter().position(|s| *s == Segment::CatchAll)).map(|at| {
            (segments[at + 1..].iter())
                .map(|segment| match segment {
                    Segment::Static(text) => Box::from(&**text),
                    _ => unreachable!("validated: only static segments follow a catch-all"),
                })
                .collect()
        });
        Self {
            source: source.into(),
            segments: segments.into(),
            names: names.into(),
            suffix,
        }
    }

    /// The pattern as written.
    #[inline]
    pub(in crate::router) fn source(&self) -> &Arc<str> {
        &self.source
    }

    /// Its segments.
    #[inline]
    pub(in crate::router) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Its parameters' names, in capture order.
    #[inline]
    pub(in crate::router) fn names(&self) -> &Arc<[Box<str>]> {
        &self.names
    }

    /// The static segments after its catch-all, if it has one.
    #[inline]
    pub(in crate::router) fn suffix(&self) -> Option<&Arc<[Box<str>]>> {
        self.suffix.as_ref()
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
