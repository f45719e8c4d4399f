//! Polling as an executor does, for the checks of this folder: a future
//! is polled again only once it has woken its waker; and the suspension a
//! step's future makes.

use std::{
    cell::Cell,
    future::Future,
    pin::{Pin, pin},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
};

/// A waker that counts its wake-ups (also `tests/common`'s).
#[derive(Default)]
pub struct CountingWaker(AtomicUsize);

impl CountingWaker {
    /// The counter and a waker that counts on it.
    pub fn new() -> (Arc<Self>, Waker) {
        let counter = Arc::new(Self::default());
        let waker = Waker::from(counter.clone());
        (counter, waker)
    }

    /// The wake-ups so far.
    pub fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `future` as an executor would: again only once it has been woken.
/// Answers its output and how often it was pending.
pub fn drive<F: Future>(future: F) -> (F::Output, usize) {
    let (wakes, waker) = CountingWaker::new();
    let mut future = pin!(future);
    let mut pending = 0;
    loop {
        let before = wakes.wakes();
        if let Poll::Ready(output) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
            return (output, pending);
        }
        pending += 1;
        assert!(
            wakes.wakes() > before,
            "pending without a wake-up: it would never be polled again"
        );
    }
}

/// A step's suspension: pending on its first poll, after waking its waker;
/// ready on the second, when it counts itself (see [`Suspension::count`]); and a
/// panic if polled again after that.
#[derive(Default)]
pub struct Suspension {
    polls: u8,
}

thread_local! {
    /// How many suspensions have ended on this thread since the last reset.
    static SUSPENDED: Cell<usize> = const { Cell::new(0) };
}

impl Suspension {
    /// Starts counting ended suspensions from zero.
    pub fn reset() {
        SUSPENDED.set(0);
    }

    /// The suspensions ended since the last reset.
    pub fn count() -> usize {
        SUSPENDED.get()
    }
}

impl Future for Suspension {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls += 1;
        match self.polls {
            1 => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            2 => {
                SUSPENDED.set(SUSPENDED.get() + 1);
                Poll::Ready(())
            }
            _ => panic!("a step's future was polled after it answered"),
        }
    }
}
