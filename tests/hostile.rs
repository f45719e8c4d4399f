//! Input nobody planned for, over loopback: each request gets the status
//! due to it — never a bare close, never a panic — and the server keeps
//! serving.

mod common;

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::Request;
use pronghorn::{
    Body, Router,
    handler::{Json, Path},
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

struct App {
    address: SocketAddr,
    dropped_streams: Arc<AtomicUsize>,
}

/// Counts, on drop, the streams a client abandoned.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

async fn start() -> App {
    let dropped_streams = Arc::new(AtomicUsize::new(0));
    let dropped = dropped_streams.clone();
    let router = Router::new()
        .get("/hello", || "hello")
        .get("/param/{value}", |Path(value): Path<String>| {
            format!("value={value}")
        })
        .get("/number/{n}", |Path(n): Path<u64>| format!("n={n}"))
        .get("/files/{*path}", |Path(path): Path<String>| {
            format!("path={path}")
        })
        .post("/json", |Json(value): Json<serde_json::Value>| Json(value))
        .post("/text", |text: String| format!("{} bytes", text.len()))
        .get("/endless", move || {
            let guard = DropCounter(dropped.clone());
            let chunks = futures_util::stream::unfold(guard, |guard| async move {
                tokio::task::yield_now().await;
                Some((
                    Ok::<_, std::io::Error>(Bytes::from_static(&[b'x'; 1024])),
                    guard,
                ))
            });
            http::Response::new(Body::from_stream(chunks))
        })
        .body_limit(16 * 1024)
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| {
        server.header_read_timeout(Duration::from_secs(2))
    })
    .await;
    App {
        address,
        dropped_streams,
    }
}

/// Writes `bytes` on a fresh connection while reading the answer (the
/// server may answer and close before it read everything): the status and
/// body of the first answer, and how many answers came.
async fn exchange(address: SocketAddr, bytes: &[u8]) -> Answer {
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let bytes = bytes.to_vec();
    let writing = tokio::spawn(async move {
        // The server may close while the request is still being written.
        let _ = writer.write_all(&bytes).await;
        let _ = writer.shutdown().await;
    });
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buffer = [0; 64 * 1024];
        // A reset after the answer ends the read as a close does.
        while let Ok(read @ 1..) = reader.read(&mut buffer).await {
            received.extend_from_slice(&buffer[..read]);
        }
    })
    .await;
    assert!(read.is_ok(), "no answer and no close within 10 s");
    writing.abort();
    let text = String::from_utf8_lossy(&received).into_owned();
    let status = (text.strip_prefix("HTTP/1.1 "))
        .or_else(|| text.strip_prefix("HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok());
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, body)| body)
        .to_owned();
    Answer {
        status,
        answers: text.matches("HTTP/1.1 ").count(),
        body,
    }
}

/// What a client got back.
#[derive(Debug)]
struct Answer {
    /// The first answer's status; `None` when the server closed without
    /// one.
    status: Option<u16>,
    answers: usize,
    body: String,
}

fn get(target: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").into_bytes()
}

