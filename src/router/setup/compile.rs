//! Setup time: what [`Router::compile`] makes of a [`Router`] — the
//! compiled tables, one module added or taken away at a time.

use std::sync::Arc;

use http::{Method, StatusCode};

use crate::handler::{
    Answers, DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, ErasedHandler, Extraction,
    NESTED_PATTERN_END, Nesting, Refusal, RouteInfo, StateType, TypedHandler,
};

use super::{
    builder::{
        Compiled, DefaultLayer, HookSpec, OwnState, Responder, RouteSettings, RouteSpec, Router,
        Unservable,
    },
    error::RouteError,
};
#[cfg(feature = "ws")]
use crate::router::request::compiled::WebSocketRoute;
use crate::router::request::{
    compiled::{
        CompiledRoute, CompiledRouter, Fallback, Handling, Hook, Tables,
        change::{Clash, ModuleParts, key},
    },
    pattern::Pattern,
    service::{RouterAsService, RouterIntoService, serves_requests},
    table::FxHasher,
};

/// What one module added to the tables: its parts, which taking it out
/// removes, and the state its handlers read.
#[derive(Debug)]
pub(crate) struct Added {
    parts: ModuleParts,
    /// The state its handlers read, with the pattern of one that does.
    needs: Vec<(Arc<str>, StateType)>,
}

/// A pattern's parameter names, shared.
type Names = Arc<[Box<str>]>;

/// What the extractors of a route with `settings`, nested where
/// `nesting` says, hold to, worded by the app's `answers`; for a handler
/// in tower layers, also what they hand it of its route: its pattern and
/// its parameters' names, `layered`.
fn extraction_of(
    settings: &RouteSettings,
    own_state: Option<&OwnState>,
    (answers, nesting): (Answers, &Nesting),
    layered: Option<(Arc<str>, Names, Option<Refusal>)>,
) -> Extraction {
    let extraction = Extraction::new(
        settings.body_limit.unwrap_or(DEFAULT_BODY_LIMIT),
        settings.body_timeout.unwrap_or(DEFAULT_BODY_TIMEOUT),
        settings.rejection.clone(),
        answers,
        own_state.map(|own| Arc::clone(&own.values)),
        nesting.clone(),
    );
    match layered {
        Some((pattern, names, refusal)) => {
            let info = RouteInfo::new(pattern, names, extraction.clone(), refusal);
            extraction.handing_layers(Arc::new(info))
        }
        None => extraction,
    }
}

/// Parses `specs` into hooks of the module at `place`.
fn compile_hooks<H: ?Sized>(
    specs: Vec<HookSpec<H>>,
    place: u32,
) -> Result<Vec<Hook<H>>, RouteError> {
    (specs.into_iter().enumerate())
        .map(|(index, spec)| {
            let (pattern, methods, priority) = spec.scope.into_parts();
            Ok(Hook::new(
                Pattern::parse(&pattern)?,
                methods.into(),
                priority,
                spec.hook,
                spec.body_end,
                key(place, index),
                spec.own_state.map(|own| Arc::clone(&own.values)),
            ))
        })
        .collect()
}

/// The module being added to `tables`, as its steps read it.
struct Adding<'a> {
    tables: &'a mut Tables,
    /// The router's settings over the outer routers'.
    settings: RouteSettings,
    /// State types the handlers may read besides what the tables hold.
    also_held: &'a [StateType],
    added: Added,
}

/// A handler that answers below `base` rather than at a route (a fallback,
/// the handler of 405s), as the tables hold it: the `index`-th of its
/// kind in the module. None for a WebSocket handler, which answers no
/// such request.
fn fallback(module: &Adding<'_>, spec: RouteSpec, base: Pattern, index: usize) -> Option<Fallback> {
    let place = module.added.place();
    match spec.endpoint {
        Responder::Http(handler) => {
            // A handler in tower layers is handed its base's parameter names.
            let layered = handler
                .layered()
                .then(|| (Arc::from(""), Arc::clone(base.names()), None));
            let extraction = extraction_of(
                &spec.settings.or(&module.settings),
                spec.own_state.as_deref(),
                (module.tables.answers(), &spec.nesting),
                layered,
            );
            Some(Fallback::new(
                base,
                handler,
                extraction,
                key(place, index),
                spec.own_answer,
            ))
        }
        #[cfg(feature = "ws")]
        Responder::WebSocket(_) => None,
    }
}

