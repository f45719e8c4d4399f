//! Tower services inside the router: tower-http's `ServeDir` under
//! `/static`, behind a prefix that asks for a token, and an axum `Router`
//! kept as a legacy module under `/legacy`. A fallback answers the rest.
//!
//! ```text
//! cargo run --example static_files
//! curl -i http://127.0.0.1:3005/static/            # 401: no token
//! curl -i -H 'authorization: Bearer let-me-in' http://127.0.0.1:3005/static/
//! curl -i -H 'authorization: Bearer let-me-in' http://127.0.0.1:3005/static/docs/
//! curl -i http://127.0.0.1:3005/legacy/hello
//! curl -i http://127.0.0.1:3005/elsewhere          # 404 from the fallback
//! ```

use std::ops::ControlFlow;

use http::{Request, StatusCode, header};
use pronghorn::{
    Body, CompiledRouter, Router,
    handler::{Html, OriginalUri},
    router::Route,
    serve,
};
use tower_http::services::ServeDir;

/// The directory `/static` serves.
pub const FILES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/static");

/// The application: also used by the examples' test.
pub fn app() -> CompiledRouter {
    // An axum application that predates the move to pronghorn, kept as it is.
    let legacy = axum::Router::new().route(
        "/hello",
        axum::routing::get(|| async { "hello from the legacy axum module\n" }),
    );
    Router::new()
        .get("/", || {
            Html(r#"<a href="/static/">files</a>, <a href="/legacy/hello">legacy</a>"#)
        })
        // `ServeDir` sees the path below `/static`: `/static/docs/` is its
        // `/docs/`, a directory, answered with its `index.html`.
        .nest_service("/static", ServeDir::new(FILES))
        .prefix(
            "/static",
            |request: &mut Request<Body>, _: &mut Route<'_>| match request
                .headers()
                .get(header::AUTHORIZATION)
            {
                Some(token) if token == "Bearer let-me-in" => ControlFlow::Continue(()),
                _ => ControlFlow::Break(StatusCode::UNAUTHORIZED),
            },
        )
        .nest_service("/legacy", legacy)
        .fallback(|OriginalUri(uri): OriginalUri| {
            (StatusCode::NOT_FOUND, format!("nothing at {uri}\n"))
        })
        .compile()
        .expect("the routes are valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3005".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    serve(listener, app()).await
}
