//! The compiled route table: an exact index of static paths, and a radix
//! tree for the rest, searched depth first with backtracking.
//!
//! The tree is byte-level for static text, as matchit's is: a node holds
//! the bytes it matches and its static children are told apart by their
//! first byte, so the static part of a path is compared with `memcmp`,
//! never split into segments or hashed. Dynamic segments and catch-alls
//! hang off the node where their segment starts (its bytes so far end with
//! `/`), in registration order, and are tried only after every static
//! branch there has failed.

use std::{
    collections::HashMap,
    hash::{BuildHasherDefault, Hasher},
};

use http::Method;

use crate::params::{Captures, MAX_PATH};

use super::pattern::{Part, Pattern, Segment, match_parts};

/// The multiply-rotate hash of rustc's `FxHasher`, for the static index.
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
        if !chunks.remainder().is_empty() {
            self.add(tail_word(bytes));
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

    /// The first route registered here for a method, else the any-method
    /// one.
    pub(crate) fn first(&self) -> Option<RouteId> {
        self.entries.first().map(|&(_, route)| route).or(self.any)
    }

    pub(crate) fn methods(&self) -> impl Iterator<Item = &Method> {
        self.entries.iter().map(|(method, _)| method)
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.any.is_none()
    }
}

/// A node of the tree: the bytes it matches after its parent's, and what
/// may follow them.
#[derive(Debug, Default)]
struct Node {
    prefix: Box<[u8]>,
    /// The first byte of each static child, in `children`'s order.
    indices: Vec<u8>,
    children: Vec<Node>,
    /// Dynamic segments starting here, in registration order; each child
    /// starts where the segment ends.
    dynamics: Vec<(Box<[Part]>, Node)>,
    catch_alls: Vec<CatchAll>,
    /// The routes whose path ends here.
    methods: Methods,
    /// Whether dynamic segments or catch-alls start here: the walk comes
    /// back to such a node when its static branch fails.
    fork: bool,
}

impl Node {
    fn leaf(prefix: &[u8]) -> Self {
        Self {
            prefix: prefix.into(),
            ..Self::default()
        }
    }

    /// The node for the static bytes `text` below this one, made as needed:
    /// the radix insertion, splitting a child where `text` leaves it.
    fn descend(&mut self, text: &[u8]) -> &mut Node {
        if text.is_empty() {
            return self;
        }
        let Some(index) = self.indices.iter().position(|&b| b == text[0]) else {
            self.indices.push(text[0]);
            self.children.push(Node::leaf(text));
            return self.children.last_mut().expect("just pushed");
        };
        let child = &mut self.children[index];
        let common = child
            .prefix
            .iter()
            .zip(text)
            .take_while(|(a, b)| a == b)
            .count();
        if common < child.prefix.len() {
            // Split: the shared bytes become a node of their own, with the
            // old child, less those bytes, below it.
            let mut upper = Node::leaf(&child.prefix[..common]);
            let mut lower = std::mem::take(child);
            lower.prefix = lower.prefix[common..].into();
            upper.indices.push(lower.prefix[0]);
            upper.children.push(lower);
            *child = upper;
        }
        child.descend(&text[common..])
    }

    /// What the walk of `path` (static, in normal form) costs from this
    /// node, whose bytes `path` starts with, in the units of
    /// [`INDEX_COST`]; `None` if the walk does not end on a node.
    fn walk_cost(&self, path: &[u8]) -> Option<usize> {
        let mut node = self;
        let mut at = node.prefix.len();
        let mut cost = NODE_COST;
        while at < path.len() {
            let index = node.indices.iter().position(|&b| b == path[at])?;
            cost += index + 1 + if node.fork { NODE_COST } else { 0 };
            node = &node.children[index];
            at += node.prefix.len();
            cost += NODE_COST + node.prefix.len() / 8;
        }
        Some(cost)
    }

    #[inline]
    fn child(&self, byte: u8) -> Option<&Node> {
        self.indices
            .iter()
            .position(|&b| b == byte)
            .map(|index| &self.children[index])
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
    // What is left holds a segment when it is more than slashes; the
    // catch-all ends after its last byte that is not one.
    let bytes = &path.as_bytes()[start..to];
    let kept = bytes.iter().rposition(|&b| b != b'/')?;
    Some(start + kept + 1)
}

/// Whether `path` is already in the form the static index is keyed by.
#[inline]
fn is_normalized(path: &str) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [b'/'] => true,
        [b'/', .., last] if *last != b'/' => !has_double_slash(bytes),
        _ => false,
    }
}

