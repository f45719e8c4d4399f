//! Streamed answers and server-sent events, and the monitors that hear how
//! a response body ended.

use super::*;

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

/// A `KeepAlive` sends its own text, an empty comment by default (axum's),
/// or a whole event.
#[tokio::test(start_paused = true)]
async fn sse_keep_alive_sends_its_own_text_or_event() {
    use pronghorn::{IntoResponse, sse::KeepAlive};

    let second = Duration::from_secs(1);
    for (keep_alive, expected) in [
        (KeepAlive::new().interval(second), ":\n\n"),
        (
            KeepAlive::new().interval(second).text("ping\nping"),
            ": pingping\n\n",
        ),
        (
            KeepAlive::new()
                .interval(second)
                .event(Event::default().event("beat").data("")),
            "event: beat\ndata: \n\n",
        ),
    ] {
        let events = stream::pending::<Result<Event, std::io::Error>>();
        let mut body = Sse::new(events)
            .keep_alive(keep_alive)
            .into_response()
            .into_body();
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(frame, expected);
    }
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
