//! The boilerplate shared by the three layers: a `Layer` holding a hook, a
//! service holding the inner service and the hook, and their accessors.

/// Defines `$layer<H, M>` and `$service<S, H, M>` with constructors,
/// `Layer`, `Clone`, `Debug` and `get_ref` / `get_mut` / `into_inner`.
macro_rules! hook_layer {
    (
        $(#[$layer_doc:meta])*
        layer $layer:ident;
        $(#[$service_doc:meta])*
        service $service:ident;
        trait $hook_trait:ident;
    ) => {
        $(#[$layer_doc])*
        pub struct $layer<H, M = $crate::hook::Custom> {
            hook: H,
            _marker: ::std::marker::PhantomData<fn() -> M>,
        }

        impl<H, M> $layer<H, M> {
            #[doc = concat!("A layer running `hook`: a closure or a [`", stringify!($hook_trait), "`].")]
            pub fn new(hook: H) -> Self {
                Self { hook, _marker: ::std::marker::PhantomData }
            }
        }

        impl<S, H: Clone, M> ::tower_layer::Layer<S> for $layer<H, M> {
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

        impl<H, M> ::std::fmt::Debug for $layer<H, M> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($layer))
                    .field("hook", &::std::any::type_name::<H>())
                    .finish()
            }
        }

        $(#[$service_doc])*
        pub struct $service<S, H, M = $crate::hook::Custom> {
            inner: S,
            hook: H,
            _marker: ::std::marker::PhantomData<fn() -> M>,
        }

        impl<S, H, M> $service<S, H, M> {
            #[doc = concat!("Wraps `inner` so that `hook` runs around it.")]
            pub fn new(inner: S, hook: H) -> Self {
                Self { inner, hook, _marker: ::std::marker::PhantomData }
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

        impl<S: ::std::fmt::Debug, H, M> ::std::fmt::Debug for $service<S, H, M> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($service))
                    .field("inner", &self.inner)
                    .field("hook", &::std::any::type_name::<H>())
                    .finish()
            }
        }
    };
}