/// Whether two byte strings of the same length are equal, compared by
/// overlapping word loads up to sixteen bytes: the tree's node prefixes are
/// short, and `memcmp`'s call and length dispatch cost more than the bytes.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
        bytes[at..at + N].try_into().expect("in bounds")
    }
    let n = a.len();
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// Whether `bytes` holds `//`, eight bytes at a time: every request pays
/// for this scan, and a byte-by-byte loop costs as much as the whole walk
/// of a short path.
#[inline]
fn has_double_slash(bytes: &[u8]) -> bool {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const SLASHES: u64 = 0x2f2f_2f2f_2f2f_2f2f;
    // The high bit of each byte of the answer is set where the byte is `/`
    // (exact: no carry crosses bytes, unlike the shorter zero-byte test).
    let slashes = |word: u64| {
        let x = word ^ SLASHES;
        !(((x & LOW) + LOW) | x | LOW)
    };
    let mut chunks = bytes.chunks_exact(8);
    // Whether the byte before the current word was `/`.
    let mut carry = 0;
    for chunk in &mut chunks {
        let found = slashes(u64::from_le_bytes(
            chunk.try_into().expect("chunks of eight"),
        ));
        if found & (found >> 8 | carry) != 0 {
            return true;
        }
        carry = found >> 56;
    }
    let found = slashes(tail_word(bytes));
    found & (found >> 8 | carry) != 0
}

