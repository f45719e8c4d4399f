//! The router's state: [`State`], and [`FromRef`] for the parts of one
//! state value.

use http::Response;

use super::{HeadArgument, Needs, RequestContext, StateType, state_type};
use crate::{body::Body, handler::response::internal_error};

/// Shared state registered with [`Router::state`](crate::Router::state)
/// or [`Router::with_state`](crate::Router::with_state), cloned for each
/// call (wrap it in an `Arc`).
///
/// A router that names no state type (a `Router`, whose state is
/// [`ByType`]) finds a handler's `State<T>` by its type: the `T` its router
/// was given, else its outer router's. A `Router<S>` whose handlers are
/// written for one state type `S`, as axum's, reads `State<T>` from its
/// `S` with [`FromRef`]: the `S` itself, or a part of it.
///
/// A route whose handler asks for a state of a type no router holds is
/// refused by [`Router::compile`](crate::Router::compile), naming the type.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// use http::Request;
/// use pronghorn::{Router, handler::State};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let hits = Arc::new(AtomicU64::new(0));
/// let router = Router::new()
///     .get("/hit", |State(hits): State<Arc<AtomicU64>>| {
///         format!("hit {}", hits.fetch_add(1, Ordering::Relaxed) + 1)
///     })
///     .state(hits.clone())
///     .compile()
///     .unwrap();
///
/// for _ in 0..3 {
///     router.clone().oneshot(Request::get("/hit").body(String::new()).unwrap()).await.unwrap();
/// }
/// assert_eq!(hits.load(Ordering::Relaxed), 3);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct State<T>(pub T);

/// A part of a state value, as axum's `FromRef`: under a `Router<S>`, a
/// handler's `State<T>` is `T::from_ref(&s)` of the `S` given with
/// [`Router::with_state`](crate::Router::with_state), made for each call.
/// Every `Clone` type is a part of itself.
///
/// ```
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{FromRef, State}, router::get};
/// use tower::ServiceExt;
///
/// #[derive(Clone)]
/// struct AppState {
///     greeting: Greeting,
///     visits: u64,
/// }
///
/// #[derive(Clone)]
/// struct Greeting(&'static str);
///
/// impl FromRef<AppState> for Greeting {
///     fn from_ref(state: &AppState) -> Self {
///         state.greeting.clone()
///     }
/// }
///
/// async fn hello(State(Greeting(text)): State<Greeting>) -> &'static str {
///     text
/// }
///
/// async fn visits(State(state): State<AppState>) -> String {
///     state.visits.to_string()
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let app = Router::new()
///     .route("/", get(hello))
///     .route("/visits", get(visits))
///     .with_state(AppState { greeting: Greeting("hello"), visits: 7 })
///     .compile()
///     .unwrap();
/// let response = app.clone().oneshot(Request::get("/").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "hello");
/// let response = app.oneshot(Request::get("/visits").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "7");
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a part of the state `{T}`: no `FromRef<{T}>` for it",
    label = "no part of `{T}`",
    note = "implement `FromRef<{T}>` for `{Self}`, or derive `FromRef` on `{T}` (feature `macros`), to read it as `State<{Self}>`"
)]
pub trait FromRef<T> {
    /// The part, from the whole.
    fn from_ref(input: &T) -> Self;
}

impl<T: Clone> FromRef<T> for T {
    #[inline]
    fn from_ref(input: &T) -> Self {
        input.clone()
    }
}

/// The state type of a router that names none: the default of
/// [`Router<S>`](crate::Router), [`MethodRouter<S>`](crate::router::MethodRouter)
/// and [`Handler<M, S>`](crate::handler::Handler). Its handlers' `State<T>`
/// are found by type among the states given with
/// [`Router::state`](crate::Router::state). No value has this type.
#[derive(Debug)]
pub enum ByType {}

/// Where a handler's `State<T>` comes from under a router whose state is
/// `Self`: [`ByType`] finds the `T` by its type, any other state type
/// gives the part of itself that [`FromRef`] names.
pub trait StateSource<T>: 'static {
    /// The state type the router must hold.
    #[doc(hidden)]
    fn needs() -> StateType;

    /// The `T`, if the route's routers hold what it is read from.
    #[doc(hidden)]
    fn get(context: &RequestContext<'_>) -> Option<T>;
}

impl<T: Clone + Send + Sync + 'static> StateSource<T> for ByType {
    fn needs() -> StateType {
        state_type::<T>()
    }

    #[inline]
    fn get(context: &RequestContext<'_>) -> Option<T> {
        context.state::<T>().cloned()
    }
}

// `ByType` is not `Clone`: the two implementations never meet.
impl<S: Clone + Send + Sync + 'static, T: FromRef<S>> StateSource<T> for S {
    fn needs() -> StateType {
        state_type::<S>()
    }

    #[inline]
    fn get(context: &RequestContext<'_>) -> Option<T> {
        context.state::<S>().map(T::from_ref)
    }
}

impl<S: StateSource<T>, T> HeadArgument<S> for State<T> {
    fn needs(needs: &mut Needs) {
        needs.state.push(S::needs());
    }

    #[inline]
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match S::get(context) {
            Some(state) => Ok(State(state)),
            None => {
                error_limited!(
                    state = S::needs().1,
                    "pronghorn: a handler asked for state the router was not given"
                );
                Err(internal_error())
            }
        }
    }
}
