//! Graceful shutdown: on the server's signal, each connection finishes
//! the requests in flight and closes.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, Waker},
};

use pin_project_lite::pin_project;
use tokio::sync::futures::OwnedNotified;

use super::timeouts::CloseGracefully;
use crate::shutdown::Shutdown;

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
            signal: shutdown.notified(),
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
