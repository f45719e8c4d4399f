//! `Serve::workers`: connections on threads of the server's own, each a
//! single-threaded runtime, under the server's limits.

use pronghorn::router::Reloadable;

use super::*;

/// The name of the thread that answered: which worker served the request.
fn thread_router() -> CompiledRouter {
    Router::new()
        .get("/thread", || {
            std::thread::current()
                .name()
                .unwrap_or("unnamed")
                .to_owned()
        })
        .get("/hello", || "hello")
        .websocket(
            "/echo",
            |mut socket: WebSocket, _: RouteParams| async move {
                while let Some(Ok(message)) = socket.next().await {
                    if socket.send(message).await.is_err() {
                        break;
                    }
                }
            },
        )
        .compile()
        .unwrap()
}

/// The body of the answer to a GET of `path`, which must be 200.
async fn http1_get(sender: &mut Sender, path: &str) -> String {
    let (parts, body) = send_empty(sender, Method::GET, path).await;
    assert_eq!(parts.status, StatusCode::OK);
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test]
async fn workers_serve_http1_http2_and_websockets_on_their_own_threads() {
    let server = Server::start(thread_router(), |server| server.workers(2)).await;
    let mut sender = common::connect(server.address).await;
    let thread = http1_get(&mut sender, "/thread").await;
    assert!(thread.starts_with("pronghorn-worker-"), "{thread}");

    let (http2, _, response) = http2_get(server.address, "/thread").await;
    assert_eq!(response.version(), Version::HTTP_2);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(body.starts_with(b"pronghorn-worker-"), "{body:?}");
    drop(http2);

    let (mut socket, _) = websocket_connect(server.address, "/echo").await.unwrap();
    socket.send(Wire::text("over a worker")).await.unwrap();
    let echo = socket.next().await.unwrap().unwrap();
    assert_eq!(echo.into_text().unwrap(), "over a worker");
    drop(socket);
    drop(sender);
    server.stop().await;
}

/// Connections go round the workers in turn: with many, each worker
/// serves its share.
#[tokio::test]
async fn workers_each_serve_an_equal_share_of_the_connections() {
    let server = Server::start(thread_router(), |server| server.workers(2)).await;
    let mut served = std::collections::HashMap::<String, usize>::new();
    for _ in 0..100 {
        let mut sender = common::connect(server.address).await;
        let thread = http1_get(&mut sender, "/thread").await;
        *served.entry(thread).or_default() += 1;
    }
    assert_eq!(served.len(), 2, "{served:?}");
    for (worker, connections) in &served {
        assert!(*connections >= 40, "{worker} served {connections} of 100");
    }
    server.stop().await;
}

/// The connection cap is the server's: connections on both workers fill
/// it, and a new client sheds the one idle longest, whichever worker has it.
#[tokio::test]
async fn the_connection_cap_holds_across_workers() {
    let server = Server::start(thread_router(), |server| {
        server.workers(2).max_connections(4)
    })
    .await;
    let mut clients = Vec::new();
    let mut threads = std::collections::HashSet::new();
    for _ in 0..4 {
        let mut client = TcpStream::connect(server.address).await.unwrap();
        client
            .write_all(b"GET /thread HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0; 1024];
        let read = client.read(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer[..read]).into_owned();
        threads.insert(answer.rsplit("\r\n").next().unwrap().to_owned());
        clients.push(client);
    }
    assert_eq!(threads.len(), 2, "the four connections are on both workers");
    // A fifth client is served, and the first connection, idle longest, is
    // closed for it.
    let mut sender = common::connect(server.address).await;
    assert_eq!(http1_get(&mut sender, "/hello").await, "hello");
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), clients[0].read_to_end(&mut rest))
        .await
        .expect("the idle longest is closed");
    assert!(closed.is_ok());
    drop(sender);
    server.stop().await;
}

