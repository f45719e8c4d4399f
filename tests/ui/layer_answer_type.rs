// A prefix layer whose early answer is not the inner service's response.
use std::{convert::Infallible, ops::ControlFlow};

use http::{Request, Response, StatusCode};
use pronghorn::PrefixLayer;
use tower::{ServiceBuilder, ServiceExt, service_fn};

fn main() {
    let service = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: Request<String>| {
            if request.headers().contains_key("authorization") {
                ControlFlow::Continue(request)
            } else {
                ControlFlow::Break(StatusCode::UNAUTHORIZED)
            }
        }))
        .service(service_fn(|_: Request<String>| async {
            Ok::<_, Infallible>(Response::new(String::new()))
        }));
    let _ = ServiceExt::oneshot(service, Request::new(String::new()));
}
