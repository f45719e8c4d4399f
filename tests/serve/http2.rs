//! HTTP/2: prior knowledge, streams, the stream and header-list limits,
//! the server's allowance for heads, the idle timeout and pings.

use super::*;

#[tokio::test]
async fn http2_prior_knowledge() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;
    let (sender, _, response) = http2_get(server.address, "/hello").await;
    assert_eq!(response.version(), Version::HTTP_2);
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "hello"
    );
    drop(sender);
    server.stop().await;
}

/// A large answer the client does not read holds the connection's send
/// budget, not its other answers: each body's first data goes out at
/// once.
#[tokio::test]
async fn an_http2_answer_the_client_stalls_does_not_hold_up_the_others() {
    let router = Router::new()
        .get("/hello", || "hello")
        .get("/large", || Bytes::from(vec![b'x'; 1 << 20]))
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let stream = TcpStream::connect(server.address).await.unwrap();
    // A small window the client never reopens for the large answer.
    let (mut sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(16 << 10)
        .handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let get = |path: &str| {
        Request::get(format!("http://{}{path}", server.address))
            .body(Empty::new())
            .unwrap()
    };
    let large = sender.send_request(get("/large")).await.unwrap();
    assert_eq!(large.status(), StatusCode::OK);
    for _ in 0..3 {
        let response =
            tokio::time::timeout(Duration::from_secs(10), sender.send_request(get("/hello")))
                .await
                .expect("answered beside the stalled one")
                .unwrap();
        let body = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
            .await
            .expect("its body arrives")
            .unwrap();
        assert_eq!(body.to_bytes(), "hello");
    }
    drop(large);
    server.stop().await;
}

/// The stream error an HTTP/2 request met, if any: the reason of the
/// `h2::Error` in the client's error.
async fn http2_reset_reason(
    address: SocketAddr,
    request: Request<Empty<Bytes>>,
) -> Option<h2::Reason> {
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let error = match sender.send_request(request).await {
        Ok(response) => {
            assert_eq!(response.status(), StatusCode::OK);
            return None;
        }
        Err(error) => error,
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(error) = source {
        if let Some(h2) = error.downcast_ref::<h2::Error>() {
            return h2.reason();
        }
        source = error.source();
    }
    panic!("not a stream error: {error:?}");
}

/// RFC 9113, 8.1.1: a malformed request is a stream error of type
/// PROTOCOL_ERROR — also the kinds the `h2` crate lets through (8.2.1: a
/// field value that starts or ends with whitespace; 8.3.1: a `Host` that
/// names another authority than `:authority`).
#[tokio::test]
async fn malformed_http2_requests_are_reset_with_protocol_error() {
    let router = Router::new().get("/", || "hello").compile().unwrap();
    let server = Server::start(router, |server| server).await;
    let address = server.address;
    let with = |name: &'static str, value: &'static str| {
        Request::get(format!("http://{address}/"))
            .header(name, HeaderValue::from_static(value))
            .body(Empty::new())
            .unwrap()
    };
    for (request, what) in [
        (with("x-value", " leading space"), "leading space"),
        (with("x-value", "trailing tab\t"), "trailing tab"),
        (with("host", "another.example"), "another authority"),
    ] {
        assert_eq!(
            http2_reset_reason(address, request).await,
            Some(h2::Reason::PROTOCOL_ERROR),
            "{what}"
        );
    }
    // The same authority once normalized: host case, the scheme's default port.
    let same = Request::get("http://LocalHost/")
        .header("host", "localhost:80")
        .body(Empty::new())
        .unwrap();
    assert_eq!(http2_reset_reason(address, same).await, None);
    server.stop().await;
}

/// What a server tells a new HTTP/2 client in its first frames: its
/// settings, and how far it opens the connection's flow-control window.
struct Announced {
    settings: Vec<(u16, u32)>,
    connection_window: u32,
}

impl Announced {
    const MAX_CONCURRENT_STREAMS: u16 = 3;
    const INITIAL_WINDOW_SIZE: u16 = 4;

    fn setting(&self, id: u16) -> Option<u32> {
        self.settings
            .iter()
            .find(|(setting, _)| *setting == id)
            .map(|&(_, value)| value)
    }
}

/// Reads what a server announces to a new HTTP/2 client.
async fn announced(address: SocketAddr) -> Announced {
    announced_on(address).await.0
}

/// Reads what a server announces to a new HTTP/2 client, and keeps the
/// connection open: the settings, then whether it opens the connection's
/// flow-control window past HTTP/2's 65,535 bytes. Once the server has
/// acknowledged the client's settings, a ping's answer tells that it sent
/// all it had to: a window update would have gone out with that
/// acknowledgement.
async fn announced_on(address: SocketAddr) -> (Announced, TcpStream) {
    const SETTINGS: u8 = 4;
    const PING: u8 = 6;
    const WINDOW_UPDATE: u8 = 8;
    const ACK: u8 = 1;
    let mut stream = TcpStream::connect(address).await.unwrap();
    // The preface, then an empty SETTINGS frame.
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, SETTINGS, 0, 0, 0, 0, 0]);
    stream.write_all(&hello).await.unwrap();
    let mut announced = Announced {
        settings: Vec::new(),
        connection_window: 65_535,
    };
    let read = async {
        loop {
            let mut head = [0; 9];
            stream.read_exact(&mut head).await.unwrap();
            let length =
                usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
            let (kind, flags, stream_id) = (head[3], head[4], &head[5..]);
            let mut payload = vec![0; length];
            stream.read_exact(&mut payload).await.unwrap();
            let number = |bytes: &[u8]| u32::from_be_bytes(bytes.try_into().unwrap()) & !(1 << 31);
            match kind {
                SETTINGS if flags & ACK == 0 => {
                    announced.settings = payload
                        .chunks_exact(6)
                        .map(|setting| {
                            (
                                u16::from_be_bytes([setting[0], setting[1]]),
                                number(&setting[2..]),
                            )
                        })
                        .collect();
                }
                SETTINGS => {
                    let ping = [0, 0, 8, PING, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
                    stream.write_all(&ping).await.unwrap();
                }
                WINDOW_UPDATE if number(stream_id) == 0 => {
                    announced.connection_window += number(&payload);
                }
                PING if flags & ACK != 0 => return,
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the server's settings and window update");
    (announced, stream)
}

#[tokio::test]
async fn an_http2_client_is_told_how_many_streams_it_may_open() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;
    let streams = Announced::MAX_CONCURRENT_STREAMS;
    assert_eq!(announced(server.address).await.setting(streams), Some(100));
    server.stop().await;
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.http2_max_streams(8)
    })
    .await;
    assert_eq!(announced(server.address).await.setting(streams), Some(8));
    server.stop().await;
}

#[tokio::test]
async fn an_http2_client_may_send_a_receive_window_ahead_per_connection_and_stream() {
    for (window, configured) in [(1 << 20, None), (256 * 1024, Some(256 * 1024))] {
        let server =
            Server::start(
                app(&Feeds::default(), &Events::default()),
                |server| match configured {
                    Some(bytes) => server.http2_receive_window(bytes),
                    None => server,
                },
            )
            .await;
        let announced = announced(server.address).await;
        assert_eq!(
            announced.setting(Announced::INITIAL_WINDOW_SIZE),
            Some(window),
            "per stream, set to {configured:?}"
        );
        assert_eq!(
            announced.connection_window, window,
            "per connection, set to {configured:?}"
        );
        server.stop().await;
    }
}

/// The windows of all connections are bounded: past the bound a new
/// connection gets HTTP/2's initial window, until a connection shows with
/// its first request that it speaks HTTP/1, or closes.
#[tokio::test]
async fn http2_receive_windows_past_the_server_s_bound_are_the_initial_one() {
    let window = 256 * 1024;
    // Room for two connections' windows beyond the initial 65,535 bytes.
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server
            .http2_receive_window(window)
            .http2_receive_buffer(2 * (window as usize - 65_535))
    })
    .await;
    let granted = |announced: &Announced| {
        let setting = announced.setting(Announced::INITIAL_WINDOW_SIZE);
        (setting.unwrap_or(65_535), announced.connection_window)
    };
    let full = (window, window);
    let initial = (65_535, 65_535);

    let (first, first_held) = announced_on(server.address).await;
    assert_eq!(granted(&first), full);
    // An HTTP/1 connection holds a window until its first request.
    let mut http1 = TcpStream::connect(server.address).await.unwrap();
    let (past, _) = announced_on(server.address).await;
    assert_eq!(granted(&past), initial, "past the bound");
    http1
        .write_all(b"GET /hello HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0; 12];
    http1.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    let (second, second_held) = announced_on(server.address).await;
    assert_eq!(
        granted(&second),
        full,
        "the HTTP/1 connection's, given back"
    );
    let (past, _) = announced_on(server.address).await;
    assert_eq!(granted(&past), initial, "past the bound");

    // A connection gives its window back when it closes: the next one
    // after its end gets it.
    drop(first_held);
    let started = Instant::now();
    while granted(&announced(server.address).await) != full {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the closed connection's window is given back"
        );
    }
    drop((second_held, http1));
    server.stop().await;
}