fn post(path: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

async fn assert_still_serving(address: SocketAddr) {
    let answer = exchange(address, &get("/hello")).await;
    assert_eq!((answer.status, answer.body.as_str()), (Some(200), "hello"));
}

#[tokio::test]
async fn every_malformed_request_is_answered_with_its_status() {
    let app = start().await;
    let long_path = format!("/{}", "a".repeat(64 * 1024));
    let headers = |count: usize| -> String {
        (0..count)
            .map(|n| format!("x-header-{n}: {n}\r\n"))
            .collect()
    };
    let huge_json = format!(r#"{{"data":"{}"}}"#, "x".repeat(32 * 1024));
    let chunked = |chunks: &str| {
        format!(
            "POST /text HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n{chunks}"
        )
        .into_bytes()
    };
    // (what, request bytes, the status due)
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("%ZZ in a typed parameter", get("/number/%ZZ"), 400),
        ("%ZZ in a string parameter", get("/param/%ZZ"), 400),
        ("overlong UTF-8 encoding of /", get("/param/%C0%AF"), 400),
        ("non-UTF-8 after decoding", get("/param/%FF%FE"), 400),
        (
            "a number that overflows",
            get("/number/99999999999999999999999"),
            400,
        ),
        ("a 64 KiB path", get(&long_path), 414),
        (
            "raw non-UTF-8 bytes in the target",
            b"GET /param/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a space in the target",
            b"GET /param/a b HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
        ),
        ("absolute-form target", get("http://localhost/hello"), 200),
        (
            "HTTP/1.1 without Host",
            b"GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n".to_vec(),
            400,
        ),
        (
            "two Host lines",
            b"GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n".to_vec(),
            400,
        ),
        (
            "two Host lines among many headers",
            format!(
                "GET /hello HTTP/1.1\r\nHost: a\r\n{}Host: b\r\nConnection: close\r\n\r\n",
                headers(20)
            )
            .into_bytes(),
            400,
        ),
        (
            "a Host that is not a host, among many headers",
            format!(
                "GET /hello HTTP/1.1\r\n{}Host: a b\r\nConnection: close\r\n\r\n",
                headers(20)
            )
            .into_bytes(),
            400,
        ),
        (
            "two Host lines, HTTP/1.0",
            b"GET /hello HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n".to_vec(),
            400,
        ),
        (
            "HTTP/1.0 without Host",
            b"GET /hello HTTP/1.0\r\n\r\n".to_vec(),
            200,
        ),
        (
            "a Host that is not a host",
            "GET /hello HTTP/1.1\r\nHost: h\u{f6}st.example\r\nConnection: close\r\n\r\n"
                .as_bytes()
                .to_vec(),
            400,
        ),
        (
            "a Host with a path",
            b"GET /hello HTTP/1.1\r\nHost: example.com/admin\r\nConnection: close\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a Host with a port and an IPv6 literal",
            b"GET /hello HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n".to_vec(),
            200,
        ),
        (
            "500 headers",
            format!("GET /hello HTTP/1.1\r\nHost: x\r\n{}\r\n", headers(500)).into_bytes(),
            431,
        ),
        (
            "10,000 headers",
            format!("GET /hello HTTP/1.1\r\nHost: x\r\n{}\r\n", headers(10_000)).into_bytes(),
            431,
        ),
        (
            "a 1 MB header line",
            format!(
                "GET /hello HTTP/1.1\r\nHost: x\r\nx-big: {}\r\n\r\n",
                "a".repeat(1 << 20)
            )
            .into_bytes(),
            431,
        ),
        (
            "a bad method token",
            b"G(T /hello HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a JSON body over the limit",
            post("/json", "application/json", huge_json.as_bytes()),
            413,
        ),
        (
            "truncated JSON",
            post("/json", "application/json", br#"{"a":[1,2"#),
            400,
        ),
        (
            "JSON that is not UTF-8",
            post("/json", "application/json", b"{\"a\":\"\xff\"}"),
            400,
        ),
        ("a wrong content type", post("/json", "text/plain", b"{}"), 415),
        (
            "a text body that is not UTF-8",
            post("/text", "text/plain", b"\xff\xfe"),
            400,
        ),
        (
            "a request line of garbage",
            b"\x00\x01\x02 nonsense\r\n\r\n".to_vec(),
            400,
        ),
        ("HTTP/0.9", b"GET /hello\r\n".to_vec(), 400),
        (
            "a negative content-length",
            b"POST /text HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".to_vec(),
            400,
        ),
        (
            "conflicting content-lengths",
            b"POST /text HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
                .to_vec(),
            400,
        ),
        (
            "chunked, but not as the last transfer coding",
            b"POST /text HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"
                .to_vec(),
            400,
        ),
        (
            "a transfer coding other than chunked before it",
            b"POST /text HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
                .to_vec(),
            501,
        ),
        (
            "a transfer coding other than chunked on a line of its own",
            b"POST /text HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                .to_vec(),
            501,
        ),
        (
            "chunked twice",
            b"POST /text HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"
                .to_vec(),
            400,
        ),
        (
            "a target in the authority form outside CONNECT",
            b"GET localhost:80 HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a target of * outside OPTIONS",
            b"GET * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a Host whose port is not digits",
            b"GET /hello HTTP/1.1\r\nHost: localhost:8o\r\n\r\n".to_vec(),
            400,
        ),
        ("a chunk size that is not hexadecimal", chunked("zz\r\nhello\r\n0\r\n\r\n"), 400),
        (
            "a bare line feed in a chunk extension",
            chunked("5;a\nb\r\nhello\r\n0\r\n\r\n"),
            400,
        ),
        (
            "chunk extensions of 64 KiB",
            chunked(&format!("5;{}\r\nhello\r\n0\r\n\r\n", "x".repeat(64 * 1024))),
            400,
        ),
        (
            "a chunk longer than its size",
            chunked("2\r\nhello\r\n0\r\n\r\n"),
            400,
        ),
        (
            "an announced body over the limit, expecting 100 Continue",
            b"POST /text HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n"
                .to_vec(),
            413,
        ),
    ];
    for (what, request, due) in cases {
        let answer = exchange(app.address, &request).await;
        assert_eq!(answer.status, Some(due), "{what}: {answer:?}");
        assert_still_serving(app.address).await;
    }
}

/// A connection takes a `Host` it admitted as known: another one after
/// it, on the same connection, is looked through again.
#[tokio::test]
async fn a_bad_host_after_good_ones_on_one_connection_is_400() {
    let app = start().await;
    let answer = exchange(
        app.address,
        b"GET /hello HTTP/1.1\r\nHost: example.com\r\n\r\n\
          GET /hello HTTP/1.1\r\nHost: example.com\r\n\r\n\
          GET /hello HTTP/1.1\r\nHost: example.com/admin\r\n\r\n",
    )
    .await;
    assert_eq!(answer.answers, 3, "{answer:?}");
    let statuses: Vec<&str> = (answer.body.split("HTTP/1.1 ").skip(1))
        .map(|rest| &rest[..3])
        .collect();
    assert_eq!(statuses, ["200", "400"], "{answer:?}");
    assert_eq!(answer.status, Some(200));
    assert_still_serving(app.address).await;
}

#[tokio::test]
async fn content_length_and_chunked_together_are_read_as_chunked_and_the_connection_closed() {
    let app = start().await;
    // A smuggling attempt: read by its content length, the body would end
    // inside the chunked framing and the rest be a second request.
    let request = b"POST /text HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
    let answer = exchange(app.address, request).await;
    assert_eq!(answer.status, Some(200), "{answer:?}");
    assert_eq!(answer.body, "0 bytes");
    assert_eq!(
        answer.answers, 1,
        "nothing after the chunked body is served: {answer:?}"
    );
}

#[tokio::test]
async fn pipelined_requests_before_a_close_all_get_their_answers() {
    let app = start().await;
    let mut requests = b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n".repeat(10);
    requests.extend_from_slice(&get("/hello"));
    let answer = exchange(app.address, &requests).await;
    assert_eq!(answer.answers, 11, "{answer:?}");
}

/// A request that asks for an upgrade it does not get (an `Upgrade`
/// header, a CONNECT) and closes its connection: hyper hands the socket to
/// the upgrade that never comes, and the answer must be on the wire first.
#[tokio::test]
async fn an_upgrade_not_granted_on_a_closing_connection_still_gets_its_answer() {
    let app = start().await;
    let cases: [(&[u8], u16); 4] = [
        (
            b"GET /hello HTTP/1.1\r\nHost: x\r\nUpgrade: foo\r\nConnection: upgrade, close\r\n\r\n",
            200,
        ),
        // Refused by the server itself, for want of a `Host`.
        (
            b"GET /hello HTTP/1.1\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\n",
            400,
        ),
        (
            b"GET /hello HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: close\r\n\r\n",
            200,
        ),
        (
            b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n",
            404,
        ),
    ];
    for (request, status) in cases {
        let answer = exchange(app.address, request).await;
        assert_eq!(
            answer.status,
            Some(status),
            "{}",
            String::from_utf8_lossy(request)
        );
    }
}

#[tokio::test]
async fn dot_segments_and_encoded_slashes_reach_the_handler_as_text() {
    let app = start().await;
    let answer = exchange(app.address, &get("/files/../../etc/passwd")).await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (Some(200), "path=../../etc/passwd")
    );
    let answer = exchange(app.address, &get("/param/a%2Fb")).await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (Some(200), "value=a/b"),
        "decoded when read, after matching"
    );
    let answer = exchange(app.address, &get("/param/%2E%2E")).await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (Some(200), "value=..")
    );
}

