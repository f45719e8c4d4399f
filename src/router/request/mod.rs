//! Request time: the compiled tables, the lookup, and the pipeline that
//! runs a request's steps. Nothing here imports setup time.

pub(crate) mod compiled;
pub(crate) mod erased;
pub(crate) mod kept;
pub(crate) mod pattern;
pub(crate) mod pipeline;
pub(crate) mod route;
pub(crate) mod route_hooks;
pub(crate) mod service;
pub(crate) mod slab;
pub(crate) mod table;