#[tokio::test]
async fn an_idle_http2_connection_is_closed_after_the_http2_idle_timeout() {
    let timeout = Duration::from_millis(300);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.http2_idle_timeout(timeout)
    })
    .await;
    let started = Instant::now();
    let (_sender, connection, response) = http2_get(server.address, "/hello").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "hello"
    );
    // The client keeps the connection; the server closes it once idle.
    tokio::time::timeout(Duration::from_secs(10), connection)
        .await
        .expect("the server closes an idle HTTP/2 connection")
        .unwrap()
        .ok();
    let elapsed = started.elapsed();
    assert!(elapsed >= timeout, "closed after {elapsed:?}");
    server.stop().await;
}

/// The types of the HTTP/2 frames a server sends on `stream` until it
/// closes it (within 10 s), its SETTINGS acknowledged.
async fn frames_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    const SETTINGS: u8 = 4;
    let mut types = Vec::new();
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buffer = [0; 16 * 1024];
        while let Ok(read @ 1..) = stream.read(&mut buffer).await {
            received.extend_from_slice(&buffer[..read]);
            while received.len() >= 9 {
                let length = usize::from(received[0]) << 16
                    | usize::from(received[1]) << 8
                    | usize::from(received[2]);
                if received.len() < 9 + length {
                    break;
                }
                let (kind, flags) = (received[3], received[4]);
                if kind == SETTINGS && flags & 1 == 0 {
                    let ack = [0, 0, 0, SETTINGS, 1, 0, 0, 0, 0];
                    let _ = stream.write_all(&ack).await;
                }
                types.push(kind);
                received.drain(..9 + length);
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server closes the connection");
    types
}

#[tokio::test]
async fn an_idle_http2_connection_is_sent_goaway_before_it_is_closed() {
    const GOAWAY: u8 = 7;
    let timeout = Duration::from_millis(300);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.http2_idle_timeout(timeout)
    })
    .await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    // An empty SETTINGS frame, then a GET of `/hello` on stream 1: the
    // header block in HPACK's static table, `:authority` a literal.
    hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    let mut block = vec![0x82, 0x86, 0x04, 6];
    block.extend_from_slice(b"/hello");
    block.extend_from_slice(&[0x41, 9]);
    block.extend_from_slice(b"localhost");
    hello.extend_from_slice(&[0, 0, block.len() as u8, 1, 0x05, 0, 0, 0, 1]);
    hello.extend_from_slice(&block);
    stream.write_all(&hello).await.unwrap();
    let started = Instant::now();
    let types = frames_until_closed(&mut stream).await;
    assert!(types.contains(&1), "the answer's HEADERS: {types:?}");
    assert!(
        types.contains(&GOAWAY),
        "no GOAWAY before the close: {types:?}"
    );
    assert!(
        started.elapsed() >= timeout,
        "closed after {:?}",
        started.elapsed()
    );
    server.stop().await;
}