#[tokio::test]
async fn a_body_that_never_ends_is_cut_at_the_limit() {
    let app = start().await;
    let mut stream = TcpStream::connect(app.address).await.unwrap();
    stream
        .write_all(b"POST /text HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    // Keep sending 1 KiB chunks until the server answers.
    let chunk = format!("400\r\n{}\r\n", "y".repeat(1024));
    let mut answer = [0u8; 12];
    let (mut reader, mut writer) = stream.split();
    let mut sent = 0usize;
    let status = loop {
        tokio::select! {
            read = reader.read(&mut answer) => {
                // The answer, or a reset that discarded it: the server
                // stops reading either way.
                break read.map(|read| String::from_utf8_lossy(&answer[..read]).into_owned()).unwrap_or_default();
            }
            written = writer.write_all(chunk.as_bytes()) => {
                if written.is_err() {
                    break reader.read(&mut answer).await.map(|read| String::from_utf8_lossy(&answer[..read]).into_owned()).unwrap_or_default();
                }
                sent += chunk.len();
                assert!(sent < 64 * 1024 * 1024, "the server kept reading past its limit");
            }
        }
    };
    assert!(
        status.is_empty() || status.starts_with("HTTP/1.1 413"),
        "{status}"
    );
    // The limit is 16 KiB; the socket buffers allow a few MiB more in flight.
    assert!(
        sent < 16 * 1024 * 1024,
        "{sent} bytes sent before the server stopped"
    );
    assert_still_serving(app.address).await;
}

#[tokio::test]
async fn clients_that_disconnect_mid_request_and_mid_stream() {
    let app = start().await;
    // Mid-request: headers promise 100 bytes, 10 arrive, the client leaves.
    for _ in 0..20 {
        let mut stream = TcpStream::connect(app.address).await.unwrap();
        stream
            .write_all(b"POST /text HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789")
            .await
            .unwrap();
        drop(stream);
    }
    assert_still_serving(app.address).await;

    // Mid-stream: read part of an endless response, then leave.
    for round in 1..=5 {
        let mut stream = TcpStream::connect(app.address).await.unwrap();
        stream.write_all(&get("/endless")).await.unwrap();
        let mut buffer = vec![0u8; 8 * 1024];
        let mut received = 0;
        while received < 8 * 1024 {
            received += stream.read(&mut buffer).await.unwrap();
        }
        drop(stream);
        // The server notices and drops the handler's stream.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while app.dropped_streams.load(Ordering::SeqCst) < round {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the abandoned stream was never dropped"
            );
            tokio::task::yield_now().await;
        }
    }
    assert_still_serving(app.address).await;
}

