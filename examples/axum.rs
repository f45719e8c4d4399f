//! pronghorn inside an axum application, both ways round:
//!
//! - a `CompiledRouter` mounted with `nest_service` under `/api` and as the
//!   `fallback_service`;
//! - pronghorn's layers on axum routes, next to tower-http's.
//!
//! ```text
//! cargo run --example axum
//! curl -i http://127.0.0.1:3004/axum
//! curl -i http://127.0.0.1:3004/api/users/7
//! curl -i http://127.0.0.1:3004/anything-else
//! curl -i --compressed http://127.0.0.1:3004/api/report
//! ```

use std::{convert::Infallible, ops::ControlFlow};

use axum::body::Body as AxumBody;
use http::{HeaderValue, Request, Response, StatusCode};
use pronghorn::{
    CompiledRouter, Exchange, MonitorLayer, PostfixLayer, PrefixLayer, Router, handler::Path,
};
use tower_http::compression::CompressionLayer;

/// The pronghorn part: routes for `/users/{id}` and a fallback.
pub fn pronghorn_api() -> CompiledRouter {
    Router::new()
        .get("/users/{id}", |Path(id): Path<u64>| {
            format!("pronghorn user {id}")
        })
        // Large enough for tower-http's compression, which skips tiny bodies.
        .get("/report", || "pronghorn report line\n".repeat(64))
        .compile()
        .expect("the routes are valid")
}

pub fn pronghorn_fallback() -> CompiledRouter {
    Router::new()
        .any("/{*path}", |Path(path): Path<String>| {
            (StatusCode::NOT_FOUND, format!("no page at /{path}"))
        })
        .compile()
        .expect("the routes are valid")
}

/// The application: also used by the examples' test.
pub fn app() -> axum::Router {
    type AxumResponse = Response<AxumBody>;
    let axum_routes = axum::Router::new()
        .route("/axum", axum::routing::get(|| async { "axum route" }))
        .route("/axum/private", axum::routing::get(|| async { "secret" }))
        // pronghorn layers on axum routes; the last added is the outermost.
        .layer(PrefixLayer::new(|request: Request<AxumBody>| {
            if request.uri().path().ends_with("/private") {
                let mut denied = Response::new(AxumBody::from("denied"));
                *denied.status_mut() = StatusCode::FORBIDDEN;
                ControlFlow::Break(denied)
            } else {
                ControlFlow::Continue(request)
            }
        }))
        .layer(PostfixLayer::new(|response: &mut AxumResponse| {
            response
                .headers_mut()
                .insert("x-served-by", HeaderValue::from_static("axum+pronghorn"));
        }))
        .layer(MonitorLayer::new(
            |exchange: &Exchange<'_, AxumResponse, Infallible>| {
                println!(
                    "{} {} {:?}",
                    exchange.method(),
                    exchange.path(),
                    exchange.status()
                );
            },
        ));
    axum_routes
        .nest_service("/api", pronghorn_api())
        .fallback_service(pronghorn_fallback())
        .layer(CompressionLayer::new())
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3004".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app()).await
}