/// The bytes of `bytes` after its last whole eight, as a little-endian word
/// padded with zeros. From eight bytes on, one load of the last eight,
/// shifted: no copy of variable length, which costs a `memcpy` call.
#[inline]
fn tail_word(bytes: &[u8]) -> u64 {
    let rest = bytes.len() % 8;
    if rest == 0 {
        return 0;
    }
    match bytes.len().checked_sub(8) {
        Some(from) => {
            let last = u64::from_le_bytes(bytes[from..].try_into().expect("eight bytes"));
            last >> (8 * (8 - rest))
        }
        None => bytes
            .iter()
            .enumerate()
            .fold(0, |word, (i, &byte)| word | u64::from(byte) << (8 * i)),
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
    /// Bit `n % 64` set when a static path of `n` bytes is indexed: most
    /// dynamic paths skip the hash (one word: a shift of 128 bits costs
    /// more than the rare false positive). Set by [`Table::finish`]: until
    /// then the index is not searched.
    static_lengths: u64,
    /// Whether a route takes any method: only then is a path that no
    /// route takes with its method searched again.
    any_method: bool,
    root: Node,
}

/// The cost of a search of the static index, in the units of
/// `Node::walk_cost`: a step of a child search costs one, a node eight
/// (measured with callgrind: a hash lookup costs about what the walk
/// through five nodes does).
const INDEX_COST: usize = 40;
const NODE_COST: usize = 8;

/// The bit of `static_lengths` for a path of `length` bytes.
#[inline]
fn length_bit(length: usize) -> u64 {
    1 << (length % 64)
}

impl Table {
    /// Adds `pattern` for `method` (`None`: any method). On a conflict,
    /// answers the route already there.
    pub(crate) fn insert(
        &mut self,
        pattern: &Pattern,
        method: Option<&Method>,
        route: RouteId,
    ) -> Result<(), RouteId> {
        self.any_method |= method.is_none();
        let mut node = &mut self.root;
        // Static bytes not yet laid into the tree: `/` and each static
        // segment, up to the next dynamic segment or catch-all.
        let mut text = String::new();
        let mut segments = pattern.segments.iter();
        while let Some(segment) = segments.next() {
            text.push('/');
            match segment {
                Segment::Static(static_text) => text.push_str(static_text),
                Segment::Dynamic(parts) => {
                    node = node.descend(std::mem::take(&mut text).as_bytes());
                    let index = match node.dynamics.iter().position(|(p, _)| p == parts) {
                        Some(index) => index,
                        None => {
                            node.dynamics.push((parts.clone(), Node::default()));
                            node.fork = true;
                            node.dynamics.len() - 1
                        }
                    };
                    node = &mut node.dynamics[index].1;
                }
                Segment::CatchAll => {
                    node = node.descend(text.as_bytes());
                    let suffix: Box<[Box<str>]> = segments
                        .map(|segment| match segment {
                            Segment::Static(text) => text.clone(),
                            _ => unreachable!("validated: only static segments follow a catch-all"),
                        })
                        .collect();
                    let index = match node.catch_alls.iter().position(|c| c.suffix == suffix) {
                        Some(index) => index,
                        None => {
                            node.fork = true;
                            node.catch_alls.push(CatchAll {
                                suffix,
                                methods: Methods::default(),
                            });
                            node.catch_alls.len() - 1
                        }
                    };
                    return node.catch_alls[index].methods.insert(method, route);
                }
            }
        }
        if pattern.segments.is_empty() {
            text.push('/');
        }
        node.descend(text.as_bytes())
            .methods
            .insert(method, route)?;
        if let Some(path) = pattern.static_path() {
            let _ = self
                .statics
                .entry(path.into())
                .or_default()
                .insert(method, route);
        }
        Ok(())
    }

    /// Whether the table has no route.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.root.children.is_empty()
    }

    /// Whether a route of the table takes any method.
    #[inline]
    pub(crate) fn any_method(&self) -> bool {
        self.any_method
    }

    /// Completes the table once every route is in: keeps in the static
    /// index only the paths that the walk finds for more than a search of
    /// the index costs — the few routes of a small table are found fastest
    /// by the walk, the deep fan-outs of a large one (`/items/0` to
    /// `/items/999`) by the hash, whose cost does not grow with the table
    /// — and turns the index on.
    pub(crate) fn finish(&mut self) {
        let root = &self.root;
        self.statics.retain(|path, _| {
            root.child(b'/')
                .and_then(|child| child.walk_cost(path.as_bytes()))
                .is_none_or(|cost| cost > INDEX_COST)
        });
        self.static_lengths = self
            .statics
            .keys()
            .fold(0, |lengths, path| lengths | length_bit(path.len()));
    }

    /// The route for `path` that `accept` takes from the methods found,
    /// with its captures.
    #[inline]
    pub(crate) fn find(
        &self,
        path: &str,
        captures: &mut Captures,
        accept: impl Fn(&Methods) -> Option<RouteId> + Copy,
    ) -> Option<RouteId> {
        captures.truncate(0);
        // An empty table (the WebSocket routes of most routers) answers
        // before the path is scanned.
        if path.len() > MAX_PATH || self.is_empty() {
            return None;
        }
        // A path found in the index is a route's path, so in normal form.
        if self.static_lengths & length_bit(path.len()) != 0 {
            if let Some(route) = self.statics.get(path).and_then(accept) {
                return Some(route);
            }
        }
        // The exact walk first, before the path's form is known: a route it
        // finds other than through a catch-all has matched every byte of
        // the path against route text (which holds no `//` and ends in no
        // `/`) or against parameters (which hold no `/`), so the path was in
        // normal form and the answer stands. Only a miss or a catch-all
        // costs the scan for empty segments.
        let found = Walk::<true> { path }.root(&self.root, captures, &mut |methods, catch_all| {
            Some((accept(methods)?, catch_all))
        });
        match found {
            Some((route, false)) => return Some(route),
            found if is_normalized(path) => return found.map(|(route, _)| route),
            _ => {}
        }
        captures.truncate(0);
        if let Some(route) = self.statics.get(normalize(path).as_str()).and_then(accept) {
            return Some(route);
        }
        Walk::<false> { path }.root(&self.root, captures, &mut |methods, _| accept(methods))
    }

    /// Calls `visit` with the methods of every route whose pattern matches
    /// `path`, whatever its method.
    pub(crate) fn visit_all(&self, path: &str, mut visit: impl FnMut(&Methods)) {
        let mut captures = Captures::new();
        let visit = &mut |methods: &Methods, _| -> Option<()> {
            visit(methods);
            None
        };
        if is_normalized(path) {
            Walk::<true> { path }.root(&self.root, &mut captures, visit);
        } else {
            Walk::<false> { path }.root(&self.root, &mut captures, visit);
        }
    }
}

