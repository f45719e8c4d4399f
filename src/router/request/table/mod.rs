//! The compiled route table: an index of static paths, and a radix tree for
//! the rest, searched depth first with backtracking.
//!
//! The tree is byte-level for static text, as matchit's is: a node holds
//! the bytes it matches and its static children are told apart by their
//! first byte, so the static part of a path is compared with `memcmp`,
//! never split into segments or hashed. Dynamic segments and catch-alls
//! hang off the node where their segment starts (its bytes so far end with
//! `/`), in registration order, and are tried only after every static
//! branch there has failed.
//!
//! The table is persistent: its nodes (and the static index's, see
//! [`index`]) sit behind `Arc`s, and a change copies only the nodes on the
//! way to what it changes, sharing the rest with the table it was cloned
//! from. A [`Reloadable`](crate::router::Reloadable) clones the live table,
//! changes the clone and makes it live: a change of `m` routes costs the
//! `m` paths through the tree, not the table.

mod index;
mod methods;
mod packed;
mod path;
mod walk;

use std::sync::Arc;

use http::Method;

use crate::params::{Captures, MAX_PATH};

pub(crate) use self::index::FxHasher;
use self::index::Index;
pub(crate) use self::methods::Methods;
use self::packed::Packed;
pub(crate) use self::path::{catch_all_end, next_segment};
use self::{
    path::{is_normalized, normalize, tail_word},
    walk::Walk,
};
use super::pattern::{Part, Pattern, Segment};

/// Index of a route in the compiled router's route list.
pub(crate) type RouteId = usize;

/// A route's place in the order of registration: its module's place, then
/// the route's within the module. Dynamic segments, catch-alls and the
/// methods at one place are kept in this order whatever the order of the
/// changes that put them there.
pub(crate) type Key = u64;

/// A node of the tree: the bytes it matches after its parent's, and what
/// may follow them.
#[derive(Clone, Debug, Default)]
struct Node {
    prefix: Box<[u8]>,
    /// The first byte of each static child, in `children`'s order.
    indices: Packed<u8>,
    children: Packed<Arc<Node>>,
    /// The dynamic segments and catch-alls starting here, if any: boxed,
    /// as most nodes have none. While there are any, the walk comes back
    /// to this node when its static branch fails.
    forks: Option<Box<Forks>>,
    /// The routes whose path ends here.
    methods: Methods,
}

/// The dynamic segments and catch-alls starting at a node.
#[derive(Clone, Debug, Default)]
struct Forks {
    /// In registration order; each child starts where the segment ends.
    dynamics: Packed<Dynamic>,
    /// In registration order.
    catch_alls: Packed<CatchAll>,
}

/// A dynamic segment and what follows it.
#[derive(Clone, Debug)]
struct Dynamic {
    parts: Box<[Part]>,
    node: Arc<Node>,
    /// The first key of the routes below: the segment's place among the
    /// others of its node.
    key: Key,
}

/// A catch-all and the static segments after it.
#[derive(Clone, Debug)]
struct CatchAll {
    suffix: Box<[Box<str>]>,
    methods: Methods,
    key: Key,
}

impl Node {
    /// The dynamic segments starting here, in registration order.
    #[inline]
    fn dynamics(&self) -> &[Dynamic] {
        self.forks.as_ref().map_or(&[], |forks| &forks.dynamics)
    }

    /// The catch-alls starting here, in registration order.
    #[inline]
    fn catch_alls(&self) -> &[CatchAll] {
        self.forks.as_ref().map_or(&[], |forks| &forks.catch_alls)
    }

    /// The dynamic segments and catch-alls starting here, to change: made
    /// if there are none ([`reorder`](Self::reorder) lets them go again).
    fn forks_mut(&mut self) -> &mut Forks {
        self.forks.get_or_insert_default()
    }

    fn leaf(prefix: &[u8]) -> Self {
        Self {
            prefix: prefix.into(),
            ..Self::default()
        }
    }

