//! Heap allocations per request, counted by a global allocator: the sync
//! pipeline Monitor(Postfix(Prefix(service_fn))) allocates exactly as often
//! as the bare `service_fn`, request construction and body collection
//! included; and it is ready on the first poll every time.

mod common;

use std::{
    alloc::{GlobalAlloc, Layout, System},
    cell::Cell,
    convert::Infallible,
    future::{Ready, ready},
    ops::ControlFlow,
    pin::pin,
    sync::atomic::{AtomicU64, Ordering},
    task::Poll,
};

use bytes::{Bytes, BytesMut};
use common::poll_once;
use http::{HeaderValue, Request, Response, StatusCode, Uri, header::CONTENT_TYPE};
use http_body_util::{BodyExt, Empty, Full};
use pronghorn::{Exchange, MonitorLayer, PostfixLayer, PrefixLayer, RequestHead};
use tower::{Service, ServiceBuilder, service_fn};

thread_local! {
    // Per thread, so that other test threads and the harness do not count.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the only addition is a thread-local counter, which is
// const-initialised, has no destructor and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded as received; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations made by `rounds` calls of `once`, after one call that warms
/// up whatever a first call initialises lazily.
fn allocations_in(rounds: u64, mut once: impl FnMut()) -> u64 {
    once();
    let before = allocations();
    for _ in 0..rounds {
        once();
    }
    allocations() - before
}

/// The bytes of a body that is complete: collected on its first poll.
fn collected<B: http_body::Body>(body: B) -> Bytes {
    let Poll::Ready(Ok(body)) = poll_once(pin!(body.collect())) else {
        panic!("a full body is collected on the first poll");
    };
    body.to_bytes()
}

const JSON: &[u8] = br#"{"message":"hello","id":42}"#;
type Res = Response<Full<Bytes>>;
type Handler = fn(Request<Empty<Bytes>>) -> Ready<Result<Res, Infallible>>;

fn handler(request: Request<Empty<Bytes>>) -> Ready<Result<Res, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(JSON)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if request.headers().contains_key("x-trace") {
        response
            .headers_mut()
            .insert("x-traced", HeaderValue::from_static("1"));
    }
    ready(Ok(response))
}

/// Requests the monitor saw, one counter per test: tests run in parallel.
static SERVED: AtomicU64 = AtomicU64::new(0);
static SERVED_BESIDE_AXUM: AtomicU64 = AtomicU64::new(0);

/// The request as hyper's HTTP/1 parser hands it over: the URI is a slice of
/// the connection's shared read buffer.
fn hyper_style_request() -> Request<Empty<Bytes>> {
    let mut buffer = BytesMut::from(&b"/users/42 HTTP/1.1\r\n"[..]);
    let line = buffer.split_to(buffer.len()).freeze();
    let uri = Uri::from_maybe_shared(line.slice(0..9)).unwrap();
    Request::get(uri)
        .header("x-token", HeaderValue::from_static("secret"))
        .body(Empty::new())
        .unwrap()
}

/// The request as `Request::builder().uri(&str)` makes it: the URI owns its
/// bytes until it is first cloned.
fn builder_request() -> Request<Empty<Bytes>> {
    Request::get("/users/42")
        .header("x-token", HeaderValue::from_static("secret"))
        .body(Empty::new())
        .unwrap()
}

/// Allocations per request, over `rounds` requests, each ready on its first poll.
fn per_request<S>(service: &mut S, make: fn() -> Request<Empty<Bytes>>, rounds: u64) -> f64
where
    S: Service<Request<Empty<Bytes>>, Response = Res, Error = Infallible>,
{
    allocations_in(rounds, || run_once(service, make)) as f64 / rounds as f64
}

fn run_once<S>(service: &mut S, make: fn() -> Request<Empty<Bytes>>)
where
    S: Service<Request<Empty<Bytes>>, Response = Res, Error = Infallible>,
{
    let request = make();
    let Poll::Ready(Ok(response)) = poll_once(pin!(service.call(request))) else {
        panic!("the sync pipeline must answer on the first poll");
    };
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(collected(response.into_body()), JSON);
}

