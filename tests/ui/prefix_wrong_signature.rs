// A router prefix that takes a `Request<String>`: the router's requests carry
// pronghorn's `Body`.
use std::ops::ControlFlow;

use http::{Request, StatusCode};
use pronghorn::{Router, router::Route};

fn main() {
    let _ = Router::new().prefix("/", |request: Request<String>, _: &mut Route<'_>| {
        ControlFlow::<StatusCode, _>::Continue(request)
    });
}
