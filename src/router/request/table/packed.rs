//! [`Packed`]: a list that holds exactly its elements, for the table's
//! nodes.
//!
//! A `Vec` is three words and grows by doubling: a node's list of one
//! child or one method held room for four. The table is built once and
//! read many times, so its lists are boxed slices, two words and no spare
//! room, reallocated on each change (at setup time, never per request).

use std::ops::{Deref, DerefMut};

/// A boxed slice changed as a `Vec` is, keeping no spare capacity.
#[derive(Clone, Debug)]
pub(crate) struct Packed<T>(Box<[T]>);

impl<T> Default for Packed<T> {
    fn default() -> Self {
        Self(Box::default())
    }
}

impl<T> Packed<T> {
    /// Runs `change` on the elements as a `Vec`, then packs them again.
    fn change<R>(&mut self, change: impl FnOnce(&mut Vec<T>) -> R) -> R {
        let mut elements = std::mem::take(&mut self.0).into_vec();
        let result = change(&mut elements);
        self.0 = elements.into_boxed_slice();
        result
    }

    pub(crate) fn push(&mut self, element: T) {
        self.insert(self.len(), element);
    }

    pub(crate) fn insert(&mut self, index: usize, element: T) {
        self.change(|elements| {
            elements.reserve_exact(1);
            elements.insert(index, element);
        });
    }

    pub(crate) fn remove(&mut self, index: usize) -> T {
        self.change(|elements| elements.remove(index))
    }

    pub(crate) fn pop(&mut self) -> Option<T> {
        self.change(Vec::pop)
    }
}

impl<T> Deref for Packed<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for Packed<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<'a, T> IntoIterator for &'a Packed<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_list_changes_as_a_vec_and_keeps_no_spare_room() {
        let mut list = Packed::default();
        let mut vec = Vec::new();
        for n in 0..10 {
            list.insert(n / 2, n);
            vec.insert(n / 2, n);
        }
        list.push(10);
        vec.push(10);
        assert_eq!(list.remove(3), vec.remove(3));
        assert_eq!(list.pop(), vec.pop());
        assert_eq!(&*list, &vec[..]);
        let mut elements = list.0.into_vec();
        assert_eq!(elements.capacity(), elements.len());
        elements.clear();
    }
}
