//! WebSocket routes: the handshake and its extractors, messages, limits,
//! monitors, the send and message timeouts and the server's allowance.

use super::*;

#[tokio::test]
async fn websocket_echo_refusal_426_and_monitors() {
    let events = Events::default();
    let server = Server::start(app(&Feeds::default(), &events), |server| server).await;

    let (mut socket, response) = websocket_connect(server.address, "/ws/lobby")
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
    let refused = websocket_connect(server.address, "/private/ws").await;
    let Err(tokio_tungstenite::tungstenite::Error::Http(response)) = refused else {
        panic!("the upgrade must be refused: {refused:?}");
    };
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.body().as_deref(), Some(&b"who are you?"[..]));

    // No WebSocket route: a normal 404. A plain GET: 426.
    let missing = websocket_connect(server.address, "/nowhere").await;
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
    let connect = |path| async move { websocket_connect(server.address, path).await.unwrap().0 };

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
    let stream = narrow_connection(server.address).await;
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
    let (mut socket, _) = websocket_connect(server.address, "/ws").await.unwrap();
    socket.send(Wire::binary(vec![0; limit])).await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        limit.to_string()
    );
    // One byte more: the server closes with 1009, "message too big".
    let _ = socket.send(Wire::binary(vec![0; limit + 1])).await;
    let next = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("the connection is closed");
    match next {
        Some(Ok(Wire::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Size),
        other => panic!("answered {other:?} over the limit"),
    }
    server.stop().await;
}

/// Under the default limits, the largest message a client may send can
/// be echoed: the write buffer's bound holds a message of its size.
#[tokio::test]
async fn the_largest_message_allowed_is_echoed_under_the_default_limits() {
    let router = Router::new()
        .websocket("/ws", |mut socket: WebSocket, _: RouteParams| async move {
            while let Some(Ok(message)) = socket.next().await {
                if socket.send(message).await.is_err() {
                    break;
                }
            }
        })
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let (mut socket, _) = websocket_connect(server.address, "/ws").await.unwrap();
    let largest = vec![7; 1 << 20];
    socket.send(Wire::binary(largest.clone())).await.unwrap();
    let echo = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("echoed")
        .unwrap()
        .unwrap();
    assert_eq!(echo.into_data(), largest);
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
    let (mut socket, _) = websocket_connect(server.address, "/ws").await.unwrap();
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

    let (mut socket, _) = websocket_connect(address, "/rooms/lobby?name=ada")
        .await
        .unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        "welcome, ada in lobby"
    );

    let refused = websocket_connect(address, "/rooms/lobby").await;
    assert!(
        matches!(refused, Err(tokio_tungstenite::tungstenite::Error::Http(ref response)) if response.status() == StatusCode::BAD_REQUEST),
        "{refused:?}"
    );
}