/// Adds `router`'s routes, hooks, state and fallbacks to `tables`, as the
/// module at `place` in registration order (the base is at 0): its
/// routes take `outer`'s settings where neither they nor `router` set
/// one, and may read state of the types `also_held` besides what the
/// tables hold.
///
/// Costs what the module holds (see the tables' `change.rs`). On an
/// error, `tables` may be left part-changed: the caller drops them.
pub(crate) fn add(
    tables: &mut Tables,
    router: Router,
    place: u32,
    outer: &RouteSettings,
    also_held: &[StateType],
) -> Result<Added, RouteError> {
    let Router {
        routes,
        prefixes,
        postfixes,
        monitors,
        state,
        state_types,
        settings,
        fallback,
        nested_fallbacks,
        method_not_allowed,
        // A module's layers wrap its routes and fallbacks already; the
        // router's own answers are the root's.
        default_layers: _,
        compiled: _,
        given: _,
        duplicate_state,
        bad_base,
        // The state type its handlers were written for, a marker alone.
        ..
    } = router;
    if let Some(name) = duplicate_state {
        return Err(RouteError::DuplicateState { name });
    }
    if let Some(error) = bad_base {
        return Err(error);
    }
    let (prefixes, postfixes, monitors) = (
        compile_hooks(prefixes, place)?,
        compile_hooks(postfixes, place)?,
        compile_hooks(monitors, place)?,
    );
    let mut module = Adding {
        tables,
        settings: settings.or(outer),
        also_held,
        added: Added {
            parts: ModuleParts::new(place),
            needs: Vec::new(),
        },
    };
    module.add_state(state_types, state)?;
    let own = fallback.map(|spec| ("/".to_owned(), spec));
    module.add_fallbacks(own.into_iter().chain(nested_fallbacks))?;
    module.add_method_not_allowed(method_not_allowed)?;
    // The hooks, and those of the routes already in that they apply to:
    // before this module's routes, which are checked against every hook
    // as they come in.
    let parts = &mut module.added.parts;
    (module.tables).add_hooks(parts, prefixes, postfixes, monitors);
    module.add_routes(routes)?;
    Ok(module.added)
}

