//! Hot reload: a service over a routing table that can be replaced while it
//! serves.

use std::{
    convert::Infallible,
    fmt,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
};

use arc_swap::{ArcSwap, cache::Cache};
use http::{Request, Response};
use tower_service::Service;

use super::{
    builder::Router, compile::CompiledRouter, compile::Inner, error::RouteError,
    pipeline::ResponseFuture,
};
use crate::Body;

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
/// Each change compiles the whole table, the base and every module: its
/// cost grows with the application, not with the change. To load many
/// modules, or make several changes, use [`update`](Self::update): one
/// compile for all of them, made live at once.
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
    /// one pointer comparison, reloaded only after a swap.
    live: Cache<Arc<ArcSwap<Inner>>, Arc<Inner>>,
}

struct Shared {
    live: Arc<ArcSwap<Inner>>,
    /// The base router and the modules by id, in registration order: what
    /// the live table was compiled from.
    sources: Mutex<Sources>,
}

struct Sources {
    base: Router,
    modules: Vec<(String, Router)>,
}

impl Sources {
    /// Compiles the base with `modules`, changing nothing: a change to the
    /// sources is made once the table it gives has compiled.
    fn compile(&self, modules: &[(String, Router)]) -> Result<CompiledRouter, RouteError> {
        modules
            .iter()
            .fold(self.base.clone(), |router, (_, module)| {
                router.merge(module.clone())
            })
            .compile()
    }
}

/// The modules of a [`Reloadable`] being changed by
/// [`Reloadable::update`]: registrations, replacements and removals,
/// staged here and made live together, in one table compiled once.
///
/// Each change keeps the rules of the `Reloadable` method of its name
/// (registration order, a replaced module's place); nothing is compiled
/// until the update ends, so a conflict shows then, as the update's error.
#[derive(Debug)]
pub struct Modules {
    modules: Vec<(String, Router)>,
}

impl Modules {
    /// Stages `module` under `id`, as [`Reloadable::register`] adds it.
    pub fn register(&mut self, id: impl Into<String>, module: Router) -> &mut Self {
        self.modules.push((id.into(), module));
        self
    }

    /// Stages the removal of everything under `id`, as
    /// [`Reloadable::unregister`] removes it. Returns whether anything was
    /// under it.
    pub fn unregister(&mut self, id: &str) -> bool {
        let before = self.modules.len();
        self.modules.retain(|(known, _)| known != id);
        self.modules.len() != before
    }

    /// Stages `module` in place of everything under `id`, as
    /// [`Reloadable::replace`] puts it: at the place of the id's first
    /// registration, or last. Returns whether anything was under `id`.
    pub fn replace(&mut self, id: impl Into<String>, module: Router) -> bool {
        let id = id.into();
        let Some(place) = self.modules.iter().position(|(known, _)| *known == id) else {
            self.modules.push((id, module));
            return false;
        };
        self.modules[place].1 = module;
        // The first registration under `id`, now `module`, stays.
        let mut first = true;
        self.modules
            .retain(|(known, _)| *known != id || std::mem::take(&mut first));
        true
    }

    /// The ids staged, in registration order (repeated ids once).
    pub fn ids(&self) -> Vec<String> {
        ids(&self.modules)
    }
}

/// The ids of `modules`, in order, each once.
fn ids(modules: &[(String, Router)]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    (modules.iter())
        .filter(|(id, _)| seen.insert(id.as_str()))
        .map(|(id, _)| id.clone())
        .collect()
}

impl Clone for Reloadable {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            live: self.live.clone(),
        }
    }
}

impl fmt::Debug for Reloadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources = self
            .shared
            .sources
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let modules: Vec<&str> = sources.modules.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("Reloadable")
            .field("modules", &modules)
            .finish()
    }
}

impl Reloadable {
    /// Compiles `base`, the router that modules are added to, and serves
    /// it. The reloadable router keeps `base` and every module, to compile
    /// the table again when they change.
    ///
    /// # Errors
    ///
    /// The [`RouteError`] of compiling `base`.
    pub fn new(base: Router) -> Result<Self, RouteError> {
        let table = base.clone().compile()?;
        let live = Arc::new(ArcSwap::new(table.inner));
        Ok(Self {
            live: Cache::new(live.clone()),
            shared: Arc::new(Shared {
                live,
                sources: Mutex::new(Sources {
                    base,
                    modules: Vec::new(),
                }),
            }),
        })
    }

    /// The live table.
    pub fn current(&self) -> CompiledRouter {
        CompiledRouter {
            inner: self.shared.live.load_full(),
        }
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
        let table = base.clone().compile()?;
        let mut sources = self.lock();
        sources.base = base;
        sources.modules.clear();
        self.shared.live.store(table.inner);
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
        if !self.lock().modules.iter().any(|(known, _)| known == id) {
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
        let mut sources = self.lock();
        let mut staged = Modules {
            modules: sources.modules.clone(),
        };
        let answer = change(&mut staged)?;
        let compiled = sources.compile(&staged.modules)?;
        sources.modules = staged.modules;
        self.shared.live.store(compiled.inner);
        Ok(answer)
    }

    /// The ids registered, in registration order (repeated ids once).
    pub fn modules(&self) -> Vec<String> {
        ids(&self.lock().modules)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sources> {
        // A panic while holding the lock left the sources as they were
        // before the failed change: each is made once its table compiled.
        self.shared
            .sources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Serves a request with any body, as [`CompiledRouter`] does.
impl<B> Service<Request<B>> for Reloadable
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<crate::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture;

    #[inline]
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn call(&mut self, request: Request<B>) -> ResponseFuture {
        ResponseFuture::new(self.live.load(), request)
    }
}
