//! The connection cap: one slot per open connection and, once every slot
//! is taken, room made for a new client by closing the connection that
//! has been idle longest.
//!
//! A cap on connections alone lets a crowd of idle ones — sockets opened
//! and left silent, keep-alive connections never used again — take every
//! slot and keep new clients waiting in the listen backlog until they time
//! out. As nginx reuses keep-alive connections, [`Slots`] sheds instead:
//! when a new client arrives at the cap, the connection idle longest
//! (between two requests, before its first byte, or over HTTP/2 with no
//! stream open, and with nothing left to send) is closed and the new
//! client takes its slot. A connection in the middle of a request, or
//! still sending an answer, is never shed; while none is idle, the new
//! client waits for a slot.
//!
//! How long a connection has been idle is what its watchdog saw at its
//! last tick ([`ConnectionWatch::quiet_since`]): no clock is read per
//! request.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    task::AbortHandle,
};

use super::timeouts::ConnectionWatch;

/// How often a new client waiting at the cap looks again for a connection
/// to shed, while none is idle.
pub(super) const SHED_RETRY: Duration = Duration::from_millis(100);

/// The server's connection slots, and the connections that hold them.
#[derive(Debug)]
pub(super) struct Slots {
    free: Arc<Semaphore>,
    open: Mutex<Open>,
}

/// The connections open, by slot.
#[derive(Debug, Default)]
struct Open {
    entries: Vec<Option<Entry>>,
    vacant: Vec<usize>,
}

#[derive(Debug)]
struct Entry {
    watch: Arc<ConnectionWatch>,
    /// The connection's task, once spawned; `None` once it was shed.
    task: Option<AbortHandle>,
}

/// A connection's slot, given back when dropped: it goes with the socket,
/// so an upgraded connection keeps it until the socket closes.
#[derive(Debug)]
pub(super) struct Slot {
    slots: Arc<Slots>,
    index: usize,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.open();
        open.entries[self.index] = None;
        open.vacant.push(self.index);
    }
}

impl Slots {
    /// `max` slots (at least one).
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            free: Arc::new(Semaphore::new(max.clamp(1, Semaphore::MAX_PERMITS))),
            open: Mutex::default(),
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A free slot now, if there is one.
    pub(super) fn try_free(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.free).try_acquire_owned().ok()
    }

    /// A free slot, once there is one.
    pub(super) async fn free(&self) -> OwnedSemaphorePermit {
        Arc::clone(&self.free)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }

    /// Gives the slot of `permit` to the connection `watch` follows.
    pub(super) fn occupy(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
        watch: &Arc<ConnectionWatch>,
    ) -> Slot {
        let entry = Entry {
            watch: Arc::clone(watch),
            task: None,
        };
        let mut open = self.open();
        let index = match open.vacant.pop() {
            Some(index) => {
                open.entries[index] = Some(entry);
                index
            }
            None => {
                open.entries.push(Some(entry));
                open.entries.len() - 1
            }
        };
        Slot {
            slots: Arc::clone(self),
            index,
            _permit: permit,
        }
    }

    /// The connection of `watch`, in the slot `index`, runs in `task`
    /// (unless it already ended).
    pub(super) fn started(&self, index: usize, watch: &Arc<ConnectionWatch>, task: AbortHandle) {
        let mut open = self.open();
        if let Some(Some(entry)) = open.entries.get_mut(index) {
            if Arc::ptr_eq(&entry.watch, watch) {
                entry.task = Some(task);
            }
        }
    }

    /// Closes the connection idle longest, if one is idle: its slot is
    /// free once its task has let go of the socket. Whether one was.
    pub(super) fn shed_idle_longest(&self) -> bool {
        let mut open = self.open();
        let longest = open
            .entries
            .iter_mut()
            .flatten()
            .filter(|entry| entry.task.is_some())
            .filter_map(|entry| Some((entry.watch.quiet_since()?, entry)))
            .min_by_key(|(since, _)| *since);
        let Some((_, entry)) = longest else {
            return false;
        };
        if let Some(task) = entry.task.take() {
            task.abort();
        }
        true
    }
}

impl Slot {
    /// Where the slot stands among the server's.
    pub(super) fn index(&self) -> usize {
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_connection_idle_longest_is_shed_and_a_busy_one_never() {
        let slots = Slots::new(3);
        let watches: Vec<_> = (0..3)
            .map(|n| Arc::new(ConnectionWatch::new(0, 1000 - n * 100)))
            .collect();
        let mut tasks = Vec::new();
        let mut held = Vec::new();
        for watch in &watches {
            let slot = slots.occupy(slots.try_free().unwrap(), watch);
            let task = tokio::spawn(std::future::pending::<()>());
            slots.started(slot.index(), watch, task.abort_handle());
            tasks.push(task);
            held.push(slot);
        }
        assert!(slots.try_free().is_none(), "every slot is taken");
        // The third has been quiet longest, but it is answering a request;
        // then it waits for its next one with its answer not all sent.
        watches[2].head_received();
        assert!(slots.shed_idle_longest());
        let shed = tasks.remove(1);
        assert!(shed.await.unwrap_err().is_cancelled(), "the second is shed");
        watches[2].head_awaited();
        let _ = watches[2].writing(std::task::Poll::<()>::Pending);
        assert!(slots.shed_idle_longest());
        let shed = tasks.remove(0);
        assert!(shed.await.unwrap_err().is_cancelled(), "then the first");
        assert!(!slots.shed_idle_longest(), "none idle is left");
        // A slot is free once the connection lets go of it.
        drop(held.remove(0));
        assert!(slots.try_free().is_some());
    }
}