/// One search of the tree for `path`.
///
/// A path in normal form (see [`is_normalized`]) is compared with the
/// tree's bytes as it is. Any other path is compared as its normal form
/// would be, without building it: a `/` of the tree takes a run of slashes
/// (or none at the very start), and trailing slashes end the path; the
/// captures still point into the path as received.
#[derive(Clone, Copy)]
struct Walk<'p, const NORMALIZED: bool> {
    path: &'p str,
}

impl<const NORMALIZED: bool> Walk<'_, NORMALIZED> {
    /// Where `prefix` ends when it matches the path at `at`.
    #[inline(always)]
    fn eat(self, prefix: &[u8], at: usize) -> Option<usize> {
        let path = self.path.as_bytes();
        if NORMALIZED {
            // The first byte chose the child: only the rest is compared.
            let end = at + prefix.len();
            let matched = end <= path.len() && same(&prefix[1..], &path[at + 1..end]);
            return matched.then_some(end);
        }
        let mut at = at;
        for &expected in prefix {
            if expected == b'/' {
                let run = path[at..].iter().take_while(|&&b| b == b'/').count();
                if run == 0 && at != 0 {
                    return None;
                }
                at += run;
            } else if path.get(at) == Some(&expected) {
                at += 1;
            } else {
                return None;
            }
        }
        Some(at)
    }

    /// Whether nothing but trailing slashes is left from `at`.
    #[inline(always)]
    fn at_end(self, at: usize) -> bool {
        let path = self.path.as_bytes();
        at == path.len() || !NORMALIZED && path[at..].iter().all(|&b| b == b'/')
    }

    /// Depth-first search from `node`, whose bytes end at `at`: static
    /// child, then dynamic segments in order, then catch-alls; a branch
    /// that fails further down leaves no captures behind.
    ///
    /// The static descent is a loop, inlined where the search starts: a
    /// static route is found without a call. Only a node with dynamic
    /// segments or catch-alls (a fork) goes on out of line, in
    /// [`Walk::fork`], which searches its static branch by a call of its
    /// own to come back to them if that branch fails.
    #[inline(always)]
    fn node<R>(
        self,
        mut node: &Node,
        mut at: usize,
        captures: &mut Captures,
        accept: &mut impl FnMut(&Methods, bool) -> Option<R>,
    ) -> Option<R> {
        loop {
            if self.at_end(at) {
                // A dynamic segment or catch-all needs at least one byte.
                return if node.methods.is_empty() {
                    None
                } else {
                    accept(&node.methods, false)
                };
            }
            let next = node
                .child(self.path.as_bytes()[at])
                .and_then(|child| Some((child, self.eat(&child.prefix, at)?)));
            if !node.fork {
                (node, at) = next?;
                continue;
            }
            return self.fork(node, at, next, captures, accept);
        }
    }

    /// The search of a fork at `at`: its static branch `next` (the child
    /// and where its bytes end), then its dynamic segments and catch-alls.
    #[inline(never)]
    fn fork<R>(
        self,
        node: &Node,
        at: usize,
        next: Option<(&Node, usize)>,
        captures: &mut Captures,
        accept: &mut impl FnMut(&Methods, bool) -> Option<R>,
    ) -> Option<R> {
        if let Some((child, end)) = next {
            if let Some(found) = self.node(child, end, captures, accept) {
                return Some(found);
            }
        }
        self.dynamics(node, at, captures, accept)
    }

    /// The search of `node`'s dynamic segments and catch-alls, in order,
    /// for the segment that starts at `at`.
    fn dynamics<R>(
        self,
        node: &Node,
        at: usize,
        captures: &mut Captures,
        accept: &mut impl FnMut(&Methods, bool) -> Option<R>,
    ) -> Option<R> {
        // A segment starts here: the node's bytes so far end with `/`, which
        // took every slash before it (in the exact walk of a path not in
        // normal form, one more may follow: the segment is then empty, and
        // the walk's answer is not used, see `Table::find`).
        let start = at;
        let mark = captures.len();
        if !node.dynamics.is_empty() {
            let rest = &self.path.as_bytes()[start..];
            let end = start + rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
            let segment = &self.path[start..end];
            for (parts, child) in &node.dynamics {
                if match_parts(parts, segment, start, |a, b| captures.push(a, b)) {
                    if let Some(found) = self.node(child, end, captures, accept) {
                        return Some(found);
                    }
                }
                captures.truncate(mark);
            }
        }
        for catch_all in &node.catch_alls {
            let Some(last_end) = catch_all_end(
                self.path,
                start,
                catch_all.suffix.iter().map(|text| &**text),
            ) else {
                continue;
            };
            captures.push(start, last_end);
            if let Some(found) = accept(&catch_all.methods, true) {
                return Some(found);
            }
            captures.truncate(mark);
        }
        None
    }

    /// The search from the root. Every route's bytes start with `/`, which
    /// a path that is empty or lacks it is taken to have (see [`Walk::eat`]),
    /// so the root has one child at most and nothing else.
    fn root<R>(
        self,
        root: &Node,
        captures: &mut Captures,
        accept: &mut impl FnMut(&Methods, bool) -> Option<R>,
    ) -> Option<R> {
        // The exact comparison takes the first byte for granted.
        if NORMALIZED && self.path.as_bytes().first() != Some(&b'/') {
            return None;
        }
        let child = root.child(b'/')?;
        let end = self.eat(&child.prefix, 0)?;
        self.node(child, end, captures, accept)
    }
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
    fn the_static_index_keeps_deep_fan_outs_and_answers_as_the_walk_does() {
        let small = {
            let mut t = table(&["/users/42", "/users/{id}", "/health"]);
            t.finish();
            t
        };
        assert!(small.statics.is_empty(), "a small table is walked");
        assert_eq!(lookup(&small, "/users/42"), Some((0, vec![])));

        let mut routes: Vec<String> = (0..1000).map(|n| format!("/items/{n}")).collect();
        routes.push("/items/{id}".into());
        routes.push("/items/{id}/x".into());
        let routes: Vec<&str> = routes.iter().map(String::as_str).collect();
        // Not finished: its index is never searched, every path is walked.
        let walked = table(&routes);
        assert_eq!(walked.static_lengths, 0);
        let mut indexed = table(&routes);
        indexed.finish();
        assert!(indexed.statics.contains_key("/items/999"));
        assert!(indexed.statics.len() < 1000, "shallow paths are walked");
        for path in [
            "/items/0",
            "/items/7",
            "/items/999",
            "/items//999/",
            "/items/1000",
        ]
        .into_iter()
        .chain(["/items/999/x", "items/12", "/items/5x"])
        {
            assert_eq!(lookup(&indexed, path), lookup(&walked, path), "{path}");
        }
        assert_eq!(lookup(&indexed, "/items/999"), Some((999, vec![])));
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
    fn paths_longer_than_a_uri_holds_match_nothing() {
        let t = table(&["/{*rest}", "/a/{id}"]);
        let longest = format!("/{}", "x".repeat(MAX_PATH - 1));
        assert_eq!(lookup(&t, &longest).map(|(route, _)| route), Some(0));
        let longer = format!("/{}", "x".repeat(MAX_PATH));
        assert_eq!(lookup(&t, &longer), None);
        assert_eq!(lookup(&t, &format!("/a/{}", "7".repeat(MAX_PATH))), None);
    }

    #[test]
    fn the_tail_word_holds_the_bytes_after_the_last_whole_eight() {
        let bytes: Vec<u8> = (1..=20).collect();
        for length in 0..=20 {
            let rest = &bytes[length - length % 8..length];
            let mut padded = [0u8; 8];
            padded[..rest.len()].copy_from_slice(rest);
            assert_eq!(
                tail_word(&bytes[..length]),
                u64::from_le_bytes(padded),
                "{length}"
            );
        }
    }

    #[test]
    fn double_slashes_are_found_anywhere() {
        for length in 0..40 {
            for at in 0..length {
                let mut path = vec![b'a'; length];
                path[at] = b'/';
                assert!(!has_double_slash(&path), "{length} {at}");
                if at + 1 < length {
                    path[at + 1] = b'/';
                    assert!(has_double_slash(&path), "{length} {at}");
                }
            }
        }
        assert!(!has_double_slash(b"/a/b/c/d/e/f/g/h/i/j"));
        assert!(has_double_slash(b"/a/b/c/d/e/f/g//h"));
        assert!(!has_double_slash("/é/ÿ/\u{7f}/\u{80}".as_bytes()));
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
