//! The compiled router's routes and hooks by id: a persistent slab.

use std::{ops::Index, sync::Arc};

/// Ids per chunk.
const CHUNK: usize = 64;

/// Values by id, in chunks shared behind `Arc`s: a clone copies one pointer
/// per chunk, and a change after it copies the chunk it changes (its
/// pointers, not its values). The ids of removed values are given again.
pub(crate) struct Slab<T: ?Sized> {
    chunks: Vec<Arc<Chunk<T>>>,
    /// Ids given and removed since, to give again.
    free: Vec<usize>,
    /// How many ids have been given.
    given: usize,
    len: usize,
}

/// A chunk of values: a whole array, so that its index needs no check.
type Chunk<T> = [Option<Arc<T>>; CHUNK];

impl<T: ?Sized> Clone for Slab<T> {
    fn clone(&self) -> Self {
        Self {
            chunks: self.chunks.clone(),
            free: self.free.clone(),
            given: self.given,
            len: self.len,
        }
    }
}

impl<T: ?Sized> Default for Slab<T> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            free: Vec::new(),
            given: 0,
            len: 0,
        }
    }
}

impl<T: ?Sized> Slab<T> {
    /// Stores `value`; its id.
    pub(crate) fn insert(&mut self, value: Arc<T>) -> usize {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                if self.given % CHUNK == 0 {
                    self.chunks.push(Arc::new(std::array::from_fn(|_| None)));
                }
                self.given += 1;
                self.given - 1
            }
        };
        self.set(id, value);
        self.len += 1;
        id
    }

    /// Puts `value` in place of the value of `id`.
    pub(crate) fn set(&mut self, id: usize, value: Arc<T>) {
        Arc::make_mut(&mut self.chunks[id / CHUNK])[id % CHUNK] = Some(value);
    }

    /// Removes the value of `id`.
    pub(crate) fn remove(&mut self, id: usize) -> Option<Arc<T>> {
        let removed = Arc::make_mut(self.chunks.get_mut(id / CHUNK)?)[id % CHUNK].take()?;
        self.free.push(id);
        self.len -= 1;
        Some(removed)
    }

    /// The value of `id`.
    #[inline]
    pub(crate) fn get(&self, id: usize) -> Option<&T> {
        self.chunks.get(id / CHUNK)?[id % CHUNK].as_deref()
    }

    /// How many values are stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every value, with its id, in the order of the ids.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        (self.chunks.iter().enumerate()).flat_map(|(n, chunk)| {
            (chunk.iter().enumerate())
                .filter_map(move |(i, value)| Some((n * CHUNK + i, value.as_deref()?)))
        })
    }
}

impl<T: ?Sized> Index<usize> for Slab<T> {
    type Output = T;

    #[inline]
    fn index(&self, id: usize) -> &T {
        self.get(id).expect("the id of a stored value")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_stay_until_removed_and_clones_keep_their_values() {
        let mut slab = Slab::default();
        let ids: Vec<usize> = (0..200).map(|n| slab.insert(Arc::new(n))).collect();
        assert_eq!(ids, (0..200).collect::<Vec<_>>());
        let before = slab.clone();
        assert_eq!(slab.remove(70).as_deref(), Some(&70));
        assert_eq!(slab.remove(70), None);
        slab.set(3, Arc::new(1000));
        assert_eq!(slab.insert(Arc::new(7000)), 70);
        assert_eq!(
            (slab[3], slab[70], slab[199], slab.len()),
            (1000, 7000, 199, 200)
        );
        assert_eq!((before[3], before[70]), (3, 70));
        assert_eq!(slab.iter().count(), 200);
        assert!(slab.get(200).is_none());
    }
}