    /// The node for the static bytes `text` below this one, made as needed:
    /// the radix insertion, splitting a child where `text` leaves it. Nodes
    /// shared with another table are copied on the way.
    fn descend(&mut self, text: &[u8]) -> &mut Node {
        if text.is_empty() {
            return self;
        }
        let Some(index) = self.indices.iter().position(|&b| b == text[0]) else {
            self.indices.push(text[0]);
            self.children.push(Arc::new(Node::leaf(text)));
            return Arc::make_mut(self.children.last_mut().expect("just pushed"));
        };
        let child = Arc::make_mut(&mut self.children[index]);
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
            upper.children.push(Arc::new(lower));
            *child = upper;
        }
        child.descend(&text[common..])
    }

    /// The node the static bytes `text` below this one end at exactly.
    fn find(&self, text: &[u8]) -> Option<&Node> {
        if text.is_empty() {
            return Some(self);
        }
        let child = self.child(text[0])?;
        let rest = text.strip_prefix(&*child.prefix)?;
        child.find(rest)
    }

    /// Whether nothing is left here or below.
    fn is_vacant(&self) -> bool {
        self.methods.is_empty() && self.children.is_empty() && self.forks.is_none()
    }

    /// The first key of the routes here and below.
    fn min_key(&self) -> Option<Key> {
        let below = (self.children.iter().filter_map(|child| child.min_key()))
            .chain(self.dynamics().iter().map(|dynamic| dynamic.key))
            .chain(self.catch_alls().iter().map(|catch_all| catch_all.key));
        below.chain(self.methods.min_key()).min()
    }

    /// Calls `visit` with every route here and below.
    fn visit_routes(&self, visit: &mut impl FnMut(RouteId)) {
        self.methods.routes().for_each(&mut *visit);
        for child in &self.children {
            child.visit_routes(visit);
        }
        for dynamic in self.dynamics() {
            dynamic.node.visit_routes(visit);
        }
        for catch_all in self.catch_alls() {
            catch_all.methods.routes().for_each(&mut *visit);
        }
    }

    /// Calls `visit` with every route that may match a path starting with
    /// the static bytes `text` below this node: those below where `text`
    /// ends, and those of the dynamic segments and catch-alls on the way.
    fn visit_covering(&self, text: &[u8], visit: &mut impl FnMut(RouteId)) {
        if text.is_empty() {
            return self.visit_routes(visit);
        }
        for dynamic in self.dynamics() {
            dynamic.node.visit_routes(visit);
        }
        for catch_all in self.catch_alls() {
            catch_all.methods.routes().for_each(&mut *visit);
        }
        let Some(child) = self.child(text[0]) else {
            return;
        };
        if child.prefix.starts_with(text) {
            return child.visit_routes(visit);
        }
        if let Some(rest) = text.strip_prefix(&*child.prefix) {
            child.visit_covering(rest, visit);
        }
    }

    /// Keeps the dynamic segments and catch-alls in the order of their
    /// keys (the segments with literal text before the bare parameters
    /// when `literal_first`), and `forks` `None` while there are none.
    fn reorder(&mut self, literal_first: bool) {
        let Some(forks) = &mut self.forks else {
            return;
        };
        let bare = |dynamic: &Dynamic| {
            literal_first && dynamic.parts.iter().all(|part| matches!(part, Part::Param))
        };
        forks
            .dynamics
            .sort_by_key(|dynamic| (bare(dynamic), dynamic.key));
        forks.catch_alls.sort_by_key(|catch_all| catch_all.key);
        if forks.dynamics.is_empty() && forks.catch_alls.is_empty() {
            self.forks = None;
        }
    }

    /// A node that holds nothing but one static child (and is not where a
    /// dynamic segment ends, or the root: those match no bytes) takes the
    /// child's place, its bytes joined to the child's: the tree a compile
    /// of the remaining routes would build.
    fn absorb_only_child(&mut self) {
        if self.prefix.is_empty()
            || self.children.len() != 1
            || !self.methods.is_empty()
            || self.forks.is_some()
        {
            return;
        }
        let child = self.children.pop().expect("one child");
        let mut child = Arc::unwrap_or_clone(child);
        let mut prefix = std::mem::take(&mut self.prefix).into_vec();
        prefix.extend_from_slice(&child.prefix);
        child.prefix = prefix.into();
        *self = child;
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
            cost += index + 1 + if node.forks.is_some() { NODE_COST } else { 0 };
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
            .map(|index| &*self.children[index])
    }
}

