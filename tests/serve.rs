//! Serving over real loopback HTTP with real clients: pipelining,
//! keep-alive, HTTP/2, streaming and SSE, bodies and errors, tower-http
//! around the router, WebSocket routes, graceful shutdown, header timeout.

mod common;

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt, stream};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version, header};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use pronghorn::{
    Body, CompiledRouter, Router, Serve,
    handler::{Json, Path, RouteParams},
    router::{Route, RouteExchange, Scope},
    serve,
    sse::{Event, Sse},
    ws::{Message, WebSocket},
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::{mpsc, oneshot},
};
use tokio_tungstenite::tungstenite::{Message as Wire, protocol::frame::coding::CloseCode};

type Events = Arc<Mutex<Vec<String>>>;

/// Channels a test uses to drive a streaming handler.
#[derive(Clone, Default)]
struct Feeds {
    chunks: Arc<Mutex<Option<mpsc::UnboundedReceiver<Bytes>>>>,
    events: Arc<Mutex<Option<mpsc::UnboundedReceiver<String>>>>,
    slow: Arc<Mutex<Option<oneshot::Receiver<()>>>>,
}

impl Feeds {
    /// Feeds `/stream`: each chunk sent is a chunk of its body.
    fn chunks(&self) -> mpsc::UnboundedSender<Bytes> {
        let (chunks, feed) = mpsc::unbounded_channel();
        *self.chunks.lock().unwrap() = Some(feed);
        chunks
    }

    /// Feeds `/events`: each string sent is an event's data.
    fn events(&self) -> mpsc::UnboundedSender<String> {
        let (events, feed) = mpsc::unbounded_channel();
        *self.events.lock().unwrap() = Some(feed);
        events
    }

    /// Holds `/slow` until sent to.
    fn slow(&self) -> oneshot::Sender<()> {
        let (release, released) = oneshot::channel();
        *self.slow.lock().unwrap() = Some(released);
        release
    }
}

fn app(feeds: &Feeds, events: &Events) -> CompiledRouter {
    let (chunks, sse, slow) = (
        feeds.chunks.clone(),
        feeds.events.clone(),
        feeds.slow.clone(),
    );
    let (e1, e2) = (events.clone(), events.clone());
    Router::new()
        .get("/hello", || "hello")
        .get("/n/{n}", |Path(n): Path<u32>| format!("response {n}"))
        .post("/echo", |Json(value): Json<serde_json::Value>| Json(value))
        .get("/stream", move || {
            let receiver = chunks.lock().unwrap().take().expect("one stream per test");
            let chunks = stream::unfold(receiver, |mut receiver| async move {
                receiver
                    .recv()
                    .await
                    .map(|chunk| (Ok::<_, std::io::Error>(chunk), receiver))
            });
            Response::new(Body::from_stream(chunks))
        })
        .get("/events", move || {
            let receiver = sse
                .lock()
                .unwrap()
                .take()
                .expect("one event stream per test");
            let events = stream::unfold(receiver, |mut receiver| async move {
                receiver.recv().await.map(|data| {
                    (
                        Ok::<_, std::io::Error>(Event::default().data(&data)),
                        receiver,
                    )
                })
            });
            Sse::new(events).keep_alive(Duration::from_secs(30))
        })
        .get("/slow", move || {
            let release = slow.lock().unwrap().take();
            async move {
                if let Some(release) = release {
                    let _ = release.await;
                }
                "slow done"
            }
        })
        .websocket(
            "/ws/{room}",
            |mut socket: WebSocket, params: RouteParams| async move {
                let room = params.get("room").unwrap_or("?").to_owned();
                while let Some(Ok(Message::Text(text))) = socket.next().await {
                    let reply = Message::text(format!("{room}: {text}"));
                    if socket.send(reply).await.is_err() {
                        break;
                    }
                }
            },
        )
        .websocket("/private/ws", |_: WebSocket, _: RouteParams| async {})
        .prefix(
            Scope::new("/ws"),
            move |request: Request<Body>, _: &mut Route<'_>| {
                e1.lock()
                    .unwrap()
                    .push(format!("prefix {}", request.uri().path()));
                request
            },
        )
        .prefix("/private", |_: Request<Body>, _: &mut Route<'_>| {
            std::ops::ControlFlow::<_, Request<Body>>::Break((
                StatusCode::UNAUTHORIZED,
                "who are you?",
            ))
        })
        .monitor("/", move |x: &RouteExchange<'_>| {
            e2.lock().unwrap().push(format!(
                "monitor {} {}",
                x.path(),
                x.status().unwrap().as_u16()
            ));
        })
        .body_limit(1024)
        .compile()
        .unwrap()
}

