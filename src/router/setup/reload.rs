//! Hot reload: a service over a routing table that can be replaced while it
//! serves.

use std::{
    fmt,
    sync::{Arc, Mutex, PoisonError},
};

use arc_swap::{ArcSwap, cache::Cache};

use super::{
    builder::{RouteSettings, Router},
    compile::{Added, add},
    error::RouteError,
};
use crate::handler::StateType;
use crate::router::request::{
    compiled::{CompiledRouter, Tables},
    service::serves_requests,
};

/// A router whose table can be swapped, or changed by registering and
/// unregistering modules by id, while it serves.
///
/// Each request runs entirely on the table that was live when it was
/// called: a swap never shows half a table, in-flight requests finish on
/// the table they started with, and a request called after
/// [`swap`](Self::swap) or [`register`](Self::register) returned sees the new
/// one. Compiling happens in the caller of `register` / `unregister`, off
/// the request path; a registration that does not compile returns its
/// [`RouteError`] and leaves the live table as it was.
///
/// A change costs what it changes, not what the table holds: each module
/// is compiled once, when it is registered, and the live table is
/// persistent — a change copies the nodes of the routes it adds or removes
/// and shares the rest with the table before it, so requests in flight
/// keep theirs. Registering or removing a module of `m` routes costs about
/// `m` walks of the tree, whatever the number of routes live; a hook
/// costs in proportion to the routes under its scope (a hook on `/`, all
/// of them). To make several changes live at once, use
/// [`update`](Self::update).
///
/// One persistent table rather than a table per module, searched in turn:
/// a request's lookup stays one walk of one tree, whatever the number of
/// modules, and costs what it costs on a [`CompiledRouter`].
///
/// Cloning shares the table: every clone serves, and changes, the same one.
///
/// ```
/// use http::{Method, Request};
/// use pronghorn::{Router, router::Reloadable};
///
/// let app = Reloadable::new(Router::new().get("/", || "home")).unwrap();
/// app.register("blog", Router::new().get("/blog", || "posts").get("/blog/{id}", || "post")).unwrap();
/// assert!(app.current().at(&Method::GET, "/blog/1").is_some());
///
/// // A conflicting module is refused; the live table is untouched.
/// assert!(app.register("other", Router::new().get("/", || "again")).is_err());
///
/// app.unregister("blog").unwrap();
/// assert!(app.current().at(&Method::GET, "/blog/1").is_none());
/// ```
pub struct Reloadable {
    shared: Arc<Shared>,
    /// This handle's view of the live table: revalidated on every call by
    /// one pointer comparison, reloaded only after a swap. Made at the
    /// handle's first call: a handle that is only cloned (the one `serve`
    /// clones for each connection) holds no table, so a table a swap
    /// replaced is let go once no request, and no handle that served one
    /// since, holds it.
    live: Option<Cache<Arc<ArcSwap<Tables>>, Arc<Tables>>>,
}

impl Clone for Reloadable {
    /// Another handle on the same live table, with a view of its own.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            live: None,
        }
    }
}

struct Shared {
    live: Arc<ArcSwap<Tables>>,
    /// What the live table's modules added to it: what taking one away
    /// takes.
    registry: Mutex<Registry>,
}

struct Registry {
    /// The base's settings for routes, which a module's routes take where
    /// neither they nor their module set one.
    settings: RouteSettings,
    /// The modules, in registration order.
    modules: Vec<Module>,
    /// The place in registration order of the next new module (the base
    /// is at 0).
    next_place: u32,
}

struct Module {
    id: Arc<str>,
    added: Added,
}

impl Registry {
    fn new(settings: RouteSettings) -> Self {
        Self {
            settings,
            modules: Vec::new(),
            next_place: 1,
        }
    }
}

/// The modules of a [`Reloadable`] being changed by
/// [`Reloadable::update`]: registrations, replacements and removals,
/// staged here and made live together.
///
/// Each change keeps the rules of the `Reloadable` method of its name
/// (registration order, a replaced module's place); nothing is compiled
/// until the update ends, so a conflict shows then, as the update's error.
#[derive(Debug)]
pub struct Modules {
    modules: Vec<(Arc<str>, ModuleChange)>,
}

