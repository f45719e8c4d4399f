//! Markers that tell closure hooks apart, and what a monitor may report.
//!
//! A hook trait such as [`PrefixHook<B, R, M>`](crate::PrefixHook) is
//! implemented for closures several times, once per marker `M`:
//!
//! | marker | the closure |
//! | --- | --- |
//! | [`FnSync`] | returns the value itself: the step is always ready |
//! | [`FnAsync`] | returns a future of the value: the step is always pending |
//! | [`FnStep`] | returns a [`Step`](crate::Step): it decides per call |
//! | [`FnEdit`] | works on the message in place, through `&mut`: a prefix answers whether to go on ([`Verdict`](crate::prefix::Verdict)), a postfix nothing |
//! | [`FnBare`] | sees the message alone, nothing of the request: a postfix edits the response in place, a monitor reads the outcome |
//! | [`FnExtract`] | a router prefix whose arguments are head extractors (`Query`, `Header`, `State`, …), answering whether to go on ([`RouteVerdict`](crate::router::RouteVerdict)) |
//!
//! A type that implements the trait itself uses the trait's default marker,
//! [`Custom`]. The compiler picks the marker from the closure's argument
//! and return types, so the same constructor takes every kind of hook and
//! no annotation is needed beyond the closure's argument types. The layers
//! and services carry the marker as a type parameter; nothing is stored
//! for it.
//!
//! The marker is settled where the layer is used as a service, as any
//! inferred type is. Where a layer's type is written out — a function that
//! returns one, a field — the marker can be left out for the usual form of
//! each layer, which is its default: [`FnEdit`] for
//! [`PrefixLayer`](crate::PrefixLayer), [`FnBare`] for
//! [`PostfixLayer`](crate::PostfixLayer) and [`FnSync`] for
//! [`MonitorLayer`](crate::MonitorLayer). Other forms name theirs:
//! `PrefixLayer<MyHook, Custom>`.
//!
//! ```
//! use std::{convert::Infallible, ops::ControlFlow};
//! use http::{HeaderValue, Request, Response, StatusCode, header};
//! use pronghorn::{Body, Exchange, IntoResponse, MonitorLayer, PostfixLayer, PrefixLayer};
//!
//! type Res = Response<Body>;
//!
//! fn auth() -> PrefixLayer<impl FnMut(&mut Request<Body>) -> ControlFlow<Res> + Clone> {
//!     PrefixLayer::new(|request: &mut Request<Body>| match request.headers().get(header::AUTHORIZATION) {
//!         Some(_) => ControlFlow::Continue(()),
//!         None => ControlFlow::Break(StatusCode::UNAUTHORIZED.into_response()),
//!     })
//! }
//!
//! fn server_header() -> PostfixLayer<impl FnMut(&mut Res) + Clone> {
//!     PostfixLayer::new(|response: &mut Res| {
//!         response.headers_mut().insert(header::SERVER, HeaderValue::from_static("pronghorn"));
//!     })
//! }
//!
//! fn access_log() -> MonitorLayer<impl FnMut(&Exchange<'_, Res, Infallible>) + Clone> {
//!     MonitorLayer::new(|exchange: &Exchange<'_, Res, Infallible>| {
//!         println!("{} {} {:?}", exchange.method(), exchange.path(), exchange.status());
//!     })
//! }
//!
//! let service = tower::ServiceBuilder::new()
//!     .layer(access_log())
//!     .layer(server_header())
//!     .layer(auth())
//!     .service_fn(|_: Request<Body>| async { Ok::<_, Infallible>("hello".into_response()) });
//! # let _ = service;
//! ```

mod keep;
mod marker;
mod output;

#[doc(hidden)]
pub use self::keep::{Keep, Started};
pub use self::{
    marker::{Custom, FnAsync, FnBare, FnEdit, FnExtract, FnStep, FnSync},
    output::MonitorOutput,
};

/// What the three hook services share: `new`, `layer`, the accessors of
/// the inner service (as tower-http's services have them), `Clone` and a
/// `Debug` that names the hook's type.
macro_rules! hook_service {
    ($service:ident, $layer:ident, $runs:literal) => {
        impl<S, H, M> $service<S, H, M> {
            #[doc = concat!("Wraps `inner` so that `hook` runs ", $runs, " it.")]
            pub fn new(inner: S, hook: H) -> Self {
                Self {
                    inner,
                    hook,
                    _marker: std::marker::PhantomData,
                }
            }

            #[doc = concat!("A [`", stringify!($layer), "`] running `hook`, for `ServiceBuilder::layer`.")]
            pub fn layer(hook: H) -> $layer<H, M> {
                $layer::new(hook)
            }

            /// The inner service.
            pub fn get_ref(&self) -> &S {
                &self.inner
            }

            /// The inner service, mutably.
            pub fn get_mut(&mut self) -> &mut S {
                &mut self.inner
            }

            /// Consumes `self`, returning the inner service.
            pub fn into_inner(self) -> S {
                self.inner
            }
        }

        impl<S: Clone, H: Clone, M> Clone for $service<S, H, M> {
            fn clone(&self) -> Self {
                Self::new(self.inner.clone(), self.hook.clone())
            }
        }

        impl<S: std::fmt::Debug, H, M> std::fmt::Debug for $service<S, H, M> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($service))
                    .field("inner", &self.inner)
                    .field("hook", &std::any::type_name::<H>())
                    .finish()
            }
        }
    };
}

pub(crate) use hook_service;

/// What the three hook layers share: `new`, `Layer` (the service, wrapping
/// its inner one with a clone of the hook), `Clone` and a `Debug` that
/// names the hook's type.
macro_rules! hook_layer {
    ($layer:ident, $service:ident, $hook:literal) => {
        impl<H, M> $layer<H, M> {
            #[doc = concat!("A layer running `hook`: a closure or a [`", $hook, "`](super::", $hook, ").")]
            pub fn new(hook: H) -> Self {
                Self {
                    hook,
                    _marker: std::marker::PhantomData,
                }
            }
        }

        impl<S, H: Clone, M> tower_layer::Layer<S> for $layer<H, M> {
            type Service = $service<S, H, M>;

            fn layer(&self, inner: S) -> Self::Service {
                $service::new(inner, self.hook.clone())
            }
        }

        impl<H: Clone, M> Clone for $layer<H, M> {
            fn clone(&self) -> Self {
                Self::new(self.hook.clone())
            }
        }

        impl<H, M> std::fmt::Debug for $layer<H, M> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($layer))
                    .field("hook", &std::any::type_name::<H>())
                    .finish()
            }
        }
    };
}

pub(crate) use hook_layer;
