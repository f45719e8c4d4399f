//! The compiled route table: an exact index of static paths, and a segment
//! tree for the rest, searched depth first with backtracking.

use std::{
    collections::HashMap,
    hash::{BuildHasherDefault, Hasher},
};

use http::Method;

use super::{
    params::Captures,
    pattern::{Part, Pattern, Segment, match_parts},
};

/// The multiply-rotate hash of rustc's `FxHasher`, for the static index
/// and wide static fan-outs.
///
/// Written here rather than taken from a crate: it is a dozen lines, and the
/// default SipHash costs more than the rest of a static lookup. The tables
/// it indexes hold only the application's own routes, fixed at compile
/// time; a request can choose what it looks up, not what is stored, so it
/// cannot lengthen a probe sequence beyond what the routes already make.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(
                chunk.try_into().expect("chunks of eight"),
            ));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Above this many static children, a node indexes them by hash.
const WIDE: usize = 8;

/// Index of a route in the compiled router's route list.
pub(crate) type RouteId = usize;

/// The routes that end at one place of the tree, by method.
#[derive(Clone, Debug, Default)]
pub(crate) struct Methods {
    entries: Vec<(Method, RouteId)>,
    any: Option<RouteId>,
}

impl Methods {
    /// Registers `route` for `method` (`None`: any method), or returns the
    /// route already there.
    fn insert(&mut self, method: Option<&Method>, route: RouteId) -> Result<(), RouteId> {
        let slot = match method {
            None => &mut self.any,
            Some(method) => match self.entries.iter_mut().find(|(m, _)| m == method) {
                Some((_, existing)) => return Err(*existing),
                None => {
                    self.entries.push((method.clone(), route));
                    return Ok(());
                }
            },
        };
        match slot {
            Some(existing) => Err(*existing),
            None => {
                *slot = Some(route);
                Ok(())
            }
        }
    }

    #[inline]
    pub(crate) fn get(&self, method: &Method) -> Option<RouteId> {
        self.entries
            .iter()
            .find(|(m, _)| m == method)
            .map(|&(_, route)| route)
    }

    #[inline]
    pub(crate) fn any(&self) -> Option<RouteId> {
        self.any
    }

    pub(crate) fn methods(&self) -> impl Iterator<Item = &Method> {
        self.entries.iter().map(|(method, _)| method)
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.any.is_none()
    }
}

#[derive(Debug, Default)]
struct Node {
    /// In insertion order.
    statics: Vec<(Box<str>, Node)>,
    /// Positions in `statics` by text, once there are more than `WIDE`.
    wide: Option<FxHashMap<Box<str>, usize>>,
    /// In the order their shapes were first registered.
    dynamics: Vec<(Box<[Part]>, Node)>,
    /// In the order their shapes were first registered.
    catch_alls: Vec<CatchAll>,
    methods: Methods,
}

impl Node {
    #[inline]
    fn static_child(&self, segment: &str) -> Option<usize> {
        match &self.wide {
            Some(index) => index.get(segment).copied(),
            None => self.statics.iter().position(|(text, _)| **text == *segment),
        }
    }

    fn add_static(&mut self, text: &str) -> usize {
        let index = self.statics.len();
        self.statics.push((text.into(), Node::default()));
        if self.statics.len() > WIDE {
            let wide = self.wide.get_or_insert_with(Default::default);
            for (position, (text, _)) in self.statics.iter().enumerate() {
                wide.insert(text.clone(), position);
            }
        }
        index
    }
}

/// A catch-all and the static segments after it.
#[derive(Debug)]
struct CatchAll {
    suffix: Box<[Box<str>]>,
    methods: Methods,
}

