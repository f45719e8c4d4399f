//! Faults under load over loopback: panics in every step across 10,000
//! requests, graceful shutdown with many requests in flight, slowloris
//! connections, clients that never read their answers.

mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use pronghorn::{
    Body, Router,
    router::{Route, RouteExchange},
    serve,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::{Notify, oneshot},
};

/// Panics of this test are expected: keep them out of the output, but let
/// any other panic print as usual.
fn quiet_storm_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
            .unwrap_or("");
        if !message.contains("storm") {
            default(info);
        }
    }));
}

/// Held by each test that measures the process's memory: the others'
/// clients and servers would count in it.
static MEASURING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn get(sender: &mut Sender, path: &str) -> (StatusCode, Bytes) {
    sender.ready().await.unwrap();
    let request = Request::get(path)
        .header(header::HOST, "localhost")
        .body(Empty::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    (
        status,
        response.into_body().collect().await.unwrap().to_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_storm_answers_every_request_and_keeps_memory_stable() {
    let _measuring = MEASURING.lock().await;
    quiet_storm_panics();
    let monitored = Arc::new(AtomicUsize::new(0));
    let seen = monitored.clone();
    let router = Router::new()
        .get("/prefix", || "unreachable")
        .get("/handler", || -> &'static str { panic!("storm: handler") })
        .get("/async-handler", || async {
            let storm = true;
            if storm {
                panic!("storm: async handler");
            }
            "unreachable"
        })
        .get("/postfix", || "unreachable")
        .get("/monitor", || "fine")
        .prefix(
            "/prefix",
            |_: Request<Body>, _: &mut Route<'_>| -> Request<Body> { panic!("storm: prefix") },
        )
        .postfix(
            "/postfix",
            |_: &Route<'_>, _: Response<Body>| -> Response<Body> { panic!("storm: postfix") },
        )
        .monitor("/monitor", |_: &RouteExchange<'_>| -> () {
            panic!("storm: monitor")
        })
        .monitor("/", move |_: &RouteExchange<'_>| {
            seen.fetch_add(1, Ordering::Relaxed);
        })
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;

    let paths = [
        "/prefix",
        "/handler",
        "/async-handler",
        "/postfix",
        "/monitor",
    ];
    let storm = |requests: usize| async move {
        let mut clients = Vec::new();
        for client in 0..8 {
            clients.push(tokio::spawn(async move {
                let mut sender = common::connect(address).await;
                let mut answered = 0;
                for n in (client..requests).step_by(8) {
                    let path = paths[n % paths.len()];
                    let (status, body) = get(&mut sender, path).await;
                    if path == "/monitor" {
                        assert_eq!(
                            (status, &body[..]),
                            (StatusCode::OK, &b"fine"[..]),
                            "a monitor's panic changes nothing"
                        );
                    } else {
                        assert_eq!(
                            (status, &body[..]),
                            (
                                StatusCode::INTERNAL_SERVER_ERROR,
                                &b"Internal Server Error"[..]
                            ),
                            "{path}"
                        );
                    }
                    answered += 1;
                }
                answered
            }));
        }
        let mut answered = 0;
        for client in clients {
            answered += client.await.unwrap();
        }
        answered
    };

    assert_eq!(storm(1_000).await, 1_000);
    let before = common::resident_kib();
    let started = Instant::now();
    assert_eq!(storm(10_000).await, 10_000);
    let after = common::resident_kib();
    println!(
        "panic storm: 10000 requests in {:?}; resident memory {before} KiB before, {after} KiB after",
        started.elapsed()
    );
    assert_eq!(
        monitored.load(Ordering::Relaxed),
        11_000,
        "monitors saw every request"
    );
    assert!(
        after < before + 16 * 1024,
        "resident memory grew from {before} KiB to {after} KiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_loses_no_request_in_flight() {
    const IN_FLIGHT: usize = 32;
    let release = Arc::new(Notify::new());
    let arrived = Arc::new(AtomicUsize::new(0));
    let (gate, count) = (release.clone(), arrived.clone());
    let router = Router::new()
        .get("/slow/{n}", move || {
            let (gate, count) = (gate.clone(), count.clone());
            async move {
                let released = gate.notified();
                count.fetch_add(1, Ordering::SeqCst);
                released.await;
                "done"
            }
        })
        .compile()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(
        serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );

    let mut requests = Vec::new();
    for n in 0..IN_FLIGHT {
        requests.push(tokio::spawn(async move {
            let mut sender = common::connect(address).await;
            get(&mut sender, &format!("/slow/{n}")).await
        }));
    }
    while arrived.load(Ordering::SeqCst) < IN_FLIGHT {
        tokio::task::yield_now().await;
    }
    stop.send(()).unwrap();
    assert!(!server.is_finished());
    release.notify_waiters();
    for request in requests {
        let (status, body) = request.await.unwrap();
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"done"[..]));
    }
    server.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_connections_are_closed_without_delaying_others() {
    let timeout = Duration::from_millis(1500);
    let router = Router::new().get("/", || "ok").compile().unwrap();
    let address =
        common::serve_on_loopback(router, |server| server.header_read_timeout(timeout)).await;

    let started = Instant::now();
    let mut stalled = Vec::new();
    for _ in 0..50 {
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .unwrap();
        stalled.push(stream);
    }
    let mut sender = common::connect(address).await;
    for _ in 0..10 {
        assert_eq!(get(&mut sender, "/").await.0, StatusCode::OK);
    }
    assert!(
        started.elapsed() < timeout,
        "others are served while 50 connections stall"
    );
    for mut stream in stalled {
        let mut rest = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "a stalled connection stayed open");
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= timeout && elapsed < Duration::from_secs(5),
        "closed after {elapsed:?}"
    );
}

/// How many times `pattern` occurs in a stream read in chunks, without
/// keeping the stream.
struct Occurrences {
    pattern: &'static [u8],
    tail: Vec<u8>,
    count: usize,
}

impl Occurrences {
    fn feed(&mut self, chunk: &[u8]) {
        // The tail is shorter than the pattern: no occurrence is counted
        // twice.
        self.tail.extend_from_slice(chunk);
        self.count += self
            .tail
            .windows(self.pattern.len())
            .filter(|window| *window == self.pattern)
            .count();
        let keep = self.tail.len().min(self.pattern.len() - 1);
        self.tail.drain(..self.tail.len() - keep);
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipelining_client_that_never_reads_holds_bounded_memory_and_gets_every_answer() {
    let _measuring = MEASURING.lock().await;
    use std::io::{Read, Write};

    let router = Router::new().get("/", || "ok").compile().unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;
    let before = common::resident_kib();

    let client = tokio::task::spawn_blocking(move || {
        const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        let batch = REQUEST.repeat(1000);
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        // Requests until the server stops taking them (a write blocked for
        // a second), or 256 MiB: without a bound on what the server
        // buffers, it takes them all.
        stream
            .set_write_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        let (mut sent, mut offset) = (0, 0);
        while sent < 256 << 20 {
            match stream.write(&batch[offset..]) {
                Ok(written) => {
                    sent += written;
                    offset = (offset + written) % batch.len();
                }
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == std::io::ErrorKind::TimedOut => break,
                Err(error) => panic!("{error}"),
            }
        }
        let grown = common::resident_kib().saturating_sub(before);
        // Now read: every request sent gets its answer. The client keeps
        // its side open (one that closes it is gone, to the server) and
        // stops reading once it has counted as many answers as requests.
        let expected = Arc::new(AtomicUsize::new(usize::MAX));
        let mut reader = stream.try_clone().unwrap();
        reader
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let reading = std::thread::spawn({
            let expected = expected.clone();
            move || {
                let mut answers = Occurrences {
                    pattern: b"HTTP/1.1 200 OK",
                    tail: Vec::new(),
                    count: 0,
                };
                let mut buffer = vec![0; 1 << 16];
                while answers.count < expected.load(Ordering::Acquire) {
                    match reader.read(&mut buffer) {
                        Ok(0) => break,
                        Ok(read) => answers.feed(&buffer[..read]),
                        Err(error)
                            if matches!(
                                error.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(error) => panic!("{error}"),
                    }
                }
                answers.count
            }
        });
        stream.set_write_timeout(None).unwrap();
        stream.write_all(&batch[offset..]).unwrap();
        sent += batch.len() - offset;
        expected.store(sent / REQUEST.len(), Ordering::Release);
        (sent / REQUEST.len(), grown, reading.join().unwrap())
    });
    let (requests, grown, answers) = tokio::time::timeout(Duration::from_secs(120), client)
        .await
        .expect("the client is done in time")
        .unwrap();
    assert!(
        grown < 64 * 1024,
        "the server grew by {grown} KiB for a client that does not read"
    );
    assert_eq!(answers, requests);
}

#[tokio::test]
async fn a_flood_of_panics_is_logged_at_a_bounded_rate() {
    use tower::ServiceExt;

    quiet_storm_panics();
    let log = common::Log::capture();
    let router = Router::new()
        .get("/", || -> &'static str { panic!("a storm of panics") })
        .compile()
        .unwrap();
    for _ in 0..1000 {
        let request = Request::get("/").body(String::new()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
    // A hundred a second at most: the loop may straddle two seconds. (The
    // limit is per call site, shared with the other tests that panic.)
    let lines = log.take();
    assert!(
        (1..=200).contains(&lines.len()),
        "{} lines for 1,000 panics",
        lines.len()
    );
}

/// A socket whose reads wait while `paused`: a client that reads nothing,
/// then everything.
struct Pausable {
    stream: TcpStream,
    paused: Arc<std::sync::atomic::AtomicBool>,
    resumed: Arc<futures_util::task::AtomicWaker>,
}

impl tokio::io::AsyncRead for Pausable {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.resumed.register(cx.waker());
        if self.paused.load(Ordering::Acquire) {
            return std::task::Poll::Pending;
        }
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Pausable {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, data)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// An HTTP/2 client may grant the largest flow-control windows, open many
/// streams and read none of them: the server then holds a bounded amount
/// per connection, not what every stream could buffer, and every stream
/// gets its whole body once the client reads.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_client_that_never_reads_holds_bounded_memory_and_gets_every_body() {
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let _measuring = MEASURING.lock().await;
    const CONNECTIONS: usize = 8;
    const STREAMS: usize = 150;
    const CHUNK: usize = 16 << 10;
    const CHUNKS: usize = 16;

    let produced = Arc::new(AtomicUsize::new(0));
    let counted = produced.clone();
    let router = Router::new()
        .get("/download", move || {
            let counted = counted.clone();
            // A file-like body: fresh chunks, made as they are asked for.
            let chunks = (0..CHUNKS).map(move |_| {
                counted.fetch_add(CHUNK, Ordering::Relaxed);
                Ok::<_, std::convert::Infallible>(http_body::Frame::data(Bytes::from(vec![
                    b'x';
                    CHUNK
                ])))
            });
            Body::new(http_body_util::StreamBody::new(futures_util::stream::iter(
                chunks,
            )))
        })
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;
    let before = common::resident_kib();

    let paused = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut wakers = Vec::new();
    let mut responses = Vec::new();
    for _ in 0..CONNECTIONS {
        let io = Pausable {
            stream: TcpStream::connect(address).await.unwrap(),
            paused: paused.clone(),
            resumed: Arc::new(futures_util::task::AtomicWaker::new()),
        };
        wakers.push(io.resumed.clone());
        let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .initial_stream_window_size(i32::MAX as u32)
            .initial_connection_window_size(i32::MAX as u32)
            .max_concurrent_reset_streams(0)
            .handshake::<_, Empty<Bytes>>(TokioIo::new(io))
            .await
            .unwrap();
        tokio::spawn(connection);
        for _ in 0..STREAMS {
            let mut sender = sender.clone();
            let request = Request::get(format!("http://{address}/download"))
                .body(Empty::new())
                .unwrap();
            responses.push(tokio::spawn(async move {
                let response = sender.send_request(request).await.unwrap();
                response
                    .into_body()
                    .collect()
                    .await
                    .unwrap()
                    .to_bytes()
                    .len()
            }));
        }
    }

    // The server makes bodies until what it holds reaches its bound: wait
    // until it has stopped (no chunk made for half a second).
    let mut last = usize::MAX;
    let deadline = Instant::now() + Duration::from_secs(60);
    while produced.load(Ordering::Relaxed) != last {
        assert!(Instant::now() < deadline, "the server never stopped");
        last = produced.load(Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Each stream's first chunk (1,200 of 16 KiB), and 256 KiB more per
    // connection; without the bound, 187 MB.
    let grown = common::resident_kib().saturating_sub(before);
    assert!(
        grown < 48 * 1024,
        "the server grew by {grown} KiB for {CONNECTIONS} HTTP/2 clients that do not read"
    );

    paused.store(false, Ordering::Release);
    wakers.iter().for_each(|waker| waker.wake());
    for response in responses {
        let received = tokio::time::timeout(Duration::from_secs(60), response)
            .await
            .expect("every body arrives")
            .unwrap();
        assert_eq!(received, CHUNK * CHUNKS);
    }
}

/// An HTTP/2 client may start a body on every stream it opens and end
/// none: past the first body, each connection reads only as much at once
/// as its allowance holds, and answers the others 503 at once.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_client_that_starts_bodies_and_never_ends_them_holds_bounded_memory() {
    use futures_util::StreamExt;
    use http_body_util::{StreamBody, combinators::BoxBody};
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let _measuring = MEASURING.lock().await;
    const CONNECTIONS: usize = 2;
    const STREAMS: usize = 60;
    const CHUNK: usize = 16 << 10;
    // Just under the 2 MiB body limit: a body that is never complete.
    const CHUNKS: usize = 120;

    let router = Router::new()
        .post("/upload", |body: Bytes| format!("{} bytes", body.len()))
        // The bodies being read last the whole test.
        .body_timeout(Duration::from_secs(600))
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;
    let before = common::resident_kib();

    let (answered, mut answers) = tokio::sync::mpsc::unbounded_channel();
    let (sent_all, mut bodies_sent) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..CONNECTIONS {
        let stream = TcpStream::connect(address).await.unwrap();
        let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .handshake::<_, BoxBody<Bytes, std::convert::Infallible>>(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        for _ in 0..STREAMS {
            // The same static bytes, chunk after chunk, then nothing: a body
            // that never ends, costing the client no memory.
            static DATA: [u8; CHUNK] = [b'{'; CHUNK];
            let sent_all = sent_all.clone();
            let chunks = (0..CHUNKS).map(move |n| {
                if n == CHUNKS - 1 {
                    let _ = sent_all.send(());
                }
                Ok(http_body::Frame::data(Bytes::from_static(&DATA)))
            });
            let body = futures_util::stream::iter(chunks).chain(futures_util::stream::pending());
            let request = Request::post(format!("http://{address}/upload"))
                .body(BoxBody::new(StreamBody::new(body)))
                .unwrap();
            let (mut sender, answered) = (sender.clone(), answered.clone());
            tokio::spawn(async move {
                let status = sender.send_request(request).await.unwrap().status();
                let _ = answered.send(status);
            });
        }
    }

    // All but the bodies each connection reads — 4 MiB: two at the 2 MiB
    // limit — are answered at once.
    let reading = 2 * CONNECTIONS;
    for _ in 0..CONNECTIONS * STREAMS - reading {
        let status = tokio::time::timeout(Duration::from_secs(20), answers.recv())
            .await
            .expect("the bodies past the allowance are refused at once");
        assert_eq!(status, Some(StatusCode::SERVICE_UNAVAILABLE));
    }
    assert!(answers.try_recv().is_err(), "more bodies refused than due");
    // The server has read (almost) all of the bodies it reads: the client
    // could send their last chunk.
    for _ in 0..reading {
        tokio::time::timeout(Duration::from_secs(20), bodies_sent.recv())
            .await
            .expect("the bodies being read are read");
    }
    let grown = common::resident_kib().saturating_sub(before);
    assert!(
        grown < 32 * 1024,
        "the server grew by {grown} KiB for {CONNECTIONS} clients with unfinished bodies"
    );
}
