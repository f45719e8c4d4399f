//! The timeouts on what a client can hold: a request's head, keep-alive,
//! a client that stops reading, TCP keep-alive, and durations too long to
//! count.

use super::*;

#[tokio::test]
async fn a_connection_stalled_mid_headers_is_closed_after_the_header_timeout() {
    let timeout = Duration::from_millis(1000);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.header_read_timeout(timeout)
    })
    .await;
    let mut stalled = TcpStream::connect(server.address).await.unwrap();
    let started = Instant::now();
    stalled
        .write_all(b"GET /hello HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .unwrap();
    // Meanwhile another client is served at once.
    let parts = get_on_a_new_connection(server.address, "/hello").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert!(
        started.elapsed() < timeout,
        "the stalled connection delays no one"
    );

    let mut buffer = Vec::new();
    let read =
        tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut buffer)).await;
    let elapsed = started.elapsed();
    assert!(read.is_ok(), "the stalled connection must be closed");
    assert!(
        elapsed >= timeout,
        "closed after {elapsed:?}, before the timeout"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "closed only after {elapsed:?}"
    );
    server.stop().await;
}

/// Reads from `stream` until the server closes it; how long that took.
async fn time_to_close(stream: &mut TcpStream, started: Instant) -> Duration {
    let mut buffer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buffer))
        .await
        .expect("the server closes the connection")
        .unwrap();
    started.elapsed()
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_header_timeout_and_an_idle_one_after_the_keep_alive_timeout()
 {
    let timeout = Duration::from_millis(400);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server
            .header_read_timeout(timeout)
            .keep_alive_timeout(timeout * 2)
    })
    .await;

    // A client that connects and sends nothing at all.
    let started = Instant::now();
    let mut silent = TcpStream::connect(server.address).await.unwrap();
    let elapsed = time_to_close(&mut silent, started).await;
    assert!(elapsed >= timeout, "closed after {elapsed:?}");
    assert!(elapsed < timeout * 3, "closed only after {elapsed:?}");

    // A client that sends one request and then keeps the connection idle.
    let mut idle = TcpStream::connect(server.address).await.unwrap();
    idle.write_all(b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0; 12];
    idle.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    let started = Instant::now();
    let elapsed = time_to_close(&mut idle, started).await;
    assert!(elapsed >= timeout * 2, "closed after {elapsed:?}");
    assert!(elapsed < timeout * 4, "closed only after {elapsed:?}");
    server.stop().await;
}

/// After an answer, the next head on the same connection has the header
/// timeout too: a client that starts one and stalls is closed then, not
/// at the (longer) keep-alive timeout.
#[tokio::test]
async fn a_second_head_stalled_on_a_kept_alive_connection_is_closed_at_the_header_timeout() {
    let timeout = Duration::from_millis(400);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server
            .header_read_timeout(timeout)
            .keep_alive_timeout(Duration::from_secs(30))
    })
    .await;
    let mut client = TcpStream::connect(server.address).await.unwrap();
    for _ in 0..2 {
        client
            .write_all(b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        // The whole answer, which ends with its body.
        let mut answer = Vec::new();
        while !answer.ends_with(b"\r\n\r\nhello") {
            let mut buffer = [0; 512];
            let read = client.read(&mut buffer).await.unwrap();
            assert!(read > 0, "closed after {answer:?}");
            answer.extend_from_slice(&buffer[..read]);
        }
        assert!(answer.starts_with(b"HTTP/1.1 200"));
    }
    let started = Instant::now();
    client
        .write_all(b"GET /hello HTTP/1.1\r\nHost: loc")
        .await
        .unwrap();
    let elapsed = time_to_close(&mut client, started).await;
    assert!(elapsed >= timeout * 3 / 4, "closed after {elapsed:?}");
    assert!(elapsed < timeout * 3, "closed only after {elapsed:?}");
    server.stop().await;
}