/// The next segment of `path` at or after `from`: `(start, end)`, skipping
/// empty segments; `start == path.len()` when there is none.
#[inline]
pub(crate) fn next_segment(path: &str, from: usize) -> (usize, usize) {
    let bytes = path.as_bytes();
    let mut start = from;
    while start < bytes.len() && bytes[start] == b'/' {
        start += 1;
    }
    let end = bytes[start..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(bytes.len(), |i| start + i);
    (start, end)
}

/// The last segment of `path[from..to]`: `(start, end)`, or `None` when the
/// range holds no segment.
fn last_segment(path: &str, from: usize, to: usize) -> Option<(usize, usize)> {
    let bytes = &path.as_bytes()[..to];
    let mut end = to;
    while end > from && bytes[end - 1] == b'/' {
        end -= 1;
    }
    if end == from {
        return None;
    }
    let start = bytes[from..end]
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(from, |i| from + i + 1);
    Some((start, end))
}

/// Where a catch-all that starts at byte `start` of `path` and is followed
/// by the static segments `suffix` ends: the suffix takes the last segments
/// of the path, the catch-all the one or more before them. `None` when the
/// suffix does not match or leaves the catch-all nothing.
pub(crate) fn catch_all_end<'s>(
    path: &str,
    start: usize,
    suffix: impl DoubleEndedIterator<Item = &'s str>,
) -> Option<usize> {
    let mut to = path.len();
    for expected in suffix.rev() {
        let (s, e) = last_segment(path, start, to)?;
        if path[s..e] != *expected {
            return None;
        }
        to = s;
    }
    last_segment(path, start, to).map(|(_, end)| end)
}

/// Whether `path` is already in the form the static index is keyed by.
#[inline]
fn is_normalized(path: &str) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [b'/'] => true,
        [b'/', .., last] if *last != b'/' => !bytes.windows(2).any(|pair| pair == b"//"),
        _ => false,
    }
}

fn normalize(path: &str) -> String {
    let mut normalized = String::with_capacity(path.len());
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        normalized.push('/');
        normalized.push_str(segment);
    }
    if normalized.is_empty() {
        normalized.push('/');
    }
    normalized
}

/// The compiled table.
#[derive(Debug, Default)]
pub(crate) struct Table {
    statics: FxHashMap<Box<str>, Methods>,
    root: Node,
}

impl Table {
    /// Adds a route; on a conflict returns the route registered before.
    pub(crate) fn insert(
        &mut self,
        pattern: &Pattern,
        method: Option<&Method>,
        route: RouteId,
    ) -> Result<(), RouteId> {
        let mut node = &mut self.root;
        let mut segments = pattern.segments.iter();
        while let Some(segment) = segments.next() {
            node = match segment {
                Segment::Static(text) => {
                    let index = match node.static_child(text) {
                        Some(index) => index,
                        None => node.add_static(text),
                    };
                    &mut node.statics[index].1
                }
                Segment::Dynamic(parts) => {
                    let index = match node.dynamics.iter().position(|(p, _)| p == parts) {
                        Some(index) => index,
                        None => {
                            node.dynamics.push((parts.clone(), Node::default()));
                            node.dynamics.len() - 1
                        }
                    };
                    &mut node.dynamics[index].1
                }
                Segment::CatchAll => {
                    // Only static segments follow a catch-all (checked when
                    // the pattern was parsed).
                    let suffix: Box<[Box<str>]> = segments
                        .map(|segment| match segment {
                            Segment::Static(text) => text.clone(),
                            _ => unreachable!("validated: only static segments follow a catch-all"),
                        })
                        .collect();
                    let index = match node.catch_alls.iter().position(|c| c.suffix == suffix) {
                        Some(index) => index,
                        None => {
                            node.catch_alls.push(CatchAll {
                                suffix,
                                methods: Methods::default(),
                            });
                            node.catch_alls.len() - 1
                        }
                    };
                    return node.catch_alls[index].methods.insert(method, route);
                }
            };
        }
        node.methods.insert(method, route)?;
        if let Some(path) = pattern.static_path() {
            // The tree already refused a duplicate, so this cannot conflict.
            let _ = self
                .statics
                .entry(path.into())
                .or_default()
                .insert(method, route);
        }
        Ok(())
    }

    /// The first route, in precedence order, whose methods `accept` takes.
    ///
    /// Fully static routes are found by one hash lookup; the tree search
    /// would find them first anyway (static children come first), so the
    /// index changes no answer.
    #[inline]
    pub(crate) fn find(
        &self,
        path: &str,
        captures: &mut Captures,
        accept: impl Fn(&Methods) -> Option<RouteId> + Copy,
    ) -> Option<RouteId> {
        let indexed = if is_normalized(path) {
            self.statics.get(path)
        } else {
            self.statics.get(normalize(path).as_str())
        };
        if let Some(route) = indexed.and_then(accept) {
            captures.truncate(0);
            return Some(route);
        }
        captures.truncate(0);
        find_in(&self.root, path, 0, captures, &mut |methods, _| {
            accept(methods)
        })
    }