fn pipeline(
    served: &'static AtomicU64,
    inner: impl Service<Request<Empty<Bytes>>, Response = Res, Error = Infallible> + Clone,
) -> impl Service<Request<Empty<Bytes>>, Response = Res, Error = Infallible> {
    ServiceBuilder::new()
        .layer(MonitorLayer::new(
            |exchange: &Exchange<'_, Res, Infallible>| {
                if exchange.status() == Some(StatusCode::OK) {
                    served.fetch_add(1, Ordering::Relaxed);
                }
            },
        ))
        .layer(PostfixLayer::new(|_: &RequestHead, mut response: Res| {
            response
                .headers_mut()
                .insert("server", HeaderValue::from_static("pronghorn"));
            response
        }))
        .layer(PrefixLayer::new(|request: Request<Empty<Bytes>>| {
            if request.headers().contains_key("x-token") {
                ControlFlow::Continue(request)
            } else {
                ControlFlow::Break(Response::new(Full::new(Bytes::new())))
            }
        }))
        .service(inner)
}

#[test]
fn sync_pipeline_allocates_as_often_as_the_bare_service() {
    const ROUNDS: u64 = 1_000;
    let mut bare = service_fn(handler as Handler);
    let mut stacked = pipeline(&SERVED, service_fn(handler as Handler));

    let bare_hyper = per_request(&mut bare, hyper_style_request, ROUNDS);
    let served = SERVED.load(Ordering::Relaxed);
    let stacked_hyper = per_request(&mut stacked, hyper_style_request, ROUNDS);
    assert_eq!(
        SERVED.load(Ordering::Relaxed) - served,
        ROUNDS + 1,
        "the monitor ran each time"
    );
    println!(
        "hyper-style request: bare {bare_hyper} allocations/request, pipeline {stacked_hyper}"
    );
    assert!(bare_hyper > 0.0, "the counter counts");
    assert_eq!(stacked_hyper, bare_hyper);

    // A URI parsed from a `&str` owns its bytes: the first clone (for the
    // postfix and monitor heads) moves them to shared storage, once.
    let bare_builder = per_request(&mut bare, builder_request, ROUNDS);
    let stacked_builder = per_request(&mut stacked, builder_request, ROUNDS);
    println!(
        "builder request: bare {bare_builder} allocations/request, pipeline {stacked_builder}"
    );
    assert_eq!(stacked_builder, bare_builder + 1.0);
}

async fn from_fn_step(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    next.run(request).await
}

/// For scale: axum doing the same with three `from_fn` layers allocates more
/// than the pronghorn stack. (Not ready on the first poll: polled to the end.)
#[test]
fn axum_with_three_from_fn_layers_allocates_more() {
    const ROUNDS: u64 = 1_000;
    let mut app = axum::Router::new()
        .route("/users/{id}", axum::routing::get(|| async { JSON }))
        .layer(axum::middleware::from_fn(from_fn_step))
        .layer(axum::middleware::from_fn(from_fn_step))
        .layer(axum::middleware::from_fn(from_fn_step));
    let once = || {
        let mut future = pin!(app.call(hyper_style_request()));
        let response = loop {
            if let Poll::Ready(response) = poll_once(future.as_mut()) {
                break response.unwrap();
            }
        };
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(collected(response.into_body()), JSON);
    };
    let axum = allocations_in(ROUNDS, once) as f64 / ROUNDS as f64;
    let mut stacked = pipeline(&SERVED_BESIDE_AXUM, service_fn(handler as Handler));
    let pronghorn = per_request(&mut stacked, hyper_style_request, ROUNDS);
    println!("axum from_fn x3: {axum} allocations/request; pronghorn pipeline: {pronghorn}");
    assert!(pronghorn < axum);
}