/// A WebSocket handler of a router written for one state type reads the
/// parts of it that `FromRef` names, as a handler does.
#[tokio::test]
async fn a_websocket_handler_reads_a_part_of_its_router_s_state() {
    use pronghorn::handler::{FromRef, State};

    #[derive(Clone)]
    struct AppState {
        motd: &'static str,
    }

    #[derive(Clone)]
    struct Motd(&'static str);

    impl FromRef<AppState> for Motd {
        fn from_ref(state: &AppState) -> Self {
            Motd(state.motd)
        }
    }

    let router = Router::new()
        .websocket(
            "/ws",
            |mut socket: WebSocket, State(Motd(motd)): State<Motd>| async move {
                let _ = socket.send(Message::text(motd)).await;
            },
        )
        .with_state(AppState { motd: "hi there" })
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;

    let (mut socket, _) = websocket_connect(address, "/ws").await.unwrap();
    assert_eq!(
        socket.next().await.unwrap().unwrap().into_text().unwrap(),
        "hi there"
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

/// A raw data frame of `length` bytes, the last of its message or not.
fn fragment(opcode: Data, length: usize, last: bool) -> Wire {
    Wire::Frame(Frame::message(
        vec![b'x'; length],
        OpCode::Data(opcode),
        last,
    ))
}

/// Echoes text and binary messages back, and reports how reads ended:
/// the errors, whether each was a timeout, and the end.
fn echo_reporting(
    limits: pronghorn::ws::Limits,
) -> (CompiledRouter, mpsc::UnboundedReceiver<String>) {
    let (report, reports) = mpsc::unbounded_channel();
    let router = Router::new()
        .websocket("/echo", move |mut socket: WebSocket| {
            let report = report.clone();
            async move {
                loop {
                    match socket.next().await {
                        Some(Ok(message @ (Message::Text(_) | Message::Binary(_)))) => {
                            if socket.send(message).await.is_err() {
                                break;
                            }
                        }
                        Some(Ok(_)) => {}
                        Some(Err(error)) => {
                            let _ = report.send(format!("error, timeout: {}", error.is_timeout()));
                        }
                        None => {
                            let _ = report.send("end".to_owned());
                            break;
                        }
                    }
                }
            }
        })
        .websocket_limits(limits)
        .compile()
        .unwrap();
    (router, reports)
}

/// Sends `message` and reads the answer, within 10 s.
async fn round_trip(client: &mut WsClient, message: Wire) -> Wire {
    client.send(message).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), client.next())
        .await
        .expect("an answer")
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_websocket_message_left_unfinished_past_the_message_timeout_ends_the_reads() {
    let timeout = Duration::from_millis(300);
    let (router, mut reports) =
        echo_reporting(pronghorn::ws::Limits::default().message_timeout(timeout));
    let server = Server::start(router, |server| server).await;
    let (mut idle, _) = websocket_connect(server.address, "/echo").await.unwrap();
    assert_eq!(
        round_trip(&mut idle, Wire::text("hello")).await,
        Wire::text("hello")
    );

    // A message begun and never finished.
    let (mut stalled, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let started = Instant::now();
    stalled
        .send(fragment(Data::Binary, 1000, false))
        .await
        .unwrap();
    let report = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
    assert_eq!(report.unwrap().unwrap(), "error, timeout: true");
    assert!(
        started.elapsed() >= timeout,
        "after {:?}",
        started.elapsed()
    );
    assert_eq!(reports.recv().await.unwrap(), "end", "reads go on");

    // A connection idle between messages for longer is not timed out.
    assert_eq!(
        round_trip(&mut idle, Wire::text("still here")).await,
        Wire::text("still here")
    );
    drop((idle, stalled));
    server.stop().await;
}

#[tokio::test]
async fn websocket_messages_past_64_kib_wait_for_room_in_the_server_s_allowance() {
    let (router, _) = echo_reporting(pronghorn::ws::Limits::default().max_message_size(256 * 1024));
    // Room for one large message at a time.
    let server = Server::start(router, |server| server.body_buffer(256 * 1024)).await;

    // A message begun past 64 KiB holds the room; the pong answering the
    // ping after its first fragment says the server read that far.
    let (mut holder, _) = websocket_connect(server.address, "/echo").await.unwrap();
    holder
        .send(fragment(Data::Binary, 100_000, false))
        .await
        .unwrap();
    assert_eq!(
        round_trip(&mut holder, Wire::Ping("read".into())).await,
        Wire::Pong("read".into())
    );
    // Another large message waits for room...
    let (mut waiting, _) = websocket_connect(server.address, "/echo").await.unwrap();
    waiting
        .send(Wire::binary(vec![b'y'; 200_000]))
        .await
        .unwrap();
    let early = tokio::time::timeout(Duration::from_millis(300), waiting.next()).await;
    assert!(early.is_err(), "read past the allowance: {early:?}");
    // ...while a small one needs none.
    let (mut small, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let answer = round_trip(&mut small, Wire::binary(vec![b'z'; 1000])).await;
    assert_eq!(answer.len(), 1000);
    // The first message ends, and its room goes to the one waiting.
    let whole = round_trip(&mut holder, fragment(Data::Continue, 10, true)).await;
    assert_eq!(whole.len(), 100_010);
    let waited = tokio::time::timeout(Duration::from_secs(10), waiting.next())
        .await
        .expect("read once there is room")
        .unwrap()
        .unwrap();
    assert_eq!(waited.len(), 200_000);
    drop((holder, waiting, small));
    server.stop().await;
}

/// A connection that carried large messages lets their buffers go once
/// idle: pipelined messages, pings and fragments around large ones all
/// arrive, in order, whenever that happens.
#[tokio::test]
async fn websocket_messages_around_large_ones_all_arrive_in_order() {
    let (router, _reports) = echo_reporting(pronghorn::ws::Limits::default());
    let server = Server::start(router, |server| server).await;
    let (mut client, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let large = |byte: u8, length: usize| Wire::binary(vec![byte; length]);
    for round in 0..3 {
        // Sent together, read by the server as they come.
        client.feed(large(1, 200 * 1024)).await.unwrap();
        client
            .feed(Wire::text(format!("small {round}")))
            .await
            .unwrap();
        client
            .feed(Wire::Ping("are you there".into()))
            .await
            .unwrap();
        client
            .feed(fragment(Data::Binary, 40_000, false))
            .await
            .unwrap();
        client.feed(Wire::Ping("between".into())).await.unwrap();
        client
            .feed(fragment(Data::Continue, 40_000, true))
            .await
            .unwrap();
        client.feed(large(2, 100 * 1024)).await.unwrap();
        client.flush().await.unwrap();
        let expected = [
            large(1, 200 * 1024),
            Wire::text(format!("small {round}")),
            Wire::Pong("are you there".into()),
            Wire::Pong("between".into()),
            Wire::binary(vec![b'x'; 80_000]),
            large(2, 100 * 1024),
        ];
        for expected in expected {
            let received = tokio::time::timeout(Duration::from_secs(10), client.next())
                .await
                .expect("every message arrives")
                .unwrap()
                .unwrap();
            assert_eq!(received, expected, "round {round}");
        }
        // Idle, then a small message alone.
        assert_eq!(
            round_trip(&mut client, Wire::text("alone")).await,
            Wire::text("alone")
        );
    }
    client.close(None).await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn pings_among_an_unfinished_message_do_not_extend_its_timeout() {
    let timeout = Duration::from_millis(400);
    let (router, mut reports) =
        echo_reporting(pronghorn::ws::Limits::default().message_timeout(timeout));
    let server = Server::start(router, |server| server).await;
    let (mut stalled, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let started = Instant::now();
    stalled
        .send(fragment(Data::Binary, 70_000, false))
        .await
        .unwrap();
    // A ping every quarter of the timeout, for as long as the test runs.
    let pings = tokio::spawn(async move {
        while stalled.send(Wire::Ping("alive".into())).await.is_ok() {
            tokio::time::sleep(timeout / 4).await;
        }
    });
    let report = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
    assert_eq!(report.unwrap().unwrap(), "error, timeout: true");
    let elapsed = started.elapsed();
    assert!(
        elapsed >= timeout && elapsed < timeout * 2,
        "timed out after {elapsed:?}"
    );
    pings.abort();
    server.stop().await;
}

#[tokio::test]
async fn a_websocket_client_that_answers_no_ping_is_let_go_and_one_that_reads_stays() {
    let interval = Duration::from_millis(300);
    let (router, mut reports) =
        echo_reporting(pronghorn::ws::Limits::default().ping_interval(interval));
    let server = Server::start(router, |server| server).await;
    let (mut live, _) = websocket_connect(server.address, "/echo").await.unwrap();
    // tungstenite answers a ping as it reads: this client never reads.
    let (silent, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let started = Instant::now();
    let reader = tokio::spawn(async move {
        let mut pings = 0;
        let quiet = async {
            while let Some(Ok(message)) = live.next().await {
                assert!(matches!(message, Wire::Ping(_)), "{message:?}");
                pings += 1;
            }
        };
        let _ = tokio::time::timeout(interval * 5, quiet).await;
        (pings, live)
    });
    let report = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
    assert_eq!(report.unwrap().unwrap(), "error, timeout: true");
    let elapsed = started.elapsed();
    assert!(
        elapsed >= interval * 2 && elapsed < interval * 4,
        "let go after {elapsed:?}"
    );
    assert_eq!(reports.recv().await.unwrap(), "end");
    // The client that reads was pinged, answered, and is still served.
    let (pings, mut live) = reader.await.unwrap();
    assert!(pings >= 2, "{pings} pings");
    assert_eq!(
        round_trip(&mut live, Wire::text("still here")).await,
        Wire::text("still here")
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(100), reports.recv())
            .await
            .is_err(),
        "the live client was let go too"
    );
    drop(silent);
    server.stop().await;
}

#[tokio::test]
async fn a_websocket_handshake_past_the_websocket_cap_is_503_and_other_requests_are_served() {
    let (router, _reports) = echo_reporting(pronghorn::ws::Limits::default());
    let server = Server::start(router, |server| server.max_connections(8).max_websockets(2)).await;
    let (mut first, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let (second, _) = websocket_connect(server.address, "/echo").await.unwrap();
    let refused = websocket_connect(server.address, "/echo").await;
    let Err(tokio_tungstenite::tungstenite::Error::Http(response)) = refused else {
        panic!("the upgrade must be refused: {refused:?}");
    };
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Plain requests still have their slots (a GET of a WebSocket route
    // without the upgrade is answered 426).
    let parts = get_on_a_new_connection(server.address, "/echo").await;
    assert_eq!(parts.status, StatusCode::UPGRADE_REQUIRED);
    // A WebSocket that closes gives its slot back.
    drop(second);
    let again = websocket_once_free(server.address, "/echo");
    let mut third = tokio::time::timeout(Duration::from_secs(10), again)
        .await
        .expect("a slot once one closes");
    for socket in [&mut first, &mut third] {
        assert_eq!(round_trip(socket, Wire::text("hi")).await, Wire::text("hi"));
    }
    server.stop().await;
}

/// A browser's handshake carries a dozen headers: it is an upgrade all the
/// same, counted against the WebSocket cap and answered 503 past it.
#[tokio::test]
async fn a_websocket_handshake_with_a_browser_s_many_headers_counts_against_the_cap() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let (router, _reports) = echo_reporting(pronghorn::ws::Limits::default());
    let server = Server::start(router, |server| server.max_connections(8).max_websockets(1)).await;
    let connect = || async {
        let mut request = format!("ws://{}/echo", server.address)
            .into_client_request()
            .unwrap();
        for (name, value) in [
            ("user-agent", "Mozilla/5.0"),
            ("accept", "*/*"),
            ("accept-language", "en-GB,en;q=0.5"),
            ("accept-encoding", "gzip, deflate, br"),
            ("origin", "http://localhost"),
            ("sec-websocket-extensions", "permessage-deflate"),
            ("sec-fetch-mode", "websocket"),
            ("pragma", "no-cache"),
            ("cache-control", "no-cache"),
        ] {
            request
                .headers_mut()
                .insert(name, HeaderValue::from_static(value));
        }
        assert!(request.headers().keys_len() > 12);
        let stream = TcpStream::connect(server.address).await.unwrap();
        tokio_tungstenite::client_async(request, stream).await
    };
    let (mut first, _) = connect().await.unwrap();
    let refused = connect().await;
    let Err(tokio_tungstenite::tungstenite::Error::Http(response)) = refused else {
        panic!("the upgrade must be refused: {refused:?}");
    };
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        round_trip(&mut first, Wire::text("hi")).await,
        Wire::text("hi")
    );
    first.close(None).await.unwrap();
    server.stop().await;
}

/// A handler that takes the handshake as an extractor decides per request:
/// it upgrades, with a subprotocol and a header of its choosing, or
/// answers plain HTTP; a request that is no handshake is refused.
#[tokio::test]
async fn a_websocket_upgrade_extractor_lets_the_handler_decide() {
    use pronghorn::{IntoResponse, handler::Query, ws::WebSocketUpgrade};
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    #[derive(serde::Deserialize)]
    struct Room {
        name: String,
    }
    let router = Router::new()
        .get(
            "/chat",
            |Query(room): Query<Room>, upgrade: WebSocketUpgrade| {
                if room.name == "closed" {
                    return (StatusCode::FORBIDDEN, "closed room").into_response();
                }
                let name = room.name;
                upgrade
                    .protocols(["chat.v2"])
                    .header(
                        http::HeaderName::from_static("x-room"),
                        HeaderValue::from_str(&name).unwrap(),
                    )
                    .on_upgrade(move |mut socket| async move {
                        let _ = socket
                            .send(Message::text(format!("welcome to {name}")))
                            .await;
                        while let Some(Ok(message)) = socket.next().await {
                            if message.is_close() || socket.send(message).await.is_err() {
                                break;
                            }
                        }
                    })
            },
        )
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;

    let mut handshake = format!("ws://{address}/chat?name=rust")
        .into_client_request()
        .unwrap();
    (handshake.headers_mut()).insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static("chat.v1, chat.v2"),
    );
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut socket, response) = tokio_tungstenite::client_async(handshake, stream)
        .await
        .unwrap();
    assert_eq!(
        response.headers()[header::SEC_WEBSOCKET_PROTOCOL],
        "chat.v2"
    );
    assert_eq!(response.headers()["x-room"], "rust");
    let welcome = socket.next().await.unwrap().unwrap().into_text().unwrap();
    assert_eq!(welcome.as_str(), "welcome to rust");
    let message = tokio_tungstenite::tungstenite::Message::text("hi");
    socket.send(message.clone()).await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), message);

    // Refused by the handler: plain HTTP, no upgrade.
    let refused = websocket_connect(address, "/chat?name=closed")
        .await
        .unwrap_err();
    let tokio_tungstenite::tungstenite::Error::Http(response) = refused else {
        panic!("a plain HTTP answer: {refused:?}");
    };
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // No handshake at all: the extractor refuses it.
    let mut sender = common::connect(address).await;
    let plain = request(Method::GET, "/chat?name=rust")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = sender.send_request(plain).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

/// 1,024 WebSocket handshakes at once on `serve`'s defaults, from clients
/// that keep their connections open whatever they are answered: half
/// upgrade (the WebSocket cap), the rest are answered 503 and the server
/// closes their connections, so that a new client's GET is answered at
/// once rather than once those connections are shed as idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_of_websocket_handshakes_past_the_cap_leaves_room_for_other_clients() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (router, _reports) = echo_reporting(pronghorn::ws::Limits::default());
    let server = Server::start(router, |server| server).await;
    let address = server.address;
    let handshake = "GET /echo HTTP/1.1\r\nhost: localhost\r\nconnection: upgrade\r\n\
        upgrade: websocket\r\nsec-websocket-version: 13\r\n\
        sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let crowd: Vec<_> = (0..1024)
        .map(|_| {
            tokio::spawn(async move {
                let mut stream = TcpStream::connect(address).await.unwrap();
                stream.write_all(handshake.as_bytes()).await.unwrap();
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let mut byte = [0; 1];
                    assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "an answer");
                    head.push(byte[0]);
                }
                let status = String::from_utf8_lossy(&head[9..12]).into_owned();
                (status, stream)
            })
        })
        .collect();
    let (mut upgraded, mut refused) = (Vec::new(), Vec::new());
    for client in crowd {
        // A handshake left unanswered fails the test rather than hang it.
        let answered = tokio::time::timeout(Duration::from_secs(60), client).await;
        match answered.expect("every handshake is answered").unwrap() {
            (status, stream) if status == "101" => upgraded.push(stream),
            (status, stream) if status == "503" => refused.push(stream),
            (status, _) => panic!("a handshake answered {status}"),
        }
    }
    assert_eq!((upgraded.len(), refused.len()), (512, 512));
    // The server closes the refused connections, though their clients
    // keep them open.
    for mut stream in refused {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_millis(500), stream.read_to_end(&mut rest));
        read.await
            .expect("the server closes a refused connection")
            .unwrap();
    }
    for _ in 0..3 {
        let answer = tokio::time::timeout(
            Duration::from_millis(500),
            get_on_a_new_connection(address, "/echo"),
        )
        .await
        .expect("a new client is answered within 0.5 s");
        assert_eq!(answer.status, StatusCode::UPGRADE_REQUIRED);
    }
    drop(upgraded);
    server.stop().await;
}