    /// Calls `visit` for every place of the tree `path` reaches (for `Allow`).
    pub(crate) fn visit_all(&self, path: &str, mut visit: impl FnMut(&Methods)) {
        let mut captures = Captures::new();
        find_in::<()>(&self.root, path, 0, &mut captures, &mut |methods, _| {
            visit(methods);
            None
        });
    }
}

/// Depth-first search from `node` at byte `from` of `path`: static child,
/// then dynamic children in order, then catch-alls; a branch that fails
/// further down leaves no captures behind.
fn find_in<R>(
    node: &Node,
    path: &str,
    from: usize,
    captures: &mut Captures,
    accept: &mut impl FnMut(&Methods, &Captures) -> Option<R>,
) -> Option<R> {
    let (start, end) = next_segment(path, from);
    if start == path.len() {
        return if node.methods.is_empty() {
            None
        } else {
            accept(&node.methods, captures)
        };
    }
    let segment = &path[start..end];
    if let Some(index) = node.static_child(segment) {
        if let Some(found) = find_in(&node.statics[index].1, path, end, captures, accept) {
            return Some(found);
        }
    }
    let mark = captures.len();
    for (parts, child) in &node.dynamics {
        if match_parts(parts, segment, start, |a, b| captures.push(a, b)) {
            if let Some(found) = find_in(child, path, end, captures, accept) {
                return Some(found);
            }
        }
        captures.truncate(mark);
    }
    for catch_all in &node.catch_alls {
        let Some(last_end) =
            catch_all_end(path, start, catch_all.suffix.iter().map(|text| &**text))
        else {
            continue;
        };
        captures.push(start, last_end);
        if let Some(found) = accept(&catch_all.methods, captures) {
            return Some(found);
        }
        captures.truncate(mark);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(routes: &[&str]) -> Table {
        let mut table = Table::default();
        for (id, route) in routes.iter().enumerate() {
            table
                .insert(&Pattern::parse(route).unwrap(), Some(&Method::GET), id)
                .unwrap();
        }
        table
    }

    fn lookup(table: &Table, path: &str) -> Option<(RouteId, Vec<String>)> {
        let mut captures = Captures::new();
        let route = table.find(path, &mut captures, |m| m.get(&Method::GET))?;
        let values = captures
            .ranges()
            .iter()
            .map(|&(a, b)| path[a as usize..b as usize].to_owned());
        Some((route, values.collect()))
    }

    #[test]
    fn precedence_and_backtracking() {
        let t = table(&[
            "/c/static",
            "/c/{id}",
            "/c/{*path}",
            "/b/{first}/missing",
            "/b/{second}/{third}",
        ]);
        assert_eq!(lookup(&t, "/c/static"), Some((0, vec![])));
        assert_eq!(lookup(&t, "/c/value"), Some((1, vec!["value".into()])));
        assert_eq!(lookup(&t, "/c/a/b"), Some((2, vec!["a/b".into()])));
        assert_eq!(
            lookup(&t, "/b/a/b"),
            Some((4, vec!["a".into(), "b".into()]))
        );
        assert_eq!(lookup(&t, "/b/a/missing"), Some((3, vec!["a".into()])));
        assert_eq!(lookup(&t, "/c"), None);
    }

    #[test]
    fn catch_all_with_static_suffix_and_empty_segments() {
        let t = table(&["/files/{*path}/edit", "/files/{*path}", "/a/b"]);
        assert_eq!(lookup(&t, "/files/a/b/edit"), Some((0, vec!["a/b".into()])));
        assert_eq!(lookup(&t, "/files/edit"), Some((1, vec!["edit".into()])));
        assert_eq!(lookup(&t, "/files/a/b/"), Some((1, vec!["a/b".into()])));
        assert_eq!(lookup(&t, "/files"), None);
        assert_eq!(lookup(&t, "//a///b/"), Some((2, vec![])));
    }
}
