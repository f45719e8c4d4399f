// A `Router` handed to `serve` before `compile()`.
use pronghorn::{Router, serve};

async fn run(listener: tokio::net::TcpListener) {
    let router = Router::new().get("/", || "hello");
    let _ = serve(listener, router);
}

fn main() {
    let _ = run;
}