struct Server {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start<S, B>(service: S, configure: impl FnOnce(Serve<S>) -> Serve<S>) -> Self
    where
        S: tower::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = configure(serve(listener, service));
        let task = tokio::spawn(
            server
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .into_future(),
        );
        Self {
            address,
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn send(
    sender: &mut Sender,
    request: Request<Full<Bytes>>,
) -> (http::response::Parts, Bytes) {
    sender.ready().await.unwrap();
    let response = sender.send_request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    (parts, body.collect().await.unwrap().to_bytes())
}

/// Sends a request with no body, and reads the answer.
async fn send_empty(
    sender: &mut Sender,
    method: Method,
    path: &str,
) -> (http::response::Parts, Bytes) {
    send(sender, request(method, path).body(Full::default()).unwrap()).await
}

/// The head of the answer to a GET of `path`, sent on a connection of its
/// own.
async fn get_on_a_new_connection(address: SocketAddr, path: &str) -> http::response::Parts {
    let mut sender: Sender = common::connect(address).await;
    send_empty(&mut sender, Method::GET, path).await.0
}

/// The answer to a GET of `path` on `sender`'s connection, its body still
/// to be read.
async fn get_streaming(sender: &mut Sender, path: &str) -> Response<Incoming> {
    sender
        .send_request(request(Method::GET, path).body(Full::default()).unwrap())
        .await
        .unwrap()
}

type Http2Sender = hyper::client::conn::http2::SendRequest<Empty<Bytes>>;

/// A GET of `path` over a new HTTP/2 connection (prior knowledge): the
/// client, the task driving its connection, and the answer.
async fn http2_get(
    address: SocketAddr,
    path: &str,
) -> (
    Http2Sender,
    tokio::task::JoinHandle<hyper::Result<()>>,
    Response<Incoming>,
) {
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    let connection = tokio::spawn(connection);
    let response = sender
        .send_request(
            Request::get(format!("http://{address}{path}"))
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await
        .unwrap();
    (sender, connection, response)
}

fn request(method: Method, path: &str) -> http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, "localhost")
}

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

/// Bodies that fit a connection's allowance are all read at once, and one
/// body alone is read whatever its size: the allowance refuses only bodies
/// beside others past it.
#[tokio::test]
async fn http2_bodies_within_the_allowance_or_alone_are_all_read() {
    let router = Router::new()
        .post("/length", |body: Bytes| body.len().to_string())
        .body_limit(8 << 20)
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.http2_body_buffer(1 << 20)).await;
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let post = |size: usize| {
        let mut sender: hyper::client::conn::http2::SendRequest<Full<Bytes>> = sender.clone();
        let request = Request::post(format!("http://{}/length", server.address))
            .body(Full::new(Bytes::from(vec![b'x'; size])))
            .unwrap();
        async move {
            let response = sender.send_request(request).await.unwrap();
            let status = response.status();
            (
                status,
                response.into_body().collect().await.unwrap().to_bytes(),
            )
        }
    };

    // Twenty bodies of 40 KiB at once, declared: 800 KiB in all.
    let bodies = futures_util::future::join_all((0..20).map(|_| post(40 << 10))).await;
    for (status, body) in bodies {
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"40960"[..]));
    }
    // One body of 3 MiB, three times the allowance.
    let (status, body) = post(3 << 20).await;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"3145728"[..]));
    drop(sender);
    server.stop().await;
}

#[tokio::test]
async fn a_stream_reaches_the_client_before_it_ends_and_sse_events_arrive_one_by_one() {
    let feeds = Feeds::default();
    let chunks = feeds.chunks();
    let events = feeds.events();
    let server = Server::start(app(&feeds, &Events::default()), |server| server).await;

    let mut sender: Sender = common::connect(server.address).await;
    let response = get_streaming(&mut sender, "/stream").await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    chunks.send(Bytes::from("first")).unwrap();
    let frame = body.frame().await.unwrap().unwrap();
    assert_eq!(
        frame.into_data().unwrap(),
        "first",
        "the first chunk arrives while the stream is open"
    );
    chunks.send(Bytes::from("second")).unwrap();
    assert_eq!(
        body.frame().await.unwrap().unwrap().into_data().unwrap(),
        "second"
    );
    drop(chunks);
    assert!(
        body.frame().await.is_none(),
        "the body ends with the stream"
    );

    let mut sender: Sender = common::connect(server.address).await;
    let response = get_streaming(&mut sender, "/events").await;
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut body = response.into_body();
    for n in 0..3 {
        events.send(format!("event {n}")).unwrap();
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(frame, format!("data: event {n}\n\n"));
    }
    drop(events);
    while let Some(frame) = body.frame().await {
        frame.unwrap();
    }
    server.stop().await;
}

/// In-process, on a paused clock: what the keep-alive sends is told by the
/// clock, not by waiting.
#[test]
fn sse_keep_alive_fills_a_quiet_stream_and_data_lines_split_as_clients_split_them() {
    use pronghorn::IntoResponse;

    let first = Event::default().data("one\rtwo\r\nthree\nfour");
    let events = stream::iter([Ok::<_, std::io::Error>(first)]).chain(stream::pending());
    // Built outside any runtime: the keep-alive timer starts with the
    // stream's first poll.
    let response = Sse::new(events)
        .keep_alive(Duration::from_secs(15))
        .into_response();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let started = tokio::time::Instant::now();
        let mut body = response.into_body();
        let mut next = async || body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(
            next().await,
            "data: one\ndata: two\ndata: three\ndata: four\n\n",
            "a lone CR, CRLF and LF each end a data line"
        );
        for beat in 1..=2 {
            assert_eq!(next().await, ": keep-alive\n\n");
            assert_eq!(started.elapsed(), Duration::from_secs(15 * beat));
        }
    });
}

