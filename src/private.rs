//! What `#[debug_handler]` expands to: one check for each part of a
//! handler, each failing with a message that names the part. Not an API.

use std::future::Future;

use crate::{
    handler::IntoResponse,
    handler::{FromRequestBody, HeadArgument},
    step::Step,
};

/// An argument before the last reads the request's head, under a router
/// of state type `S`.
pub fn head_extractor<T: HeadArgument<S>, S>() {}

/// The last argument reads the head or the body.
pub fn last_extractor<T: LastArgument<M, S>, M, S>() {}

/// A synchronous handler answers a response, a future of one, or a
/// [`Step`] of one.
pub fn answer<M, T: Answer<M>>(_: T) {}

/// An asynchronous handler's future is `Send` and answers a response.
pub fn async_answer<F>(_: F)
where
    F: Future + Send,
    F::Output: IntoResponse,
{
}

/// What a handler's last argument may be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extractor of pronghorn's",
    label = "not an extractor",
    note = "a handler's last argument reads the request's head (`FromRequestHead`: `Path`, `Query`, `State`, `Header`, ...) or its body (`FromRequestBody`: `Json`, `Form`, `String`, `Bytes`, `Body`, `Request<Body>`)"
)]
pub trait LastArgument<M, S> {}

/// Marks a last argument that reads the head.
#[derive(Debug)]
pub enum ViaHead {}

/// Marks a last argument that reads the body.
#[derive(Debug)]
pub enum ViaBody {}

impl<T: HeadArgument<S>, S> LastArgument<ViaHead, S> for T {}
impl<T: FromRequestBody, S> LastArgument<ViaBody, S> for T {}

/// What a synchronous handler may answer.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a handler answers",
    label = "not an answer",
    note = "a handler answers an `IntoResponse` (a `String`, a `StatusCode`, `Json<T>`, a tuple of a status, headers and a body, a `Result` of two), a `Send` future of one, or a `Step` of one"
)]
pub trait Answer<M> {}

/// Marks an answer ready at once.
#[derive(Debug)]
pub enum Now {}

/// Marks a future's answer.
#[derive(Debug)]
pub enum Later {}

/// Marks a [`Step`]'s answer.
#[derive(Debug)]
pub enum Stepped {}

impl<R: IntoResponse> Answer<Now> for R {}
impl<F> Answer<Later> for F
where
    F: Future + Send,
    F::Output: IntoResponse,
{
}
impl<R, F> Answer<Stepped> for Step<R, F>
where
    R: IntoResponse,
    F: Future<Output = R> + Send,
{
}

pub use crate::body::Response;

/// The future of a derived body extractor: the value of the extractor it
/// reads through, made into its own.
pub struct Via<F, E, T> {
    future: F,
    convert: fn(E) -> T,
}

impl<F, E, T> Via<F, E, T> {
    /// `future`'s value, made into a `T` by `convert`.
    pub fn new(future: F, convert: fn(E) -> T) -> Self {
        Self { future, convert }
    }
}

impl<F, E, T> std::fmt::Debug for Via<F, E, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Via").finish_non_exhaustive()
    }
}

#[expect(
    clippy::result_large_err,
    reason = "a rejection is the response that answers the request: boxing it would allocate on every rejection"
)]
impl<F, E, T> Future for Via<F, E, T>
where
    F: Future<Output = Result<E, Response>> + Unpin,
{
    type Output = Result<T, Response>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let convert = self.convert;
        std::pin::Pin::new(&mut self.future)
            .poll(cx)
            .map(|value| value.map(convert))
    }
}
