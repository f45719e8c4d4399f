//! The response future of a compiled router: ready with the response
//! when `call` answered, or the run's state once a step suspended.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use http::Response;

use crate::{
    body::Body,
    monitor::{sent_head, watch},
    router::request::compiled::{Tables, handle::TablesHandle},
};

use super::Pipeline;

/// Response future of [`CompiledRouter`](crate::router::CompiledRouter).
///
/// The router runs a request's pipeline in `call`, as far as its steps
/// answer synchronously: a fully synchronous request is already answered,
/// and the future is ready on its first poll without having held anything
/// but the response. Only when a step returns a future is the pipeline's
/// state moved into the future (one box, beside the step's own boxed
/// future), and polling continues from that step.
pub struct ResponseFuture {
    kind: Kind,
}

enum Kind {
    Ready(Option<Response<Body>>),
    Running(Running),
}

/// A request whose run suspended: its state, and its thread's hold on the
/// router's tables. Dropped before the run ended, it is cancelled (the
/// response future has no drop of its own: a request answered at once
/// pays for none).
struct Running {
    router: TablesHandle,
    /// `None` once the state has gone on with the response.
    pipeline: Option<Box<Pipeline>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        // Dropped while a panic unwinds, a monitor that panicked in turn
        // would abort the process: the cancellation goes unseen then.
        if std::thread::panicking() {
            return;
        }
        if let Some(pipeline) = &mut self.pipeline {
            pipeline.cancel(&self.router);
        }
    }
}

impl ResponseFuture {
    /// The future of a request answered in its first run: the response
    /// moves into it once, on its way out.
    #[inline(always)]
    pub(crate) fn ready(response: Option<Response<Body>>) -> Self {
        Self {
            kind: Kind::Ready(response),
        }
    }

    /// The future of a request whose pending step has been polled once in
    /// `call`: it is polled next, with the caller's waker, on the first
    /// poll of the future.
    // Out of line: only a suspension comes here.
    #[inline(never)]
    pub(crate) fn running(router: &Arc<Tables>, pipeline: Pipeline) -> Self {
        Self {
            kind: Kind::Running(Running {
                router: TablesHandle::on_this_thread(router),
                pipeline: Some(Box::new(pipeline)),
            }),
        }
    }
}

impl Future for ResponseFuture {
    type Output = Result<Response<Body>, Infallible>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.kind {
            Kind::Ready(response) => {
                Poll::Ready(Ok(response.take().expect("future polled after completion")))
            }
            Kind::Running(Running {
                router,
                pipeline: state,
            }) => {
                let pipeline = state.as_mut().expect("future polled after completion");
                ready!(pipeline.run(router, cx));
                if !pipeline.goes_on() {
                    let response = pipeline.response.take();
                    return Poll::Ready(Ok(response.expect("future polled after completion")));
                }
                // The run goes on with the response: its state moves on
                // with it.
                let pipeline = state.take().expect("present above");
                Poll::Ready(Ok(go_on(router, pipeline)))
            }
        }
    }
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ResponseFuture");
        match &self.kind {
            Kind::Ready(_) => debug.field("state", &"Ready"),
            Kind::Running(Running {
                pipeline: Some(pipeline),
                ..
            }) => {
                if let Some((method, path)) = pipeline.method_and_path() {
                    debug.field("method", method).field("path", &path);
                }
                debug.field("stage", &pipeline.stage)
            }
            Kind::Running(_) => debug.field("state", &"Done"),
        };
        debug.finish()
    }
}

/// Hands the response out of a request whose run goes on after it: a
/// WebSocket connection to spawn (its monitors run when it ends), or a
/// body to watch for the monitors that asked to hear of its end. The
/// request's state goes with the connection or the body; those monitors
/// see the status again, not the headers, which have gone out.
#[cold]
pub(super) fn go_on(router: &TablesHandle, mut pipeline: Box<Pipeline>) -> Response<Body> {
    #[cfg(feature = "ws")]
    if let Some(connection) = pipeline.connection.take() {
        let response = pipeline.response.take().expect("a step answered");
        pipeline.response = Some(sent_head(&response));
        if pipeline.clock.is_none() {
            tokio::spawn(connection);
        } else {
            let router = router.clone();
            tokio::spawn(async move {
                let failure = handler_failure(connection).await;
                pipeline.connection_ended(&router, failure);
            });
        }
        return response;
    }
    let mut response = pipeline.response.take().expect("a step answered");
    pipeline.response = Some(sent_head(&response));
    let start = (pipeline.clock.as_ref())
        .expect("a request with monitors has a clock")
        .fixed_start();
    let router = router.clone();
    watch(&mut response, start, move |end| {
        pipeline.body_ended(&router, end);
    });
    response
}

/// Runs a WebSocket connection to its end: the handler's panic, if it
/// panicked, logged, as its failure.
#[cfg(feature = "ws")]
async fn handler_failure(
    mut connection: crate::step::BoxFuture<()>,
) -> Option<crate::monitor::route::Failure> {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let run = std::future::poll_fn(|cx| {
        match catch_unwind(AssertUnwindSafe(|| connection.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) => Poll::Ready(None),
            Err(panic) => Poll::Ready(Some(panic)),
        }
    });
    let panic = run.await?;
    let message = crate::panic::panic_message(panic.as_ref()).to_owned();
    error_limited!(panic = %message, "pronghorn: a WebSocket handler panicked");
    Some(crate::monitor::route::Failure::Panic {
        step: "handler",
        message,
    })
}
