//! The static index: a route's static path to the routes there, as a
//! persistent hash trie.
//!
//! A hash trie in its plainest form: each level takes four bits of the
//! path's hash to choose one of sixteen slots, and a leaf holds the path of
//! one full hash. Its nodes are shared behind `Arc`s: a change copies the
//! branches on the way to its leaf (five levels at a million paths) and
//! shares the rest, so the table a `Reloadable` makes live after a change
//! shares all but those with the table before it. Written here rather than taken from
//! a crate: the persistent maps on crates.io carry far more than these
//! hundred lines, and none hashes with the [`FxHasher`] the lookup needs.

use std::{
    hash::{BuildHasher, BuildHasherDefault, Hasher},
    sync::Arc,
};

use super::{Methods, tail_word};

/// The multiply-rotate hash of rustc's `FxHasher`, for the static index.
///
/// Written here rather than taken from a crate: it is a dozen lines, and
/// SipHash costs more than the rest of a static lookup. The index holds only
/// the application's own routes; a request can choose what it looks up, not
/// what is stored, so it cannot lengthen a search beyond what the routes
/// already make.
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
        // The multiplication moves entropy up: the trie reads the top bits
        // first.
        self.0.rotate_left(26)
    }
}

#[inline]
fn hash(path: &str) -> u64 {
    BuildHasherDefault::<FxHasher>::default().hash_one(path.as_bytes())
}

/// Bits of the hash each level takes: sixteen slots a branch, indexed
/// without counting bits (a population count is a dozen instructions on
/// the x86-64 baseline).
const BITS: u32 = 4;
const SLOTS: usize = 1 << BITS;

/// The slot of `hash` at the level that starts at bit `shift`.
#[inline]
fn slot(hash: u64, shift: u32) -> usize {
    (hash >> shift) as usize % SLOTS
}

/// The persistent map of static paths to their routes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    root: Branch,
    len: usize,
}

#[derive(Clone, Debug, Default)]
struct Branch {
    slots: [Option<Slot>; SLOTS],
}

#[derive(Clone, Debug)]
enum Slot {
    Branch(Arc<Branch>),
    Leaf(Arc<Leaf>),
}

/// The path of one full hash, and the others of that hash if a collision
/// put any there.
#[derive(Clone, Debug)]
struct Leaf {
    hash: u64,
    path: Box<str>,
    methods: Methods,
    collided: Vec<(Box<str>, Methods)>,
}

impl Leaf {
    fn new(hash: u64, path: &str, methods: Methods) -> Self {
        Self {
            hash,
            path: path.into(),
            methods,
            collided: Vec::new(),
        }
    }

    #[inline]
    fn get(&self, path: &str) -> Option<&Methods> {
        if *self.path == *path {
            return Some(&self.methods);
        }
        self.get_collided(path)
    }

    #[cold]
    fn get_collided(&self, path: &str) -> Option<&Methods> {
        let (_, methods) = self.collided.iter().find(|(key, _)| **key == *path)?;
        Some(methods)
    }

    /// Puts `methods` at `path`; whether the path is new.
    fn insert(&mut self, path: &str, methods: Methods) -> bool {
        if *self.path == *path {
            self.methods = methods;
            return false;
        }
        match self.collided.iter_mut().find(|(key, _)| **key == *path) {
            Some((_, old)) => {
                *old = methods;
                false
            }
            None => {
                self.collided.push((path.into(), methods));
                true
            }
        }
    }

    /// Removes `path`; whether it was there. The leaf is left empty (its
    /// path blank) only when it held nothing else.
    fn remove(&mut self, path: &str) -> bool {
        if *self.path == *path {
            match self.collided.pop() {
                Some((path, methods)) => (self.path, self.methods) = (path, methods),
                None => self.path = "".into(),
            }
            return true;
        }
        let before = self.collided.len();
        self.collided.retain(|(key, _)| **key != *path);
        self.collided.len() != before
    }
}

