// A handler whose answer is not a response pronghorn knows.
use pronghorn::Router;

struct Report;

fn main() {
    let _ = Router::new().get("/report", || Report);
}