/// A module of an update: live as it is, or to be added.
#[derive(Debug)]
enum ModuleChange {
    /// A module live now, at this place.
    Live(u32),
    /// A module to add: at the place of the one it replaces, or at a new
    /// place after every other.
    New {
        router: Box<Router>,
        place: Option<u32>,
    },
}

impl Modules {
    /// Stages `module` under `id`, as [`Reloadable::register`] adds it.
    pub fn register(&mut self, id: impl Into<String>, module: Router) -> &mut Self {
        let staged = ModuleChange::New {
            router: Box::new(module),
            place: None,
        };
        self.modules.push((id.into().into(), staged));
        self
    }

    /// Stages the removal of everything under `id`, as
    /// [`Reloadable::unregister`] removes it. Returns whether anything was
    /// under it.
    pub fn unregister(&mut self, id: &str) -> bool {
        let before = self.modules.len();
        self.modules.retain(|(known, _)| **known != *id);
        self.modules.len() != before
    }

    /// Stages `module` in place of everything under `id`, as
    /// [`Reloadable::replace`] puts it: at the place of the id's first
    /// registration, or last. Returns whether anything was under `id`.
    pub fn replace(&mut self, id: impl Into<String>, module: Router) -> bool {
        let id: Arc<str> = id.into().into();
        let Some(position) = self.modules.iter().position(|(known, _)| *known == id) else {
            self.register(&*id, module);
            return false;
        };
        let place = match self.modules[position].1 {
            ModuleChange::Live(place) => Some(place),
            ModuleChange::New { place, .. } => place,
        };
        self.modules[position].1 = ModuleChange::New {
            router: Box::new(module),
            place,
        };
        // The first registration under `id`, now `module`, stays.
        let mut first = true;
        self.modules
            .retain(|(known, _)| *known != id || std::mem::take(&mut first));
        true
    }

    /// The ids staged, in registration order (repeated ids once).
    pub fn ids(&self) -> Vec<String> {
        ids(self.modules.iter().map(|(id, _)| &**id))
    }
}

/// The ids of `modules`, in order, each once.
fn ids<'a>(modules: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    (modules.filter(|id| seen.insert(*id)))
        .map(str::to_owned)
        .collect()
}

impl fmt::Debug for Reloadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let registry = self.lock();
        let modules: Vec<&str> = registry.modules.iter().map(|m| &*m.id).collect();
        f.debug_struct("Reloadable")
            .field("modules", &modules)
            .finish()
    }
}

impl Reloadable {
    /// Compiles `base`, the router that modules are added to, and serves
    /// it.
    ///
    /// # Errors
    ///
    /// The [`RouteError`] of compiling `base`.
    pub fn new(base: Router) -> Result<Self, RouteError> {
        let settings = base.settings.clone();
        let table = base.compile()?;
        let live = Arc::new(ArcSwap::new(table.into_tables()));
        Ok(Self {
            live: None,
            shared: Arc::new(Shared {
                live,
                registry: Mutex::new(Registry::new(settings)),
            }),
        })
    }

    /// The live table.
    pub fn current(&self) -> CompiledRouter {
        CompiledRouter::new(self.shared.live.load_full())
    }

    /// Compiles `base` and makes it live, as the new base: registered
    /// modules are dropped with the old table.
    ///
    /// # Errors
    ///
    /// The [`RouteError`] of compiling `base`; nothing changes then.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Router, router::Reloadable};
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let app = Reloadable::new(Router::new().get("/v1", || "one")).unwrap();
    /// let served = app.clone(); // as `serve` would hold it
    /// app.swap(Router::new().get("/v2", || "two")).unwrap();
    ///
    /// let request = Request::get("/v1").body(String::new()).unwrap();
    /// assert_eq!(served.clone().oneshot(request).await.unwrap().status(), StatusCode::NOT_FOUND);
    /// let request = Request::get("/v2").body(String::new()).unwrap();
    /// assert_eq!(served.oneshot(request).await.unwrap().status(), StatusCode::OK);
    /// // A table that does not compile is refused; `/v2` stays live.
    /// assert!(app.swap(Router::new().get("v3", || "three")).is_err());
    /// # }
    /// ```
    pub fn swap(&self, base: Router) -> Result<(), RouteError> {
        let settings = base.settings.clone();
        let table = base.compile()?;
        let mut registry = self.lock();
        *registry = Registry::new(settings);
        self.shared.live.store(table.into_tables());
        Ok(())
    }

