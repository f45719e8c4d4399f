//! What body extractors may hold at once: on one HTTP/2 connection, and on
//! the whole server.
//!
//! A body extractor keeps what it has read until the body is complete, up
//! to the body limit. A client can start bodies and end none: over HTTP/2
//! on every stream it opens (two connections of 100 streams held 400 MB of
//! unfinished JSON bodies until the body timeout), and over HTTP/1 on
//! every connection (1,000 connections held 1.6 GB).
//!
//! `serve` gives each request with a body a [`BodyAllowance`], and a body
//! extractor reserves what the body may take (its declared length, else
//! the limit) before reading it:
//!
//! - from its HTTP/2 connection's allowance. The first body a connection
//!   reads is always let through, whatever its size; another is let
//!   through while the reservations fit, and is answered 503 otherwise —
//!   not made to wait: a stream waiting unread would hold the connection's
//!   flow-control window, and the streams being read could stall behind it;
//! - from the server's allowance, shared by every connection. A body that
//!   does not fit waits for room, in the order the bodies came, until its
//!   body timeout (503 then): the client is not told to send meanwhile
//!   (`100 Continue`), and what it sends waits in its socket, not here.

#[cfg(feature = "server")]
use std::{future::Future, pin::Pin};
use std::{
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
};

#[cfg(feature = "server")]
use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

/// What a request reads over HTTP/1 without counting in the server's
/// allowance: a body that declares at most this much, the part of a
/// WebSocket message up to it. A connection reads one body or message
/// at a time, so these hold at most this much a connection, and the small
/// ones most requests carry cost no reservation.
#[cfg(feature = "server")]
pub(crate) const UNCOUNTED: u64 = 64 * 1024;

/// What the body extractor of one request may take: of its HTTP/2
/// connection's allowance, and of the server's.
#[derive(Clone, Debug)]
pub(crate) struct BodyAllowance {
    connection: Option<Arc<Shared>>,
    #[cfg(feature = "server")]
    server: Option<ServerAllowance>,
}

/// One HTTP/2 connection's allowance.
#[derive(Debug)]
struct Shared {
    limit: usize,
    reading: Mutex<Reading>,
}

/// The bodies being read on a connection, and the bytes reserved for them.
#[derive(Debug, Default, PartialEq)]
struct Reading {
    bodies: usize,
    reserved: usize,
}

impl Shared {
    fn reading(&self) -> std::sync::MutexGuard<'_, Reading> {
        self.reading.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The server's allowance, in KiB: a semaphore hands out at most
/// `u32::MAX` permits at a time.
#[cfg(feature = "server")]
#[derive(Clone, Debug)]
pub(crate) struct ServerAllowance {
    kib: Arc<Semaphore>,
    /// The permits it started with.
    total: usize,
}

#[cfg(feature = "server")]
impl ServerAllowance {
    /// An allowance of `limit` bytes (rounded up to KiB), shared by the
    /// requests of every connection it is given to.
    pub(crate) fn new(limit: usize) -> Self {
        let total = limit.div_ceil(1024).min(Semaphore::MAX_PERMITS);
        Self {
            kib: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// The permits a body of `bytes` takes: all of them at most, so that
    /// a body larger than the allowance is read alone.
    fn permits(&self, bytes: usize) -> u32 {
        let kib = bytes.div_ceil(1024).min(self.total);
        u32::try_from(kib).unwrap_or(u32::MAX)
    }
}

impl BodyAllowance {
    /// An HTTP/2 connection's allowance of `limit` bytes (none for 0),
    /// beside `server`'s.
    #[cfg(feature = "server")]
    pub(crate) fn new(connection: usize, server: Option<ServerAllowance>) -> Self {
        Self {
            connection: (connection > 0).then(|| {
                Arc::new(Shared {
                    limit: connection,
                    reading: Mutex::default(),
                })
            }),
            server,
        }
    }

    /// Whether it bounds anything.
    #[cfg(feature = "server")]
    pub(crate) fn bounds(&self) -> bool {
        self.connection.is_some() || self.server.is_some()
    }

    /// Reserves `bytes` for a body about to be read: `None` when other
    /// bodies are being read on its connection and this one would take
    /// the connection past its allowance. The reservation may still have
    /// to wait for room on the server ([`Reservation::poll_room`]).
    pub(crate) fn reserve(&self, bytes: usize) -> Option<Reservation> {
        let connection = match &self.connection {
            Some(shared) => {
                let mut reading = shared.reading();
                let reserved = reading.reserved.saturating_add(bytes);
                if reading.bodies > 0 && reserved > shared.limit {
                    return None;
                }
                *reading = Reading {
                    bodies: reading.bodies + 1,
                    reserved,
                };
                Some(Arc::clone(shared))
            }
            None => None,
        };
        Some(Reservation {
            connection,
            bytes,
            #[cfg(feature = "server")]
            server: match &self.server {
                Some(server) => {
                    let permits = server.permits(bytes);
                    match Arc::clone(&server.kib).try_acquire_many_owned(permits) {
                        Ok(permit) => Room::Held(permit),
                        Err(_) => Room::Waiting(Box::pin(
                            Arc::clone(&server.kib).acquire_many_owned(permits),
                        )),
                    }
                }
                None => Room::Unbounded,
            },
        })
    }
}

/// What a body reserved, given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    connection: Option<Arc<Shared>>,
    bytes: usize,
    #[cfg(feature = "server")]
    server: Room,
}

/// A body's room in the server's allowance.
#[cfg(feature = "server")]
enum Room {
    Unbounded,
    Held(#[allow(dead_code, reason = "given back when dropped")] OwnedSemaphorePermit),
    Waiting(Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>),
}

#[cfg(feature = "server")]
impl std::fmt::Debug for Room {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Unbounded => "Unbounded",
            Self::Held(_) => "Held",
            Self::Waiting(_) => "Waiting",
        })
    }
}

