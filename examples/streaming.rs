//! Large and long answers, and an upload: `/ticks` sends an event every
//! 200 ms, five in all, and a keep-alive comment if the stream is ever
//! quiet for 15 s; `/report` sends a 4 MiB report kept in memory, shared by
//! every answer (a `Bytes` clone, no copy; a client that reads slowly
//! holds none of it); `POST /upload` counts the bytes of a body of up to
//! 8 MiB.
//!
//! ```text
//! cargo run --example streaming
//! curl -N http://127.0.0.1:3001/ticks
//! curl -s http://127.0.0.1:3001/report | wc -c
//! head -c 100000 /dev/zero | curl --data-binary @- http://127.0.0.1:3001/upload
//! ```

use std::{convert::Infallible, time::Duration};

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use pronghorn::{
    CompiledRouter, Router, serve,
    sse::{Event, Sse},
};

/// The application: also used by the examples' test.
pub fn app(interval: Duration) -> CompiledRouter {
    let report = Bytes::from(vec![b'x'; 4 << 20]);
    Router::new()
        .get("/report", move || report.clone())
        .post("/upload", |body: Bytes| format!("{} bytes\n", body.len()))
        .body_limit(8 << 20)
        .get("/ticks", move || {
            let ticks = stream::unfold(0u32, move |n| async move {
                if n == 5 {
                    return None;
                }
                tokio::time::sleep(interval).await;
                Some((n, n + 1))
            })
            .map(|n| {
                Ok::<_, Infallible>(
                    Event::default()
                        .event("tick")
                        .id(&n.to_string())
                        .data(&format!("tick {n}")),
                )
            });
            Sse::new(ticks).keep_alive(Duration::from_secs(15))
        })
        .compile()
        .expect("the routes are valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::var("PRONGHORN_ADDR").unwrap_or_else(|_| "127.0.0.1:3001".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    serve(listener, app(Duration::from_millis(200))).await
}