/// A zero interval would send a comment at every quiet poll: it turns
/// keep-alive off instead.
#[tokio::test(start_paused = true)]
async fn sse_keep_alive_of_zero_sends_nothing_while_the_stream_is_quiet() {
    use pronghorn::IntoResponse;

    let events = stream::pending::<Result<Event, std::io::Error>>();
    let mut body = Sse::new(events)
        .keep_alive(Duration::ZERO)
        .into_response()
        .into_body();
    // The paused clock jumps an hour ahead once the runtime has nothing else
    // to do: the body must still be waiting then.
    let frame = tokio::time::timeout(Duration::from_secs(3600), body.frame()).await;
    assert!(frame.is_err(), "a frame was sent: {frame:?}");
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

#[tokio::test]
async fn websocket_echo_refusal_426_and_monitors() {
    let events = Events::default();
    let server = Server::start(app(&Feeds::default(), &events), |server| server).await;

    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut socket, response) =
        tokio_tungstenite::client_async(format!("ws://{}/ws/lobby", server.address), stream)
            .await
            .unwrap();
    assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);
    for text in ["one", "two"] {
        socket.send(Wire::text(text)).await.unwrap();
        let echoed = socket.next().await.unwrap().unwrap();
        assert_eq!(echoed, Wire::text(format!("lobby: {text}")));
    }
    socket.close(None).await.unwrap();
    // The monitors run once the handler has ended, on the connection's
    // task.
    while events.lock().unwrap().len() < 2 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        *events.lock().unwrap(),
        ["prefix /ws/lobby", "monitor /ws/lobby 101"]
    );
    events.lock().unwrap().clear();

    // A refusing prefix's answer reaches the client; no upgrade happens.
    let stream = TcpStream::connect(server.address).await.unwrap();
    let refused =
        tokio_tungstenite::client_async(format!("ws://{}/private/ws", server.address), stream)
            .await;
    let Err(tokio_tungstenite::tungstenite::Error::Http(response)) = refused else {
        panic!("the upgrade must be refused: {refused:?}");
    };
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.body().as_deref(), Some(&b"who are you?"[..]));

    // No WebSocket route: a normal 404. A plain GET: 426.
    let stream = TcpStream::connect(server.address).await.unwrap();
    let missing =
        tokio_tungstenite::client_async(format!("ws://{}/nowhere", server.address), stream).await;
    assert!(
        matches!(missing, Err(tokio_tungstenite::tungstenite::Error::Http(ref r)) if r.status() == StatusCode::NOT_FOUND)
    );
    let parts = get_on_a_new_connection(server.address, "/ws/lobby").await;
    assert_eq!(parts.status, StatusCode::UPGRADE_REQUIRED);
    server.stop().await;
}

/// WebSocket monitors run when the handler ends: they see 101, how long
/// the connection lasted, and the handler's panic if it panicked.
#[tokio::test]
async fn websocket_monitors_run_when_the_handler_ends() {
    use pronghorn::router::Failure;

    let (seen, mut monitored) = tokio::sync::mpsc::unbounded_channel();
    let router = Router::new()
        .websocket("/echo", |mut socket: WebSocket| async move {
            while let Some(Ok(message)) = socket.next().await {
                if message.is_close() || socket.send(message).await.is_err() {
                    break;
                }
            }
        })
        .websocket("/panics", |mut socket: WebSocket| async move {
            let _ = socket.next().await;
            panic!("the handler gave up");
        })
        .monitor("/", move |x: &pronghorn::router::RouteExchange<'_>| {
            let _ = seen.send((
                x.path().to_owned(),
                x.status().map(|status| status.as_u16()),
                x.pattern().map(str::to_owned),
                x.error().cloned(),
                x.elapsed(),
            ));
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let connect = |path: &'static str| async move {
        let stream = TcpStream::connect(server.address).await.unwrap();
        let url = format!("ws://{}{path}", server.address);
        tokio_tungstenite::client_async(url, stream)
            .await
            .unwrap()
            .0
    };

    let mut socket = connect("/echo").await;
    let started = Instant::now();
    socket.send(Wire::text("hi")).await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), Wire::text("hi"));
    assert!(monitored.try_recv().is_err(), "the handler has not ended");
    socket.close(None).await.unwrap();
    let held = started.elapsed();
    let (path, status, pattern, failure, elapsed) = monitored.recv().await.unwrap();
    assert_eq!(
        (path.as_str(), status, pattern.as_deref()),
        ("/echo", Some(101), Some("/echo"))
    );
    assert_eq!(failure, None);
    assert!(
        elapsed >= held,
        "the connection's duration: {elapsed:?} < {held:?}"
    );

    // The connection's task runs on this thread: its log is captured.
    let log = common::Log::capture();
    let mut socket = connect("/panics").await;
    socket.send(Wire::text("bye")).await.unwrap();
    let (path, status, _, failure, _) = monitored.recv().await.unwrap();
    assert_eq!((path.as_str(), status), ("/panics", Some(101)));
    assert_eq!(
        failure,
        Some(Failure::Panic {
            step: "handler",
            message: "the handler gave up".to_owned()
        })
    );
    let logged = log.take();
    assert!(
        logged.len() == 1 && logged[0].contains("the handler gave up"),
        "the panic is logged: {logged:?}"
    );
    server.stop().await;
}

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

