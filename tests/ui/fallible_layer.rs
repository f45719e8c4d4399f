// A layer whose service can fail (tower's `TimeoutLayer`) given to the
// router as it is: the router answers every request, so the compiler names
// the fix, `HandleErrorLayer`.
use std::time::Duration;

use pronghorn::Router;
use tower::timeout::TimeoutLayer;

fn main() {
    let _ = Router::new()
        .get("/", || "hello")
        .layer(TimeoutLayer::new(Duration::from_secs(1)));
}