#[test]
fn requests_built_in_process_with_odd_paths_never_panic() {
    // Paths hyper would refuse never reach a server, but a router behind
    // another front end may see them: every one gets an answer.
    use tower::ServiceExt;
    let router = Router::new()
        .get("/a/{x}", |Path(x): Path<String>| x)
        .get("/b/{*rest}", || "rest")
        .get("/c/{a}.{b}", || "dots")
        .compile()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for path in [
        "/", "//", "/a", "/a/", "/a//", "/a/%", "/a/%%", "/b", "/b/", "/c/.", "/c/a.", "/c/.b",
        "/c/..", "/c/a.b.c",
    ] {
        let request = Request::get(path).body(String::new()).unwrap();
        let response = runtime.block_on(router.clone().oneshot(request)).unwrap();
        assert!(
            response.status().is_success() || response.status().is_client_error(),
            "{path}: {}",
            response.status()
        );
    }
}

#[tokio::test]
async fn the_header_limits_are_settings_and_hyper_s_uri_limit_answers_414() {
    let router = Router::new()
        .get("/{*path}", |Path(path): Path<String>| {
            format!("{} bytes", path.len())
        })
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| {
        server.max_header_size(256 * 1024).max_headers(10)
    })
    .await;
    let with_headers = |count: usize| {
        let headers: String = (0..count).map(|n| format!("x-{n}: {n}\r\n")).collect();
        format!("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}\r\n").into_bytes()
    };
    // Eight headers, the host and `connection`: ten, the limit.
    assert_eq!(exchange(address, &with_headers(8)).await.status, Some(200));
    assert_eq!(exchange(address, &with_headers(9)).await.status, Some(431));
    // A 100 KB header fits the raised size limit.
    let big = format!(
        "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nx-big: {}\r\n\r\n",
        "a".repeat(100 * 1024)
    );
    assert_eq!(exchange(address, big.as_bytes()).await.status, Some(200));
    // A target longer than hyper takes, in a head the size limit lets in.
    let long = get(&format!("/{}", "a".repeat(70 * 1024)));
    assert_eq!(exchange(address, &long).await.status, Some(414));
}