/// The `SETTINGS_MAX_CONCURRENT_STREAMS` a server announces to an HTTP/2
/// client, read off its first frame.
async fn announced_max_streams(address: SocketAddr) -> Option<u32> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut stream = TcpStream::connect(address).await.unwrap();
    // The preface, then an empty SETTINGS frame.
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    stream.write_all(&hello).await.unwrap();
    let mut head = [0; 9];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(head[3], 4, "the server's first frame is its SETTINGS");
    let length = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let mut payload = vec![0; length];
    stream.read_exact(&mut payload).await.unwrap();
    payload
        .chunks_exact(6)
        .find(|setting| setting[..2] == [0, 3])
        .map(|setting| u32::from_be_bytes(setting[2..].try_into().unwrap()))
}

#[tokio::test]
async fn an_http2_client_is_told_how_many_streams_it_may_open() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;
    assert_eq!(announced_max_streams(server.address).await, Some(100));
    server.stop().await;
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.http2_max_streams(8)
    })
    .await;
    assert_eq!(announced_max_streams(server.address).await, Some(8));
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

/// A body that stops arriving is cut at the body timeout: an extractor
/// that collects it answers 408; a body the handler streams itself fails
/// with an error, and the handler answers with what it chooses.
#[tokio::test]
async fn a_body_that_never_arrives_is_cut_at_the_body_timeout() {
    let timeout = Duration::from_millis(300);
    let router = Router::new()
        .post("/text", |text: String| format!("{} bytes", text.len()))
        .post("/upload", |body: Body| async move {
            match body.collect().await {
                Ok(body) => (StatusCode::OK, format!("{} bytes", body.to_bytes().len())),
                Err(error) => (StatusCode::REQUEST_TIMEOUT, error.to_string()),
            }
        })
        .post("/request", |request: Request<Body>| async move {
            match request.into_body().collect().await {
                Ok(_) => StatusCode::OK,
                Err(_) => StatusCode::REQUEST_TIMEOUT,
            }
        })
        .body_timeout(timeout)
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    for path in ["/text", "/upload", "/request"] {
        let mut client = TcpStream::connect(server.address).await.unwrap();
        // Ten bytes of the hundred announced, then nothing.
        let head = format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n");
        client.write_all(head.as_bytes()).await.unwrap();
        client.write_all(b"0123456789").await.unwrap();
        let started = Instant::now();
        let mut answer = vec![0; 1024];
        let read = tokio::time::timeout(Duration::from_secs(10), client.read(&mut answer))
            .await
            .expect("an answer")
            .unwrap();
        let elapsed = started.elapsed();
        let answer = String::from_utf8_lossy(&answer[..read]);
        assert!(
            answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
            "{path}: {answer}"
        );
        if path == "/upload" {
            assert!(
                answer.ends_with("request body not received within 300ms"),
                "{answer}"
            );
        }
        assert!(elapsed >= timeout, "{path}: answered after {elapsed:?}");
    }
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

/// The status of a GET over HTTP/2 carrying a header of `bytes`.
async fn http2_status_with_header_of(address: SocketAddr, bytes: usize) -> StatusCode {
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let request = Request::get(format!("http://{address}/hello"))
        .header("x-large", "x".repeat(bytes))
        .body(Empty::<Bytes>::new())
        .unwrap();
    sender.send_request(request).await.unwrap().status()
}

#[tokio::test]
async fn an_http2_header_list_over_16_kib_is_431_unless_allowed() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;
    assert_eq!(
        http2_status_with_header_of(server.address, 15 * 1024).await,
        StatusCode::OK
    );
    assert_eq!(
        http2_status_with_header_of(server.address, 17 * 1024).await,
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
    );
    server.stop().await;
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.http2_max_header_size(64 * 1024)
    })
    .await;
    assert_eq!(
        http2_status_with_header_of(server.address, 60 * 1024).await,
        StatusCode::OK
    );
    server.stop().await;
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

