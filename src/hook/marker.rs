//! The markers that tell closure hooks apart: see the [module docs](super).

/// Marker of a closure hook that answers synchronously.
#[derive(Debug)]
pub enum FnSync {}

/// Marker of a closure hook that answers with a future.
#[derive(Debug)]
pub enum FnAsync {}

/// Marker of a closure hook that answers with a [`Step`](crate::Step).
#[derive(Debug)]
pub enum FnStep {}

/// Marker of a closure that works on the message where it lies, through
/// `&mut`: a prefix that answers a [`Verdict`](crate::prefix::Verdict)
/// (`ControlFlow<R>`, or `Result<(), E>` with any `IntoResponse` error), a
/// postfix that edits the response and returns nothing. The step is always ready, and the message is not moved in and
/// out of the closure.
#[derive(Debug)]
pub enum FnEdit {}

/// Marker of a closure that sees the message alone and nothing of the
/// request: a postfix `FnMut(&mut R)` that edits the response in place, a
/// monitor `FnMut(Option<Result<&R, &E>>)` that reads the outcome (`None`
/// when the request was cancelled). The layer keeps no copy of the request
/// head for it, and a monitor reads no clock: it costs what a hand-written
/// tower layer doing the same work costs. Only closures take this marker; a
/// type implements a hook trait with [`Custom`].
#[derive(Debug)]
pub enum FnBare {}

/// Marker of a router prefix whose arguments are extractors of the
/// request's head (`Query`, `Header`, `State`, …), as a handler's are.
#[derive(Debug)]
pub enum FnExtract {}

/// Marker of a type that implements a hook trait itself.
#[derive(Debug)]
pub enum Custom {}
