//! The walk: one search of the tree for a path, depth first with
//! backtracking.

use crate::params::Captures;

use super::{
    Dynamic, Methods, Node,
    path::{catch_all_end, same},
};
use crate::router::request::pattern::match_parts;

/// One search of the tree for `path`.
///
/// A path in normal form (see [`is_normalized`]) is compared with the
/// tree's bytes as it is. Any other path is compared as its normal form
/// would be, without building it: a `/` of the tree takes a run of slashes
/// (or none at the very start), and trailing slashes end the path; the
/// captures still point into the path as received.
#[derive(Clone, Copy)]
pub(crate) struct Walk<'p, const NORMALIZED: bool> {
    pub(super) path: &'p str,
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
            if node.forks.is_none() {
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
        if !node.dynamics().is_empty() {
            let rest = &self.path.as_bytes()[start..];
            let end = start + rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
            let segment = &self.path[start..end];
            for Dynamic {
                parts, node: child, ..
            } in node.dynamics()
            {
                if match_parts(parts, segment, start, |a, b| captures.push(a, b)) {
                    if let Some(found) = self.node(child, end, captures, accept) {
                        return Some(found);
                    }
                }
                captures.truncate(mark);
            }
        }
        for catch_all in node.catch_alls() {
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
    pub(crate) fn root<R>(
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
