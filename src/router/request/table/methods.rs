//! [`Methods`]: the routes that end at one place of the tree, by method.

use http::Method;

use super::{Key, RouteId, packed::Packed};

/// The routes that end at one place of the tree, by method.
///
/// One list, the route for any method (if one) among them as `None`: a
/// node holds two words for its methods, whether it has any or not.
#[derive(Clone, Debug, Default)]
pub(crate) struct Methods {
    /// In the order of their keys.
    entries: Packed<(Option<Method>, RouteId, Key)>,
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
        if let Some(&(_, existing, _)) = self.entries.iter().find(|(m, _, _)| m.as_ref() == method)
        {
            return Err(existing);
        }
        let at = self.entries.partition_point(|&(_, _, k)| k < key);
        self.entries.insert(at, (method.cloned(), route, key));
        Ok(())
    }

    /// Removes `route`, registered for `method`; whether it was here.
    pub(super) fn remove(&mut self, method: Option<&Method>, route: RouteId) -> bool {
        let Some(at) =
            (self.entries.iter()).position(|(m, id, _)| m.as_ref() == method && *id == route)
        else {
            return false;
        };
        self.entries.remove(at);
        true
    }

    /// The key of the first route registered here.
    pub(super) fn min_key(&self) -> Option<Key> {
        self.entries.iter().map(|&(_, _, key)| key).min()
    }

    #[inline]
    pub(crate) fn get(&self, method: &Method) -> Option<RouteId> {
        self.entries
            .iter()
            .find(|(m, _, _)| m.as_ref() == Some(method))
            .map(|&(_, route, _)| route)
    }

    #[inline]
    pub(crate) fn any(&self) -> Option<RouteId> {
        self.entries
            .iter()
            .find(|(m, _, _)| m.is_none())
            .map(|&(_, route, _)| route)
    }

    /// The first route registered here for a method, else the any-method
    /// one.
    pub(crate) fn first(&self) -> Option<RouteId> {
        self.entries
            .iter()
            .find(|(m, _, _)| m.is_some())
            .map(|&(_, route, _)| route)
            .or(self.any())
    }

    pub(crate) fn methods(&self) -> impl Iterator<Item = &Method> {
        self.entries
            .iter()
            .filter_map(|(method, _, _)| method.as_ref())
    }

    /// Every route here: those for a method, then the any-method one.
    pub(super) fn routes(&self) -> impl Iterator<Item = RouteId> + '_ {
        let of = |any: bool| {
            (self.entries.iter())
                .filter(move |(m, _, _)| m.is_none() == any)
                .map(|&(_, route, _)| route)
        };
        of(false).chain(of(true))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