impl Reservation {
    /// Ready once the server has room for the body (at once, but when
    /// other bodies hold the server's allowance).
    #[cfg_attr(not(feature = "server"), allow(unused_variables))]
    pub(crate) fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        #[cfg(feature = "server")]
        if let Room::Waiting(wait) = &mut self.server {
            self.server = match std::task::ready!(wait.as_mut().poll(cx)) {
                Ok(permit) => Room::Held(permit),
                // The semaphore is never closed.
                Err(_) => Room::Unbounded,
            };
        }
        Poll::Ready(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(shared) = &self.connection {
            let mut reading = shared.reading();
            reading.bodies -= 1;
            reading.reserved -= self.bytes;
        }
    }
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use super::*;
    use std::task::Waker;

    #[test]
    fn the_first_body_on_a_connection_is_let_through_and_others_while_they_fit() {
        let allowance = BodyAllowance::new(100, None);
        // One body alone may be larger than the allowance.
        let large = allowance.reserve(1_000).expect("the first body");
        assert!(allowance.reserve(1).is_none(), "past the allowance");
        drop(large);
        let first = allowance.reserve(60).unwrap();
        let second = allowance.reserve(40).expect("fits exactly");
        assert!(allowance.reserve(1).is_none());
        drop(first);
        let third = allowance.reserve(60).expect("room given back");
        drop((second, third));
        let shared = allowance.connection.as_ref().unwrap();
        assert_eq!(*shared.reading(), Reading::default());
    }

    #[test]
    fn a_body_waits_for_room_on_the_server_in_turn() {
        let server = ServerAllowance::new(3 * 1024);
        // Two connections share the server's allowance.
        let (one, two) = (
            BodyAllowance::new(0, Some(server.clone())),
            BodyAllowance::new(0, Some(server)),
        );
        let mut cx = Context::from_waker(Waker::noop());
        let mut first = one.reserve(2 * 1024).unwrap();
        assert!(first.poll_room(&mut cx).is_ready());
        // Larger than what is left: waits, and one that would fit waits
        // behind it.
        let mut second = two.reserve(2 * 1024).unwrap();
        assert!(second.poll_room(&mut cx).is_pending());
        let mut third = one.reserve(1).unwrap();
        assert!(third.poll_room(&mut cx).is_pending(), "jumped the queue");
        drop(first);
        assert!(second.poll_room(&mut cx).is_ready());
        assert!(third.poll_room(&mut cx).is_ready());
        // A body larger than the whole allowance is read alone.
        drop((second, third));
        let mut huge = two.reserve(1 << 30).unwrap();
        assert!(huge.poll_room(&mut cx).is_ready());
        let mut small = one.reserve(1).unwrap();
        assert!(small.poll_room(&mut cx).is_pending());
        drop(huge);
        assert!(small.poll_room(&mut cx).is_ready());
    }
}
