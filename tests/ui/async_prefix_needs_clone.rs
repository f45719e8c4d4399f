// An asynchronous prefix over a service that is not `Clone`.
use std::{
    convert::Infallible,
    future::Ready,
    ops::ControlFlow,
    task::{Context, Poll},
};

use http::{Request, Response};
use pronghorn::PrefixLayer;
use tower::{Service, ServiceBuilder, ServiceExt};

struct Single;

impl Service<Request<String>> for Single {
    type Response = Response<String>;
    type Error = Infallible;
    type Future = Ready<Result<Response<String>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<String>) -> Self::Future {
        std::future::ready(Ok(Response::new(String::new())))
    }
}

fn main() {
    let service = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: Request<String>| async move {
            ControlFlow::<Response<String>, _>::Continue(request)
        }))
        .service(Single);
    let _ = ServiceExt::oneshot(service, Request::new(String::new()));
}
