//! The client's connection: [`ConnectInfo`], what the server tells of it
//! ([`Connected`] for a type of one's own), and [`MockConnectInfo`] in
//! tests.

use http::{Request, Response};

use super::{FromRequestHead, RequestContext};
use crate::{body::Body, handler::response::internal_error};

/// The client's address, when the server puts it in the request:
/// [`Serve::connect_info`](crate::Serve::connect_info) with `serve`, or an
/// outer layer that inserts a `ConnectInfo<T>` extension. Without one, the
/// request is answered 500 and the log says so. Under `axum::serve` with
/// `into_make_service_with_connect_info`, read axum's own instead:
/// `Axum<axum::extract::ConnectInfo<SocketAddr>>` (feature `axum`).
///
/// ```no_run
/// # #[cfg(feature = "server")]
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// use std::net::SocketAddr;
/// use pronghorn::{Router, handler::ConnectInfo, serve};
///
/// let router = Router::new()
///     .get("/ip", |ConnectInfo(peer): ConnectInfo<SocketAddr>| peer.ip().to_string())
///     .compile()
///     .unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// serve(listener, router).connect_info(true).await
/// # }
/// # #[cfg(not(feature = "server"))] fn main() {}
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectInfo<T>(pub T);

/// What a connection tells of itself, as axum's `Connected`: a type of
/// your own that [`Serve::connect_info_as`](crate::Serve::connect_info_as)
/// makes from each connection it accepts (an
/// [`IncomingStream`](crate::IncomingStream)), and each of the
/// connection's requests carries as a [`ConnectInfo`].
///
/// ```no_run
/// # #[cfg(all(unix, feature = "server"))]
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// use pronghorn::{IncomingStream, Router, handler::{ConnectInfo, Connected}, serve};
/// use tokio::net::{UnixListener, unix::UCred};
///
/// #[derive(Clone, Debug)]
/// struct Peer {
///     credentials: Option<UCred>,
/// }
///
/// impl Connected<IncomingStream<'_, UnixListener>> for Peer {
///     fn connect_info(stream: IncomingStream<'_, UnixListener>) -> Self {
///         Peer { credentials: stream.io().peer_cred().ok() }
///     }
/// }
///
/// let router = Router::new()
///     .get("/", |ConnectInfo(peer): ConnectInfo<Peer>| format!("{peer:?}"))
///     .compile()
///     .unwrap();
/// let listener = UnixListener::bind("/run/app.sock")?;
/// serve(listener, router).connect_info_as::<Peer>().await
/// # }
/// # #[cfg(not(all(unix, feature = "server")))] fn main() {}
/// ```
pub trait Connected<T>: Clone + Send + Sync + 'static {
    /// What `stream` tells of itself.
    fn connect_info(stream: T) -> Self;
}

impl Connected<std::net::SocketAddr> for std::net::SocketAddr {
    fn connect_info(address: Self) -> Self {
        address
    }
}

impl<T: Clone + Send + Sync + 'static> FromRequestHead for ConnectInfo<T> {
    fn from_head(context: &RequestContext<'_>) -> Result<Self, Response<Body>> {
        match context.extensions().get::<ConnectInfo<T>>() {
            Some(info) => Ok(info.clone()),
            None => {
                error_limited!(
                    connect_info = std::any::type_name::<T>(),
                    "pronghorn: a handler asked for the client's address, and the server does not give it (`Serve::connect_info(true)`)"
                );
                Err(internal_error())
            }
        }
    }
}

/// A stand-in for the server's [`ConnectInfo`] in tests: a tower layer
/// that puts `ConnectInfo(value)` in each request that has none, as axum's
/// `MockConnectInfo` does. Given to [`Router::layer`](crate::Router::layer),
/// or around the compiled router.
///
/// ```
/// use std::net::SocketAddr;
/// use http::Request;
/// use http_body_util::BodyExt;
/// use pronghorn::{Router, handler::{ConnectInfo, MockConnectInfo}};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let router = Router::new()
///     .get("/ip", |ConnectInfo(peer): ConnectInfo<SocketAddr>| peer.ip().to_string())
///     .layer(MockConnectInfo(SocketAddr::from(([192, 0, 2, 7], 4000))))
///     .compile()
///     .unwrap();
/// let response = router.oneshot(Request::get("/ip").body(String::new()).unwrap()).await.unwrap();
/// assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "192.0.2.7");
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MockConnectInfo<T>(pub T);

impl<S, T: Clone> tower_layer::Layer<S> for MockConnectInfo<T> {
    type Service = MockConnectInfoService<S, T>;

    fn layer(&self, inner: S) -> Self::Service {
        MockConnectInfoService {
            inner,
            value: self.0.clone(),
        }
    }
}

/// The service of [`MockConnectInfo`].
#[derive(Clone, Copy, Debug)]
pub struct MockConnectInfoService<S, T> {
    inner: S,
    value: T,
}

impl<S, T, B> tower_service::Service<Request<B>> for MockConnectInfoService<S, T>
where
    S: tower_service::Service<Request<B>>,
    T: Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    #[inline]
    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        if request.extensions().get::<ConnectInfo<T>>().is_none() {
            let info = ConnectInfo(self.value.clone());
            request.extensions_mut().insert(info);
        }
        self.inner.call(request)
    }
}
