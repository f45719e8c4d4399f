//! WebSocket handlers: the trait, its implementations for functions of
//! extractors, and its erased form the router holds.

use std::{future::Future, sync::Arc};

use http::Response;

use crate::{
    body::Body,
    handler::{ByType, HeadArgument, HeadExtractors, Needs, RequestContext, for_each_arity},
    step::BoxFuture,
};

use super::WebSocket;

/// A WebSocket handler: `Fn(WebSocket, T1, …, Tn) -> impl Future<Output =
/// ()>`, where each `Ti` is an extractor of the handshake's head
/// ([`FromRequestHead`](crate::handler::FromRequestHead): `Path`, `Query`,
/// `Header`, `RouteParams`, …; and `State`, read as a handler's is under
/// the router's state type `S`). The extractors run at the
/// handshake: one that refuses the request answers it, with no upgrade.
///
/// ```
/// use pronghorn::{Router, handler::{Path, State}, ws::{Message, WebSocket}};
///
/// let router = Router::new()
///     .websocket("/rooms/{room}", |mut socket: WebSocket, Path(room): Path<String>, State(motd): State<&'static str>| async move {
///         let _ = socket.send(Message::text(format!("{motd} in {room}"))).await;
///     })
///     .state("welcome")
///     .compile()
///     .unwrap();
/// # let _ = router;
/// ```
// A refusal is the response that answers the handshake, as an extractor's
// is: not boxed, for it is sent as it is.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response that answers the handshake"
)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a WebSocket handler of pronghorn's",
    label = "not a WebSocket handler",
    note = "a WebSocket handler is `Fn(WebSocket, T1, …, Tn) -> impl Future<Output = ()>`, `Clone + Send + Sync + 'static`, each `Ti` a pronghorn extractor of the request's head"
)]
pub trait WebSocketHandler<M, S = ByType>: Clone + Send + Sync + 'static {
    /// Extracts the handler's arguments from the handshake's head: the
    /// connection's task, waiting for its socket; or the answer of an
    /// extractor that refused the request.
    #[doc(hidden)]
    fn prepare(&self, context: &RequestContext<'_>) -> Result<PreparedHandler, Response<Body>>;

    /// Adds what the handler's extractors need of its router and route.
    #[doc(hidden)]
    fn needs(needs: &mut Needs);
}

/// A WebSocket handler with its arguments extracted, waiting for its
/// socket.
#[doc(hidden)]
pub type PreparedHandler = Box<dyn FnOnce(WebSocket) -> BoxFuture<()> + Send>;

macro_rules! websocket_handlers {
    ($($ty:ident),*) => {
        #[allow(
            non_snake_case,
            unused_variables,
            reason = "the extractors are named after their type parameters; a handler of no argument uses no context"
        )]
        impl<F, Fut, S, $($ty,)*> WebSocketHandler<($($ty,)*), S> for F
        where
            F: Fn(WebSocket, $($ty),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = ()> + Send + 'static,
            $($ty: HeadArgument<S> + Send + 'static,)*
        {
            fn prepare(&self, context: &RequestContext<'_>) -> Result<PreparedHandler, Response<Body>> {
                let ($($ty,)*) = <($($ty,)*) as HeadExtractors<S>>::extract(context)?;
                let handler = self.clone();
                Ok(Box::new(move |socket| Box::pin(handler(socket, $($ty),*))))
            }

            fn needs(needs: &mut Needs) {
                <($($ty,)*) as HeadExtractors<S>>::needs(needs);
            }
        }
    };
}

for_each_arity!(websocket_handlers);

pub(crate) type ErasedWebSocket =
    dyn Fn(&RequestContext<'_>) -> Result<PreparedHandler, Response<Body>> + Send + Sync;

/// Erases a WebSocket handler.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response that answers the handshake"
)]
pub(crate) fn erase<H: WebSocketHandler<M, S>, M, S>(handler: H) -> Arc<ErasedWebSocket> {
    Arc::new(move |context| handler.prepare(context))
}