#[tokio::test]
async fn a_websocket_send_to_a_client_that_stops_reading_fails_at_the_send_timeout() {
    let timeout = Duration::from_millis(300);
    let (report, mut reports) = mpsc::unbounded_channel();
    let router = Router::new()
        .websocket("/flood", move |mut socket: WebSocket| {
            let report = report.clone();
            async move {
                let message = Message::binary(vec![0; 64 * 1024]);
                let mut sent = 0;
                loop {
                    if let Err(error) = socket.send(message.clone()).await {
                        let _ = report.send((error.is_timeout(), sent));
                        return;
                    }
                    sent += 1;
                }
            }
        })
        .websocket_limits(pronghorn::ws::Limits::default().send_timeout(timeout))
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;

    // A client whose socket takes 4 KiB at a time, and that reads nothing
    // after the handshake.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(server.address).await.unwrap();
    let url = format!("ws://{}/flood", server.address);
    let (client, _) = tokio_tungstenite::client_async(url, stream).await.unwrap();
    let (timed_out, sent) = tokio::time::timeout(Duration::from_secs(10), reports.recv())
        .await
        .expect("the send fails")
        .unwrap();
    assert!(timed_out, "the send failed otherwise");
    // The socket's buffers took some messages before the client stalled.
    assert!(sent > 0);
    drop(client);
    server.stop().await;
}

/// Sends a POST's head asking `100 Continue` before a body of `length`.
async fn post_expecting_continue(address: SocketAddr, path: &str, length: usize) -> TcpStream {
    let mut client = TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: {length}\r\n\r\n"
    );
    client.write_all(head.as_bytes()).await.unwrap();
    client
}

/// Reads what `client` is sent next, within 10 s.
async fn next_answer(client: &mut TcpStream) -> String {
    let mut answer = vec![0; 1024];
    let read = tokio::time::timeout(Duration::from_secs(10), client.read(&mut answer))
        .await
        .expect("an answer")
        .unwrap();
    String::from_utf8_lossy(&answer[..read]).into_owned()
}

#[tokio::test]
async fn bodies_past_the_server_s_allowance_wait_their_turn_or_get_503_at_their_deadline() {
    // HTTP/1 bodies longer than 64 KiB, two of which do not fit.
    const LENGTH: usize = 200_000;
    let text = |text: String| format!("{} bytes", text.len());
    let patient = Router::new()
        .post("/text", text)
        .body_timeout(Duration::from_secs(30));
    let timeout = Duration::from_millis(300);
    let router = Router::new()
        .post("/text", text)
        .nest("/patient", patient)
        .body_timeout(timeout)
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server.body_buffer(256 * 1024)).await;

    // A body that takes most of the allowance: told to send once its
    // extractor has room, it sends part and holds.
    let mut holder = post_expecting_continue(server.address, "/patient/text", LENGTH).await;
    assert_eq!(
        next_answer(&mut holder).await,
        "HTTP/1.1 100 Continue\r\n\r\n"
    );
    holder.write_all(&[b'a'; 1000]).await.unwrap();
    // Another, on another connection, is not told to send while it waits...
    let mut waiting = post_expecting_continue(server.address, "/patient/text", LENGTH).await;
    let mut answer = [0; 64];
    let waited = tokio::time::timeout(Duration::from_millis(300), waiting.read(&mut answer)).await;
    assert!(waited.is_err(), "told to send past the allowance");
    // ...and is, once the first is read.
    holder.write_all(&[b'a'; LENGTH - 1000]).await.unwrap();
    assert!(next_answer(&mut holder).await.ends_with("200000 bytes"));
    assert_eq!(
        next_answer(&mut waiting).await,
        "HTTP/1.1 100 Continue\r\n\r\n"
    );

    // One that waits past its body timeout is told why.
    let mut late = post_expecting_continue(server.address, "/text", LENGTH).await;
    let started = Instant::now();
    let answer = next_answer(&mut late).await;
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.ends_with("too many request bodies being read at once; try again later"));
    assert!(
        started.elapsed() >= timeout,
        "answered after {:?}",
        started.elapsed()
    );
    // A small body (64 KiB at most) does not count, and is read at once.
    let mut small = post_expecting_continue(server.address, "/text", 100).await;
    assert_eq!(
        next_answer(&mut small).await,
        "HTTP/1.1 100 Continue\r\n\r\n"
    );
    small.write_all(&[b'a'; 100]).await.unwrap();
    assert!(next_answer(&mut small).await.ends_with("100 bytes"));
    waiting.write_all(&[b'a'; LENGTH]).await.unwrap();
    assert!(next_answer(&mut waiting).await.ends_with("200000 bytes"));
    server.stop().await;
}

