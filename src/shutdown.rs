//! The server's graceful shutdown: the signal its accept loop and its
//! connections share, and the handle and watch through which an upgraded
//! (WebSocket) connection, which hyper hands over and forgets, sees it.
//! Below `serve/` and `ws/`, which both use it, so that neither imports the
//! other.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicUsize, Ordering},
};
#[cfg(feature = "ws")]
use std::{pin::Pin, task::Context};

use tokio::sync::{Notify, futures::OwnedNotified};

/// The graceful shutdown signal, shared by the accept loop and its
/// connections.
#[derive(Debug, Default)]
pub(crate) struct Shutdown {
    /// Set once the signal came, before the connections are woken.
    signalled: AtomicBool,
    /// Wakes every connection that waits; each takes its [`OwnedNotified`]
    /// before it is spawned, so none misses the signal.
    notify: Arc<Notify>,
    /// Upgraded connections (WebSockets) still open: hyper hands them over
    /// and forgets them, so they are counted here for shutdown to wait on.
    upgraded: AtomicUsize,
    /// Woken when the last upgraded connection closes.
    upgraded_closed: Notify,
}

impl Shutdown {
    pub(crate) fn signal(&self) {
        self.signalled.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether the signal came.
    pub(crate) fn is_signalled(&self) -> bool {
        self.signalled.load(Ordering::SeqCst)
    }

    /// A wake-up at the signal, registered from now on.
    pub(crate) fn notified(&self) -> OwnedNotified {
        Arc::clone(&self.notify).notified_owned()
    }

    /// Returns once no upgraded connection is open.
    pub(crate) async fn upgraded_closed(&self) {
        loop {
            let closed = self.upgraded_closed.notified();
            if self.upgraded.load(Ordering::SeqCst) == 0 {
                return;
            }
            closed.await;
        }
    }
}

/// The server's shutdown signal, as an upgraded connection watches it: a
/// WebSocket closes with `1001 Going Away` when the server shuts down.
/// `serve` puts it in the extensions of the requests that ask for an
/// upgrade.
#[cfg(feature = "ws")]
#[derive(Debug, Clone)]
pub(crate) struct ShutdownHandle(Arc<Shutdown>);

#[cfg(feature = "ws")]
impl ShutdownHandle {
    /// The handle of the server's `shutdown`.
    pub(crate) fn new(shutdown: Arc<Shutdown>) -> Self {
        Self(shutdown)
    }

    /// A future-like watch of the signal, registered from now on; while
    /// it lives, graceful shutdown waits for it to be dropped (until the
    /// shutdown deadline).
    pub(crate) fn watch(&self) -> ShutdownWatch {
        self.0.upgraded.fetch_add(1, Ordering::SeqCst);
        ShutdownWatch {
            notified: Box::pin(Arc::clone(&self.0.notify).notified_owned()),
            shutdown: Arc::clone(&self.0),
        }
    }
}

/// Watches the server's shutdown signal ([`ShutdownHandle::watch`]).
#[cfg(feature = "ws")]
#[derive(Debug)]
pub(crate) struct ShutdownWatch {
    notified: Pin<Box<OwnedNotified>>,
    shutdown: Arc<Shutdown>,
}

#[cfg(feature = "ws")]
impl ShutdownWatch {
    /// Whether the server is shutting down; if not, the task is woken when
    /// it does.
    pub(crate) fn poll_signalled(&mut self, cx: &mut Context<'_>) -> bool {
        self.shutdown.is_signalled() || self.notified.as_mut().poll(cx).is_ready()
    }
}

#[cfg(feature = "ws")]
impl Drop for ShutdownWatch {
    fn drop(&mut self) {
        if self.shutdown.upgraded.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.shutdown.upgraded_closed.notify_waiters();
        }
    }
}