/// A handler written the obvious way — read until the client's close, then
/// return — closes cleanly: the crate sends the close frame it owes before
/// the connection ends. So does one that returns without a close begun.
#[tokio::test]
async fn a_handler_that_returns_completes_the_close_handshake() {
    use tokio_tungstenite::tungstenite::Message as Wire;

    let router = Router::new()
        .websocket("/obvious", |mut socket: WebSocket| async move {
            while let Some(Ok(message)) = socket.next().await {
                if message.is_close() {
                    break;
                }
            }
        })
        .websocket("/leaves", |_: WebSocket| async {})
        .compile()
        .unwrap();
    let address = common::serve_on_loopback(router, |server| server).await;

    let within = Duration::from_secs(10);
    let (mut client, _) = websocket_connect(address, "/obvious").await.unwrap();
    client.send(Wire::Close(None)).await.unwrap();
    let mut closed = false;
    while let Some(frame) = tokio::time::timeout(within, client.next())
        .await
        .expect("an answer")
    {
        match frame {
            Ok(Wire::Close(_)) => closed = true,
            Ok(other) => panic!("unexpected {other:?}"),
            Err(error) => panic!("an unclean close: {error}"),
        }
    }
    assert!(closed, "the server answered the close");

    let (mut client, _) = websocket_connect(address, "/leaves").await.unwrap();
    let first = tokio::time::timeout(within, client.next())
        .await
        .expect("an answer");
    let first = first.expect("a frame before the end");
    assert!(matches!(first, Ok(Wire::Close(_))), "{first:?}");
}