/// A client on a socket that takes 4 KiB at a time, asking for `path`
/// (the server closes the connection after the answer).
async fn narrow_client(address: SocketAddr, path: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut client = socket.connect(address).await.unwrap();
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

/// How a watched body ended, as the test's monitors report it: the path,
/// the status, the bytes sent and how it ended.
type BodyEnded = (String, u16, u64, pronghorn::monitor::Ended);

/// The routes whose bodies the body monitors watch: full, streamed,
/// server-sent events, failing mid-stream, and endless.
fn bodies() -> Router {
    let chunks = |items: Vec<Result<&'static str, std::io::Error>>| {
        Body::from_stream(stream::iter(items.into_iter().map(|item| {
            item.map(|text: &'static str| Bytes::from_static(text.as_bytes()))
        })))
    };
    Router::new()
        .get("/full", || "hello")
        .get("/stream", move || {
            Response::new(chunks(vec![Ok("ab"), Ok("cd"), Ok("ef")]))
        })
        .get("/failing", move || {
            Response::new(chunks(vec![
                Ok("abc"),
                Err(std::io::Error::other("disk gone")),
            ]))
        })
        .get("/endless", || {
            let first = stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"x"))]);
            Response::new(Body::from_stream(first.chain(stream::pending())))
        })
        .get("/sse", || {
            let events =
                ["one", "two"].map(|data| Ok::<_, std::io::Error>(Event::default().data(data)));
            Sse::new(stream::iter(events))
        })
}

/// What a body monitor reports of `exchange`, once its body has ended.
fn body_ended<R, E>(exchange: &pronghorn::Exchange<'_, Response<R>, E>) -> Option<BodyEnded> {
    let end = exchange.body_end()?;
    let first = end.time_to_first_byte();
    assert!(first.is_none_or(|first| first <= end.time_to_last_byte()));
    assert!(end.time_to_last_byte() >= exchange.elapsed());
    Some((
        exchange.path().to_owned(),
        exchange.status().unwrap().as_u16(),
        end.bytes(),
        end.ended().clone(),
    ))
}

/// Fetches each of [`bodies`] from `server`, over HTTP/1.1 and HTTP/2, and
/// checks what the body monitors reported through `ended`.
async fn check_body_ends(
    server: &Server,
    ended: &mut tokio::sync::mpsc::UnboundedReceiver<BodyEnded>,
) {
    use pronghorn::monitor::Ended;

    let mut next_end = async || {
        tokio::time::timeout(Duration::from_secs(10), ended.recv())
            .await
            .expect("the monitor hears of the body's end")
            .unwrap()
    };
    let sse_bytes = "data: one\n\ndata: two\n\n".len() as u64;
    for (path, bytes) in [("/full", 5), ("/stream", 6), ("/sse", sse_bytes)] {
        let mut sender: Sender = common::connect(server.address).await;
        let (parts, body) = send_empty(&mut sender, Method::GET, path).await;
        assert_eq!(parts.status, StatusCode::OK, "{path}");
        assert_eq!(body.len() as u64, bytes, "{path}");
        assert_eq!(
            next_end().await,
            (path.to_owned(), 200, bytes, Ended::Complete),
            "HTTP/1.1 {path}"
        );

        let (_sender, _connection, response) = http2_get(server.address, path).await;
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body.len() as u64, bytes, "{path}");
        assert_eq!(
            next_end().await,
            (path.to_owned(), 200, bytes, Ended::Complete),
            "HTTP/2 {path}"
        );
    }

    let mut sender: Sender = common::connect(server.address).await;
    let response = sender
        .send_request(
            request(Method::GET, "/failing")
                .body(Full::default())
                .unwrap(),
        )
        .await;
    // The server ends the connection where the body failed: the client
    // may see the head and part of the body, or nothing.
    if let Ok(response) = response {
        let _ = response.into_body().collect().await;
    }
    assert_eq!(
        next_end().await,
        (
            "/failing".to_owned(),
            200,
            3,
            Ended::Failed("disk gone".to_owned())
        )
    );

    // A client that reads the first byte of an endless body and leaves.
    let mut client = TcpStream::connect(server.address).await.unwrap();
    client
        .write_all(b"GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut head = vec![0; 1024];
    let read = client.read(&mut head).await.unwrap();
    assert!(read > 0);
    drop(client);
    assert_eq!(
        next_end().await,
        ("/endless".to_owned(), 200, 1, Ended::Dropped)
    );
}

/// A monitor registered with `monitor_body` hears how each body ended,
/// over HTTP/1.1 and HTTP/2: whole (full, streamed, server-sent events),
/// failed mid-stream, or dropped when the client went away.
#[tokio::test]
async fn router_monitors_hear_how_a_body_ended_over_http1_and_http2() {
    let (seen, mut ended) = tokio::sync::mpsc::unbounded_channel();
    let router = bodies()
        .monitor_body("/", move |x: &pronghorn::router::RouteExchange<'_>| {
            if let Some(end) = body_ended(x) {
                let _ = seen.send(end);
            }
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    check_body_ends(&server, &mut ended).await;
    server.stop().await;
}

/// The same of a `MonitorLayer` made with `to_body_end`, around a service.
#[tokio::test]
async fn monitor_layers_hear_how_a_body_ended_over_http1_and_http2() {
    use pronghorn::{Exchange, MonitorLayer};

    let (seen, mut ended) = tokio::sync::mpsc::unbounded_channel();
    let monitor = MonitorLayer::new(
        move |x: &Exchange<'_, Response<Body>, std::convert::Infallible>| {
            if let Some(end) = body_ended(x) {
                let _ = seen.send(end);
            }
        },
    );
    let service = tower::ServiceBuilder::new()
        .layer(monitor.to_body_end())
        .service(bodies().compile().unwrap());
    let server = Server::start(service, |server| server).await;
    check_body_ends(&server, &mut ended).await;
    server.stop().await;
}

