//! [`Methods`]: the routes that end at one place of the tree, by method.

use http::Method;

use super::{Key, RouteId};

/// The routes that end at one place of the tree, by method.
#[derive(Clone, Debug, Default)]
pub(crate) struct Methods {
    /// In the order of their keys.
    entries: Vec<(Method, RouteId, Key)>,
    any: Option<(RouteId, Key)>,
}

impl Methods {
    /// Registers `route` for `method` (`None`: any method), or returns the
    /// route already there.
    pub(super) fn insert(
        &mut self,
        method: Option<&Method>,
        route: RouteId,
        key: Key,
    ) -> Result<(), RouteId> {
        let Some(method) = method else {
            if let Some((existing, _)) = self.any {
                return Err(existing);
            }
            self.any = Some((route, key));
            return Ok(());
        };
        if let Some(existing) = self.get(method) {
            return Err(existing);
        }
        let at = self.entries.partition_point(|&(_, _, k)| k < key);
        self.entries.insert(at, (method.clone(), route, key));
        Ok(())
    }

    /// Removes `route`, registered for `method`; whether it was here.
    pub(super) fn remove(&mut self, method: Option<&Method>, route: RouteId) -> bool {
        match method {
            None if self.any.is_some_and(|(id, _)| id == route) => {
                self.any = None;
                true
            }
            None => false,
            Some(method) => {
                let before = self.entries.len();
                self.entries
                    .retain(|(m, id, _)| !(m == method && *id == route));
                self.entries.len() != before
            }
        }
    }

    /// The key of the first route registered here.
    pub(super) fn min_key(&self) -> Option<Key> {
        let first = self.entries.iter().map(|&(_, _, key)| key).min();
        match (first, self.any) {
            (Some(a), Some((_, b))) => Some(a.min(b)),
            (a, b) => a.or(b.map(|(_, key)| key)),
        }
    }

    #[inline]
    pub(crate) fn get(&self, method: &Method) -> Option<RouteId> {
        self.entries
            .iter()
            .find(|(m, _, _)| m == method)
            .map(|&(_, route, _)| route)
    }

    #[inline]
    pub(crate) fn any(&self) -> Option<RouteId> {
        self.any.map(|(route, _)| route)
    }

    /// The first route registered here for a method, else the any-method
    /// one.
    pub(crate) fn first(&self) -> Option<RouteId> {
        self.entries
            .first()
            .map(|&(_, route, _)| route)
            .or(self.any())
    }

    pub(crate) fn methods(&self) -> impl Iterator<Item = &Method> {
        self.entries.iter().map(|(method, _, _)| method)
    }

    /// Every route here.
    pub(super) fn routes(&self) -> impl Iterator<Item = RouteId> + '_ {
        (self.entries.iter().map(|&(_, route, _)| route)).chain(self.any())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.any.is_none()
    }
}
