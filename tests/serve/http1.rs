//! HTTP/1: pipelining and keep-alive, the connection limit, a service
//! that is not ready, clients that disconnect or half-close, the client's
//! address, and errors and a CORS preflight through tower-http.

use super::*;

#[tokio::test]
async fn pipelined_requests_answer_in_order_and_connections_are_reused() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;

    // Ten requests written at once on one raw connection.
    let mut raw = TcpStream::connect(server.address).await.unwrap();
    let pipelined: String = (0..10)
        .map(|n| format!("GET /n/{n} HTTP/1.1\r\nHost: localhost\r\n\r\n"))
        .collect();
    raw.write_all(pipelined.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while String::from_utf8_lossy(&received)
        .matches("HTTP/1.1 200 OK")
        .count()
        < 10
        || !received.ends_with(b"response 9")
    {
        assert!(
            Instant::now() < deadline,
            "got {}",
            String::from_utf8_lossy(&received)
        );
        let mut buffer = [0u8; 4096];
        let read = raw.read(&mut buffer).await.unwrap();
        assert!(read > 0, "connection closed early");
        received.extend_from_slice(&buffer[..read]);
    }
    let text = String::from_utf8(received).unwrap();
    let bodies: Vec<usize> = (0..10)
        .map(|n| text.find(&format!("response {n}")).unwrap())
        .collect();
    assert!(
        bodies.windows(2).all(|pair| pair[0] < pair[1]),
        "in order: {text}"
    );

    // Keep-alive: one connection, several requests.
    let mut sender: Sender = common::connect(server.address).await;
    for n in 0..3 {
        let (parts, body) = send_empty(&mut sender, Method::GET, &format!("/n/{n}")).await;
        assert_eq!(
            (parts.status, body),
            (StatusCode::OK, Bytes::from(format!("response {n}")))
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn bodies_errors_head_405_and_a_tower_http_cors_preflight() {
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(HeaderValue::from_static("https://example.com"))
        .allow_methods([Method::GET, Method::POST]);
    let service = tower::ServiceBuilder::new()
        .layer(cors)
        .service(app(&Feeds::default(), &Events::default()));
    let server = Server::start(service, |server| server).await;
    let mut sender: Sender = common::connect(server.address).await;
    let json = |body: &str, content_type: &str| {
        request(Method::POST, "/echo")
            .header(header::CONTENT_TYPE, content_type)
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap()
    };

    let (parts, body) = send(&mut sender, json(r#"{"a":[1,2]}"#, "application/json")).await;
    assert_eq!(
        (parts.status, &body[..]),
        (StatusCode::OK, &br#"{"a":[1,2]}"#[..])
    );
    let (parts, body) = send(&mut sender, json(r#"{"a":"#, "application/json")).await;
    assert_eq!(parts.status, StatusCode::BAD_REQUEST);
    assert!(
        String::from_utf8_lossy(&body).starts_with("invalid JSON body:"),
        "{body:?}"
    );
    let (parts, _) = send(
        &mut sender,
        json(&format!(r#""{}""#, "x".repeat(2000)), "application/json"),
    )
    .await;
    assert_eq!(parts.status, StatusCode::PAYLOAD_TOO_LARGE);
    let (parts, _) = send(&mut sender, json("{}", "text/plain")).await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let (parts, body) = send_empty(&mut sender, Method::HEAD, "/hello").await;
    assert_eq!((parts.status, body.len()), (StatusCode::OK, 0));
    assert_eq!(parts.headers[header::CONTENT_LENGTH], "5");
    let (parts, _) = send_empty(&mut sender, Method::DELETE, "/hello").await;
    assert_eq!(parts.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(parts.headers[header::ALLOW], "GET, HEAD");

    let preflight = request(Method::OPTIONS, "/echo")
        .header(header::ORIGIN, "https://example.com")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .body(Full::default())
        .unwrap();
    let (parts, _) = send(&mut sender, preflight).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(
        parts.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://example.com"
    );
    assert!(
        parts.headers[header::ACCESS_CONTROL_ALLOW_METHODS]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    server.stop().await;
}

/// A tower service that is ready only once its gate opens, and answers how
/// many requests this value of it (not its clones) has served.
#[derive(Clone)]
struct Gated {
    open: Arc<std::sync::atomic::AtomicBool>,
    waker: Arc<futures_util::task::AtomicWaker>,
    polls: Arc<std::sync::atomic::AtomicUsize>,
    served: usize,
}

impl tower::Service<Request<Incoming>> for Gated {
    type Response = Response<Full<Bytes>>;
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        use std::sync::atomic::Ordering;
        self.polls.fetch_add(1, Ordering::SeqCst);
        self.waker.register(cx.waker());
        if self.open.load(Ordering::SeqCst) {
            std::task::Poll::Ready(Ok(()))
        } else {
            std::task::Poll::Pending
        }
    }

    fn call(&mut self, _: Request<Incoming>) -> Self::Future {
        self.served += 1;
        std::future::ready(Ok(Response::new(Full::from(self.served.to_string()))))
    }
}

#[tokio::test]
async fn a_service_not_ready_is_awaited_and_each_connection_keeps_its_own() {
    use std::sync::atomic::Ordering;
    let gated = Gated {
        open: Arc::default(),
        waker: Arc::default(),
        polls: Arc::default(),
        served: 0,
    };
    let server = Server::start(gated.clone(), |server| server).await;

    // Not ready: the request waits for readiness, polled with the task's
    // waker, and is answered when the gate opens.
    let mut sender: Sender = common::connect(server.address).await;
    sender.ready().await.unwrap();
    let in_flight =
        tokio::spawn(sender.send_request(request(Method::GET, "/").body(Full::default()).unwrap()));
    // Asked once in `call`, then again by the response future.
    while gated.polls.load(Ordering::SeqCst) < 2 {
        tokio::task::yield_now().await;
    }
    assert!(!in_flight.is_finished());
    gated.open.store(true, Ordering::SeqCst);
    gated.waker.wake();
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // The clone made for the wait served it.
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "1"
    );

    // Ready: one connection calls one service, request after request; a new
    // connection starts from a fresh clone.
    for connection in 0..2 {
        let mut sender: Sender = common::connect(server.address).await;
        for n in 1..=3 {
            let (parts, body) = send_empty(&mut sender, Method::GET, "/").await;
            assert_eq!(
                (parts.status, body),
                (StatusCode::OK, Bytes::from(n.to_string())),
                "connection {connection}, request {n}"
            );
        }
    }
    server.stop().await;
}

/// An HTTP/1 request with a body is called once its first bytes are
/// there, on a second instance of the service the connection clones once:
/// every such request on the connection is served by that one instance,
/// and the others by the connection's first.
#[tokio::test]
async fn requests_with_a_body_share_one_instance_cloned_once_a_connection() {
    let gated = Gated {
        open: Arc::new(true.into()),
        waker: Arc::default(),
        polls: Arc::default(),
        served: 0,
    };
    let server = Server::start(gated, |server| server).await;
    let mut sender: Sender = common::connect(server.address).await;
    let mut answers = Vec::new();
    for with_body in [false, false, true, true, true, false] {
        let body = if with_body { "some bytes" } else { "" };
        let request = request(Method::POST, "/").body(Full::from(body)).unwrap();
        let (parts, body) = send(&mut sender, request).await;
        assert_eq!(parts.status, StatusCode::OK);
        answers.push(String::from_utf8(body.to_vec()).unwrap());
    }
    // The second instance is cloned from the first after its two
    // requests, and counts on from there.
    assert_eq!(answers, ["1", "2", "3", "4", "5", "3"]);
    server.stop().await;
}

/// A client that disconnects while its request is still being answered:
/// the server drops the response future, and the monitors see the request
/// once, cancelled, with no status.
#[tokio::test]
async fn a_client_that_disconnects_mid_request_is_seen_by_monitors_as_cancelled() {
    let (started, mut handler_started) = tokio::sync::mpsc::unbounded_channel();
    let (seen, mut monitored) = tokio::sync::mpsc::unbounded_channel();
    let router = Router::new()
        .get("/wait", move || {
            let started = started.clone();
            async move {
                let _ = started.send(());
                std::future::pending::<()>().await;
                "never"
            }
        })
        .monitor("/", move |x: &pronghorn::router::RouteExchange<'_>| {
            let _ = seen.send((x.status(), x.is_cancelled(), x.error().cloned()));
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let mut client = TcpStream::connect(server.address).await.unwrap();
    client
        .write_all(b"GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    handler_started.recv().await.expect("the handler runs");
    drop(client);
    let (status, cancelled, failure) =
        tokio::time::timeout(Duration::from_secs(10), monitored.recv())
            .await
            .expect("the monitors run")
            .unwrap();
    assert_eq!(status, None);
    assert!(cancelled);
    assert_eq!(failure, Some(pronghorn::router::Failure::Cancelled));
    assert!(monitored.try_recv().is_err(), "the monitors ran once");
    server.stop().await;
}

/// With `half_close(true)`, a client that stops sending once its request
/// is out still gets the answer.
#[tokio::test]
async fn with_half_close_a_client_that_stops_sending_is_answered() {
    let router = Router::new()
        .get("/later", || async {
            tokio::task::yield_now().await;
            "later"
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.half_close(true)).await;
    let mut client = TcpStream::connect(server.address).await.unwrap();
    client
        .write_all(b"GET /later HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    client.shutdown().await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), client.read_to_string(&mut answer))
        .await
        .expect("an answer")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("later"), "{answer}");
    server.stop().await;
}

/// Reads from `client` until the server closes it, within 10 s.
async fn closed_by_the_server(client: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    matches!(
        tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut rest)).await,
        Ok(Ok(_) | Err(_))
    )
}

#[tokio::test]
async fn at_the_connection_limit_a_new_client_sheds_the_idle_connection_never_a_busy_one() {
    let feeds = Feeds::default();
    let release = feeds.slow();
    let server = Server::start(app(&feeds, &Events::default()), |server| {
        server.max_connections(2)
    })
    .await;
    // One connection idle after its answer, one waiting on its handler.
    let mut idle = TcpStream::connect(server.address).await.unwrap();
    idle.write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert!(next_answer(&mut idle).await.starts_with("HTTP/1.1 200"));
    let mut busy = TcpStream::connect(server.address).await.unwrap();
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // A third client takes the idle one's place at once.
    let started = Instant::now();
    let mut third = TcpStream::connect(server.address).await.unwrap();
    third
        .write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert!(next_answer(&mut third).await.starts_with("HTTP/1.1 200"));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "served after {:?}",
        started.elapsed()
    );
    assert!(
        closed_by_the_server(&mut idle).await,
        "the idle one is shed"
    );

    // With both places busy (a request underway, a head begun), a fourth
    // waits...
    third.write_all(b"GET /hello HTTP/1.1\r\n").await.unwrap();
    let mut fourth = TcpStream::connect(server.address).await.unwrap();
    fourth
        .write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0; 12];
    let waited =
        tokio::time::timeout(Duration::from_millis(500), fourth.read_exact(&mut answer)).await;
    assert!(waited.is_err(), "a busy connection was shed");
    // ...until one of them is idle: the slow request's connection, once
    // answered, is shed for it.
    release.send(()).unwrap();
    assert!(next_answer(&mut busy).await.ends_with("slow done"));
    tokio::time::timeout(Duration::from_secs(10), fourth.read_exact(&mut answer))
        .await
        .expect("served once a connection is idle")
        .unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    assert!(closed_by_the_server(&mut busy).await);
    // The connection with a head underway was left alone.
    third.write_all(b"Host: x\r\n\r\n").await.unwrap();
    assert!(next_answer(&mut third).await.starts_with("HTTP/1.1 200"));
    server.stop().await;
}

#[tokio::test]
async fn a_connection_limit_past_what_can_be_counted_serves_as_no_limit() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.max_connections(usize::MAX)
    })
    .await;
    let parts = get_on_a_new_connection(server.address, "/hello").await;
    assert_eq!(parts.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn a_pipelined_answer_is_not_held_behind_the_next_request_s_slow_handler() {
    let feeds = Feeds::default();
    let release = feeds.slow();
    let server = Server::start(app(&feeds, &Events::default()), |server| server).await;
    let mut client = TcpStream::connect(server.address).await.unwrap();
    client
        .write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // The first answer arrives while the second request still waits.
    let first = next_answer(&mut client).await;
    assert!(
        first.starts_with("HTTP/1.1 200 OK\r\n") && first.ends_with("\r\n\r\nhello"),
        "{first}"
    );
    release.send(()).unwrap();
    let second = next_answer(&mut client).await;
    assert!(second.ends_with("\r\n\r\nslow done"), "{second}");
    server.stop().await;
}

/// With `connect_info`, each request carries the client's address; without
/// it (the default, which costs nothing), asking for it is a 500.
#[tokio::test]
async fn connect_info_gives_handlers_the_clients_address_when_enabled() {
    use pronghorn::handler::ConnectInfo;

    let router = || {
        Router::new()
            .get("/peer", |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
                peer.to_string()
            })
            .compile()
            .unwrap()
    };
    let address = common::serve_on_loopback(router(), |server| server.connect_info(true)).await;
    let (mut sender, local) = connect_from(address).await;
    let (parts, body) = send_empty(&mut sender, Method::GET, "/peer").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, local.to_string());

    let address = common::serve_on_loopback(router(), |server| server).await;
    let mut sender: Sender = common::connect(address).await;
    let (parts, _) = send_empty(&mut sender, Method::GET, "/peer").await;
    assert_eq!(parts.status, StatusCode::INTERNAL_SERVER_ERROR);
}

/// A `Router` served as it is is compiled before the server accepts a
/// client: one that does not compile is `serve`'s error, naming the route
/// and the mistake, and no client is ever answered by it.
#[tokio::test]
async fn serve_returns_the_error_of_a_router_that_does_not_compile_before_accepting() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = Router::new()
        .get("/", || "home")
        .get("/{a}/{b}", |Path(a): Path<String>| a);
    let error = tokio::time::timeout(Duration::from_secs(10), serve(listener, router))
        .await
        .expect("returns at once, serving nothing")
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    let text = error.to_string();
    assert!(text.contains("/{a}/{b}"), "{text}");
    // The listener went with the server: nothing answers on its port.
    assert!(TcpStream::connect(address).await.is_err());
}
