// A checking prefix answering `Err(StatusCode)` in front of a service whose
// body cannot be built from pronghorn's `Body`.
use std::convert::Infallible;

use http::{Request, Response, StatusCode};
use pronghorn::PrefixLayer;
use tower::{ServiceBuilder, ServiceExt, service_fn};

fn main() {
    let service = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: &mut Request<String>| {
            match request.headers().contains_key("authorization") {
                true => Ok(()),
                false => Err(StatusCode::UNAUTHORIZED),
            }
        }))
        .service(service_fn(|_: Request<String>| async {
            Ok::<_, Infallible>(Response::new(String::new()))
        }));
    let _ = ServiceExt::oneshot(service, Request::new(String::new()));
}
