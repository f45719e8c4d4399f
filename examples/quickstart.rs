//! A pronghorn server in one file: routes, a JSON body, an authentication
//! prefix, a postfix that adds a header, and a logging monitor.
//!
//! ```text
//! cargo run --release --example quickstart
//! curl -i http://127.0.0.1:3000/
//! curl -i http://127.0.0.1:3000/users/7
//! curl -i -X POST -H 'content-type: application/json' -d '{"name":"Ada"}' http://127.0.0.1:3000/users
//! curl -i http://127.0.0.1:3000/admin/stats                                   # 401
//! curl -i -H 'authorization: Bearer let-me-in' http://127.0.0.1:3000/admin/stats
//! ```
//!
//! Set `PRONGHORN_ADDR` to listen elsewhere (`127.0.0.1:0` picks a free port).
//! Every step here is synchronous except reading the POST body, so a GET
//! completes inside the first poll of its response future.

use std::{ops::ControlFlow, time::Duration};

use http::{HeaderValue, Request, Response, StatusCode, header};
use pronghorn::{
    Body, CompiledRouter, Router,
    handler::{Json, Path},
    router::{Priority, Route, RouteExchange, Scope},
    serve,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize)]
struct User {
    id: u64,
    name: String,
}

#[derive(Deserialize)]
struct NewUser {
    name: String,
}

/// The application: also used by the examples' test.
pub fn app() -> CompiledRouter {
    Router::new()
        // A static route: found by comparing its bytes, with no allocation.
        .get("/", || "Hello from pronghorn\n")
        // A dynamic route with a typed parameter.
        .get("/users/{id}", |Path(id): Path<u64>| {
            Json(User {
                id,
                name: format!("user {id}"),
            })
        })
        // A JSON body.
        .post("/users", |Json(user): Json<NewUser>| {
            (
                StatusCode::CREATED,
                Json(User {
                    id: 42,
                    name: user.name,
                }),
            )
        })
        .get("/admin/stats", || "uptime: forever\n")
        // Prefix: everything under /admin needs the token.
        .prefix(
            Scope::new("/admin").priority(Priority::HIGH),
            |request: Request<Body>, _: &mut Route<'_>| {
                let authorized = request.headers().get(header::AUTHORIZATION)
                    == Some(&HeaderValue::from_static("Bearer let-me-in"));
                if authorized {
                    ControlFlow::Continue(request)
                } else {
                    ControlFlow::Break((StatusCode::UNAUTHORIZED, "unauthorized\n"))
                }
            },
        )
        // Postfix: name the server on every routed response.
        .postfix("/", |_: &Route<'_>, mut response: Response<Body>| {
            response
                .headers_mut()
                .insert(header::SERVER, HeaderValue::from_static("pronghorn"));
            response
        })
        // Monitor: one log line per request, before the response goes out.
        .monitor("/", |exchange: &RouteExchange<'_>| {
            let status = exchange.status().map_or(0, |status| status.as_u16());
            let pattern = exchange.pattern().unwrap_or("-");
            println!(
                "{} {} {status} {pattern} {:?}",
                exchange.method(),
                exchange.path(),
                exchange.elapsed()
            );
        })
        .compile()
        .expect("the routes are valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    serve(listener, app())
        .header_read_timeout(Duration::from_secs(10))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
