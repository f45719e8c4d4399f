//! Setup time: the [`Router`](builder::Router) a user writes, its scopes
//! and patterns, what [`compile`](builder::Router::compile) makes of it,
//! and the changes a [`Reloadable`](reload::Reloadable) makes to live
//! tables.

pub(crate) mod builder;
pub(crate) mod compile;
pub(crate) mod error;
pub(crate) mod handler_service;
pub(crate) mod methods;
pub(crate) mod pattern;
pub(crate) mod reload;
pub(crate) mod scope;
