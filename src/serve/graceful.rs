//! Graceful shutdown: on the server's signal, each connection finishes
//! the requests in flight and closes.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    task::{Context, Poll, Waker},
};

use pin_project_lite::pin_project;
use tokio::sync::{Notify, futures::OwnedNotified};

use super::timeouts::CloseGracefully;

/// The graceful shutdown signal, shared by the accept loop and its
/// connections.
#[derive(Debug, Default)]
pub(super) struct Shutdown {
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
    pub(super) fn signal(&self) {
        self.signalled.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether the signal came.
    fn is_signalled(&self) -> bool {
        self.signalled.load(Ordering::SeqCst)
    }

    /// Returns once no upgraded connection is open.
    pub(super) async fn upgraded_closed(&self) {
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
pub(crate) struct ShutdownHandle(pub(super) Arc<Shutdown>);

#[cfg(feature = "ws")]
impl ShutdownHandle {
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

pin_project! {
    /// A connection that shuts down gracefully on the [`Shutdown`] signal:
    /// it finishes the requests in flight and closes.
    ///
    /// hyper-util's `GracefulShutdown` polls a `watch` channel's `changed`
    /// future at every poll of the connection, a lock and an unlock of its
    /// `Notify` each time: once a request without pipelining, once a
    /// request that suspends. Here the signal is polled once with each
    /// waker the connection's task is polled with (one task, so once), and
    /// the flag read at every other poll: one load.
    pub(super) struct Graceful<C> {
        #[pin]
        connection: C,
        #[pin]
        signal: OwnedNotified,
        shutdown: Arc<Shutdown>,
        // The waker the signal holds; `None` before the first poll.
        registered: Option<Waker>,
        // Whether the connection was told to shut down.
        told: bool,
        // How to tell it: the connection type's own `graceful_shutdown`.
        shut_down: fn(Pin<&mut C>),
    }
}

impl<C> Graceful<C> {
    pub(super) fn new(connection: C, shutdown: &Arc<Shutdown>, shut_down: fn(Pin<&mut C>)) -> Self {
        Self {
            connection,
            signal: Arc::clone(&shutdown.notify).notified_owned(),
            shutdown: Arc::clone(shutdown),
            registered: None,
            told: false,
            shut_down,
        }
    }
}

impl<C: Future> Future for Graceful<C> {
    type Output = C::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let mut this = self.project();
        if !*this.told {
            let signalled = this.shutdown.is_signalled()
                || match this.registered {
                    Some(waker) if waker.will_wake(cx.waker()) => false,
                    _ => {
                        // The signal holds no waker yet, or another one.
                        let ready = this.signal.as_mut().poll(cx).is_ready();
                        *this.registered = Some(cx.waker().clone());
                        ready
                    }
                };
            if signalled {
                *this.told = true;
                (this.shut_down)(this.connection.as_mut());
            }
        }
        this.connection.poll(cx)
    }
}

/// Tells the connection to shut down, once: on the server's signal, or
/// when its watchdog closes it.
impl<C> CloseGracefully for Graceful<C> {
    fn close_gracefully(self: Pin<&mut Self>) {
        let this = self.project();
        if !*this.told {
            *this.told = true;
            (this.shut_down)(this.connection);
        }
    }
}