#[tokio::test]
async fn a_first_head_sent_a_byte_at_a_time_is_cut_off_at_the_header_timeout_from_the_accept() {
    let timeout = Duration::from_millis(800);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.header_read_timeout(timeout)
    })
    .await;
    // One byte at once (the server reads it to choose between HTTP/1 and
    // HTTP/2), then one byte every half timeout: each byte is progress,
    // but the head as a whole is late.
    let started = Instant::now();
    let mut dribbler = TcpStream::connect(server.address).await.unwrap();
    let head = b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut closed = None;
    for byte in head {
        if dribbler.write_all(&[*byte]).await.is_err() {
            closed = Some(started.elapsed());
            break;
        }
        let mut buffer = [0; 64];
        match tokio::time::timeout(timeout / 2, dribbler.read(&mut buffer)).await {
            Err(_) => {}
            Ok(Ok(0) | Err(_)) => {
                closed = Some(started.elapsed());
                break;
            }
            Ok(Ok(_)) => panic!("answered a head that came too late"),
        }
    }
    let closed = closed.expect("the server closes the connection before the head is complete");
    assert!(closed >= timeout, "closed after {closed:?}");
    // The watchdog looks four times in a timeout. (Counted from the
    // second byte, as before, it closed the connection after 1.2 s.)
    assert!(
        closed <= timeout + timeout / 4 + timeout / 8,
        "closed only after {closed:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_slow_answer_or_a_long_stream_outlives_the_header_timeout() {
    let timeout = Duration::from_millis(200);
    let feeds = Feeds::default();
    let chunks = feeds.chunks();
    let release = feeds.slow();
    let server = Server::start(app(&feeds, &Events::default()), |server| {
        server.header_read_timeout(timeout)
    })
    .await;

    // A handler that answers after several timeouts.
    let mut sender: Sender = common::connect(server.address).await;
    let answer = tokio::spawn(async move {
        let answer = send_empty(&mut sender, Method::GET, "/slow").await;
        (answer, sender)
    });
    tokio::time::sleep(timeout * 4).await;
    release.send(()).unwrap();
    let ((parts, body), mut sender) = answer.await.unwrap();
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, "slow done");

    // A stream the client waits on, sending nothing, for several timeouts.
    let response = get_streaming(&mut sender, "/stream").await;
    let mut body = response.into_body();
    for n in 0..4 {
        tokio::time::sleep(timeout).await;
        chunks.send(Bytes::from(format!("chunk {n}"))).unwrap();
        let frame = body.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), format!("chunk {n}"));
    }
    drop(chunks);
    assert!(body.frame().await.is_none());
    server.stop().await;
}

/// The timer Linux runs on the server's side of the loopback connection
/// from `client` (0: none, 1: a retransmission, 2: keep-alive) and the
/// seconds left on it.
#[cfg(target_os = "linux")]
fn server_socket_timer(server: SocketAddr, client: &TcpStream) -> (u8, u64) {
    let port = |address: &str| {
        let (_, port) = address.split_once(':').unwrap();
        u16::from_str_radix(port, 16).unwrap()
    };
    let client = client.local_addr().unwrap().port();
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if port(fields[1]) == server.port() && port(fields[2]) == client {
            let (timer, left) = fields[5].split_once(':').unwrap();
            // Left in clock ticks, a hundred a second.
            return (
                timer.parse().unwrap(),
                u64::from_str_radix(left, 16).unwrap() / 100,
            );
        }
    }
    panic!("no server socket for the client on port {client}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn accepted_sockets_are_probed_after_the_tcp_keepalive_time_unless_it_is_zero() {
    for (idle, probed) in [(100, true), (0, false)] {
        let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
            server.tcp_keepalive(Duration::from_secs(idle))
        })
        .await;
        // Served: the socket's options are set.
        let mut client = TcpStream::connect(server.address).await.unwrap();
        client
            .write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        assert!(next_answer(&mut client).await.ends_with("hello"));
        // Once the client's acknowledgement arrives, no retransmission is
        // pending: the timer left is the keep-alive's, or none.
        let deadline = Instant::now() + Duration::from_secs(10);
        let (timer, left) = loop {
            let (timer, left) = server_socket_timer(server.address, &client);
            if timer != 1 || Instant::now() > deadline {
                break (timer, left);
            }
            tokio::task::yield_now().await;
        };
        match probed {
            true => {
                assert_eq!(timer, 2, "no keep-alive timer");
                assert!((90..=100).contains(&left), "probed in {left} s");
            }
            false => assert_eq!(timer, 0, "a timer runs"),
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn an_http2_client_that_grants_no_window_is_closed_after_the_send_timeout() {
    let timeout = Duration::from_millis(300);
    // An answer of 256 chunks of 16 KiB.
    let router = Router::new()
        .get("/chunks", || {
            let chunk = Bytes::from(vec![b'x'; 16 * 1024]);
            let chunks =
                stream::iter((0..256).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
            Response::new(Body::from_stream(chunks))
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.send_timeout(timeout)).await;
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let request = Request::get(format!("http://{}/chunks", server.address))
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // The client keeps reading its socket and answering the server's
    // frames, but reads none of the answer: it grants no more window.
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), connection)
        .await
        .expect("the server closes the connection")
        .unwrap()
        .ok();
    let elapsed = started.elapsed();
    assert!(elapsed >= timeout, "closed after {elapsed:?}");
    drop(response);
    server.stop().await;
}

/// A client on a socket that takes 4 KiB at a time, asking for `path`
/// (the server closes the connection after the answer).
async fn narrow_client(address: SocketAddr, path: &str) -> TcpStream {
    let mut client = narrow_connection(address).await;
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    client
}

/// Reads what `client` is sent until the server closes it: how many bytes.
async fn read_until_closed(client: &mut TcpStream) -> usize {
    let mut buffer = vec![0; 64 * 1024];
    let mut received = 0;
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), client.read(&mut buffer))
            .await
            .expect("the server sends or closes");
        match read {
            Ok(0) | Err(_) => return received,
            Ok(read) => received += read,
        }
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_its_answer_is_closed_after_the_send_timeout() {
    const LARGE: usize = 32 << 20;
    let timeout = Duration::from_secs(1);
    let router = Router::new()
        .get("/large", || vec![b'x'; LARGE])
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.send_timeout(timeout)).await;

    // A client that reads in bursts, pausing for less than the timeout
    // between them, gets the whole answer.
    let mut pausing = narrow_client(server.address, "/large").await;
    let mut buffer = vec![0; 64 * 1024];
    let (mut received, mut burst) = (0, 0);
    loop {
        if burst >= 4 << 20 {
            tokio::time::sleep(timeout / 4).await;
            burst = 0;
        }
        match pausing.read(&mut buffer).await.unwrap() {
            0 => break,
            read => (received, burst) = (received + read, burst + read),
        }
    }
    // The head, then the body.
    assert!(received > LARGE, "{received} bytes");

    // A client that stops reading is closed, its answer unfinished.
    let mut stalled = narrow_client(server.address, "/large").await;
    tokio::time::sleep(timeout * 2).await;
    let received = read_until_closed(&mut stalled).await;
    assert!(
        received < LARGE,
        "{received} bytes: the answer was finished"
    );
    server.stop().await;
}