/// The router: a static route and a two-parameter route, sync handler, sync
/// prefix, postfix and monitor on a scope; allocations per request equal
/// those of a `service_fn` that builds the same response by hand.
#[test]
fn router_sync_pipeline_allocates_as_often_as_building_the_response_by_hand() {
    use pronghorn::{
        Body, IntoResponse, Router,
        handler::Path,
        router::{Route, RouteExchange},
    };
    const ROUNDS: u64 = 1_000;
    type Res = Response<Body>;

    fn request(path: &'static str) -> Request<Empty<Bytes>> {
        // As hyper hands it over: the URI shares the read buffer.
        let mut buffer = BytesMut::from(path.as_bytes());
        let line = buffer.split_to(buffer.len()).freeze();
        Request::get(Uri::from_maybe_shared(line).unwrap())
            .header("x-token", HeaderValue::from_static("secret"))
            .body(Empty::new())
            .unwrap()
    }

    fn count<S>(service: &mut S, path: &'static str, expected: &str) -> u64
    where
        S: Service<Request<Empty<Bytes>>, Response = Res, Error = Infallible>,
    {
        let once = || {
            let request = request(path);
            let Poll::Ready(Ok(response)) = poll_once(pin!(service.call(request))) else {
                panic!("a sync pipeline must answer in the first poll");
            };
            assert_eq!(response.headers()["server"], "pronghorn");
            assert_eq!(collected(response.into_body()), expected.as_bytes());
        };
        allocations_in(ROUNDS, once)
    }

    static MONITORED: AtomicU64 = AtomicU64::new(0);
    let mut router = Router::new()
        .get("/health", || "ok")
        .get(
            "/users/{user}/posts/{post}",
            |Path((user, post)): Path<(u32, u32)>| {
                if user == 7 && post == 42 {
                    "post"
                } else {
                    "other"
                }
            },
        )
        .prefix("/", |request: Request<Body>, _: &mut Route<'_>| {
            if request.headers().contains_key("x-token") {
                ControlFlow::Continue(request)
            } else {
                ControlFlow::Break(StatusCode::UNAUTHORIZED)
            }
        })
        .postfix("/", |route: &Route<'_>, mut response: Res| {
            // The request's headers, kept while the handler borrowed them.
            assert_eq!(route.headers().unwrap()["x-token"], "secret");
            response
                .headers_mut()
                .insert("server", HeaderValue::from_static("pronghorn"));
            response
        })
        .monitor("/", |exchange: &RouteExchange<'_>| {
            let token = exchange.request_headers().unwrap()["x-token"].as_bytes();
            if exchange.status() == Some(StatusCode::OK) && token == b"secret" {
                MONITORED.fetch_add(1, Ordering::Relaxed);
            }
        })
        .monitor("/users/{user}", |exchange: &RouteExchange<'_>| {
            // Its own parameters, raw and decoded, and the full pattern.
            let params = exchange.params();
            assert_eq!(params.get_raw("user"), Some("7"));
            assert_eq!(params.get("user").unwrap().unwrap(), "7");
            assert_eq!(exchange.pattern(), Some("/users/{user}/posts/{post}"));
        })
        .compile()
        .unwrap();

    let mut by_hand = service_fn(|request: Request<Empty<Bytes>>| {
        let body = if request.uri().path() == "/health" {
            "ok"
        } else {
            "post"
        };
        let mut response = body.into_response();
        response
            .headers_mut()
            .insert("server", HeaderValue::from_static("pronghorn"));
        ready(Ok::<_, Infallible>(response))
    });

    for (path, body) in [("/health", "ok"), ("/users/7/posts/42", "post")] {
        let hand = count(&mut by_hand, path, body);
        let routed = count(&mut router, path, body);
        let per = |total: u64| total as f64 / ROUNDS as f64;
        println!(
            "router {path}: {} allocations/request; by hand: {}",
            per(routed),
            per(hand)
        );
        assert!(hand > 0, "the counter counts");
        assert_eq!(routed, hand, "{path}");
    }
    assert_eq!(MONITORED.load(Ordering::Relaxed), 2 * (ROUNDS + 1));
}