#[tokio::test]
async fn an_http2_stream_that_lasts_keeps_its_connection_past_the_idle_timeout() {
    let timeout = Duration::from_millis(200);
    let feeds = Feeds::default();
    let events = feeds.events();
    let server = Server::start(app(&feeds, &Events::default()), |server| {
        server.http2_idle_timeout(timeout)
    })
    .await;
    let (_sender, connection, response) = http2_get(server.address, "/events").await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    // Events well apart, the stream open for several idle timeouts.
    for n in 0..4 {
        tokio::time::sleep(timeout).await;
        events.send(format!("event {n}")).unwrap();
        let frame = body.frame().await.expect("the stream is open").unwrap();
        let data = frame.into_data().unwrap();
        assert_eq!(data, format!("data: event {n}\n\n"));
    }
    assert!(!connection.is_finished());
    // The stream ends with its events.
    drop(events);
    while let Some(frame) = body.frame().await {
        frame.unwrap();
    }
    server.stop().await;
}

/// The status of a GET of `path`, on a new HTTP/2 connection, carrying a
/// header of `bytes`.
async fn http2_status_with_header_of(address: SocketAddr, path: &str, bytes: usize) -> StatusCode {
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let request = Request::get(format!("http://{address}{path}"))
        .header("x-large", "x".repeat(bytes))
        .body(Empty::<Bytes>::new())
        .unwrap();
    sender.send_request(request).await.unwrap().status()
}

