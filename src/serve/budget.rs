//! A bound on what an HTTP/2 connection's responses hold unsent.
//!
//! hyper's HTTP/2 server polls each response body as long as the stream
//! may buffer more — up to the client's flow-control windows and a few
//! hundred KiB per stream — and the client sets the windows. One that
//! grants the largest windows, opens every stream it may and reads
//! nothing had the server produce and keep about 70 KiB a stream,
//! whatever the body: 14 MiB for a connection of 200 streams.
//!
//! [`SendBudget`] counts the bytes of a connection's response bodies that
//! were produced but not yet written to the socket, and the socket's
//! writes bring the count down. A body's first data is always let
//! through, so that an answer of one chunk — most answers — never waits
//! behind another stream; a body is polled for more only while the count
//! is below the bound. The count may pass the bound by those first chunks
//! and by the chunks produced while it was still below (one per body
//! polled then), never by more. A stream the client stalls keeps its
//! bytes counted until it reads them: the later chunks of the client's
//! own streams wait behind it, no one else's.

use std::{
    sync::{
        Mutex, PoisonError,
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
    waiting: Mutex<Waiting>,
}

/// The wakers of the bodies waiting, one place each. A body keeps its
/// place until it is dropped, so that the list holds no more wakers than
/// there are bodies: a stream the client resets while it waits takes its
/// waker (and the task it would wake) with it.
#[derive(Debug, Default)]
struct Waiting {
    places: Vec<Option<Waker>>,
    free: Vec<usize>,
}

/// A body's place among those waiting for the budget, once it has waited.
pub(super) type Place = Option<usize>;

impl SendBudget {
    /// A bound of `limit` bytes; zero bounds nothing.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            limit: if limit == 0 { usize::MAX } else { limit },
            unsent: AtomicUsize::new(0),
            waiting: Mutex::default(),
        }
    }

    fn full(&self) -> bool {
        self.unsent.load(Ordering::Acquire) >= self.limit
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ready when a body may produce more; otherwise woken, through its
    /// `place`, when the socket has taken enough.
    pub(super) fn poll_room(&self, cx: &mut Context<'_>, place: &mut Place) -> Poll<()> {
        if !self.full() {
            return Poll::Ready(());
        }
        let mut waiting = self.waiting();
        // Checked again under the lock: `sent` takes the lock after it
        // brings the count down, so a waker stored now is woken by it.
        if !self.full() {
            return Poll::Ready(());
        }
        let waker = Some(cx.waker().clone());
        match *place {
            Some(index) => waiting.places[index] = waker,
            None => {
                let index = match waiting.free.pop() {
                    Some(index) => {
                        waiting.places[index] = waker;
                        index
                    }
                    None => {
                        waiting.places.push(waker);
                        waiting.places.len() - 1
                    }
                };
                *place = Some(index);
            }
        }
        Poll::Pending
    }

    /// A body is gone: its place is free.
    pub(super) fn leave(&self, place: Place) {
        if let Some(index) = place {
            let mut waiting = self.waiting();
            waiting.places[index] = None;
            waiting.free.push(index);
        }
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
            let wakers: Vec<Waker> = self
                .waiting()
                .places
                .iter_mut()
                .filter_map(Option::take)
                .collect();
            wakers.into_iter().for_each(Waker::wake);
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
        let mut place = None;

        assert!(budget.poll_room(&mut cx, &mut place).is_ready());
        budget.produced(60);
        assert!(
            budget.poll_room(&mut cx, &mut place).is_ready(),
            "below the bound"
        );
        // A chunk produced below the bound may pass it.
        budget.produced(60);
        assert!(budget.poll_room(&mut cx, &mut place).is_pending());
        assert!(
            budget.poll_room(&mut cx, &mut place).is_pending(),
            "stored once"
        );
        budget.sent(10);
        assert_eq!(woken.0.load(Ordering::Relaxed), 0, "still at the bound");
        budget.sent(15);
        assert_eq!(woken.0.load(Ordering::Relaxed), 1, "woken once, below it");
        assert!(budget.poll_room(&mut cx, &mut place).is_ready());
        // Bytes of frames that are not bodies' bring it down to zero only.
        budget.sent(1_000);
        budget.produced(100);
        assert!(budget.poll_room(&mut cx, &mut place).is_pending());
    }

    #[test]
    fn a_body_that_goes_away_while_waiting_leaves_no_waker_behind() {
        let budget = SendBudget::new(1);
        budget.produced(1);
        let mut cx = Context::from_waker(Waker::noop());
        // Bodies come and go while the budget stays spent: their places
        // are reused, not piled up.
        for _ in 0..1_000 {
            let mut place = None;
            assert!(budget.poll_room(&mut cx, &mut place).is_pending());
            budget.leave(place);
        }
        let (mut first, mut second) = (None, None);
        assert!(budget.poll_room(&mut cx, &mut first).is_pending());
        assert!(budget.poll_room(&mut cx, &mut second).is_pending());
        assert_eq!(budget.waiting().places.len(), 2);
    }

    #[test]
    fn a_budget_of_zero_bounds_nothing() {
        let budget = SendBudget::new(0);
        budget.produced(usize::MAX / 2);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(budget.poll_room(&mut cx, &mut None).is_ready());
    }
}