/// RFC 9110, 7.8: an `Upgrade` in an HTTP/1.0 request is ignored: the
/// handshake is answered as a plain GET to a WebSocket route, 426.
#[tokio::test]
async fn a_websocket_handshake_over_http_1_0_is_not_upgraded() {
    let router = Router::new()
        .websocket("/ws", |_: WebSocket, _: RouteParams| async {})
        .compile()
        .unwrap();
    let server = Server::start(router, |server| server).await;
    let mut client = TcpStream::connect(server.address).await.unwrap();
    client
        .write_all(
            b"GET /ws HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut answer))
        .await
        .expect("answered and closed")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.0 426 "), "{answer}");
    server.stop().await;
}

/// The axum way to route a WebSocket for both protocols: `any`, with the
/// handshake as an extractor.
fn echo_over_any_protocol() -> CompiledRouter {
    use pronghorn::{router::any, ws::WebSocketUpgrade};
    Router::new()
        .route(
            "/echo",
            any(|upgrade: WebSocketUpgrade| {
                let upgrade = upgrade.protocols(["echo2", "echo"]);
                upgrade.on_upgrade(|mut socket| async move {
                    while let Some(Ok(message)) = socket.recv().await {
                        if message.is_close() || socket.send(message).await.is_err() {
                            break;
                        }
                    }
                })
            }),
        )
        .websocket("/shout", |mut socket: WebSocket| async move {
            while let Some(Ok(Message::Text(text))) = socket.recv().await {
                if socket
                    .send(Message::text(text.to_uppercase()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        })
        .compile()
        .unwrap()
}

/// An HTTP/2 client's extended CONNECT for a WebSocket at `path` on a
/// connection of its own (RFC 8441): the answer, and the socket over the
/// stream when it is 200.
async fn websocket_over_http2(
    address: SocketAddr,
    path: &str,
) -> (
    StatusCode,
    http::HeaderMap,
    Option<tokio_tungstenite::WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>>,
) {
    use tokio_tungstenite::tungstenite::protocol::Role;
    let io = TokioIo::new(TcpStream::connect(address).await.unwrap());
    let (mut sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .handshake(io)
        .await
        .unwrap();
    let mut connection = Box::pin(connection);
    // The server's SETTINGS arrive with the first exchange: drive the
    // connection until they have.
    let ready = async {
        while !connection.is_extended_connect_protocol_enabled() {
            tokio::select! {
                biased;
                _ = &mut connection => panic!("the connection ended before its settings"),
                _ = tokio::task::yield_now() => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), ready)
        .await
        .expect("the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL");
    tokio::spawn(connection);
    let connect = Request::builder()
        .method(Method::CONNECT)
        .extension(hyper::ext::Protocol::from_static("websocket"))
        .uri(format!("http://{address}{path}"))
        .header(header::SEC_WEBSOCKET_VERSION, "13")
        .header(header::SEC_WEBSOCKET_PROTOCOL, "echo3, echo")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let mut response = sender.send_request(connect).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    if status != StatusCode::OK {
        return (status, headers, None);
    }
    let upgraded = hyper::upgrade::on(&mut response).await.unwrap();
    let socket = tokio_tungstenite::WebSocketStream::from_raw_socket(
        TokioIo::new(upgraded),
        Role::Client,
        None,
    )
    .await;
    (status, headers, Some(socket))
}

/// An HTTP/2 client opens a WebSocket with an extended CONNECT (RFC 8441),
/// as browsers do on an h2 connection: `serve` advertises it, the
/// handshake is answered 200 with the chosen subprotocol, and messages go
/// both ways over the stream — also after the connection's idle timeout,
/// the upgraded stream keeping it open.
#[tokio::test]
async fn a_websocket_opens_over_http2_with_an_extended_connect() {
    let address = common::serve_on_loopback(echo_over_any_protocol(), |server| {
        server.http2_idle_timeout(Duration::ZERO)
    })
    .await;
    let (status, headers, socket) = websocket_over_http2(address, "/echo").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::SEC_WEBSOCKET_PROTOCOL], "echo");
    assert!(!headers.contains_key(header::SEC_WEBSOCKET_ACCEPT));
    let mut socket = socket.unwrap();
    for text in ["foobar", "after the idle timeout"] {
        let message = Wire::text(text);
        socket.send(message.clone()).await.unwrap();
        assert_eq!(socket.next().await.unwrap().unwrap(), message);
        // An idle connection would be closed by now (its timeout is zero,
        // its watchdog looks every few milliseconds).
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    // A route given to `Router::websocket` takes one as well.
    let (status, _, socket) = websocket_over_http2(address, "/shout").await;
    assert_eq!(status, StatusCode::OK);
    let mut socket = socket.unwrap();
    socket.send(Wire::text("hi")).await.unwrap();
    let answer = socket.next().await.unwrap().unwrap();
    assert_eq!(answer.into_text().unwrap().as_str(), "HI");
}

/// A handler taking `Result<WebSocketUpgrade, WebSocketUpgradeRejection>`
/// sees which fault a request that is no handshake has, as axum's does,
/// worded as its router answers.
#[tokio::test]
async fn a_websocket_upgrade_rejection_names_its_fault_in_both_answer_sets() {
    use pronghorn::{
        router::{Answers, any},
        ws::{WebSocketUpgrade, rejection::WebSocketUpgradeRejection},
    };
    use tower::ServiceExt;
    for (answers, text) in [
        (Answers::Pronghorn, "this connection cannot be upgraded"),
        (
            Answers::Axum,
            "WebSocket request couldn't be upgraded since no upgrade state was present",
        ),
    ] {
        let router = Router::new()
            .answers(answers)
            .route(
                "/",
                any(
                    |upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>| match upgrade {
                        Ok(_) => "upgraded".to_owned(),
                        Err(WebSocketUpgradeRejection::ConnectionNotUpgradable(fault)) => {
                            format!("{}: {}", fault.status().as_u16(), fault.body_text())
                        }
                        Err(other) => format!("another fault: {other}"),
                    },
                ),
            )
            .compile()
            .unwrap();
        // HTTP/1.0 has no upgrades.
        let handshake = Request::builder()
            .version(Version::HTTP_10)
            .header(header::UPGRADE, "websocket")
            .header(header::CONNECTION, "Upgrade")
            .header(header::SEC_WEBSOCKET_KEY, "6D69KGBOr4Re+Nj6zx9aQA==")
            .header(header::SEC_WEBSOCKET_VERSION, "13")
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(handshake).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, format!("426: {text}").as_bytes());

        let post = Request::post("/").body(Body::empty()).unwrap();
        let response = router.oneshot(post).await.unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert!(body.starts_with(b"another fault: "), "{body:?}");
    }
}