impl Adding<'_> {
    /// Adds the module's state, refused if the tables hold a type of it.
    fn add_state(
        &mut self,
        types: Vec<StateType>,
        values: http::Extensions,
    ) -> Result<(), RouteError> {
        if let Some((_, name)) = types.iter().find(|(id, _)| self.tables.holds_state(id)) {
            return Err(RouteError::DuplicateState { name });
        }
        (self.tables).add_state(&mut self.added.parts, types, values);
        Ok(())
    }

    /// What a handler's extractors need that the tables, or its route
    /// with parameters of these `names`, do not give; the state it reads
    /// is noted in what the module added.
    fn unmet(&mut self, spec: &RouteSpec, names: &[Box<str>]) -> Option<RouteError> {
        let held = |(id, _): &StateType| {
            self.tables.holds_state(id)
                || self.also_held.iter().any(|(held, _)| held == id)
                || (spec.own_state.as_deref()).is_some_and(|own| own.holds(id))
        };
        for needed in &spec.needs.state {
            if !held(needed) {
                return Some(RouteError::MissingState {
                    pattern: spec.pattern.clone(),
                    name: needed.1,
                });
            }
            let needs = &mut self.added.needs;
            if !needs.iter().any(|(_, (id, _))| *id == needed.0) {
                needs.push((spec.pattern.as_str().into(), *needed));
            }
        }
        let path = spec.needs.path?;
        // The check runs the type's `Deserialize`: one that panics on the
        // value it is given settles nothing (and fails at request time
        // with a 500, as it would have).
        let reason = std::panic::catch_unwind(|| (path.misfit)(names)).ok()??;
        Some(RouteError::PathParameters {
            pattern: spec.pattern.clone(),
            type_name: path.type_name,
            reason,
        })
    }

    /// Adds the module's fallbacks, each with the base path it answers
    /// under.
    fn add_fallbacks(
        &mut self,
        fallbacks: impl Iterator<Item = (String, RouteSpec)>,
    ) -> Result<(), RouteError> {
        for (index, (base, spec)) in fallbacks.enumerate() {
            let base = Pattern::parse(&base)?;
            // A fallback takes the parameters of its base.
            if let Some(error) = self.unmet(&spec, base.names()) {
                return Err(error);
            }
            if spec.needs.matched_path {
                return Err(RouteError::FallbackMatchedPath {
                    base: base.source().to_string(),
                });
            }
            if self.tables.has_fallback_at(base.source()) {
                return Err(RouteError::DuplicateFallback {
                    base: base.source().to_string(),
                });
            }
            if let Some(fallback) = fallback(self, spec, base, index) {
                self.tables.add_fallback(&mut self.added.parts, fallback);
            }
        }
        self.tables.settle_fallbacks();
        Ok(())
    }

    /// Adds the module's handler of requests no route takes the method of
    /// (one in all the tables).
    fn add_method_not_allowed(&mut self, specs: Vec<RouteSpec>) -> Result<(), RouteError> {
        for spec in specs {
            if self.tables.has_method_not_allowed() {
                return Err(RouteError::DuplicateMethodNotAllowed);
            }
            if let Some(error) = self.unmet(&spec, &[]) {
                return Err(error);
            }
            if let Some(handler) = fallback(self, spec, Pattern::parse("/")?, 0) {
                self.tables
                    .set_method_not_allowed(&self.added.parts, handler);
            }
        }
        Ok(())
    }

    /// Adds the module's routes to the tables, each with the hooks that
    /// apply to it, then settles the tables' static paths.
    fn add_routes(&mut self, specs: Vec<RouteSpec>) -> Result<(), RouteError> {
        let mut texts = std::collections::HashSet::with_capacity_and_hasher(
            specs.len(),
            std::hash::BuildHasherDefault::<FxHasher>::default(),
        );
        // The routes of a module mostly read alike: one copy of what their
        // extractors hold to, shared while it stays the same.
        let mut last = None;
        for (index, spec) in specs.into_iter().enumerate() {
            let route = self.compile_route(index, spec, &mut texts, &mut last)?;
            if let Err(Clash { first, second }) =
                self.tables.add_route(&mut self.added.parts, route)
            {
                let (first, second) = (self.tables.route(first), self.tables.route(second));
                return Err(RouteError::DuplicateRoute {
                    method: second.method().map_or("*", Method::as_str).to_owned(),
                    first: first.pattern().source().to_string(),
                    second: second.pattern().source().to_string(),
                });
            }
        }
        self.tables.settle_routes(&self.added.parts);
        Ok(())
    }

    /// One route of a module as the tables hold it, its hooks not yet
    /// found: its pattern parsed (its texts shared through `texts`), its
    /// extractors' needs checked, its settings settled (shared with the
    /// `last` route's when they are the same).
    fn compile_route(
        &mut self,
        index: usize,
        spec: RouteSpec,
        texts: &mut std::collections::HashSet<Arc<str>, std::hash::BuildHasherDefault<FxHasher>>,
        last: &mut Option<Arc<Extraction>>,
    ) -> Result<CompiledRoute, RouteError> {
        let mut pattern = Pattern::parse(&spec.pattern).map_err(|error| match spec.nested {
            true => nested(&spec.pattern, error),
            false => error,
        })?;
        pattern.intern(texts);
        if let Some(error) = self.unmet(&spec, pattern.names()) {
            return Err(error);
        }
        let settings = spec.settings.or(&self.settings);
        let (params_in_request, layered) = match &spec.endpoint {
            Responder::Http(handler) => (
                pattern.names().is_empty() || handler.reads_params_first(),
                handler.layered(),
            ),
            #[cfg(feature = "ws")]
            Responder::WebSocket(_) => (false, false),
        };
        let extraction = extraction_of(
            &settings,
            spec.own_state.as_deref(),
            (self.tables.answers(), &spec.nesting),
            layered.then(|| {
                let refusal = self.refusal(&spec.refusal);
                (
                    Arc::clone(pattern.source()),
                    Arc::clone(pattern.names()),
                    refusal,
                )
            }),
        );
        let extraction = match last.take() {
            Some(shared) if shared.same_as(&extraction) => shared,
            _ => Arc::new(extraction),
        };
        *last = Some(Arc::clone(&extraction));
        let handling = match spec.endpoint {
            Responder::Http(handler) => Handling::Http(handler),
            #[cfg(feature = "ws")]
            Responder::WebSocket(handler) => Handling::WebSocket(Box::new(WebSocketRoute::new(
                handler,
                settings.websocket_limits.unwrap_or_default(),
                (settings.websocket_protocols.clone()).unwrap_or_else(|| Arc::new([])),
            ))),
        };
        Ok(CompiledRoute::new(
            pattern,
            spec.method,
            key(self.added.place(), index),
            handling,
            extraction,
            settings.matched_path_in_response.unwrap_or(false),
            params_in_request,
            spec.nested,
        ))
    }
}

