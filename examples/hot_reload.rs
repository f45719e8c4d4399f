//! Routes that change while the server runs: every second the module
//! `clock` is replaced by one with a new answer for `/time`, in one change
//! of the live table (no request finds `/time` missing).
//!
//! ```text
//! cargo run --example hot_reload
//! curl http://127.0.0.1:3003/time
//! ```

use std::time::Duration;

use pronghorn::{Router, router::Reloadable, serve};

/// The module registered under `clock` at tick `n`.
pub fn clock(n: u64) -> Router {
    Router::new().get("/time", move || format!("tick {n}\n"))
}

/// The application: also used by the examples' test.
pub fn app() -> Reloadable {
    let base = Router::new().get("/", || "routes change while I serve\n");
    let app = Reloadable::new(base).expect("the routes are valid");
    app.register("clock", clock(0)).expect("the module fits");
    app
}

/// Replaces the clock module with the one for tick `n`.
pub fn tick(app: &Reloadable, n: u64) {
    app.replace("clock", clock(n)).expect("the module fits");
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3003".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let app = app();
    let ticker = app.clone();
    tokio::spawn(async move {
        for n in 1.. {
            tokio::time::sleep(Duration::from_secs(1)).await;
            tick(&ticker, n);
        }
    });
    serve(listener, app).await
}