#[tokio::test]
async fn durations_too_long_to_count_mean_never_and_break_no_connection() {
    let never = Duration::MAX;
    let router = Router::new()
        .get("/hello", || "hello")
        .get("/events", move || {
            let first = stream::iter([Ok::<_, std::convert::Infallible>(
                Event::default().data("first"),
            )]);
            Sse::new(first.chain(stream::pending())).keep_alive(never)
        })
        .body_timeout(never)
        .compile()
        .unwrap();
    let server = Server::start(router, |server| {
        server
            .header_read_timeout(never)
            .keep_alive_timeout(never)
            .http2_idle_timeout(never)
            .send_timeout(never)
            .tcp_keepalive(never)
            .http2_keep_alive(never)
            .shutdown_timeout(never)
    })
    .await;

    // HTTP/1: two requests on one connection.
    let mut sender: Sender = common::connect(server.address).await;
    for _ in 0..2 {
        let (parts, body) = send_empty(&mut sender, Method::GET, "/hello").await;
        assert_eq!((parts.status, &body[..]), (StatusCode::OK, &b"hello"[..]));
    }

    // HTTP/2: a second request on the connection after the first.
    let (mut sender, connection, response) = http2_get(server.address, "/hello").await;
    assert_eq!(response.status(), StatusCode::OK);
    let second = sender
        .send_request(Request::get("/hello").body(Empty::new()).unwrap())
        .await
        .expect("the HTTP/2 connection still serves");
    assert_eq!(
        second.into_body().collect().await.unwrap().to_bytes(),
        "hello"
    );
    drop(sender);
    connection.await.unwrap().unwrap();

    // An event stream with no keep-alive to speak of: its first event, then
    // its connection open and quiet.
    let mut sender: Sender = common::connect(server.address).await;
    let response = get_streaming(&mut sender, "/events").await;
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(first, "data: first\n\n");
    let quiet = tokio::time::timeout(Duration::from_millis(100), body.frame()).await;
    assert!(quiet.is_err(), "the stream sent {quiet:?}");
    drop(body);
    drop(sender);
    server.stop().await;
}
