//! Helpers shared by the integration tests: an event log, a gate future
//! whose waker the test fires, and a counting waker.
#![allow(dead_code, reason = "each test crate uses some of the helpers")]

// The counting waker is the property checks' (the fuzz targets build that
// file without this one's dependencies).
#[path = "../properties/poll.rs"]
mod poll;
// Not every test crate counts wake-ups.
#[allow(unused_imports, reason = "each test crate uses some of them")]
pub use poll::CountingWaker;

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll, Waker},
};

/// An ordered record of what ran.
#[derive(Clone, Default)]
pub struct Events(Arc<Mutex<Vec<String>>>);

impl Events {
    pub fn push(&self, event: impl Into<String>) {
        self.0.lock().unwrap().push(event.into());
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// `N` handles on the same log, one for each step that writes to it.
    pub fn handles<const N: usize>(&self) -> [Events; N] {
        std::array::from_fn(|_| self.clone())
    }
}

#[derive(Default)]
struct GateState {
    open: bool,
    polls: usize,
    waker: Option<Waker>,
}

/// A future that stays pending until the test opens it, counting its polls.
#[derive(Clone, Default)]
pub struct Gate(Arc<Mutex<GateState>>);

impl Gate {
    pub fn wait(&self) -> GateFuture {
        GateFuture(self.clone())
    }

    /// Opens the gate and fires the waker stored by the last poll.
    pub fn open(&self) {
        let waker = {
            let mut state = self.0.lock().unwrap();
            state.open = true;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub fn polls(&self) -> usize {
        self.0.lock().unwrap().polls
    }

    pub fn is_waiting(&self) -> bool {
        let state = self.0.lock().unwrap();
        !state.open && state.waker.is_some()
    }
}

pub struct GateFuture(Gate);

impl Future for GateFuture {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = (self.0).0.lock().unwrap();
        state.polls += 1;
        if state.open {
            Poll::Ready(())
        } else {
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

/// Polls `future` once with a waker that does nothing.
pub fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Opens an HTTP/1.1 connection to `address` with hyper's client; the
/// connection task runs on the current runtime.
pub async fn connect<B>(address: std::net::SocketAddr) -> hyper::client::conn::http1::SendRequest<B>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    sender
}

/// The events pronghorn logs on this thread while it lives, each as its
/// fields (`message=… step="handler" `), preceded by the fields of the
/// spans it was logged in (`in method=GET uri=/x: message=…`): for checking
/// that a log names what went wrong, and where. A subscriber written here,
/// `tracing`'s trait and nothing more, rather than a formatting crate for
/// one test helper.
///
/// One subscriber is the global default for the whole test binary, and
/// writes to the capture of the thread the event happens on. Subscribers
/// set and dropped per test, as `set_default` does, change the interest
/// `tracing` caches for each call site while other tests log in parallel,
/// and an event could be lost.
pub struct Log {
    lines: Arc<Mutex<Vec<String>>>,
}

thread_local! {
    /// Where this thread's events go.
    static CAPTURE: std::cell::RefCell<Option<ThreadCapture>> =
        const { std::cell::RefCell::new(None) };
}

/// One thread's capture: its events, the fields of the spans made on it
/// (a span's id being its index + 1) and the ids of those entered,
/// innermost last.
struct ThreadCapture {
    lines: Arc<Mutex<Vec<String>>>,
    spans: Vec<String>,
    entered: Vec<u64>,
}

impl Log {
    /// Captures this thread's events from now until dropped.
    pub fn capture() -> Self {
        static INSTALLED: std::sync::Once = std::sync::Once::new();
        INSTALLED.call_once(|| {
            tracing::subscriber::set_global_default(Capture)
                .expect("no other global subscriber in the tests");
        });
        let lines = Arc::new(Mutex::new(Vec::new()));
        CAPTURE.with(|capture| {
            *capture.borrow_mut() = Some(ThreadCapture {
                lines: lines.clone(),
                spans: Vec::new(),
                entered: Vec::new(),
            })
        });
        Self { lines }
    }

    /// The events logged so far, emptied.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lines.lock().unwrap())
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        CAPTURE.with(|capture| capture.borrow_mut().take());
    }
}

/// The global subscriber: each event goes to the capture of its thread,
/// if it has one. Threads without one keep nothing.
struct Capture;

/// The id of a span made on a thread without a capture.
const UNCAPTURED: u64 = u64::MAX;

/// Fields written out as `name=value `.
struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let id = CAPTURE.with(|capture| {
            let mut capture = capture.borrow_mut();
            let Some(capture) = capture.as_mut() else {
                return UNCAPTURED;
            };
            let mut fields = Fields(String::new());
            span.record(&mut fields);
            capture.spans.push(fields.0);
            capture.spans.len() as u64
        });
        tracing::span::Id::from_u64(id)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        CAPTURE.with(|capture| {
            let capture = capture.borrow();
            let Some(capture) = capture.as_ref() else {
                return;
            };
            let mut fields = Fields(String::new());
            if !capture.entered.is_empty() {
                fields.0.push_str("in ");
                for id in &capture.entered {
                    if let Some(span) = capture.spans.get(*id as usize - 1) {
                        fields.0.push_str(span);
                    }
                }
                fields.0.push_str(": ");
            }
            event.record(&mut fields);
            capture.lines.lock().unwrap().push(fields.0);
        });
    }

    fn enter(&self, span: &tracing::span::Id) {
        CAPTURE.with(|capture| {
            if let Some(capture) = capture.borrow_mut().as_mut() {
                capture.entered.push(span.into_u64());
            }
        });
    }

    fn exit(&self, span: &tracing::span::Id) {
        CAPTURE.with(|capture| {
            if let Some(capture) = capture.borrow_mut().as_mut() {
                let entered = &mut capture.entered;
                if let Some(at) = entered.iter().rposition(|id| *id == span.into_u64()) {
                    entered.remove(at);
                }
            }
        });
    }
}

/// Serves `router` with `serve`, as `configure` sets it up, on a new
/// loopback port, on a task of the current runtime: the address.
#[cfg(feature = "server")]
pub async fn serve_on_loopback(
    router: pronghorn::CompiledRouter,
    configure: impl FnOnce(
        pronghorn::Serve<pronghorn::CompiledRouter>,
    ) -> pronghorn::Serve<pronghorn::CompiledRouter>,
) -> std::net::SocketAddr {
    use std::future::IntoFuture;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(configure(pronghorn::serve(listener, router)).into_future());
    address
}

/// This process's resident memory, in KiB: a server on a task of the test
/// runs in it (Linux).
pub fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