#[tokio::test]
async fn the_connection_limit_holds_and_recovers() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| {
        server.max_connections(2)
    })
    .await;
    // Two clients take the two places, and keep them.
    let mut first: Sender = common::connect(server.address).await;
    let (parts, _) = send_empty(&mut first, Method::GET, "/hello").await;
    assert_eq!(parts.status, StatusCode::OK);
    let second = TcpStream::connect(server.address).await.unwrap();
    // A third connects (the listener's backlog takes it) but is not served
    // while the others hold their places...
    let mut third = TcpStream::connect(server.address).await.unwrap();
    third
        .write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0; 12];
    let waited =
        tokio::time::timeout(Duration::from_millis(500), third.read_exact(&mut answer)).await;
    assert!(
        waited.is_err(),
        "the third client was served over the limit"
    );
    // ...and is, as soon as one leaves.
    drop(second);
    tokio::time::timeout(Duration::from_secs(10), third.read_exact(&mut answer))
        .await
        .expect("served once a place is free")
        .unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    drop(first);
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
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut socket, _) =
        tokio_tungstenite::client_async(format!("ws://{}/ws/lobby", server.address), stream)
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

#[tokio::test]
async fn another_method_on_a_websocket_route_is_405_with_allow() {
    let server = Server::start(app(&Feeds::default(), &Events::default()), |server| server).await;
    let mut sender: Sender = common::connect(server.address).await;
    let (parts, _) = send_empty(&mut sender, Method::POST, "/ws/lobby").await;
    assert_eq!(parts.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(parts.headers[header::ALLOW], "GET, HEAD");
    server.stop().await;
}

#[tokio::test]
async fn a_websocket_message_over_the_limit_closes_the_connection() {
    let limit = 64 * 1024;
    let router = Router::new()
        .websocket("/ws", |mut socket: WebSocket, _: RouteParams| async move {
            while let Some(Ok(message)) = socket.next().await {
                let length = Message::text(message.into_data().len().to_string());
                if socket.send(length).await.is_err() {
                    break;
                }
            }
        })
        .websocket_limits(pronghorn::ws::Limits::default().max_message_size(limit))
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut socket, _) =
        tokio_tungstenite::client_async(format!("ws://{}/ws", server.address), stream)
            .await
            .unwrap();
    socket.send(Wire::binary(vec![0; limit])).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        limit.to_string()
    );
    // One byte more: the server stops reading and the connection ends.
    let _ = socket.send(Wire::binary(vec![0; limit + 1])).await;
    let next = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("the connection is closed");
    assert!(
        matches!(next, Some(Ok(Wire::Close(_)) | Err(_)) | None),
        "answered {next:?} over the limit"
    );
    server.stop().await;
}