impl Adding<'_> {
    /// A route's 405 in the `layers` its `route_layer`s and the `layer`s
    /// after them give it: the router's own 405, or a handler of 405s of
    /// the user's (in its router's `layer`s already: only the
    /// `route_layer`s are added). `None` without such layers.
    fn refusal(&self, layers: &[(DefaultLayer, bool)]) -> Option<Refusal> {
        if layers.is_empty() {
            return None;
        }
        let (base, all): (Arc<dyn ErasedHandler>, bool) = match self.tables.method_not_allowed() {
            Some(answer) if !answer.own() => (Arc::clone(answer.handler()), false),
            _ => (
                Arc::new(TypedHandler::<_, _, crate::handler::ByType>::new(
                    self.tables.answers().refusal(),
                )),
                true,
            ),
        };
        let layers = layers.iter().filter(|(_, route_layer)| all || *route_layer);
        Some(Refusal(
            layers.fold(base, |handler, (layer, _)| layer(&handler)),
        ))
    }
}

impl Added {
    /// The module's place in registration order.
    pub(crate) fn place(&self) -> u32 {
        self.parts.place()
    }

    /// Whether the module gave state: removing it may leave a handler
    /// without the state it reads.
    pub(crate) fn gave_state(&self) -> bool {
        self.parts.gave_state()
    }

    /// What it put in the tables, which taking it out removes.
    pub(crate) fn parts(&self) -> &ModuleParts {
        &self.parts
    }

    /// The first state that a handler of the module reads and `tables`
    /// no longer hold, as the error it is.
    pub(crate) fn unmet_state(&self, tables: &Tables) -> Option<RouteError> {
        let (pattern, (_, name)) =
            (self.needs.iter()).find(|(_, (id, _))| !tables.holds_state(id))?;
        Some(RouteError::MissingState {
            pattern: pattern.to_string(),
            name,
        })
    }
}

impl Router {
    /// Validates every route and hook and compiles the table.
    ///
    /// Every mistake a router can hold is found here, before it serves a
    /// request: the compiled table answers each request without an error
    /// of its own.
    ///
    /// # Errors
    ///
    /// The first [`RouteError`]: a malformed pattern (of a route or a
    /// hook), a route registered twice for the same method and pattern, a
    /// state given twice or asked for and never given, a `Path` that cannot
    /// read its route's parameters whatever the path, a service nested
    /// below a catch-all. Its message names the pattern or the type.
    ///
    /// ```
    /// use pronghorn::{Router, RouteError, handler::State};
    ///
    /// let error = Router::new()
    ///     .get("/users/:id", || "one")
    ///     .compile()
    ///     .unwrap_err();
    /// assert!(matches!(error, RouteError::ForeignParameter { .. }));
    /// assert!(error.to_string().contains("write `{id}`"), "{error}");
    ///
    /// #[derive(Clone)]
    /// struct Db;
    /// let error = Router::new()
    ///     .get("/users", |_: State<Db>| "all")
    ///     .compile()
    ///     .unwrap_err();
    /// assert!(matches!(error, RouteError::MissingState { .. }));
    /// ```
    pub fn compile(self) -> Result<CompiledRouter, RouteError> {
        compile(self, &[])
    }
}

impl Router {
    /// The router compiled for serving it as it is: a router that does
    /// not compile answers 500 to every request, its error logged once,
    /// at the first (a mistake found at its first request, as axum finds
    /// its own at registration).
    fn served(&self) -> &CompiledRouter {
        self.compiled.get_or_compile(|| (self.clone(), Vec::new()))
    }

    /// Compiles the router for serving it as it is, if it is not yet:
    /// the error if it does not compile. [`serve`](crate::serve()) calls
    /// it before it accepts a client.
    #[cfg(feature = "server")]
    pub(crate) fn check_served(&self) -> Result<(), RouteError> {
        match self.compiled.once(|| (self.clone(), Vec::new()), false) {
            Ok(_) => Ok(()),
            Err(unservable) => Err(unservable.error.clone()),
        }
    }