/// A pattern as the tree lays it out: runs of static bytes, and the
/// dynamic segments and catch-all between them.
enum PathStep<'p> {
    Static(String),
    Dynamic(&'p [Part]),
    /// A catch-all, with the static segments after it; always last.
    CatchAll(Box<[Box<str>]>),
}

/// The steps of `pattern`, from the root.
fn steps(pattern: &Pattern) -> Vec<PathStep<'_>> {
    let mut steps = Vec::new();
    // Static bytes not yet laid out: `/` and each static segment, up to the
    // next dynamic segment or catch-all.
    let mut text = String::new();
    for segment in pattern.segments() {
        text.push('/');
        match segment {
            Segment::Static(static_text) => text.push_str(static_text),
            Segment::Dynamic(parts) => {
                steps.push(PathStep::Static(std::mem::take(&mut text)));
                steps.push(PathStep::Dynamic(parts));
            }
            Segment::CatchAll => {
                steps.push(PathStep::Static(std::mem::take(&mut text)));
                let suffix = pattern.suffix().map_or(&[][..], |suffix| &suffix[..]);
                steps.push(PathStep::CatchAll(suffix.into()));
                return steps;
            }
        }
    }
    if pattern.segments().is_empty() {
        text.push('/');
    }
    steps.push(PathStep::Static(text));
    steps
}

/// Removes `route` (registered for `method` with `key`) from below `node`
/// along `steps`, whose first static run has `text` left; whether it was
/// there. Nodes left empty go, and a node left with one child takes it in.
fn remove(
    node: &mut Node,
    text: &[u8],
    steps: &[PathStep<'_>],
    (method, literal_first): (Option<&Method>, bool),
    (route, key): (RouteId, Key),
) -> bool {
    let method_of = (method, literal_first);
    if !text.is_empty() {
        let Some(index) = node.indices.iter().position(|&b| b == text[0]) else {
            return false;
        };
        let Some(rest) = text.strip_prefix(&*node.children[index].prefix) else {
            return false;
        };
        let child = Arc::make_mut(&mut node.children[index]);
        if !remove(child, rest, steps, method_of, (route, key)) {
            return false;
        }
        if child.is_vacant() {
            node.children.remove(index);
            node.indices.remove(index);
        } else {
            child.absorb_only_child();
        }
        return true;
    }
    let removed = match steps.split_first() {
        None => node.methods.remove(method, route),
        Some((PathStep::Static(text), rest)) => {
            remove(node, text.as_bytes(), rest, method_of, (route, key))
        }
        Some((PathStep::Dynamic(parts), rest)) => {
            let Some(index) = node.dynamics().iter().position(|d| *d.parts == **parts) else {
                return false;
            };
            let dynamics = &mut node.forks_mut().dynamics;
            let dynamic = &mut dynamics[index];
            if !remove(
                Arc::make_mut(&mut dynamic.node),
                b"",
                rest,
                method_of,
                (route, key),
            ) {
                return false;
            }
            if dynamic.node.is_vacant() {
                dynamics.remove(index);
            } else if dynamic.key == key {
                // Only the first route's removal moves the segment: the
                // walk for the next first is as long as what is below.
                dynamic.key = dynamic.node.min_key().expect("not vacant");
            }
            true
        }
        Some((PathStep::CatchAll(suffix), _)) => {
            let Some(index) = node.catch_alls().iter().position(|c| c.suffix == *suffix) else {
                return false;
            };
            let catch_alls = &mut node.forks_mut().catch_alls;
            let catch_all = &mut catch_alls[index];
            if !catch_all.methods.remove(method, route) {
                return false;
            }
            match catch_all.methods.min_key() {
                None => drop(catch_alls.remove(index)),
                Some(first) => catch_all.key = first,
            }
            true
        }
    };
    node.reorder(literal_first);
    removed
}

/// The compiled table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    /// Static paths whose walk costs more than a search of the index, with
    /// their routes (a copy of the methods where their walk ends).
    statics: Index,
    /// Bit `n % 64` set when a static path of `n` bytes is indexed: most
    /// dynamic paths skip the hash (one word: a shift of 128 bits costs
    /// more than the rare false positive).
    static_lengths: u64,
    /// How many indexed paths set each bit of `static_lengths`.
    length_counts: Vec<u32>,
    /// How many routes take any method: only while some do is a path that
    /// no route takes with its method searched again.
    any_method: usize,
    root: Node,
    /// Whether a node's dynamic segments with literal text (`a{c}c`) are
    /// searched before its bare parameters (`{a}`), as axum's are,
    /// rather than all in registration order.
    literal_first: bool,
}