#[tokio::test]
async fn a_header_count_limit_past_what_a_head_holds_serves_as_no_limit() {
    let router = Router::new().get("/a", || "a").compile().unwrap();
    let address = common::serve_on_loopback(router, |server| server.max_headers(usize::MAX)).await;
    let headers: String = (0..1000).map(|n| format!("x-{n}: {n}\r\n")).collect();
    let request = format!("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}\r\n");
    assert_eq!(
        exchange(address, request.as_bytes()).await.status,
        Some(200)
    );
    // The head's size is still limited.
    let big = format!(
        "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nx-big: {}\r\n\r\n",
        "a".repeat(100 * 1024)
    );
    assert_eq!(exchange(address, big.as_bytes()).await.status, Some(431));
}

// ---- Crowds: many clients that each cost little, and what the others get.

/// A server for the crowds: a greeting, a 4 MiB report shared by every
/// answer, and an upload counted.
async fn start_crowded(
    configure: impl FnOnce(
        pronghorn::Serve<pronghorn::CompiledRouter>,
    ) -> pronghorn::Serve<pronghorn::CompiledRouter>,
) -> SocketAddr {
    let report = Bytes::from(vec![b'x'; 4 << 20]);
    let router = Router::new()
        .get("/hello", || "hello")
        .get("/report", move || report.clone())
        .post("/upload", |body: Bytes| format!("{} bytes", body.len()))
        .body_limit(4 << 20)
        .compile()
        .unwrap();
    common::serve_on_loopback(router, configure).await
}

/// A new client's GET and 100 KB upload, each answered within its time.
async fn others_are_served(address: SocketAddr) {
    let started = std::time::Instant::now();
    let answer = exchange(address, &get("/hello")).await;
    assert_eq!(answer.status, Some(200));
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(500),
        "a GET waited {waited:?}"
    );
    let started = std::time::Instant::now();
    let answer = exchange(
        address,
        &post("/upload", "application/octet-stream", &[b'u'; 100_000]),
    )
    .await;
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (Some(200), "100000 bytes")
    );
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(1),
        "an upload waited {waited:?}"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn clients_that_ask_for_a_large_body_and_never_read_hold_no_copy_of_it() {
    let address = start_crowded(|server| server).await;
    let before = common::resident_kib();
    let mut crowd = Vec::new();
    for _ in 0..50 {
        let client = TcpStream::connect(address).await.unwrap();
        let socket = socket2::SockRef::from(&client);
        socket.set_recv_buffer_size(4096).unwrap();
        let mut client = client;
        client.write_all(&get("/report")).await.unwrap();
        // The answer's head, once the server is writing the body.
        let mut head = [0; 12];
        client.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");
        crowd.push(client);
    }
    others_are_served(address).await;
    // A copy of the body per client was 200 MiB here.
    let grown = common::resident_kib().saturating_sub(before);
    assert!(grown < 32 * 1024, "the server grew by {grown} KiB");
    drop(crowd);
}

#[tokio::test]
async fn clients_that_reset_mid_body_leave_the_server_serving() {
    let address = start_crowded(|server| server).await;
    for _ in 0..50 {
        let mut client = TcpStream::connect(address).await.unwrap();
        client.write_all(&get("/report")).await.unwrap();
        let mut some = vec![0; 64 * 1024];
        client.read_exact(&mut some).await.unwrap();
        client.set_zero_linger().unwrap();
        drop(client);
    }
    others_are_served(address).await;
}

#[tokio::test]
async fn idle_connections_past_the_connection_limit_do_not_keep_new_clients_out() {
    let address = start_crowded(|server| server.max_connections(32)).await;
    // Twice as many silent connections as there are slots.
    let mut crowd = Vec::new();
    for _ in 0..64 {
        crowd.push(TcpStream::connect(address).await.unwrap());
    }
    others_are_served(address).await;
    drop(crowd);
}

#[tokio::test]
async fn heads_that_declare_large_bodies_and_send_none_do_not_hold_up_uploads() {
    // Room for 2 MiB of bodies being read; each head declares 2 MiB.
    let address = start_crowded(|server| server.body_buffer(2 << 20)).await;
    let mut crowd = Vec::new();
    for _ in 0..24 {
        let mut client = TcpStream::connect(address).await.unwrap();
        client
            .write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\nExpect: 100-continue\r\n\r\n")
            .await
            .unwrap();
        // Told to send: the body's extractor is waiting for it, with its
        // room in the allowance.
        let mut continued = [0; 25];
        tokio::time::timeout(Duration::from_secs(5), client.read_exact(&mut continued))
            .await
            .expect("each head is told to send its body")
            .unwrap();
        assert_eq!(&continued, b"HTTP/1.1 100 Continue\r\n\r\n");
        crowd.push(client);
    }
    others_are_served(address).await;
    drop(crowd);
}
