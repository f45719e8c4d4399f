//! `serve` on listeners other than a TCP one: a Unix socket, a listener
//! tapped as it accepts, the address of a running server.

use std::sync::atomic::{AtomicUsize, Ordering};

use pronghorn::{
    IncomingStream, ListenerExt,
    handler::{ConnectInfo, Connected},
};

use super::*;

/// A server behind a proxy on a Unix socket answers a request, its
/// connect info the socket's peer address; with workers, it stays on the
/// runtime that accepted it.
#[cfg(unix)]
#[tokio::test]
async fn a_server_on_a_unix_socket_answers_requests() {
    let dir = std::env::temp_dir().join(format!("pronghorn-unix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("app.sock");
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let router = Router::new()
        .get(
            "/",
            |ConnectInfo(peer): ConnectInfo<tokio::net::unix::SocketAddr>| {
                format!("hello, unnamed: {}", peer.is_unnamed())
            },
        )
        .compile()
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = pronghorn::serve(listener, router)
        .connect_info(true)
        .workers(1)
        .with_graceful_shutdown(async { stopped.await.unwrap_or(()) });
    assert_eq!(
        server.local_addr().unwrap().as_pathname(),
        Some(path.as_path())
    );
    let task = tokio::spawn(server.into_future());

    let stream = tokio::net::UnixStream::connect(&path).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let (parts, body) = send_empty(&mut sender, Method::GET, "/").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, "hello, unnamed: true");
    drop(sender);
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tap_io` sees every connection before it is served.
#[tokio::test]
async fn tap_io_sees_each_connection_as_it_is_accepted() {
    let tapped = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&tapped);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .tap_io(move |stream: &mut TcpStream| {
            stream.set_ttl(63).unwrap();
            seen.fetch_add(1, Ordering::SeqCst);
        });
    let router = Router::new().get("/", || "hi").compile().unwrap();
    let server = pronghorn::serve(listener, router);
    let address = server.local_addr().unwrap();
    let task = tokio::spawn(server.into_future());
    for expected in 1..=2 {
        let parts = get_on_a_new_connection(address, "/").await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(tapped.load(Ordering::SeqCst), expected);
    }
    task.abort();
}

/// A connect-info type of one's own, made from each accepted connection
/// (here from its socket and its peer's address), reaches every request of
/// that connection, as axum's `into_make_service_with_connect_info` does.
#[tokio::test]
async fn a_connected_type_of_ones_own_is_made_once_per_connection() {
    static MADE: AtomicUsize = AtomicUsize::new(0);

    #[derive(Clone)]
    struct Client {
        peer: SocketAddr,
        server: SocketAddr,
        connection: usize,
    }

    impl Connected<IncomingStream<'_, tokio::net::TcpListener>> for Client {
        fn connect_info(stream: IncomingStream<'_, tokio::net::TcpListener>) -> Self {
            Client {
                peer: *stream.remote_addr(),
                server: stream.io().local_addr().unwrap(),
                connection: MADE.fetch_add(1, Ordering::SeqCst),
            }
        }
    }

    let router = Router::new()
        .get("/", |ConnectInfo(client): ConnectInfo<Client>| {
            format!("{} {} {}", client.peer, client.server, client.connection)
        })
        .get("/address", |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
            peer.to_string()
        })
        .compile()
        .unwrap();
    let address =
        common::serve_on_loopback(router, |server| server.connect_info_as::<Client>()).await;
    let (mut sender, local) = connect_from(address).await;
    for _ in 0..2 {
        let (parts, body) = send_empty(&mut sender, Method::GET, "/").await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(body, format!("{local} {address} 0"));
    }
    // Only the type asked for is there: the plain address is not.
    let (parts, _) = send_empty(&mut sender, Method::GET, "/address").await;
    assert_eq!(parts.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(MADE.load(Ordering::SeqCst), 1);
}

/// `SocketAddr` is a `Connected` type of a TCP listener, as in axum:
/// `connect_info_as::<SocketAddr>()` is `connect_info(true)`.
#[tokio::test]
async fn connect_info_as_a_socket_address_is_the_clients_address() {
    let router = Router::new()
        .get("/", |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
            peer.to_string()
        })
        .compile()
        .unwrap();
    let address =
        common::serve_on_loopback(router, |server| server.connect_info_as::<SocketAddr>()).await;
    let (mut sender, local) = connect_from(address).await;
    let (parts, body) = send_empty(&mut sender, Method::GET, "/").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, local.to_string());
}

/// `limit_connections` on the listener holds the server to that many
/// connections, as `max_connections` does: at the limit, the connection
/// idle longest makes room for the new client.
#[tokio::test]
async fn a_listener_limited_to_one_connection_sheds_the_idle_one_for_a_new_client() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .limit_connections(1);
    let router = Router::new().get("/", || "hi").compile().unwrap();
    let server = pronghorn::serve(listener, router);
    let address = server.local_addr().unwrap();
    let task = tokio::spawn(server.into_future());

    let mut first = TcpStream::connect(address).await.unwrap();
    first
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert!(next_answer(&mut first).await.starts_with("HTTP/1.1 200"));
    let mut second = TcpStream::connect(address).await.unwrap();
    second
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert!(next_answer(&mut second).await.starts_with("HTTP/1.1 200"));
    // The first was shed to make room: the server closed it.
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), first.read_to_end(&mut rest)).await;
    assert!(matches!(read, Ok(Ok(0) | Err(_))), "{read:?}");
    task.abort();
}

/// An axum app's `serve(listener, app.into_make_service())` reads as it
/// is: the router is served.
#[tokio::test]
async fn a_router_made_into_a_make_service_is_served_as_axum_s() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let app = Router::new().get("/", || "hi");
    let server = pronghorn::serve(listener, app.into_make_service());
    let address = server.local_addr().unwrap();
    let task = tokio::spawn(server.into_future());
    let parts = get_on_a_new_connection(address, "/").await;
    assert_eq!(parts.status, StatusCode::OK);
    task.abort();
}

/// axum's `serve(listener, app.into_make_service_with_connect_info::<C>())`
/// reads as it is: each request carries the `C` its connection made.
#[tokio::test]
async fn into_make_service_with_connect_info_gives_requests_their_connection_s_info() {
    #[derive(Clone)]
    struct Port(u16);

    impl Connected<IncomingStream<'_, tokio::net::TcpListener>> for Port {
        fn connect_info(stream: IncomingStream<'_, tokio::net::TcpListener>) -> Self {
            Port(stream.remote_addr().port())
        }
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let app = Router::new()
        .get("/", |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
            peer.to_string()
        })
        .get("/port", |ConnectInfo(Port(port)): ConnectInfo<Port>| {
            port.to_string()
        });
    let server = pronghorn::serve(
        listener,
        app.clone()
            .into_make_service_with_connect_info::<SocketAddr>(),
    );
    let address = server.local_addr().unwrap();
    let task = tokio::spawn(server.into_future());
    let (mut sender, local) = connect_from(address).await;
    let (parts, body) = send_empty(&mut sender, Method::GET, "/").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, local.to_string());
    task.abort();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = pronghorn::serve(listener, app.into_make_service_with_connect_info::<Port>());
    let address = server.local_addr().unwrap();
    let task = tokio::spawn(server.into_future());
    let (mut sender, local) = connect_from(address).await;
    let (parts, body) = send_empty(&mut sender, Method::GET, "/port").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, local.port().to_string());
    task.abort();
}