/// A graceful shutdown lets the requests in flight on every worker finish.
#[tokio::test]
async fn a_graceful_shutdown_drains_the_requests_in_flight_on_every_worker() {
    let (release, released) = tokio::sync::watch::channel(false);
    let (entered, mut entries) = mpsc::unbounded_channel::<()>();
    let router = Router::new()
        .get("/slow", move || {
            let mut released = released.clone();
            let entered = entered.clone();
            async move {
                entered.send(()).unwrap();
                let _ = released.wait_for(|released| *released).await;
                std::thread::current().name().unwrap_or("").to_owned()
            }
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.workers(2)).await;
    let address = server.address;
    let mut requests = Vec::new();
    for _ in 0..4 {
        let mut sender = common::connect(address).await;
        requests.push(tokio::spawn(async move {
            http1_get(&mut sender, "/slow").await
        }));
    }
    // Every request is in its handler before the signal: the handlers wait.
    for _ in 0..4 {
        entries.recv().await.unwrap();
    }
    let stopped = tokio::spawn(server.stop());
    // The signal came once the listener is closed: then the handlers end.
    while TcpStream::connect(address).await.is_ok() {
        tokio::task::yield_now().await;
    }
    release.send(true).unwrap();
    let mut threads = std::collections::HashSet::new();
    for request in requests {
        threads.insert(request.await.unwrap());
    }
    assert_eq!(threads.len(), 2, "{threads:?}");
    tokio::time::timeout(Duration::from_secs(10), stopped)
        .await
        .expect("the server returns once its connections are done")
        .unwrap();
}

/// A reload is seen by every worker at once: the table is shared.
#[tokio::test]
async fn a_reload_is_seen_by_every_worker() {
    let app = Reloadable::new(Router::new().get("/hello", || "before")).unwrap();
    let server = Server::start(app.clone(), |server| server.workers(2)).await;
    let mut senders = Vec::new();
    for _ in 0..2 {
        let mut sender = common::connect(server.address).await;
        assert_eq!(http1_get(&mut sender, "/hello").await, "before");
        senders.push(sender);
    }
    app.swap(Router::new().get("/hello", || "after")).unwrap();
    for sender in &mut senders {
        assert_eq!(http1_get(sender, "/hello").await, "after");
    }
    drop(senders);
    server.stop().await;
}

/// A table a swap replaced is let go once no request runs on it: neither
/// the service `serve` clones for each connection nor a connection that
/// has closed keeps it, so what its handlers own is dropped while the
/// server serves on.
#[tokio::test]
async fn a_swapped_out_table_is_dropped_while_the_server_serves_on() {
    /// Tells when the handler that owns it is dropped.
    struct Owned(mpsc::UnboundedSender<()>);
    impl Drop for Owned {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    let (dropped, mut drops) = mpsc::unbounded_channel();
    let owned = Arc::new(Owned(dropped));
    let app = Reloadable::new(Router::new().get("/hello", move || {
        let _ = &owned;
        "before"
    }))
    .unwrap();
    let server = Server::start(app.clone(), |server| server.workers(2)).await;
    for _ in 0..2 {
        let mut sender = common::connect(server.address).await;
        assert_eq!(http1_get(&mut sender, "/hello").await, "before");
    }
    app.swap(Router::new().get("/hello", || "after")).unwrap();
    let mut sender = common::connect(server.address).await;
    assert_eq!(http1_get(&mut sender, "/hello").await, "after");
    tokio::time::timeout(Duration::from_secs(10), drops.recv())
        .await
        .expect("the old table's handler is dropped")
        .unwrap();
    drop(sender);
    server.stop().await;
}

/// The WebSocket cap is the server's: two WebSockets, one on each worker,
/// fill a cap of two, and a third handshake is answered 503 whichever
/// worker it reaches; a slot given back on one worker serves the other.
#[tokio::test]
async fn the_websocket_cap_holds_across_workers() {
    let server = Server::start(thread_router(), |server| {
        server.workers(2).max_connections(8).max_websockets(2)
    })
    .await;
    // Two connections in a row: one on each worker, in turn.
    let mut sockets = Vec::new();
    for _ in 0..2 {
        let (socket, _) = websocket_connect(server.address, "/echo").await.unwrap();
        sockets.push(socket);
    }
    for _ in 0..2 {
        let refused = websocket_connect(server.address, "/echo").await;
        let Err(tokio_tungstenite::tungstenite::Error::Http(response)) = refused else {
            panic!("past the cap, the upgrade must be refused: {refused:?}");
        };
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
    drop(sockets.pop());
    let again = websocket_once_free(server.address, "/echo");
    let mut socket = tokio::time::timeout(Duration::from_secs(10), again)
        .await
        .expect("a slot once one closes");
    socket.send(Wire::text("again")).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        "again"
    );
    drop((socket, sockets));
    server.stop().await;
}

/// The bound on HTTP/2 heads is the server's: heads held on connections
/// of both workers fill it together, and past it every worker answers
/// 503. (Each thread takes the bound in shares; the shares count too, so
/// the heads admitted never pass the bound.)
#[tokio::test]
async fn the_http2_heads_bound_holds_across_workers() {
    const BOUND: usize = 128 * 1024;
    let (release, released) = tokio::sync::watch::channel(false);
    let (arrived, mut arrivals) = mpsc::unbounded_channel::<String>();
    let router = Router::new()
        .get("/hold", move || {
            let mut released = released.clone();
            let _ = arrived.send(std::thread::current().name().unwrap_or("").to_owned());
            async move {
                let _ = released.wait_for(|released| *released).await;
                "released"
            }
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| {
        server.workers(2).http2_header_buffer(BOUND)
    })
    .await;
    // Two connections, one on each worker, each with as many streams as
    // it may open; every head is over 1,000 bytes.
    let (refused, mut refusals) = mpsc::unbounded_channel::<()>();
    let mut connections = Vec::new();
    for _ in 0..2 {
        let stream = TcpStream::connect(server.address).await.unwrap();
        let (sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await
                .unwrap();
        connections.push(tokio::spawn(connection));
        for _ in 0..100 {
            let mut sender = sender.clone();
            let refused = refused.clone();
            let request = Request::get(format!("http://{}/hold", server.address))
                .header("x-large", "x".repeat(1000))
                .body(Empty::<Bytes>::new())
                .unwrap();
            tokio::spawn(async move {
                let response = sender.send_request(request).await.unwrap();
                if response.status() == StatusCode::SERVICE_UNAVAILABLE {
                    let _ = refused.send(());
                }
            });
        }
    }
    let (mut held, mut refusals_seen) = (std::collections::HashMap::<String, usize>::new(), 0);
    while held.values().sum::<usize>() + refusals_seen < 200 {
        tokio::select! {
            Some(thread) = arrivals.recv() => *held.entry(thread).or_default() += 1,
            Some(()) = refusals.recv() => refusals_seen += 1,
        }
    }
    let admitted: usize = held.values().sum();
    assert_eq!(held.len(), 2, "heads held on both workers: {held:?}");
    assert!(
        admitted <= BOUND / 1000,
        "{admitted} heads of over 1,000 bytes held under a bound of {BOUND}"
    );
    // Less than the bound only by what each worker's thread keeps of its
    // shares (two of 2 KiB at most), and a head's size.
    assert!(admitted >= (BOUND - 4 * 2048) / 1200, "{admitted} admitted");
    release.send(true).unwrap();
    drop(connections);
    server.stop().await;
}

/// The server's allowance for request bodies is the server's: four heads
/// on two workers fill an allowance of four steps, and a fifth finds no
/// room on either (503 at its body timeout) until one leaves.
#[tokio::test]
async fn the_body_allowance_holds_across_workers() {
    use super::bodies::post_expecting_continue;
    // HTTP/1 bodies longer than 64 KiB, each head holding a step of it.
    const LENGTH: usize = 200_000;
    let text = |text: String| format!("{} bytes", text.len());
    let patient = Router::new()
        .post("/text", text)
        .body_timeout(Duration::from_secs(30));
    let router = Router::new()
        .post("/text", text)
        .nest("/patient", patient)
        .body_timeout(Duration::from_millis(300))
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.workers(2).body_buffer(256 * 1024)).await;
    let continued = "HTTP/1.1 100 Continue\r\n\r\n";
    // Connections go to the workers in turn: two heads on each.
    let mut heads = Vec::new();
    for _ in 0..4 {
        let mut head = post_expecting_continue(server.address, "/patient/text", LENGTH).await;
        assert_eq!(next_answer(&mut head).await, continued);
        heads.push(head);
    }
    let mut late = post_expecting_continue(server.address, "/text", LENGTH).await;
    let answer = next_answer(&mut late).await;
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    // A head that leaves one worker makes room for a client of the other.
    drop(heads.remove(0));
    let mut next = post_expecting_continue(server.address, "/patient/text", LENGTH).await;
    assert_eq!(next_answer(&mut next).await, continued);
    // Its body takes room as it arrives: once the heads are gone, all it
    // needs.
    drop(heads);
    next.write_all(&[b'a'; LENGTH]).await.unwrap();
    assert!(next_answer(&mut next).await.ends_with("200000 bytes"));
    server.stop().await;
}

/// `on_worker_start` runs on each worker's thread, with its index, before
/// the worker serves: where a caller pins the worker to a core.
#[tokio::test]
async fn each_worker_runs_the_start_hook_on_its_thread_with_its_index() {
    let (started, mut starts) = mpsc::unbounded_channel::<(usize, String)>();
    let server = Server::start(thread_router(), move |server| {
        server.workers(2).on_worker_start(move |index| {
            let thread = std::thread::current().name().unwrap_or("").to_owned();
            started.send((index, thread)).unwrap();
        })
    })
    .await;
    let mut seen = vec![starts.recv().await.unwrap(), starts.recv().await.unwrap()];
    seen.sort();
    assert_eq!(
        seen,
        [
            (0, "pronghorn-worker-0".to_owned()),
            (1, "pronghorn-worker-1".to_owned())
        ]
    );
    let mut sender = common::connect(server.address).await;
    assert_eq!(http1_get(&mut sender, "/hello").await, "hello");
    drop(sender);
    server.stop().await;
}