/// A body extractor on a body that is already complete: the router answers
/// on the first poll and allocates less often than a `service_fn` that
/// collects the body itself (the extractor's future is not boxed, and a
/// body of one frame is not copied).
#[test]
fn a_complete_body_is_extracted_without_boxing() {
    use pronghorn::{Body, IntoResponse, Router};
    const ROUNDS: u64 = 1_000;
    type Req = Request<Full<Bytes>>;

    fn request() -> Req {
        // As hyper hands it over: the URI shares the read buffer (see
        // `RequestHead` on the URI built from a `&str`).
        let mut buffer = BytesMut::from(&b"/echo"[..]);
        let line = buffer.split_to(buffer.len()).freeze();
        Request::post(Uri::from_maybe_shared(line).unwrap())
            .body(Full::new(Bytes::from_static(b"payload")))
            .unwrap()
    }

    fn count<S>(service: &mut S) -> u64
    where
        S: Service<Req, Response = Response<Body>, Error = Infallible>,
    {
        let once = || {
            let Poll::Ready(Ok(response)) = poll_once(pin!(service.call(request()))) else {
                panic!("a complete body must be extracted in the first poll");
            };
            assert_eq!(collected(response.into_body()), &b"payload"[..]);
        };
        allocations_in(ROUNDS, once)
    }

    let mut router = Router::new()
        .post("/echo", |body: Bytes| body)
        .compile()
        .unwrap();
    let mut by_hand = service_fn(|request: Req| {
        ready(Ok::<_, Infallible>(
            collected(request.into_body()).into_response(),
        ))
    });
    let hand = count(&mut by_hand);
    let routed = count(&mut router);
    println!(
        "body extractor: {} allocations/request; by hand: {}",
        routed as f64 / ROUNDS as f64,
        hand as f64 / ROUNDS as f64
    );
    assert!(hand > 0, "the counter counts");
    // One fewer: a body of one frame is that frame, with no list of
    // frames to collect it in.
    assert_eq!(routed, hand - ROUNDS);
}

/// Whether the bytes of the [`Late`] body being read have arrived.
static ARRIVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A body whose bytes arrive only once the test says so, as hyper's do for
/// a request it hands to `call`: it reads them after `call` returns. Polled
/// by hand here, it keeps no waker.
struct Late(Option<Bytes>);

impl http_body::Body for Late {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        if !ARRIVED.load(Ordering::SeqCst) {
            return Poll::Pending;
        }
        Poll::Ready(self.0.take().map(|data| Ok(http_body::Frame::data(data))))
    }
}

/// An async handler whose body is still arriving when the router calls it
/// costs two boxes beyond a sync handler on the same body complete: its
/// future (the body's reading and the handler's own future in one) and the
/// request's state while it waits. (Under a Tokio runtime the body
/// timeout's timer is a third: this test runs without one. The test's
/// body type, not hyper's, is boxed at the router's boundary, in both.)
#[test]
fn a_body_still_arriving_costs_two_boxes() {
    use pronghorn::{Body, Router};
    const ROUNDS: u64 = 1_000;

    fn count(router: &mut pronghorn::CompiledRouter, arrived: bool) -> u64 {
        let body = || Late(Some(Bytes::from_static(b"payload")));
        let once = || {
            ARRIVED.store(arrived, Ordering::SeqCst);
            let request = Request::post("/echo").body(body()).unwrap();
            let mut future = pin!(router.call(request));
            let mut poll = poll_once(future.as_mut());
            if poll.is_pending() {
                ARRIVED.store(true, Ordering::SeqCst);
                poll = poll_once(future.as_mut());
            }
            let Poll::Ready(Ok(response)) = poll else {
                panic!("the answer is ready once the body has arrived");
            };
            let response: Response<Body> = response;
            assert_eq!(collected(response.into_body()), &b"payload"[..]);
        };
        allocations_in(ROUNDS, once)
    }

    let mut sync = Router::new()
        .post("/echo", |body: Bytes| body)
        .compile()
        .unwrap();
    let mut late = Router::new()
        .post("/echo", |body: Bytes| async move { body })
        .compile()
        .unwrap();
    let complete = count(&mut sync, true);
    let arriving = count(&mut late, false);
    println!(
        "sync handler, complete body: {} allocations/request; async handler, body arriving: {}",
        complete as f64 / ROUNDS as f64,
        arriving as f64 / ROUNDS as f64
    );
    assert_eq!(arriving, complete + 2 * ROUNDS);
}

