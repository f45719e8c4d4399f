//! The three layers around a small hyper service, served on 127.0.0.1:3000.
//!
//! ```text
//! cargo run --release --example quickstart
//! curl -i http://127.0.0.1:3000/
//! curl -i http://127.0.0.1:3000/hello.json
//! curl -i http://127.0.0.1:3000/admin                             # 401
//! curl -i -H 'authorization: Bearer let-me-in' http://127.0.0.1:3000/admin
//! ```
//!
//! Every hook here is synchronous, so each request completes inside the
//! first poll of its response future.

use std::{convert::Infallible, ops::ControlFlow};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::{rt::TokioIo, service::TowerToHyperService};
use pronghorn::{Exchange, MonitorLayer, PostfixLayer, PrefixLayer, RequestHead};
use tokio::net::TcpListener;
use tower::{ServiceBuilder, service_fn};

type Res = Response<Full<Bytes>>;

fn respond(status: StatusCode, content_type: &'static str, body: &'static str) -> Res {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The handler: a plain `match`; the router replaces it in a later version.
async fn handle(request: Request<Incoming>) -> Result<Res, Infallible> {
    Ok(match request.uri().path() {
        "/" => respond(StatusCode::OK, "text/plain", "Hello from pronghorn\n"),
        "/hello.json" => respond(
            StatusCode::OK,
            "application/json",
            "{\"message\":\"hello\"}\n",
        ),
        "/admin" => respond(StatusCode::OK, "text/plain", "welcome, admin\n"),
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "Not Found\n"),
    })
}

/// Prefix: `/admin` needs the token; anything else passes.
fn authenticate(request: Request<Incoming>) -> ControlFlow<Res, Request<Incoming>> {
    let authorized = request.headers().get(header::AUTHORIZATION)
        == Some(&HeaderValue::from_static("Bearer let-me-in"));
    if request.uri().path().starts_with("/admin") && !authorized {
        ControlFlow::Break(respond(
            StatusCode::UNAUTHORIZED,
            "text/plain",
            "unauthorized\n",
        ))
    } else {
        ControlFlow::Continue(request)
    }
}

/// Postfix: name the server on every response.
fn server_header(_: &RequestHead, mut response: Res) -> Res {
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
    response
}

/// Monitor: one log line per request, written before the response goes out.
fn log(exchange: &Exchange<'_, Res, Infallible>) {
    let status = exchange.status().map_or(0, |status| status.as_u16());
    println!(
        "{} {} {status} {:?}",
        exchange.method(),
        exchange.path(),
        exchange.elapsed()
    );
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let service = ServiceBuilder::new()
        .layer(MonitorLayer::new(log))
        .layer(PostfixLayer::new(server_header))
        .layer(PrefixLayer::new(authenticate))
        .service(service_fn(handle));

    let listener = TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                eprintln!("connection error: {error}");
            }
        });
    }
}