    /// Adds `module`'s routes and hooks under `id` (an id may be used by
    /// several registrations) and makes the new table live.
    ///
    /// # Errors
    ///
    /// The [`RouteError`] the new table would have, for example a route
    /// that conflicts with one already live; nothing changes then.
    pub fn register(&self, id: impl Into<String>, module: Router) -> Result<(), RouteError> {
        self.update(|modules| {
            modules.register(id, module);
            Ok(())
        })
    }

    /// Removes everything registered under `id` and makes the new table
    /// live. Returns whether anything was registered under it.
    ///
    /// # Errors
    ///
    /// Removing routes cannot make a valid table invalid, but the error of
    /// the rebuilt table is returned rather than assumed away; nothing
    /// changes then.
    pub fn unregister(&self, id: &str) -> Result<bool, RouteError> {
        if !self.lock().modules.iter().any(|module| *module.id == *id) {
            return Ok(false);
        }
        self.update(|modules| Ok(modules.unregister(id)))
    }

    /// Replaces everything registered under `id` with `module`, in one
    /// change of the live table: no request finds the table without
    /// either. The module keeps the place of the id's first registration
    /// in the registration order (which orders hooks of equal priority
    /// and dynamic routes), or comes last if the id is new. Returns
    /// whether anything was registered under `id`.
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::{Router, router::Reloadable};
    ///
    /// let app = Reloadable::new(Router::new()).unwrap();
    /// app.register("clock", Router::new().get("/time", || "tick 0")).unwrap();
    /// // `unregister` then `register` would leave `/time` out between the two.
    /// assert!(app.replace("clock", Router::new().get("/time", || "tick 1")).unwrap());
    /// assert!(app.current().at(&Method::GET, "/time").is_some());
    /// assert_eq!(app.modules(), ["clock"]);
    /// ```
    ///
    /// # Errors
    ///
    /// The [`RouteError`] the new table would have; nothing changes then.
    pub fn replace(&self, id: impl Into<String>, module: Router) -> Result<bool, RouteError> {
        self.update(|modules| Ok(modules.replace(id, module)))
    }

    /// Makes several changes live at once: `change` stages registrations,
    /// replacements and removals on the [`Modules`], and when it returns
    /// `Ok` the result is compiled once and swapped in whole. No request
    /// sees part of the changes; loading many modules costs one compile,
    /// not one per module. Returns what `change` returned.
    ///
    /// ```
    /// use http::Method;
    /// use pronghorn::{Router, router::Reloadable};
    ///
    /// let app = Reloadable::new(Router::new()).unwrap();
    /// app.register("old", Router::new().get("/old", || "old")).unwrap();
    /// app.update(|modules| {
    ///     for n in 0..10 {
    ///         modules.register(format!("shop-{n}"), Router::new().get(&format!("/shop/{n}"), || "shop"));
    ///     }
    ///     modules.unregister("old");
    ///     Ok::<_, pronghorn::router::RouteError>(())
    /// })
    /// .unwrap();
    /// assert!(app.current().at(&Method::GET, "/shop/9").is_some());
    /// assert!(app.current().at(&Method::GET, "/old").is_none());
    ///
    /// // One conflict refuses the whole update: nothing of it is live.
    /// let refused = app.update(|modules| {
    ///     modules.register("blog", Router::new().get("/blog", || "posts"));
    ///     modules.register("clash", Router::new().get("/shop/1", || "again"));
    ///     Ok::<_, pronghorn::router::RouteError>(())
    /// });
    /// assert!(refused.is_err());
    /// assert!(app.current().at(&Method::GET, "/blog").is_none());
    /// ```
    ///
    /// # Errors
    ///
    /// The error `change` returned, or the [`RouteError`] of the table the
    /// changes would make (converted with `From`); nothing changes then.
    pub fn update<T, E>(&self, change: impl FnOnce(&mut Modules) -> Result<T, E>) -> Result<T, E>
    where
        E: From<RouteError>,
    {
        let mut registry = self.lock();
        let mut staged = Modules {
            modules: (registry.modules.iter())
                .map(|module| (module.id.clone(), ModuleChange::Live(module.added.place())))
                .collect(),
        };
        let answer = change(&mut staged)?;
        let (kept, added, next_place) = self.apply(&registry, staged)?;
        // Made live: the registry follows, in registration order (the
        // order of places).
        (registry.modules).retain(|module| kept.binary_search(&module.added.place()).is_ok());
        for module in added {
            let place = module.added.place();
            let at = (registry.modules).partition_point(|m| m.added.place() < place);
            registry.modules.insert(at, module);
        }
        registry.next_place = next_place;
        Ok(answer)
    }