/// A handler answering a response with another body type: hyper's and
/// http-body-util's full and empty bodies and a `String` are stored inline
/// (as many allocations as the same answer built with pronghorn's `Body`),
/// and only a body of another kind, a stream, is boxed.
#[test]
fn a_response_with_a_full_or_empty_body_of_another_type_is_not_boxed() {
    use pronghorn::{Body, Router};
    const ROUNDS: u64 = 1_000;

    let stream = || {
        let chunks = futures_util::stream::iter([Ok::<_, Infallible>(http_body::Frame::data(
            Bytes::from_static(b"hello"),
        ))]);
        Response::new(http_body_util::StreamBody::new(chunks))
    };
    let mut router = Router::new()
        .get("/body", || {
            Response::new(Body::from(Bytes::from_static(b"hello")))
        })
        .get("/full", || {
            Response::new(Full::new(Bytes::from_static(b"hello")))
        })
        .get("/body-string", || {
            Response::new(Body::from(String::from("hello")))
        })
        .get("/string", || Response::new(String::from("hello")))
        .get("/body-empty", || Response::new(Body::empty()))
        .get("/empty", || Response::new(Empty::<Bytes>::new()))
        .get("/stream", stream)
        .compile()
        .unwrap();
    let mut count = |path: &'static str| {
        let expected: &[u8] = if path.contains("empty") {
            b""
        } else {
            b"hello"
        };
        allocations_in(ROUNDS, || {
            let request = Request::get(path).body(Empty::<Bytes>::new()).unwrap();
            let Poll::Ready(Ok(response)) = poll_once(pin!(router.call(request))) else {
                panic!("{path}: answered in the first poll");
            };
            let size = http_body::Body::size_hint(response.body()).exact();
            if path != "/stream" {
                assert_eq!(size, Some(expected.len() as u64), "{path}: an exact size");
            }
            assert_eq!(collected(response.into_body()), expected, "{path}");
        })
    };
    let [body, full, body_string, string, body_empty, empty, streamed] = [
        "/body",
        "/full",
        "/body-string",
        "/string",
        "/body-empty",
        "/empty",
        "/stream",
    ]
    .map(&mut count);
    println!(
        "allocations per {ROUNDS}: Body {body}, Full {full}, String {string}, stream {streamed}"
    );
    assert_eq!(full, body, "Full<Bytes>");
    assert_eq!(string, body_string, "String");
    assert_eq!(empty, body_empty, "Empty<Bytes>");
    assert!(
        streamed >= body + ROUNDS,
        "a stream is boxed: {streamed} against {body}"
    );
}

/// The router serves a request with any body type, turning it into its
/// own `Body` at the boundary: `Full<Bytes>`, `Empty<Bytes>`, a `String`
/// and `Body` itself are kept inline, with no allocation beyond the same
/// request built with `Body`; only a body of another type is boxed.
#[test]
fn request_bodies_of_common_types_are_taken_without_boxing() {
    use pronghorn::{Body, Router};
    const ROUNDS: u64 = 1_000;

    fn count<B>(router: &mut pronghorn::CompiledRouter, body: fn() -> B) -> u64
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<pronghorn::BoxError>,
    {
        allocations_in(ROUNDS, || {
            let request = Request::post("/echo").body(body()).unwrap();
            let Poll::Ready(Ok(response)) = poll_once(pin!(router.call(request))) else {
                panic!("a complete body is answered on the first poll");
            };
            let response: Response<Body> = response;
            assert_eq!(response.status(), StatusCode::OK);
            drop(collected(response.into_body()));
        })
    }

    let mut router = Router::new()
        .post("/echo", |body: Bytes| body)
        .compile()
        .unwrap();
    let own = count(&mut router, || Body::from("payload"));
    let full = count(&mut router, || Full::new(Bytes::from_static(b"payload")));
    let text = count(&mut router, || String::from("payload"));
    let empty = count(&mut router, Empty::<Bytes>::new);
    let empty_own = count(&mut router, Body::empty);
    let other = count(&mut router, || {
        Full::new(Bytes::from_static(b"payload")).map_err(|never| match never {})
    });
    println!(
        "allocations/request: Body {own}, Full {full}, String {text}, Empty {empty}, another type {other} (per {ROUNDS})"
    );
    assert_eq!(full, own, "Full<Bytes>");
    // A `String` brings its own buffer, allocated before the call.
    assert_eq!(text, own + ROUNDS, "String");
    assert_eq!(empty, empty_own, "Empty<Bytes>");
    assert_eq!(other, own + ROUNDS, "another body type is boxed once");
}

