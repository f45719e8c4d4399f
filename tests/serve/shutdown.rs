//! Graceful shutdown: requests in flight, idle connections, event streams
//! and WebSocket handlers.

use super::*;

#[tokio::test]
async fn graceful_shutdown_finishes_in_flight_requests_and_refuses_new_connections() {
    let feeds = Feeds::default();
    let release = feeds.slow();
    let mut server = Server::start(app(&feeds, &Events::default()), |server| server).await;
    let address = server.address;

    let mut sender: Sender = common::connect(address).await;
    sender.ready().await.unwrap();
    let in_flight = tokio::spawn(
        sender.send_request(request(Method::GET, "/slow").body(Full::default()).unwrap()),
    );
    // The request has reached the handler once the handler took the gate.
    while feeds.slow.lock().unwrap().is_some() {
        tokio::task::yield_now().await;
    }

    let _ = server.stop.take().unwrap().send(());
    // The server stops accepting while the slow request is still running.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match TcpStream::connect(address).await {
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => break,
            // A connection that raced the listener's closing is reset.
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(error) => panic!("unexpected connect error: {error}"),
            Ok(_) => {
                assert!(Instant::now() < deadline, "the listener is still open");
                tokio::task::yield_now().await;
            }
        }
    }
    assert!(!in_flight.is_finished());
    release.send(()).unwrap();
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "slow done"
    );
    server.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn graceful_shutdown_closes_idle_connections_and_returns() {
    // Timeouts far away: the connections' watchdogs, which tick four
    // times per shortest timeout, wake no one during the test.
    let far = Duration::from_secs(120);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.header_read_timeout(far).keep_alive_timeout(far)
    })
    .await;
    // One connection idle after an answer (keep-alive), one that never sent
    // a byte: neither has a request in flight, both wait on their socket.
    let mut served = TcpStream::connect(server.address).await.unwrap();
    served
        .write_all(b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0; 512];
    let read = served.read(&mut answer).await.unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200 OK"));
    let mut silent = TcpStream::connect(server.address).await.unwrap();
    // The silent connection is accepted once a later one is served.
    let parts = get_on_a_new_connection(server.address, "/hello").await;
    assert_eq!(parts.status, StatusCode::OK);
    // And an HTTP/2 connection, idle after one answer, its client kept.
    let (http2, http2_connection, response) = http2_get(server.address, "/hello").await;
    assert_eq!(response.status(), StatusCode::OK);

    // The server returns and has closed every connection: the HTTP/1 ones
    // read the end of their streams, the HTTP/2 one ends.
    tokio::time::timeout(Duration::from_secs(5), server.stop())
        .await
        .expect("the server returns once its connections are closed");
    for stream in [&mut served, &mut silent] {
        let mut rest = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
        assert!(matches!(read, Ok(Ok(0))), "{read:?}");
    }
    let ended = tokio::time::timeout(Duration::from_secs(5), http2_connection).await;
    assert!(ended.is_ok(), "the HTTP/2 connection is closed");
    drop(http2);
}

#[tokio::test]
async fn shutdown_ends_sse_streams_at_its_deadline_and_tells_websocket_clients_1001() {
    let deadline = Duration::from_millis(500);
    let feeds = Feeds::default();
    let events = feeds.events();
    let server = Server::start(app(&feeds, &Events::default()), |server| {
        server.shutdown_timeout(deadline)
    })
    .await;
    // An event stream that never ends by itself...
    let mut sender: Sender = common::connect(server.address).await;
    sender.ready().await.unwrap();
    let response = get_streaming(&mut sender, "/events").await;
    let mut sse = response.into_body();
    events.send("first".into()).unwrap();
    let frame = sse.frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), "data: first\n\n");
    // ...and a WebSocket connection.
    let (mut socket, _) = websocket_connect(server.address, "/ws/lobby")
        .await
        .unwrap();
    socket.send(Wire::text("hi")).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        "lobby: hi"
    );

    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), server.stop())
        .await
        .expect("the server returns at its shutdown deadline");
    let elapsed = started.elapsed();
    assert!(elapsed >= deadline, "returned after {elapsed:?}");
    // The event stream was cut: its body ends (with an error: it was not
    // finished).
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(_)) = sse.frame().await {}
    })
    .await;
    assert!(ended.is_ok(), "the event stream ends with the server");
    drop(events);
    // The WebSocket client was told the server is going away.
    let closed = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("a close frame");
    let Some(Ok(Wire::Close(Some(frame)))) = closed else {
        panic!("expected a close frame, got {closed:?}");
    };
    assert_eq!(frame.code, CloseCode::Away);
}

/// Graceful shutdown waits for WebSocket handlers: hyper hands an upgraded
/// connection over and forgets it, and the server returns only once the
/// handler, told `1001` and answered by the client, has ended.
#[tokio::test]
async fn shutdown_waits_for_websocket_handlers_to_end() {
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = ended.clone();
    let router = Router::new()
        .websocket("/ws", move |mut socket: WebSocket, _: RouteParams| {
            let flag = flag.clone();
            async move {
                while let Some(Ok(message)) = socket.next().await {
                    if message.as_text().is_some() && socket.send(message).await.is_err() {
                        break;
                    }
                }
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| {
        server.shutdown_timeout(Duration::from_secs(30))
    })
    .await;
    let (mut socket, _) = websocket_connect(server.address, "/ws").await.unwrap();
    socket.send(Wire::text("hi")).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        "hi"
    );
    // The client reads on, and answers the server's close frame.
    let client = tokio::spawn(async move {
        let mut close = None;
        while let Some(Ok(message)) = socket.next().await {
            if let Wire::Close(frame) = message {
                close = frame;
            }
        }
        close
    });
    tokio::time::timeout(Duration::from_secs(10), server.stop())
        .await
        .expect("the server returns once the handler has ended");
    assert!(
        ended.load(std::sync::atomic::Ordering::SeqCst),
        "the server returned before the WebSocket handler ended"
    );
    let close = client.await.unwrap().expect("a close frame");
    assert_eq!(close.code, CloseCode::Away);
}