    /// The server's check of a service that is a `Router`
    /// ([`check_served`](Self::check_served)), as an I/O error.
    #[cfg(feature = "server")]
    pub(crate) fn check_if_router(service: &dyn std::any::Any) -> Option<std::io::Result<()>> {
        let router = service.downcast_ref::<Router>()?;
        let checked = router.check_served();
        Some(checked.map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidInput, error)))
    }

    /// The router, compiled, as a service of requests with one body type
    /// `B`: [`CompiledRouter::into_service`] for a router not yet
    /// compiled, as axum's `Router::into_service`.
    ///
    /// A router that does not compile answers 500 to every request, its
    /// error logged once; [`compile`](Self::compile) returns the error
    /// instead.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Body, Router};
    /// use tower::{Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut app = Router::new().get("/", || "home").into_service();
    /// let request = Request::get("/").body(Body::empty()).unwrap();
    /// let response = app.ready().await.unwrap().call(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// # }
    /// ```
    pub fn into_service<B>(self) -> RouterIntoService<B> {
        self.served().clone().into_service()
    }

    /// The router, borrowed as a tower `Service` of requests with one body
    /// type, as axum's `as_service`: what a test calls `ready` and `call`
    /// on while it keeps the router. It is compiled as
    /// [`into_service`](Self::into_service) compiles it.
    ///
    /// ```
    /// use http::{Request, StatusCode};
    /// use pronghorn::{Body, Router};
    /// use tower::{Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut app = Router::new().get("/", || "home");
    /// let request = Request::get("/").body(Body::empty()).unwrap();
    /// let response = app.as_service().ready().await.unwrap().call(request).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::OK);
    /// # }
    /// ```
    pub fn as_service<B>(&mut self) -> RouterAsService<'_, B> {
        self.served().as_service()
    }
}

serves_requests!(
    /// A router is a `Service` as it is, as axum's is: compiled at its first
    /// request, once for it and the clones it shares that with, so that an
    /// application's tests call `app().oneshot(request)` and `serve` takes
    /// `app()`. Compile it yourself ([`Router::compile`]) to handle its
    /// mistakes as errors: [`serve`](crate::serve()) refuses to start with
    /// a router that does not compile, returning the error; served as a
    /// service otherwise, such a router logs its error once, at its first
    /// request, and answers 500 to every request.
    Router,
    |this| this.served().tables()
);

/// What a router that does not compile answers, served as it is: 500 to
/// every request.
fn unservable() -> CompiledRouter {
    Router::new()
        .fallback(|| StatusCode::INTERNAL_SERVER_ERROR)
        .compile()
        .expect("a lone fallback compiles")
}

/// `router` compiled, its handlers reading state of the types
/// `also_held` from elsewhere besides what it holds.
fn compile(router: Router, also_held: &[StateType]) -> Result<CompiledRouter, RouteError> {
    let mut tables = Tables::new(router.settings.answers.unwrap_or_default());
    let settings = RouteSettings::default();
    add(
        &mut tables,
        router.with_default_answers(),
        0,
        &settings,
        also_held,
    )?;
    Ok(CompiledRouter::new(Arc::new(tables)))
}

/// The error of a service that `nest_service` mounted below a catch-all,
/// named for the base the user gave rather than for the catch-all
/// `nest_service` adds below it.
fn nested(pattern: &str, error: RouteError) -> RouteError {
    match (pattern.strip_suffix(NESTED_PATTERN_END), &error) {
        (Some(base), RouteError::AfterCatchAll { segment, .. })
            if NESTED_PATTERN_END.strip_prefix('/') == Some(segment.as_str()) =>
        {
            RouteError::NestedBelowCatchAll {
                base: base.to_owned(),
            }
        }
        _ => error,
    }
}

impl Compiled {
    /// The router `make` builds (with the state types its handlers read
    /// from elsewhere), compiled once for this and the clones that share
    /// it; its error, if it does not compile, logged if `log`
    /// (a router served as a service says so once; `serve` returns the
    /// error instead).
    fn once(
        &self,
        make: impl FnOnce() -> (Router, Vec<StateType>),
        log: bool,
    ) -> &Result<CompiledRouter, Unservable> {
        self.0.get_or_init(|| {
            let (router, also_held) = make();
            compile(router, &also_held).map_err(|error| {
                if log {
                    tracing::error!(
                        %error,
                        "pronghorn: a `Router` served without `compile` does not compile; \
                         it answers 500 to every request"
                    );
                }
                Unservable {
                    error,
                    answers: unservable(),
                }
            })
        })
    }

    /// What answers the requests of the router `make` builds, compiled
    /// once: it, or if it does not compile, a router answering 500 to
    /// every request (the error logged once).
    /// `make` builds the router and the state types its handlers read
    /// from elsewhere.
    pub(crate) fn get_or_compile(
        &self,
        make: impl FnOnce() -> (Router, Vec<StateType>),
    ) -> &CompiledRouter {
        match self.once(make, true) {
            Ok(router) => router,
            Err(unservable) => &unservable.answers,
        }
    }
}