/// The metrics monitor keeps each set of labels' handles: once a route's
/// labels have been seen, recording costs no allocation.
#[cfg(feature = "metrics")]
#[test]
fn metrics_labels_of_a_route_cost_no_allocation() {
    use pronghorn::{Router, monitor::Metrics};

    fn request() -> Request<Empty<Bytes>> {
        // As hyper hands it over: the URI shares the read buffer, and the
        // copy of the head that a route with a monitor keeps costs no
        // allocation.
        let mut buffer = BytesMut::from(&b"/users/7"[..]);
        let line = buffer.split_to(buffer.len()).freeze();
        let uri = Uri::from_maybe_shared(line).unwrap();
        Request::get(uri).body(Empty::new()).unwrap()
    }
    let count = |router: &mut pronghorn::CompiledRouter| {
        allocations_in(1_000, || {
            let Poll::Ready(Ok(response)) = poll_once(pin!(router.call(request()))) else {
                panic!("a sync pipeline must answer in the first poll");
            };
            assert_eq!(collected(response.into_body()), "ada".as_bytes());
        })
    };
    let plain = Router::new().get("/users/{id}", || "ada");
    let mut without = plain.clone().compile().unwrap();
    let mut with = plain.monitor("/", Metrics::new()).compile().unwrap();
    metrics::with_local_recorder(&metrics::NoopRecorder, || {
        assert_eq!(count(&mut with), count(&mut without));
    });
}