/// The cost of a search of the static index, in the units of
/// `Node::walk_cost`: a step of a child search costs one, a node eight
/// (measured with callgrind: a search of the index costs about what the
/// walk through five nodes does).
const INDEX_COST: usize = 40;
const NODE_COST: usize = 8;

/// The bit of `static_lengths` for a path of `length` bytes.
#[inline]
fn length_bit(length: usize) -> u64 {
    1 << (length % 64)
}

impl Table {
    /// An empty table whose dynamic segments with literal text are
    /// searched before bare parameters, as axum's are.
    pub(crate) fn literal_first() -> Self {
        Self {
            literal_first: true,
            ..Self::default()
        }
    }

    /// Adds `pattern` for `method` (`None`: any method) as `route`, whose
    /// place in registration order is `key`. On a conflict, answers the
    /// route already there, and the table may be left part-changed: the
    /// caller drops it.
    ///
    /// A static path is not indexed here: [`settle`](Self::settle) decides,
    /// once the routes of a change are in.
    pub(crate) fn insert(
        &mut self,
        pattern: &Pattern,
        method: Option<&Method>,
        route: RouteId,
        key: Key,
    ) -> Result<(), RouteId> {
        let literal_first = self.literal_first;
        let mut node = &mut self.root;
        for step in steps(pattern) {
            match step {
                PathStep::Static(text) => node = node.descend(text.as_bytes()),
                PathStep::Dynamic(parts) => {
                    let dynamics = &mut node.forks_mut().dynamics;
                    let index = match dynamics.iter().position(|d| *d.parts == *parts) {
                        Some(index) => index,
                        None => {
                            dynamics.push(Dynamic {
                                parts: parts.into(),
                                node: Arc::default(),
                                key,
                            });
                            dynamics.len() - 1
                        }
                    };
                    let first = dynamics[index].key.min(key);
                    dynamics[index].key = first;
                    node.reorder(literal_first);
                    let dynamics = &mut node.forks_mut().dynamics;
                    let index = (dynamics.iter())
                        .position(|d| *d.parts == *parts)
                        .expect("still there");
                    node = Arc::make_mut(&mut dynamics[index].node);
                }
                PathStep::CatchAll(suffix) => {
                    let catch_alls = &mut node.forks_mut().catch_alls;
                    let index = match catch_alls.iter().position(|c| c.suffix == suffix) {
                        Some(index) => index,
                        None => {
                            catch_alls.push(CatchAll {
                                suffix,
                                methods: Methods::default(),
                                key,
                            });
                            catch_alls.len() - 1
                        }
                    };
                    let catch_all = &mut catch_alls[index];
                    catch_all.methods.insert(method, route, key)?;
                    catch_all.key = catch_all.key.min(key);
                    node.reorder(literal_first);
                    self.any_method += usize::from(method.is_none());
                    return Ok(());
                }
            }
        }
        node.methods.insert(method, route, key)?;
        self.any_method += usize::from(method.is_none());
        if let Some(path) = pattern.static_path() {
            if self.statics.contains(&path) {
                self.statics.insert(&path, node.methods.clone());
            }
        }
        Ok(())
    }

