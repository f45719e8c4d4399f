//! Markers that tell closure hooks apart, and what a monitor may report.
//!
//! A hook trait such as [`PrefixHook<B, R, M>`](crate::PrefixHook) is
//! implemented for closures three times, once per marker `M`:
//!
//! | marker | the closure returns |
//! | --- | --- |
//! | [`FnSync`] | the value itself: the step is always ready |
//! | [`FnAsync`] | a future of the value: the step is always pending |
//! | [`FnStep`] | a [`Step`](crate::Step): it decides per call |
//! | [`FnEdit`] | works on the message in place, through `&mut`: a prefix answers whether to go on, a postfix nothing |
//!
//! A type that implements the trait itself uses the default marker,
//! [`Custom`]. The compiler picks the marker from the closure's return type,
//! so the same constructor takes every kind of hook and no annotation is
//! needed beyond the closure's argument types. The layers and services carry
//! the marker as a type parameter; nothing is stored for it.
//!
//! The marker is settled where the layer is used as a service, as any
//! inferred type is. A layer kept in a field of a named type spells it out:
//! `PrefixLayer<fn(Request<B>) -> ControlFlow<R, Request<B>>, FnSync>`.

mod marker;
mod output;

pub use self::{
    marker::{Custom, FnAsync, FnEdit, FnStep, FnSync},
    output::MonitorOutput,
};
