//! A bound on what an HTTP/2 connection's responses hold unsent.
//!
//! hyper's HTTP/2 server polls each response body as long as the stream
//! may buffer more — up to the client's flow-control windows and a few
//! hundred KiB per stream — and the client sets the windows. One that
//! grants the largest windows, opens every stream it may and reads
//! nothing had the server produce and keep about 70 KiB a stream, 14 MiB a
//! connection, whatever the body.
//!
//! [`SendBudget`] counts the bytes of a connection's response bodies that
//! were produced but not yet written to the socket: a body is polled for
//! more only while the count is below the bound, and the socket's writes
//! bring it down. The count may pass the bound by the chunks produced
//! while it was still below (one per body polled then), never by more.
//! A stream the client stalls keeps its bytes counted until it reads
//! them: the client's own streams wait behind it, no one else's.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll, Waker},
};

/// The bytes a connection's response bodies produced and its socket has
/// not taken yet, and the bodies waiting for them to go down.
#[derive(Debug)]
pub(super) struct SendBudget {
    limit: usize,
    unsent: AtomicUsize,
    waiting: Mutex<Vec<Waker>>,
}

impl SendBudget {
    /// A bound of `limit` bytes; zero bounds nothing.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            limit: if limit == 0 { usize::MAX } else { limit },
            unsent: AtomicUsize::new(0),
            waiting: Mutex::new(Vec::new()),
        }
    }

    fn full(&self) -> bool {
        self.unsent.load(Ordering::Acquire) >= self.limit
    }

    /// Ready when a body may produce more; otherwise woken when the socket
    /// has taken enough.
    pub(super) fn poll_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.full() {
            return Poll::Ready(());
        }
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        // Checked again under the lock: `sent` takes the lock after it
        // brings the count down, so a waker stored now is woken by it.
        if !self.full() {
            return Poll::Ready(());
        }
        if !waiting.iter().any(|waker| waker.will_wake(cx.waker())) {
            waiting.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// A body produced `bytes`.
    pub(super) fn produced(&self, bytes: usize) {
        self.unsent.fetch_add(bytes, Ordering::AcqRel);
    }

    /// The socket took `bytes` (frame headers and control frames
    /// included: the count never goes below zero).
    #[inline]
    pub(super) fn sent(&self, bytes: usize) {
        if self.unsent.load(Ordering::Relaxed) == 0 {
            return;
        }
        let Ok(before) = self
            .unsent
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |unsent| {
                (unsent > 0).then(|| unsent.saturating_sub(bytes))
            })
        else {
            return;
        };
        if before >= self.limit && before.saturating_sub(bytes) < self.limit {
            let waiting =
                std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner()));
            waiting.into_iter().for_each(Waker::wake);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{sync::Arc, task::Wake};

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_body_waits_while_the_budget_is_spent_and_is_woken_when_the_socket_takes_bytes() {
        let budget = SendBudget::new(100);
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = Context::from_waker(&waker);

        assert!(budget.poll_room(&mut cx).is_ready());
        budget.produced(60);
        assert!(budget.poll_room(&mut cx).is_ready(), "below the bound");
        // A chunk produced below the bound may pass it.
        budget.produced(60);
        assert!(budget.poll_room(&mut cx).is_pending());
        assert!(budget.poll_room(&mut cx).is_pending(), "stored once");
        budget.sent(10);
        assert_eq!(woken.0.load(Ordering::Relaxed), 0, "still at the bound");
        budget.sent(15);
        assert_eq!(woken.0.load(Ordering::Relaxed), 1, "woken once, below it");
        assert!(budget.poll_room(&mut cx).is_ready());
        // Bytes of frames that are not bodies' bring it down to zero only.
        budget.sent(1_000);
        budget.produced(100);
        assert!(budget.poll_room(&mut cx).is_pending());
    }

    #[test]
    fn a_budget_of_zero_bounds_nothing() {
        let budget = SendBudget::new(0);
        budget.produced(usize::MAX / 2);
        assert!(
            budget
                .poll_room(&mut Context::from_waker(Waker::noop()))
                .is_ready()
        );
    }
}