    /// Removes `route`, added for `pattern` and `method` with `key`;
    /// whether it was there.
    pub(crate) fn remove(
        &mut self,
        pattern: &Pattern,
        method: Option<&Method>,
        route: RouteId,
        key: Key,
    ) -> bool {
        let method_of = (method, self.literal_first);
        if !remove(
            &mut self.root,
            b"",
            &steps(pattern),
            method_of,
            (route, key),
        ) {
            return false;
        }
        self.any_method -= usize::from(method.is_none());
        if let Some(path) = pattern.static_path() {
            if self.statics.contains(&path) {
                match self.static_methods(&path) {
                    Some(methods) => self.statics.insert(&path, methods.clone()),
                    None => self.unindex(&path),
                }
            }
        }
        true
    }

    /// The routes at the static `path`, found by the walk.
    fn static_methods(&self, path: &str) -> Option<&Methods> {
        let methods = &self.root.find(path.as_bytes())?.methods;
        (!methods.is_empty()).then_some(methods)
    }

    fn unindex(&mut self, path: &str) {
        if self.statics.remove(path) {
            let count = &mut self.length_counts[path.len() % 64];
            *count -= 1;
            if *count == 0 {
                self.static_lengths &= !length_bit(path.len());
            }
        }
    }

    /// Indexes those of the static `paths` that the walk finds for more
    /// than a search of the index costs, and no longer those it finds for
    /// less: the few routes of a small table are found fastest by the walk,
    /// the deep fan-outs of a large one (`/items/0` to `/items/999`) by the
    /// index, whose cost does not grow with the table.
    pub(crate) fn settle<'p>(&mut self, paths: impl IntoIterator<Item = &'p str>) {
        for path in paths {
            let cost = (self.root.child(b'/')).and_then(|child| child.walk_cost(path.as_bytes()));
            let methods = (cost.filter(|&cost| cost > INDEX_COST))
                .and_then(|_| self.static_methods(path))
                .cloned();
            let Some(methods) = methods else {
                self.unindex(path);
                continue;
            };
            if !self.statics.contains(path) {
                self.length_counts.resize(64, 0);
                self.length_counts[path.len() % 64] += 1;
                self.static_lengths |= length_bit(path.len());
            }
            self.statics.insert(path, methods);
        }
    }

    /// Calls `visit` with every route that may match a path starting with
    /// the static `text` (`/` and static segments, or empty for every
    /// route).
    pub(crate) fn visit_covering(&self, text: &str, mut visit: impl FnMut(RouteId)) {
        self.root.visit_covering(text.as_bytes(), &mut visit);
    }

    /// Whether the table has no route.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.root.children.is_empty()
    }

    /// Whether a route of the table takes any method.
    #[inline]
    pub(crate) fn any_method(&self) -> bool {
        self.any_method != 0
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
            Some((route, false)) => Some(route),
            found if is_normalized(path) => found.map(|(route, _)| route),
            _ => self.find_unnormalized(path, captures, accept),
        }
    }

    /// The route for a path not in normal form (`//`, a trailing `/`)
    /// that the exact walk found no route for, or only a catch-all: found
    /// as its normal form would be.
    // Out of line and cold: the few requests that come here do not make
    // every lookup's code longer.
    #[cold]
    #[inline(never)]
    fn find_unnormalized(
        &self,
        path: &str,
        captures: &mut Captures,
        accept: impl Fn(&Methods) -> Option<RouteId>,
    ) -> Option<RouteId> {
        captures.truncate(0);
        if let Some(route) = self.statics.get(normalize(path).as_str()).and_then(&accept) {
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

#[cfg(test)]
mod tests {
    use super::path::has_double_slash;
    use super::*;

    fn table(routes: &[&str]) -> Table {
        let mut table = Table::default();
        for (id, route) in routes.iter().enumerate() {
            table
                .insert(
                    &Pattern::parse(route).unwrap(),
                    Some(&Method::GET),
                    id,
                    id as Key,
                )
                .unwrap();
        }
        table
    }

    /// Indexes what a compile indexes: the static paths that the walk
    /// finds for more than the index costs.
    fn finish(table: &mut Table, routes: &[&str]) {
        table.settle(routes.iter().copied().filter(|r| !r.contains('{')));
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
            let routes = ["/users/42", "/users/{id}", "/health"];
            let mut t = table(&routes);
            finish(&mut t, &routes);
            t
        };
        assert!(small.statics.len() == 0, "a small table is walked");
        assert_eq!(lookup(&small, "/users/42"), Some((0, vec![])));

        let mut routes: Vec<String> = (0..1000).map(|n| format!("/items/{n}")).collect();
        routes.push("/items/{id}".into());
        routes.push("/items/{id}/x".into());
        let routes: Vec<&str> = routes.iter().map(String::as_str).collect();
        // Not finished: its index is never searched, every path is walked.
        let walked = table(&routes);
        assert_eq!(walked.static_lengths, 0);
        let mut indexed = table(&routes);
        finish(&mut indexed, &routes);
        assert!(indexed.statics.contains("/items/999"));
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

    #[test]
    fn removing_routes_leaves_the_table_a_compile_of_the_rest_would_build() {
        let kept = ["/a/{x}", "/a/b/c", "/items/{id}", "/c/{*rest}", "/users/42"];
        let gone = [
            "/a/{y}.json",
            "/a/b",
            "/a/bcd",
            "/items/7",
            "/c/{*rest}/edit",
            "/z",
        ];
        let mut mixed = Table::default();
        let mut routes = Vec::new();
        for (id, route) in gone.iter().chain(&kept).enumerate() {
            let pattern = Pattern::parse(route).unwrap();
            mixed
                .insert(&pattern, Some(&Method::GET), id, id as Key)
                .unwrap();
            routes.push(pattern);
        }
        let all: Vec<&str> = gone.iter().chain(&kept).copied().collect();
        finish(&mut mixed, &all);
        let before = mixed.clone();
        for (id, pattern) in routes.iter().enumerate().take(gone.len()) {
            assert!(mixed.remove(pattern, Some(&Method::GET), id, id as Key));
            assert!(!mixed.remove(pattern, Some(&Method::GET), id, id as Key));
        }
        // The routes left, under the ids they had.
        let mut alone = Table::default();
        for (id, pattern) in routes.iter().enumerate().skip(gone.len()) {
            alone
                .insert(pattern, Some(&Method::GET), id, id as Key)
                .unwrap();
        }
        for path in [
            "/a/q",
            "/a/q.json",
            "/a/b",
            "/a/b/c",
            "/a/bcd",
            "/items/7",
            "/items/8",
        ]
        .into_iter()
        .chain(["/c/x/edit", "/c/x", "/users/42", "/z", "/"])
        {
            assert_eq!(lookup(&mixed, path), lookup(&alone, path), "{path}");
        }
        assert_eq!(format!("{:?}", mixed.root), format!("{:?}", alone.root));
        // The clone taken before is untouched.
        assert_eq!(lookup(&before, "/a/q.json").map(|(id, _)| id), Some(0));
        assert_eq!(lookup(&before, "/z").map(|(id, _)| id), Some(5));
    }

    #[test]
    fn dynamic_segments_keep_registration_order_whatever_the_order_of_changes() {
        let first = Pattern::parse("/a/{x}.json").unwrap();
        let second = Pattern::parse("/a/{y}").unwrap();
        let mut table = Table::default();
        // The later route is inserted first: its key puts it second.
        table.insert(&second, Some(&Method::GET), 1, 20).unwrap();
        table.insert(&first, Some(&Method::GET), 0, 10).unwrap();
        assert_eq!(lookup(&table, "/a/q.json").map(|(id, _)| id), Some(0));
        assert!(table.remove(&first, Some(&Method::GET), 0, 10));
        assert_eq!(lookup(&table, "/a/q.json").map(|(id, _)| id), Some(1));
        table.insert(&first, Some(&Method::GET), 2, 10).unwrap();
        assert_eq!(lookup(&table, "/a/q.json").map(|(id, _)| id), Some(2));
    }
}
