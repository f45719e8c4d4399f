//! Serving over real loopback HTTP with real clients, a file per topic.

mod bodies;
#[path = "../common/mod.rs"]
mod common;
mod http1;
mod http2;
mod listeners;
mod shutdown;
mod streams;
mod timeouts;
mod websocket;
mod workers;

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
use tokio_tungstenite::tungstenite::{
    Message as Wire,
    protocol::frame::{
        Frame,
        coding::{CloseCode, Data, OpCode},
    },
};

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
/// A new HTTP/1 connection to `address`, and the address it comes from:
/// what the server sees as its client's.
async fn connect_from(address: SocketAddr) -> (Sender, SocketAddr) {
    let stream = TcpStream::connect(address).await.unwrap();
    let local = stream.local_addr().unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    (sender, local)
}

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

/// A WebSocket to `path`, once the server has a slot for one: each
/// handshake refused is tried again.
async fn websocket_once_free(address: SocketAddr, path: &str) -> WsClient {
    loop {
        if let Ok((socket, _)) = websocket_connect(address, path).await {
            return socket;
        }
        tokio::task::yield_now().await;
    }
}

/// A WebSocket client.
type WsClient = tokio_tungstenite::WebSocketStream<TcpStream>;

/// A WebSocket handshake for `path` on a new connection: the client and
/// the server's answer, or the error of a refused upgrade.
async fn websocket_connect(
    address: SocketAddr,
    path: &str,
) -> Result<
    (
        WsClient,
        tokio_tungstenite::tungstenite::handshake::client::Response,
    ),
    tokio_tungstenite::tungstenite::Error,
> {
    let stream = TcpStream::connect(address).await.unwrap();
    tokio_tungstenite::client_async(format!("ws://{address}{path}"), stream).await
}

fn request(method: Method, path: &str) -> http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, "localhost")
}

/// A connection whose socket takes 4 KiB at a time: a client that stops
/// reading soon fills it.
async fn narrow_connection(address: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(address).await.unwrap()
}

/// Reads what `client` is sent next (at most 1 KiB), within 10 s.
async fn next_answer(client: &mut TcpStream) -> String {
    let mut answer = vec![0; 1024];
    let read = tokio::time::timeout(Duration::from_secs(10), client.read(&mut answer))
        .await
        .expect("an answer")
        .unwrap();
    String::from_utf8_lossy(&answer[..read]).into_owned()
}
