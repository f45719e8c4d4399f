//! The layers in the stacks users already run, over real loopback HTTP with
//! a real client: on an axum `Router` through `Router::layer`, around an
//! axum `Router` through `ServiceBuilder`, and around a hyper `service_fn`.

mod common;

use std::{convert::Infallible, net::SocketAddr, ops::ControlFlow};

use bytes::Bytes;
use common::Events;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper_util::{rt::TokioIo, service::TowerToHyperService};
use pronghorn::{Exchange, MonitorLayer, PostfixLayer, PrefixLayer, RequestHead};
use tokio::net::TcpListener;
use tower::{Service, ServiceBuilder};

/// Serves `service` on an ephemeral loopback port, one task per connection.
async fn serve<S, B>(service: S) -> SocketAddr
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    address
}

/// Sends one request over a fresh connection with hyper's client.
async fn send(
    address: SocketAddr,
    request: Request<Empty<Bytes>>,
) -> (StatusCode, http::HeaderMap, String) {
    let mut sender = common::connect(address).await;
    let response = sender.send_request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

fn get(path: &str, token: bool) -> Request<Empty<Bytes>> {
    let mut request = Request::get(path).header("host", "localhost");
    if token {
        request = request.header("authorization", "Bearer t");
    }
    request.body(Empty::new()).unwrap()
}

type AxumResponse = Response<axum::body::Body>;

/// Prefix (refuses without a token), postfix (adds a header) and monitor
/// (records) for axum's body types, recording into `events`.
macro_rules! axum_layers {
    ($events:expr) => {{
        let (e1, e2, e3) = ($events.clone(), $events.clone(), $events.clone());
        (
            PrefixLayer::new(move |request: Request<axum::body::Body>| {
                e1.push(format!("prefix {}", request.uri().path()));
                if request.headers().contains_key("authorization") {
                    ControlFlow::Continue(request)
                } else {
                    let mut denied = Response::new(axum::body::Body::from("denied"));
                    *denied.status_mut() = StatusCode::UNAUTHORIZED;
                    ControlFlow::Break(denied)
                }
            }),
            PostfixLayer::new(move |head: &RequestHead, mut response: AxumResponse| {
                e2.push(format!("postfix {}", head.path()));
                response
                    .headers_mut()
                    .insert("x-postfix", HeaderValue::from_static("1"));
                response
            }),
            MonitorLayer::new(move |exchange: &Exchange<'_, AxumResponse, Infallible>| {
                e3.push(format!("monitor {}", exchange.status().unwrap().as_u16()));
            }),
        )
    }};
}

fn axum_app() -> axum::Router {
    axum::Router::new()
        .route("/hello", axum::routing::get(|| async { "hello from axum" }))
        .route("/users/{id}", axum::routing::get(|axum::extract::Path(id): axum::extract::Path<u32>| async move {
            format!("user {id}")
        }))
}

/// In front of an axum router, a prefix that checks the request in place
/// refuses with any `IntoResponse`: the answer's body becomes axum's.
#[cfg(feature = "axum")]
#[tokio::test]
async fn a_checking_prefix_in_front_of_an_axum_router_answers_any_into_response() {
    use tower::ServiceExt;

    let app = ServiceBuilder::new()
        .layer(PrefixLayer::new(
            |request: &mut Request<axum::body::Body>| match request
                .headers()
                .contains_key("authorization")
            {
                true => Ok(()),
                false => Err((StatusCode::UNAUTHORIZED, "denied")),
            },
        ))
        .service(axum_app());
    let mut answers = Vec::new();
    for token in [false, true] {
        let mut request = Request::get("/hello");
        if token {
            request = request.header("authorization", "Bearer t");
        }
        let request = request.body(axum::body::Body::empty()).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        answers.push((status, body));
    }
    assert_eq!(
        answers,
        [
            (StatusCode::UNAUTHORIZED, "denied".into()),
            (StatusCode::OK, "hello from axum".into()),
        ]
    );
}

#[tokio::test]
async fn layers_on_an_axum_router_through_router_layer() {
    let events = Events::default();
    let (prefix, postfix, monitor) = axum_layers!(events);
    // `Router::layer` wraps each route: the last layer added is outermost.
    let app = axum_app().layer(prefix).layer(postfix).layer(monitor);
    let address = serve(app).await;

    let (status, headers, body) = send(address, get("/users/7", true)).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "user 7"));
    assert_eq!(headers["x-postfix"], "1");
    assert_eq!(
        events.take(),
        ["prefix /users/7", "postfix /users/7", "monitor 200"]
    );

    let (status, headers, body) = send(address, get("/hello", false)).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::UNAUTHORIZED, "denied")
    );
    assert_eq!(
        headers["x-postfix"], "1",
        "the postfix sees the prefix's early answer"
    );
    assert_eq!(
        events.take(),
        ["prefix /hello", "postfix /hello", "monitor 401"]
    );
}