/// A route with no hook pays nothing for the hooks it lacks: the router
/// keeps no copy of the request's head for it, and its handler reads its
/// parameters in the request. A URI that owns its bytes (as
/// `Request::builder().uri(&str)` makes it) would move them to shared
/// storage when copied, one allocation; uncopied, the router allocates as
/// often as a `service_fn` that builds the same response.
#[test]
fn a_route_without_hooks_keeps_no_copy_of_the_request_head() {
    use pronghorn::{Body, IntoResponse, Router, handler::Path};
    const ROUNDS: u64 = 1_000;

    fn count<S>(service: &mut S, path: &'static str, expected: &str) -> u64
    where
        S: Service<Request<Empty<Bytes>>, Response = Response<Body>, Error = Infallible>,
    {
        allocations_in(ROUNDS, || {
            let request = Request::get(path).body(Empty::new()).unwrap();
            let Poll::Ready(Ok(response)) = poll_once(pin!(service.call(request))) else {
                panic!("a sync route must answer in the first poll");
            };
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(collected(response.into_body()), expected.as_bytes());
        })
    }

    let mut router = Router::new()
        .get("/users/42", || "user")
        .get("/items/{id}", |Path(id): Path<u32>| {
            if id == 7 { "item 7" } else { "another item" }
        })
        .compile()
        .unwrap();
    let mut by_hand = service_fn(|request: Request<Empty<Bytes>>| {
        let body = match request.uri().path() {
            "/users/42" => "user",
            _ => "item 7",
        };
        ready(Ok::<_, Infallible>(body.into_response()))
    });
    for (path, body) in [("/users/42", "user"), ("/items/7", "item 7")] {
        let hand = count(&mut by_hand, path, body);
        let routed = count(&mut router, path, body);
        assert!(hand > 0, "the counter counts");
        assert_eq!(routed, hand, "{path}: allocations in {ROUNDS} requests");
    }
}

/// A route whose steps are tower layers (pronghorn's own, given to
/// `route_layer`) is answered on the first poll, as the same steps written
/// as the router's hooks are. It costs five allocations more than the
/// hooks: the layers' future, and in the request's extensions the route's
/// `MatchedPath` and `RouteMatch`, which the layers and the handler below
/// them read (two of them), with the map that holds them (two more: this
/// request, as hyper's, has no extension yet). The way to layer one route
/// before `route_layer`, a service mounted with `method_service`, costs
/// more.
#[test]
fn a_route_in_tower_layers_costs_its_future_and_its_route_in_the_extensions() {
    use pronghorn::{Body, IntoResponse, Router, handler::Path, router::Route};
    const ROUNDS: u64 = 1_000;
    type Res = Response<Body>;
    static SEEN: AtomicU64 = AtomicU64::new(0);

    fn count(router: &mut pronghorn::CompiledRouter) -> u64 {
        allocations_in(ROUNDS, || {
            let Poll::Ready(Ok(response)) = poll_once(pin!(router.call(hyper_style_request())))
            else {
                panic!("a synchronous route is answered on the first poll");
            };
            assert_eq!(response.headers()["server"], "pronghorn");
            assert_eq!(collected(response.into_body()), "user 42".as_bytes());
        })
    }

    fn handler(Path(id): Path<u32>) -> String {
        format!("user {id}")
    }
    let allowed = |headers: &http::HeaderMap| headers.contains_key("x-token");
    let mut hooks = Router::new()
        .get("/users/{id}", handler)
        .prefix(
            "/",
            move |request: &mut Request<Body>, _: &mut Route<'_>| match allowed(request.headers()) {
                true => ControlFlow::Continue(()),
                false => ControlFlow::Break(StatusCode::UNAUTHORIZED),
            },
        )
        .postfix("/", |_: &Route<'_>, response: &mut Res| {
            response
                .headers_mut()
                .insert("server", HeaderValue::from_static("pronghorn"));
        })
        .monitor("/", |x: &pronghorn::router::RouteExchange<'_>| {
            SEEN.fetch_add(
                u64::from(x.status() == Some(StatusCode::OK)),
                Ordering::Relaxed,
            );
        })
        .compile()
        .unwrap();
    let steps = || {
        ServiceBuilder::new()
            .layer(MonitorLayer::new(
                |outcome: Option<Result<&Res, &Infallible>>| {
                    let ok = matches!(outcome, Some(Ok(r)) if r.status() == StatusCode::OK);
                    SEEN.fetch_add(u64::from(ok), Ordering::Relaxed);
                },
            ))
            .layer(PostfixLayer::new(|response: &mut Res| {
                response
                    .headers_mut()
                    .insert("server", HeaderValue::from_static("pronghorn"));
            }))
            .layer(PrefixLayer::new(
                move |request: &mut Request<Body>| match allowed(request.headers()) {
                    true => ControlFlow::Continue(()),
                    false => ControlFlow::Break(StatusCode::UNAUTHORIZED.into_response()),
                },
            ))
    };
    let mut layers = Router::new()
        .get("/users/{id}", handler)
        .route_layer(steps())
        .compile()
        .unwrap();
    // Before `route_layer`: the route compiled apart, its layers around it,
    // mounted for its method.
    let apart = steps().service(Router::new().get("/users/{id}", handler).compile().unwrap());
    let mut mounted = Router::new()
        .method_service(http::Method::GET, "/users/{id}", apart)
        .compile()
        .unwrap();

    let hooks = count(&mut hooks);
    let layers = count(&mut layers);
    let mounted = count(&mut mounted);
    let per = |total: u64| total as f64 / ROUNDS as f64;
    println!(
        "hooks: {} allocations/request; route_layer: {}; method_service: {}",
        per(hooks),
        per(layers),
        per(mounted)
    );
    assert_eq!(layers, hooks + 5 * ROUNDS);
    assert!(layers < mounted);
}