/// pronghorn's own messages cross the wire as the protocol says: text,
/// binary and ping read as sent, and a close frame with a code and a
/// reason reaches the client.
#[tokio::test]
async fn websocket_messages_and_a_close_frame_reach_the_client_as_sent() {
    use pronghorn::ws::{CloseFrame, Utf8Bytes, close_code};

    let router = Router::new()
        .websocket("/ws", |mut socket: WebSocket, _: RouteParams| async move {
            let mut seen = Vec::new();
            while let Some(Ok(message)) = socket.next().await {
                match message {
                    Message::Text(text) => seen.push(format!("text {text}")),
                    Message::Binary(data) => seen.push(format!("binary {data:?}")),
                    Message::Ping(data) => seen.push(format!("ping {data:?}")),
                    Message::Pong(_) | Message::Close(_) => break,
                }
                if seen.len() == 3 {
                    break;
                }
            }
            let _ = socket.send(Message::text(seen.join(", "))).await;
            let frame = CloseFrame {
                code: close_code::POLICY,
                reason: Utf8Bytes::from_static("seen enough"),
            };
            let _ = socket.close(Some(frame)).await;
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut socket, _) =
        tokio_tungstenite::client_async(format!("ws://{}/ws", server.address), stream)
            .await
            .unwrap();
    socket.send(Wire::text("hi")).await.unwrap();
    socket.send(Wire::binary(vec![1, 2])).await.unwrap();
    socket.send(Wire::Ping(vec![7].into())).await.unwrap();
    let mut texts = Vec::new();
    let mut close = None;
    while let Some(Ok(message)) = socket.next().await {
        match message {
            Wire::Text(text) => texts.push(text.to_string()),
            Wire::Close(frame) => close = frame,
            _ => {}
        }
    }
    assert_eq!(texts, [r#"text hi, binary b"\x01\x02", ping b"\x07""#]);
    let close = close.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert_eq!(close.reason, "seen enough");
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
    let mut answer = vec![0; 1024];
    let read = tokio::time::timeout(Duration::from_secs(10), client.read(&mut answer))
        .await
        .expect("the first answer is written while the second request waits")
        .unwrap();
    let first = String::from_utf8_lossy(&answer[..read]).into_owned();
    assert!(
        first.starts_with("HTTP/1.1 200 OK\r\n") && first.ends_with("\r\n\r\nhello"),
        "{first}"
    );
    release.send(()).unwrap();
    let read = tokio::time::timeout(Duration::from_secs(10), client.read(&mut answer))
        .await
        .expect("the second answer")
        .unwrap();
    let second = String::from_utf8_lossy(&answer[..read]);
    assert!(second.ends_with("\r\n\r\nslow done"), "{second}");
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
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut socket, _) =
        tokio_tungstenite::client_async(format!("ws://{}/ws", server.address), stream)
            .await
            .unwrap();
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

/// A WebSocket handler takes extractors like any handler: they run at the
/// handshake, and one that refuses the request answers it with no upgrade.
#[tokio::test]
async fn websocket_handlers_take_extractors_and_a_refusal_answers_without_upgrade() {
    #[derive(serde::Deserialize)]
    struct Who {
        name: String,
    }

    let router = Router::new()
        .websocket(
            "/rooms/{room}",
            |mut socket: WebSocket,
             Path(room): Path<String>,
             pronghorn::handler::Query(who): pronghorn::handler::Query<Who>,
             pronghorn::handler::State(motd): pronghorn::handler::State<&'static str>| async move {
                let greeting = format!("{motd}, {} in {room}", who.name);
                let _ = socket.send(Message::text(greeting)).await;
            },
        )
        .state("welcome")
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;

    let stream = TcpStream::connect(address).await.unwrap();
    let (mut socket, _) =
        tokio_tungstenite::client_async(format!("ws://{address}/rooms/lobby?name=ada"), stream)
            .await
            .unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        "welcome, ada in lobby"
    );

    let stream = TcpStream::connect(address).await.unwrap();
    let refused =
        tokio_tungstenite::client_async(format!("ws://{address}/rooms/lobby"), stream).await;
    assert!(
        matches!(refused, Err(tokio_tungstenite::tungstenite::Error::Http(ref response)) if response.status() == StatusCode::BAD_REQUEST),
        "{refused:?}"
    );
}

/// The handshake settles on the router's most preferred subprotocol that
/// the client offers, answers it, and the handler reads it; a client that
/// offers none of them gets none. A nested router speaks its own.
#[tokio::test]
async fn websocket_handshake_chooses_the_preferred_offered_subprotocol() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let handler = |mut socket: WebSocket| async move {
        let chosen = socket.protocol().unwrap_or("none").to_owned();
        let _ = socket.send(Message::text(chosen)).await;
    };
    let v3 = Router::new()
        .websocket("/ws", handler)
        .websocket_protocols(["v3.chat"]);
    let router = Router::new()
        .websocket("/ws", handler)
        .nest("/v3", v3)
        .websocket_protocols(["v2.chat", "v1.chat"])
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;
    let connect = |path: &'static str, offered: Option<&'static str>| async move {
        let mut request = format!("ws://{address}{path}")
            .into_client_request()
            .unwrap();
        if let Some(offered) = offered {
            request.headers_mut().insert(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static(offered),
            );
        }
        let stream = TcpStream::connect(address).await.unwrap();
        let (mut socket, response) = tokio_tungstenite::client_async(request, stream)
            .await
            .unwrap();
        let answered = response
            .headers()
            .get(header::SEC_WEBSOCKET_PROTOCOL)
            .map(|value| value.to_str().unwrap().to_owned());
        let seen = socket
            .next()
            .await
            .unwrap()
            .unwrap()
            .into_text()
            .unwrap()
            .to_string();
        (answered, seen)
    };
    assert_eq!(
        connect("/ws", Some("v1.chat, v2.chat")).await,
        (Some("v2.chat".to_owned()), "v2.chat".to_owned())
    );
    assert_eq!(
        connect("/ws", Some("v1.chat")).await,
        (Some("v1.chat".to_owned()), "v1.chat".to_owned())
    );
    assert_eq!(connect("/ws", None).await, (None, "none".to_owned()));
    assert_eq!(
        connect("/v3/ws", Some("v2.chat, v3.chat")).await,
        (Some("v3.chat".to_owned()), "v3.chat".to_owned())
    );
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
    let stream = TcpStream::connect(address).await.unwrap();
    let local = stream.local_addr().unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let (parts, body) = send_empty(&mut sender, Method::GET, "/peer").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body, local.to_string());

    let address = common::serve_on_loopback(router(), |server| server).await;
    let mut sender: Sender = common::connect(address).await;
    let (parts, _) = send_empty(&mut sender, Method::GET, "/peer").await;
    assert_eq!(parts.status, StatusCode::INTERNAL_SERVER_ERROR);
}