#[tokio::test]
async fn layers_around_an_axum_router_through_service_builder() {
    let events = Events::default();
    let (prefix, postfix, monitor) = axum_layers!(events);
    let service = ServiceBuilder::new()
        .map_request(|request: Request<Incoming>| request.map(axum::body::Body::new))
        .layer(monitor)
        .layer(postfix)
        .layer(prefix)
        .service(axum_app());
    let address = serve(service).await;

    let (status, headers, body) = send(address, get("/hello", true)).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "hello from axum"));
    assert_eq!(headers["x-postfix"], "1");
    assert_eq!(
        events.take(),
        ["prefix /hello", "postfix /hello", "monitor 200"]
    );

    // Outside the router, the hooks also see the router's own 404.
    let (status, _, _) = send(address, get("/missing", true)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        events.take(),
        ["prefix /missing", "postfix /missing", "monitor 404"]
    );
}

#[tokio::test]
async fn layers_around_a_hyper_service_fn_with_async_hooks() {
    type HyperResponse = Response<Full<Bytes>>;
    let events = Events::default();
    let [e1, e2, e3] = events.handles();
    let service = ServiceBuilder::new()
        .layer(MonitorLayer::new(
            move |exchange: &Exchange<'_, HyperResponse, Infallible>| {
                let (events, status) = (e3.clone(), exchange.status().unwrap().as_u16());
                async move { events.push(format!("monitor {status}")) }
            },
        ))
        .layer(PostfixLayer::new(
            move |_: &RequestHead, mut response: HyperResponse| {
                e2.push("postfix");
                response
                    .headers_mut()
                    .insert("x-postfix", HeaderValue::from_static("1"));
                response
            },
        ))
        .layer(PrefixLayer::new(move |request: Request<Incoming>| {
            let events = e1.clone();
            async move {
                tokio::task::yield_now().await;
                events.push("prefix");
                ControlFlow::Continue(request)
            }
        }))
        .service(tower::service_fn(|request: Request<Incoming>| async move {
            let body = format!("hyper saw {}", request.uri().path());
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body))))
        }));
    let address = serve(service).await;

    for path in ["/one", "/two"] {
        let (status, headers, body) = send(address, get(path, false)).await;
        assert_eq!(
            (status, body),
            (StatusCode::OK, format!("hyper saw {path}"))
        );
        assert_eq!(headers["x-postfix"], "1");
        assert_eq!(events.take(), ["prefix", "postfix", "monitor 200"]);
    }
}

/// tower-http's trace and timeout layers around a `CompiledRouter`, served
/// on loopback: the router's responses pass through the trace layer, and a
/// handler slower than the timeout is answered by tower-http.
#[tokio::test]
async fn tower_http_trace_and_timeout_around_the_router() {
    let router = pronghorn::Router::new()
        .get("/fast", || "fast")
        .get("/stuck", std::future::pending::<&'static str>)
        .compile()
        .unwrap();
    let service = ServiceBuilder::new()
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            std::time::Duration::from_millis(100),
        ))
        .service(router);
    let address = serve(service).await;
    let (status, _, body) = send(address, get("/fast", false)).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "fast"));
    let (status, _, _) = send(address, get("/stuck", false)).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
}

/// Nested in an axum application that `axum::serve` runs with connect
/// info, a pronghorn handler reads the client's address through axum's own
/// `ConnectInfo`, as any axum head extractor.
#[cfg(feature = "axum")]
#[tokio::test]
async fn a_router_nested_in_axum_reads_axum_s_connect_info() {
    use axum::extract::ConnectInfo;
    use pronghorn::handler::Axum;

    let pronghorn = pronghorn::Router::new()
        .get(
            "/ip",
            |Axum(ConnectInfo(peer)): Axum<ConnectInfo<SocketAddr>>| peer.ip().to_string(),
        )
        .compile()
        .unwrap();
    let app = axum::Router::new().nest_service("/p", pronghorn);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .into_future(),
    );
    let (status, _, body) = send(address, get("/p/ip", false)).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "127.0.0.1"));
}
