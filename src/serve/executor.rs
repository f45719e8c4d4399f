//! The executor hyper hands each HTTP/2 stream to: a stream is polled once
//! where the connection accepted it, and becomes a task only if it waits.
//!
//! hyper spawns every HTTP/2 request as a task of its own. A request the
//! pipeline answers in its first poll then costs a task's allocation and
//! scheduling, and its response goes to the socket on a later turn of the
//! connection, often alone. Polled in place, a turn's responses are all
//! queued before the connection writes, and go out together (see
//! [`CoalescingIo`](super::io::CoalescingIo)).
//!
//! A stream that is not finished after that poll is spawned as hyper would
//! have spawned it; its task polls it again with the task's waker (a
//! future registers the waker of its latest poll, so nothing is lost). A
//! panic in the first poll ends that stream alone, as it would in a task:
//! the stream is dropped, which resets it.

use std::{
    future::Future,
    panic::{AssertUnwindSafe, catch_unwind},
    pin::Pin,
    task::{Context, Poll, Waker},
};

/// Polls each future once in place, and spawns it on tokio if it waits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InPlace;

impl<F> hyper::rt::Executor<F> for InPlace
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        let mut future = Box::pin(future);
        if poll_once(future.as_mut()) {
            tokio::spawn(future);
        }
    }
}

/// Polls `future` once with a waker that does nothing; `true` if it is
/// still to be polled (it waits), `false` once it finished or panicked.
fn poll_once<F: Future>(future: Pin<&mut F>) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    match catch_unwind(AssertUnwindSafe(|| future.poll(&mut cx))) {
        Ok(Poll::Pending) => true,
        Ok(Poll::Ready(_)) => false,
        Err(_) => {
            tracing::debug!("pronghorn: an HTTP/2 stream panicked; it is reset");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Executor;
    use std::sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    };

    #[tokio::test]
    async fn a_ready_future_runs_in_place_and_a_waiting_one_on_a_task() {
        let polls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&polls);
        InPlace.execute(async move {
            counted.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(polls.load(Ordering::SeqCst), 1, "finished in `execute`");

        let (send, receive) = tokio::sync::oneshot::channel::<()>();
        let (done, finished) = tokio::sync::oneshot::channel();
        InPlace.execute(async move {
            receive.await.unwrap();
            done.send(()).unwrap();
        });
        send.send(()).unwrap();
        finished
            .await
            .expect("the waiting future finished on its task");
    }

    #[tokio::test]
    async fn a_panic_in_the_first_poll_drops_that_future_alone() {
        struct Dropped(Arc<AtomicUsize>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let guard = Dropped(Arc::clone(&drops));
        InPlace.execute(async move {
            let _guard = guard;
            panic!("a stream's panic");
        });
        assert_eq!(drops.load(Ordering::SeqCst), 1, "its state was dropped");
    }
}