    /// Builds the table that `staged` makes of the live one and makes it
    /// live. Returns the places of the modules kept, in order, the modules
    /// added, and the place of the next new module.
    fn apply(
        &self,
        registry: &Registry,
        staged: Modules,
    ) -> Result<(Vec<u32>, Vec<Module>, u32), RouteError> {
        let mut kept: Vec<u32> = (staged.modules.iter())
            .filter_map(|(_, staged)| match staged {
                ModuleChange::Live(place) => Some(*place),
                ModuleChange::New { .. } => None,
            })
            .collect();
        kept.sort_unstable();
        let is_kept = |module: &&Module| kept.binary_search(&module.added.place()).is_ok();
        // A clone of the live table shares all of it: what follows copies
        // only what the changes change.
        let mut next = Tables::clone(&self.shared.live.load());
        let mut gave_state = false;
        for module in registry.modules.iter().filter(|module| !is_kept(module)) {
            gave_state |= module.added.gave_state();
            next.remove(module.added.parts());
        }
        // State given by any module of the change may be read by all.
        let also_held: Vec<StateType> = (staged.modules.iter())
            .flat_map(|(_, staged)| match staged {
                ModuleChange::New { router, .. } => router.state_types.as_slice(),
                ModuleChange::Live(_) => &[],
            })
            .copied()
            .collect();
        let mut next_place = registry.next_place;
        let mut added = Vec::new();
        for (id, staged) in staged.modules {
            let ModuleChange::New { router, place } = staged else {
                continue;
            };
            let place = place.unwrap_or_else(|| {
                next_place += 1;
                next_place - 1
            });
            let module = add(&mut next, *router, place, &registry.settings, &also_held)?;
            added.push(Module { id, added: module });
        }
        if gave_state {
            let kept = registry.modules.iter().filter(is_kept);
            if let Some(error) = kept.chain(&added).find_map(|m| m.added.unmet_state(&next)) {
                return Err(error);
            }
        }
        self.shared.live.store(Arc::new(next));
        Ok((kept, added, next_place))
    }

    /// The ids registered, in registration order (repeated ids once).
    pub fn modules(&self) -> Vec<String> {
        ids(self.lock().modules.iter().map(|module| &*module.id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        // A panic while holding the lock left the registry as it was
        // before the failed change: it follows a table once it is live.
        self.shared
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Reloadable {
    /// The live table, as this handle sees it.
    #[inline(always)]
    fn live(&mut self) -> &Arc<Tables> {
        let shared = &self.shared;
        (self.live)
            .get_or_insert_with(|| Cache::new(Arc::clone(&shared.live)))
            .load()
    }
}

serves_requests!(
    /// Serves a request with any body, as [`CompiledRouter`] does.
    Reloadable,
    |this| this.live()
);
