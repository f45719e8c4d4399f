//! Request bodies: the body timeout, and the allowances of body
//! extractors per HTTP/2 connection and on the whole server.

use super::*;

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
        let answer = next_answer(&mut client).await;
        let elapsed = started.elapsed();
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

/// Sends a POST's head asking `100 Continue` before a body of `length`.
pub(super) async fn post_expecting_continue(
    address: SocketAddr,
    path: &str,
    length: usize,
) -> TcpStream {
    let mut client = TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: {length}\r\n\r\n"
    );
    client.write_all(head.as_bytes()).await.unwrap();
    client
}

#[tokio::test]
async fn bodies_take_the_server_s_allowance_as_they_arrive_and_wait_for_room_or_get_503() {
    // HTTP/1 bodies longer than 64 KiB; room for four steps of 64 KiB.
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
    let continued = |mut client: TcpStream| async move {
        assert_eq!(
            next_answer(&mut client).await,
            "HTTP/1.1 100 Continue\r\n\r\n"
        );
        client
    };

    // Heads that declare more than the allowance in all, and send nothing:
    // each holds one step, not what it declares, and is told to send.
    let mut heads = Vec::new();
    for _ in 0..4 {
        let head = post_expecting_continue(server.address, "/patient/text", LENGTH).await;
        heads.push(continued(head).await);
    }
    // A fifth finds no room: it is not told to send while it waits...
    let mut waiting = post_expecting_continue(server.address, "/patient/text", LENGTH).await;
    let mut answer = [0; 64];
    let waited = tokio::time::timeout(Duration::from_millis(300), waiting.read(&mut answer)).await;
    assert!(waited.is_err(), "told to send past the allowance");
    // ...and is, once one of them leaves.
    drop(heads.pop());
    let mut waiting = continued(waiting).await;

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
    let mut small = continued(post_expecting_continue(server.address, "/text", 100).await).await;
    small.write_all(&[b'a'; 100]).await.unwrap();
    assert!(next_answer(&mut small).await.ends_with("100 bytes"));
    // A body that arrives takes room as it does: once the heads are gone,
    // all it needs.
    drop(heads);
    waiting.write_all(&[b'a'; LENGTH]).await.unwrap();
    assert!(next_answer(&mut waiting).await.ends_with("200000 bytes"));
    server.stop().await;
}
