//! A request's hold on the tables past `call`, on a thread of `serve`'s
//! workers: one per thread, shared by the requests that thread suspended.
//!
//! A request whose step suspends, or whose run goes on after its response
//! (a body watched to its end, a WebSocket connection), must keep the
//! tables alive. Holding them directly writes their reference count, which
//! every thread serving the router shares: on many cores, a line every
//! core's suspended requests move between them. On a thread that asked
//! for it (`shares::share_tables_on_this_thread`, as each of `serve`'s workers does,
//! whose connections never move), a request shares the thread's handle
//! instead, and its hold writes the handle's count, which only that
//! thread writes. The thread keeps a weak reference only: the last of its
//! requests to end lets the handle go, and with it the tables, so tables
//! a reload replaced are not kept alive by an idle worker. A request that
//! finds no handle alive makes one: one allocation, and one hold on the
//! tables for as long as the thread has requests holding them.
//!
//! Elsewhere (a multi-thread runtime, whose tasks move between threads;
//! a caller's own loop) a request holds the tables directly, as any clone
//! of the router does.

use std::{
    cell::RefCell,
    ops::Deref,
    sync::{Arc, Weak},
};

use super::Tables;

/// A hold on the compiled tables: the request's own, or its thread's,
/// shared with the other requests the thread holds them for.
#[derive(Clone)]
pub(crate) enum TablesHandle {
    Own(Arc<Tables>),
    Thread(Arc<Held>),
}

/// The tables a thread's handle holds.
pub(crate) struct Held(Arc<Tables>);

/// A thread's handles, by the tables they hold.
type Handles = Vec<(*const Tables, Weak<Held>)>;

thread_local! {
    /// The handles this thread made, on a thread that shares them (a
    /// server's worker: see `shares::share_tables_on_this_thread`).
    static HANDLES: RefCell<Handles> = const { RefCell::new(Vec::new()) };
}

impl TablesHandle {
    /// A hold on `tables`: the thread's handle if it shares one, else the
    /// request's own.
    pub(crate) fn on_this_thread(tables: &Arc<Tables>) -> Self {
        #[cfg(feature = "server")]
        let shared = crate::shares::tables_shared_on_this_thread();
        #[cfg(not(feature = "server"))]
        let shared = false;
        if !shared {
            return Self::Own(Arc::clone(tables));
        }
        HANDLES
            .try_with(|handles| {
                let mut handles = handles.borrow_mut();
                let key = Arc::as_ptr(tables);
                let alive = (handles.iter()).find(|(held, _)| *held == key);
                if let Some(held) = alive.and_then(|(_, handle)| handle.upgrade()) {
                    return Self::Thread(held);
                }
                let held = Arc::new(Held(Arc::clone(tables)));
                // A handle that has gone makes way: its tables may be
                // gone, and others put at their address.
                handles.retain(|(_, handle)| handle.strong_count() > 0);
                handles.push((key, Arc::downgrade(&held)));
                Self::Thread(held)
            })
            .unwrap_or_else(|_| Self::Own(Arc::clone(tables)))
    }
}

impl Deref for TablesHandle {
    type Target = Tables;

    #[inline(always)]
    fn deref(&self) -> &Tables {
        match self {
            Self::Own(tables) => tables,
            Self::Thread(held) => &held.0,
        }
    }
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use super::*;
    use crate::shares::share_tables_on_this_thread as share_on_this_thread;

    /// Runs `test` on a thread of its own that shares handles.
    fn on_a_sharing_thread(test: impl FnOnce() + Send + 'static) {
        std::thread::spawn(move || {
            share_on_this_thread();
            test();
        })
        .join()
        .unwrap();
    }

    fn same_handle(one: &TablesHandle, other: &TablesHandle) -> bool {
        matches!((one, other), (TablesHandle::Thread(a), TablesHandle::Thread(b)) if Arc::ptr_eq(a, b))
    }

    #[test]
    fn requests_on_a_sharing_thread_share_one_hold_on_the_tables() {
        on_a_sharing_thread(|| {
            let tables = Arc::new(Tables::default());
            let first = TablesHandle::on_this_thread(&tables);
            let more: Vec<_> = (0..10)
                .map(|_| TablesHandle::on_this_thread(&tables))
                .collect();
            assert_eq!(
                Arc::strong_count(&tables),
                2,
                "one hold for eleven requests"
            );
            assert!(more.iter().all(|handle| same_handle(handle, &first)));
            drop((first, more));
            assert_eq!(Arc::strong_count(&tables), 1, "the thread keeps no hold");
        });
    }

    #[test]
    fn each_sharing_thread_holds_the_tables_once() {
        let tables = Arc::new(Tables::default());
        let (here, there) = std::thread::scope(|scope| {
            let hold = || {
                share_on_this_thread();
                TablesHandle::on_this_thread(&tables)
            };
            let here = scope.spawn(hold);
            let there = scope.spawn(hold);
            (here.join().unwrap(), there.join().unwrap())
        });
        assert!(!same_handle(&here, &there));
        assert_eq!(Arc::strong_count(&tables), 3);
        drop((here, there));
        assert_eq!(Arc::strong_count(&tables), 1);
    }

    #[test]
    fn new_tables_get_a_handle_of_their_own_and_the_old_are_let_go() {
        on_a_sharing_thread(|| {
            let old = Arc::new(Tables::default());
            let held = TablesHandle::on_this_thread(&old);
            let new = Arc::new(Tables::default());
            let other = TablesHandle::on_this_thread(&new);
            assert!(std::ptr::eq(&*held, &*old) && std::ptr::eq(&*other, &*new));
            drop(held);
            assert_eq!(Arc::strong_count(&old), 1);
        });
    }

    #[test]
    fn elsewhere_a_request_holds_the_tables_itself() {
        let tables = Arc::new(Tables::default());
        let one = TablesHandle::on_this_thread(&tables);
        let two = TablesHandle::on_this_thread(&tables);
        assert!(matches!(
            (&one, &two),
            (TablesHandle::Own(_), TablesHandle::Own(_))
        ));
        assert_eq!(Arc::strong_count(&tables), 3);
    }
}
