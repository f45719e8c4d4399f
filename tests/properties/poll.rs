//! Polling as an executor does, for the checks of this folder: a future
//! is polled again only once it has woken its waker.

use std::{
    future::Future,
    pin::pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
};

/// Notes that it was woken.
#[derive(Default)]
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Polls `future` as an executor would: again only once it has been woken.
/// Answers its output and how often it was pending.
pub fn drive<F: Future>(future: F) -> (F::Output, usize) {
    let woken = Arc::new(Woken::default());
    let waker = Waker::from(woken.clone());
    let mut future = pin!(future);
    let mut pending = 0;
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
            return (output, pending);
        }
        pending += 1;
        assert!(
            woken.0.swap(false, Ordering::Relaxed),
            "pending without a wake-up: it would never be polled again"
        );
    }
}