impl Index {
    /// How many paths are indexed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The routes at `path`.
    #[inline]
    pub(crate) fn get(&self, path: &str) -> Option<&Methods> {
        let hash = hash(path);
        let mut branch = &self.root;
        let mut shift = 0;
        loop {
            match branch.slots[slot(hash, shift)].as_ref()? {
                Slot::Branch(next) => {
                    branch = next;
                    shift += BITS;
                }
                Slot::Leaf(leaf) if leaf.hash == hash => return leaf.get(path),
                Slot::Leaf(_) => return None,
            }
        }
    }

    /// Whether `path` is indexed.
    pub(crate) fn contains(&self, path: &str) -> bool {
        self.get(path).is_some()
    }

    /// Puts `methods` at `path`, in place of what was there.
    pub(crate) fn insert(&mut self, path: &str, methods: Methods) {
        let hash = hash(path);
        if insert(&mut self.root, 0, hash, path, methods) {
            self.len += 1;
        }
    }

    /// Removes `path`; whether it was there.
    pub(crate) fn remove(&mut self, path: &str) -> bool {
        let removed = remove(&mut self.root, 0, hash(path), path);
        self.len -= usize::from(removed);
        removed
    }
}

/// Inserts below `branch`, which takes the bits of `hash` from `shift`;
/// whether the path is new.
fn insert(branch: &mut Branch, shift: u32, hash: u64, path: &str, methods: Methods) -> bool {
    let slot = &mut branch.slots[self::slot(hash, shift)];
    match slot {
        None => {
            *slot = Some(Slot::Leaf(Arc::new(Leaf::new(hash, path, methods))));
            true
        }
        Some(Slot::Branch(next)) => insert(Arc::make_mut(next), shift + BITS, hash, path, methods),
        Some(Slot::Leaf(leaf)) if leaf.hash == hash => Arc::make_mut(leaf).insert(path, methods),
        Some(Slot::Leaf(leaf)) => {
            // Two hashes share the bits so far: a branch of their own,
            // with the leaf one level down.
            let mut below = Branch::default();
            below.slots[self::slot(leaf.hash, shift + BITS)] = Some(Slot::Leaf(leaf.clone()));
            let added = insert(&mut below, shift + BITS, hash, path, methods);
            *slot = Some(Slot::Branch(Arc::new(below)));
            added
        }
    }
}

/// Removes below `branch`; whether the path was there. A branch left with
/// a single leaf keeps it: the lookup ends at the leaf either way.
fn remove(branch: &mut Branch, shift: u32, hash: u64, path: &str) -> bool {
    let slot = &mut branch.slots[self::slot(hash, shift)];
    let empty = match slot {
        None => return false,
        Some(Slot::Branch(next)) => {
            if !remove(Arc::make_mut(next), shift + BITS, hash, path) {
                return false;
            }
            next.slots.iter().all(Option::is_none)
        }
        Some(Slot::Leaf(leaf)) => {
            if leaf.hash != hash || leaf.get(path).is_none() {
                return false;
            }
            let leaf = Arc::make_mut(leaf);
            leaf.remove(path);
            leaf.path.is_empty()
        }
    };
    if empty {
        *slot = None;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_until_removed_and_copies_keep_their_own() {
        let mut index = Index::default();
        let paths: Vec<String> = (0..5000).map(|n| format!("/items/{n}")).collect();
        for path in &paths {
            index.insert(path, Methods::default());
        }
        assert_eq!(index.len(), 5000);
        let before = index.clone();
        for path in paths.iter().step_by(2) {
            assert!(index.remove(path));
            assert!(!index.remove(path));
        }
        assert_eq!(index.len(), 2500);
        for (n, path) in paths.iter().enumerate() {
            assert_eq!(index.contains(path), n % 2 == 1, "{path}");
            assert!(before.contains(path), "{path}");
        }
        assert!(!index.contains("/items/5000"));
        assert_eq!(before.len(), 5000);
    }
}