#[tokio::test]
async fn an_http2_header_list_over_16_kib_is_431_unless_allowed() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;
    assert_eq!(
        http2_status_with_header_of(server.address, "/hello", 15 * 1024).await,
        StatusCode::OK
    );
    assert_eq!(
        http2_status_with_header_of(server.address, "/hello", 17 * 1024).await,
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
    );
    server.stop().await;
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.http2_max_header_size(64 * 1024)
    })
    .await;
    assert_eq!(
        http2_status_with_header_of(server.address, "/hello", 60 * 1024).await,
        StatusCode::OK
    );
    server.stop().await;
}

/// The heads of the HTTP/2 requests being answered share one allowance
/// for the whole server: past it a request is answered 503 at once, a
/// smaller head still fits, room comes back with the answer or when the
/// client cancels, and HTTP/1 heads do not count.
#[tokio::test]
async fn http2_heads_past_the_server_s_allowance_are_503_until_room_comes_back() {
    struct OnDrop(mpsc::UnboundedSender<()>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    let (arrived, mut arrivals) = mpsc::unbounded_channel();
    let (dropped, mut drops) = mpsc::unbounded_channel();
    let (release, released) = oneshot::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let router = Router::new()
        .get("/hello", || "hello")
        .get("/hold", {
            let arrived = arrived.clone();
            move || {
                arrived.send(()).unwrap();
                // Tells the test when the request is dropped.
                let held = OnDrop(dropped.clone());
                async move {
                    let _held = held;
                    std::future::pending::<&str>().await
                }
            }
        })
        .get("/wait", move || {
            arrived.send(()).unwrap();
            let released = released.lock().unwrap().take();
            async move {
                if let Some(released) = released {
                    let _ = released.await;
                }
                "waited"
            }
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.http2_header_buffer(8 * 1024)).await;
    let status =
        |path: &'static str, bytes| http2_status_with_header_of(server.address, path, bytes);
    let (large, small) = (6 * 1024, 1024);
    assert_eq!(
        status("/hello", 12 * 1024).await,
        StatusCode::OK,
        "a head alone passes, whatever its size"
    );
    let waiting = tokio::spawn(status("/wait", large));
    arrivals.recv().await.unwrap();
    assert_eq!(
        status("/hello", large).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(
        status("/hello", small).await,
        StatusCode::OK,
        "a smaller head fits beside the one held"
    );
    let mut http1: Sender = common::connect(server.address).await;
    let large_http1 = request(Method::GET, "/hello")
        .header("x-large", "x".repeat(large))
        .body(Full::default())
        .unwrap();
    assert_eq!(send(&mut http1, large_http1).await.0.status, StatusCode::OK);
    release.send(()).unwrap();
    assert_eq!(waiting.await.unwrap(), StatusCode::OK);
    assert_eq!(
        status("/hello", large).await,
        StatusCode::OK,
        "the answered request's room is back"
    );
    // A request its client gives up on gives its room back too.
    let holding = tokio::spawn(status("/hold", large));
    arrivals.recv().await.unwrap();
    assert_eq!(
        status("/hello", large).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    holding.abort();
    drops.recv().await.unwrap();
    assert_eq!(
        status("/hello", large).await,
        StatusCode::OK,
        "the cancelled request's room is back"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_http2_client_that_answers_no_ping_is_closed() {
    let interval = Duration::from_millis(200);
    let (server, mut client) = silent_http2_client(interval).await;
    let started = Instant::now();
    let mut received = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut received))
        .await
        .expect("the server closes the connection")
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed >= interval * 2, "closed after {elapsed:?}");
    // Its frames: settings, a ping (type 6), a go-away (type 7).
    let types = frame_types(&received);
    assert!(types.contains(&6), "no ping in {types:?}");
    assert!(types.contains(&7), "no go-away in {types:?}");
    server.stop().await;
}

/// A server pinging HTTP/2 connections at `interval`, its other timeouts
/// far away, and a client that opens HTTP/2 (the preface and its
/// settings) and then answers nothing.
async fn silent_http2_client(interval: Duration) -> (Server, TcpStream) {
    let far = Duration::from_secs(60);
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server
            .http2_keep_alive(interval)
            .http2_idle_timeout(far)
            .header_read_timeout(far)
    })
    .await;
    let mut client = TcpStream::connect(server.address).await.unwrap();
    client
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    (server, client)
}

/// The types of the HTTP/2 frames in `received`.
fn frame_types(received: &[u8]) -> Vec<u8> {
    let mut types = Vec::new();
    let mut frames = received;
    while frames.len() >= 9 {
        let length =
            usize::from(frames[0]) << 16 | usize::from(frames[1]) << 8 | usize::from(frames[2]);
        types.push(frames[3]);
        frames = &frames[(9 + length).min(frames.len())..];
    }
    types
}

/// `http2_keep_alive(Duration::ZERO)` turns pings off (it used to close
/// every HTTP/2 connection as soon as it was idle): a client that answers
/// no ping keeps its connection, and is sent none.
#[tokio::test]
async fn a_zero_http2_ping_interval_sends_no_pings() {
    let (server, mut client) = silent_http2_client(Duration::ZERO).await;
    // Several times what a 200 ms interval took to close it, above.
    let mut received = Vec::new();
    let open =
        tokio::time::timeout(Duration::from_secs(1), client.read_to_end(&mut received)).await;
    assert!(open.is_err(), "the server closed the connection");
    let types = frame_types(&received);
    assert!(!types.contains(&6), "a ping in {types:?}");
    drop(client);
    server.stop().await;
}

/// Streams answered at once, streams that wait on a task, and a stream
/// whose service panics share one connection: each is answered as it
/// would be alone, and the panic resets its stream only.
#[tokio::test]
async fn ready_waiting_and_panicking_http2_streams_share_a_connection() {
    let router = Router::new()
        .get("/ready", || "ready")
        .get("/waits", || async {
            tokio::task::spawn(async {}).await.unwrap();
            "waited"
        })
        .compile()
        .unwrap();
    // A layer outside the router's own panic guard: its future's panic
    // reaches hyper.
    let service = tower::service_fn(move |request: Request<Incoming>| {
        let mut router = router.clone();
        async move {
            if request.uri().path() == "/panics" {
                panic!("a layer's panic");
            }
            tower::Service::call(&mut router, request).await
        }
    });
    let server = Server::start(service, |server| server).await;
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let address = server.address;
    let requests = (0..30).map(|n| {
        let mut sender = sender.clone();
        let path = ["/ready", "/waits", "/panics"][n % 3];
        async move {
            let request = Request::get(format!("http://{address}{path}"))
                .body(Empty::<Bytes>::new())
                .unwrap();
            let answer = match sender.send_request(request).await {
                Ok(response) => {
                    let body = response.into_body().collect().await.unwrap().to_bytes();
                    String::from_utf8(body.to_vec()).unwrap()
                }
                Err(_) => "reset".to_owned(),
            };
            (path, answer)
        }
    });
    let answers = futures_util::future::join_all(requests).await;
    for (path, answer) in answers {
        let expected = match path {
            "/ready" => "ready",
            "/waits" => "waited",
            _ => "reset",
        };
        assert_eq!(answer, expected, "{path}");
    }
    // The connection lives on after the panics.
    let mut sender = sender;
    let response = sender
        .send_request(
            Request::get(format!("http://{address}/ready"))
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    server.stop().await;
}
