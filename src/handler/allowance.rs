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
//! extractor reserves room in it:
//!
//! - in its HTTP/2 connection's allowance, what the body may take (its
//!   declared length, else the limit) before reading it. The first body a
//!   connection reads is always let through, whatever its size; another
//!   is let through while the reservations fit, and is answered 503
//!   otherwise — not made to wait: a stream waiting unread would hold the
//!   connection's flow-control window, and the streams being read could
//!   stall behind it;
//! - in the server's allowance, shared by every connection, as the body
//!   arrives: what it has read and one step ahead ([`STEP`]), never what
//!   its head declares. A head alone holds one step, so a crowd of heads
//!   that declare large bodies and send none cannot take the allowance
//!   from the bodies that do arrive. A body with no room for its next
//!   step waits, in the order the waits began, until its body timeout
//!   (503 then); what its client sends meanwhile waits in its socket, not
//!   here. Each thread takes the server's allowance a share at a time
//!   (see [`ServerAllowance`]), so that bodies write no count every
//!   thread writes.

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

/// How far ahead of what a body has read its room in the server's
/// allowance is taken: about what one read brings.
pub(crate) const STEP: usize = 64 * 1024;

/// What the body extractor of one request may take: of its HTTP/2
/// connection's allowance, and of the server's.
///
/// One a connection, which its requests share: a clone writes only the
/// connection's count, not a line every connection's thread writes.
#[derive(Clone, Debug)]
pub(crate) struct BodyAllowance(Arc<Allowances>);

#[derive(Debug)]
struct Allowances {
    connection: Option<Shared>,
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
///
/// So that the threads serving bodies do not all write the semaphore for
/// each, a thread takes its permits a share at a time (a step, 64 KiB,
/// for an allowance of 4 MiB or more; a 64th of a smaller one; none for
/// one under 1 MiB) and its bodies take theirs from what it keeps,
/// giving them back there; what it keeps past two shares goes back to
/// the semaphore, and all of it when the thread ends. What threads keep
/// is the allowance's too: a body is held to seven eighths of the
/// allowance when there are shares, so that what idle threads keep
/// cannot leave it waiting for ever.
#[cfg(feature = "server")]
#[derive(Clone, Debug)]
pub(crate) struct ServerAllowance {
    /// The semaphore's permits, taken by each thread in shares.
    kib: crate::shares::Shares<Semaphore>,
    /// The permits it started with.
    total: usize,
}

/// The most permits a thread takes at a time: a step's.
#[cfg(feature = "server")]
const SHARE: usize = STEP / 1024;

/// The fewest shares an allowance is cut into.
#[cfg(feature = "server")]
const SHARES: usize = 64;

/// The smallest share: an allowance under 1 MiB has none.
#[cfg(feature = "server")]
const LEAST_SHARE: usize = 16;

#[cfg(feature = "server")]
impl crate::shares::Pool for Semaphore {
    fn take(&self, permits: usize) -> bool {
        let Ok(permits) = u32::try_from(permits) else {
            return false;
        };
        match self.try_acquire_many(permits) {
            Ok(taken) => {
                taken.forget();
                true
            }
            Err(_) => false,
        }
    }

    fn give(&self, permits: usize) {
        self.add_permits(permits);
    }
}

#[cfg(feature = "server")]
impl ServerAllowance {
    /// An allowance of `limit` bytes (rounded up to KiB), shared by the
    /// requests of every connection it is given to.
    pub(crate) fn new(limit: usize) -> Self {
        let total = limit.div_ceil(1024).min(Semaphore::MAX_PERMITS);
        let share = Some(SHARE.min(total / SHARES)).filter(|&share| share >= LEAST_SHARE);
        Self {
            kib: crate::shares::Shares::new(Semaphore::new(total), share.unwrap_or(0)),
            total,
        }
    }

    /// The permits a body of `bytes` takes: all of them at most, so that
    /// a body larger than the allowance is read alone — or, when threads
    /// keep shares, seven eighths of them.
    fn permits(&self, bytes: usize) -> u32 {
        let most = match self.kib.share() {
            0 => self.total,
            _ => self.total - self.total / 8,
        };
        let kib = bytes.div_ceil(1024).min(most);
        u32::try_from(kib).unwrap_or(u32::MAX)
    }

    /// Takes `permits` at once if there are as many: from what this thread
    /// keeps of its share, else from the semaphore.
    fn try_take(&self, permits: u32) -> bool {
        use crate::shares::Pool;
        let permits = permits as usize;
        self.kib.take(permits) || self.kib.pool().take(permits)
    }

    /// Gives back `permits` a body held (see [`Shares::give`](crate::shares::Shares::give)).
    fn give_back(&self, permits: u32) {
        if permits > 0 {
            self.kib.give(permits as usize);
        }
    }
}

impl BodyAllowance {
    /// An HTTP/2 connection's allowance of `limit` bytes (none for 0),
    /// beside `server`'s.
    #[cfg(feature = "server")]
    pub(crate) fn new(connection: usize, server: Option<ServerAllowance>) -> Self {
        Self(Arc::new(Allowances {
            connection: (connection > 0).then(|| Shared {
                limit: connection,
                reading: Mutex::default(),
            }),
            server,
        }))
    }

    /// Whether it bounds anything.
    #[cfg(feature = "server")]
    pub(crate) fn bounds(&self) -> bool {
        self.0.connection.is_some() || self.0.server.is_some()
    }

    /// Reserves `bytes` for a body about to be read on its connection:
    /// `None` when other bodies are being read on its connection and this
    /// one would take the connection past its allowance. Room on the
    /// server is reserved as the body arrives
    /// ([`Reservation::poll_room`]).
    pub(crate) fn reserve(&self, bytes: usize) -> Option<Reservation> {
        if let Some(shared) = &self.0.connection {
            let mut reading = shared.reading();
            let reserved = reading.reserved.saturating_add(bytes);
            if reading.bodies > 0 && reserved > shared.limit {
                return None;
            }
            *reading = Reading {
                bodies: reading.bodies + 1,
                reserved,
            };
        }
        Some(Reservation {
            allowance: self.clone(),
            bytes,
            #[cfg(feature = "server")]
            room: Room::default(),
        })
    }
}

/// What a body reserved, given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    allowance: BodyAllowance,
    /// What it counts in the connection's allowance, if there is one.
    bytes: usize,
    #[cfg(feature = "server")]
    room: Room,
}

/// A body's room in the server's allowance, taken as the body arrives.
#[cfg(feature = "server")]
#[derive(Default)]
struct Room {
    /// The permits held so far (KiB), taken out of the allowance.
    held: u32,
    /// More permits being waited for: how many, and the wait.
    waiting: Option<(u32, Acquire)>,
    /// The allowance was closed: the body goes on without a bound.
    unbounded: bool,
}

#[cfg(feature = "server")]
type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

#[cfg(feature = "server")]
impl std::fmt::Debug for Room {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Room")
            .field("held", &self.held)
            .field(
                "waiting",
                &self.waiting.as_ref().map(|(permits, _)| permits),
            )
            .finish()
    }
}

#[cfg(feature = "server")]
impl Room {
    /// Ready once `bytes` are held in `allowance`; more are waited for in
    /// the order the waits began.
    fn poll_hold(
        &mut self,
        allowance: &ServerAllowance,
        cx: &mut Context<'_>,
        bytes: usize,
    ) -> Poll<()> {
        let needed = allowance.permits(bytes);
        while self.held < needed && !self.unbounded {
            let (permits, wait) = match &mut self.waiting {
                Some((permits, wait)) => (*permits, wait),
                None => {
                    let more = needed - self.held;
                    if allowance.try_take(more) {
                        self.held += more;
                        continue;
                    }
                    let wait = Box::pin(Arc::clone(allowance.kib.pool()).acquire_many_owned(more));
                    let (permits, wait) = self.waiting.insert((more, wait));
                    (*permits, wait)
                }
            };
            let acquired = std::task::ready!(wait.as_mut().poll(cx));
            self.waiting = None;
            match acquired {
                Ok(taken) => {
                    taken.forget();
                    self.held += permits;
                }
                // The semaphore is never closed; were it, the body would
                // go on without a bound rather than wait for ever.
                Err(_) => self.unbounded = true,
            }
        }
        Poll::Ready(())
    }
}

impl Reservation {
    /// Ready once the server's allowance holds `bytes` for the body: what
    /// it has read, and a step ahead of it. At once, but when other
    /// bodies hold the allowance; a body larger than the whole allowance
    /// waits for all of it, and is then read alone.
    #[cfg_attr(not(feature = "server"), allow(unused_variables))]
    pub(crate) fn poll_room(&mut self, cx: &mut Context<'_>, bytes: usize) -> Poll<()> {
        #[cfg(feature = "server")]
        if let Some(server) = &self.allowance.0.server {
            return self.room.poll_hold(server, cx, bytes);
        }
        Poll::Ready(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        #[cfg(feature = "server")]
        if let Some(server) = &self.allowance.0.server {
            server.give_back(self.room.held);
        }
        if let Some(shared) = &self.allowance.0.connection {
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
        let shared = allowance.0.connection.as_ref().unwrap();
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
        assert!(first.poll_room(&mut cx, 2 * 1024).is_ready());
        // Larger than what is left: waits, and one that would fit waits
        // behind it.
        let mut second = two.reserve(2 * 1024).unwrap();
        assert!(second.poll_room(&mut cx, 2 * 1024).is_pending());
        let mut third = one.reserve(1).unwrap();
        assert!(third.poll_room(&mut cx, 1).is_pending(), "jumped the queue");
        drop(first);
        assert!(second.poll_room(&mut cx, 2 * 1024).is_ready());
        assert!(third.poll_room(&mut cx, 1).is_ready());
        // A body larger than the whole allowance is read alone.
        drop((second, third));
        let mut huge = two.reserve(1 << 30).unwrap();
        assert!(huge.poll_room(&mut cx, 1 << 30).is_ready());
        let mut small = one.reserve(1).unwrap();
        assert!(small.poll_room(&mut cx, 1).is_pending());
        drop(huge);
        assert!(small.poll_room(&mut cx, 1).is_ready());
    }

    #[test]
    fn a_body_holds_room_for_what_it_read_not_for_what_it_declared() {
        let server = ServerAllowance::new(100 * 1024);
        let allowance = BodyAllowance::new(0, Some(server.clone()));
        let mut cx = Context::from_waker(Waker::noop());
        // Bodies that declare 1 MiB each, of which 10 KiB came: they
        // hold 10 KiB each, and ten of them fit.
        let mut bodies: Vec<_> = (0..10)
            .map(|_| allowance.reserve(1 << 20).unwrap())
            .collect();
        for body in &mut bodies {
            assert!(body.poll_room(&mut cx, 10 * 1024).is_ready());
        }
        assert_eq!(server.kib.pool().available_permits(), 0);
        // One grows as its bytes arrive, once another leaves room.
        assert!(bodies[0].poll_room(&mut cx, 20 * 1024).is_pending());
        bodies.truncate(9);
        assert!(bodies[0].poll_room(&mut cx, 20 * 1024).is_ready());
        drop(bodies);
        assert_eq!(server.kib.pool().available_permits(), 100, "all given back");
    }

    #[test]
    fn a_thread_takes_the_allowance_in_shares_and_its_bodies_from_them() {
        let server = ServerAllowance::new(256 << 20);
        let total = server.total;
        let allowance = BodyAllowance::new(0, Some(server.clone()));
        let mut cx = Context::from_waker(Waker::noop());
        let read = |cx: &mut Context<'_>| {
            let mut body = allowance.reserve(1 << 20).unwrap();
            assert!(body.poll_room(cx, STEP).is_ready());
            body
        };
        let (first, second) = (read(&mut cx), read(&mut cx));
        assert_eq!(
            server.kib.pool().available_permits(),
            total - 128,
            "a share each"
        );
        drop((first, second));
        assert_eq!(
            server.kib.pool().available_permits(),
            total - 128,
            "kept by the thread"
        );
        // The next bodies take from what the thread keeps: the semaphore
        // is not touched.
        for _ in 0..10 {
            drop(read(&mut cx));
        }
        assert_eq!(server.kib.pool().available_permits(), total - 128);
        // Past two shares kept, all but one go back: a thread keeps two
        // at most.
        let bodies: Vec<_> = (0..4).map(|_| read(&mut cx)).collect();
        assert_eq!(server.kib.pool().available_permits(), total - 256);
        drop(bodies);
        assert_eq!(server.kib.pool().available_permits(), total - 128);
    }

    #[test]
    fn a_thread_that_ends_gives_back_what_it_keeps() {
        let server = ServerAllowance::new(256 << 20);
        let allowance = BodyAllowance::new(0, Some(server.clone()));
        std::thread::spawn(move || {
            let mut body = allowance.reserve(1 << 20).unwrap();
            let mut cx = Context::from_waker(Waker::noop());
            assert!(body.poll_room(&mut cx, STEP).is_ready());
        })
        .join()
        .unwrap();
        assert_eq!(server.kib.pool().available_permits(), server.total);
    }

    #[test]
    fn with_shares_a_body_is_held_to_seven_eighths_of_the_allowance() {
        let server = ServerAllowance::new(256 << 20);
        assert_eq!(server.kib.share(), 64);
        assert_eq!(
            server.permits(1 << 30) as usize,
            server.total - server.total / 8
        );
        // An allowance under 1 MiB has no shares, and a body may take all
        // of it.
        let small = ServerAllowance::new(512 << 10);
        assert_eq!(small.kib.share(), 0);
        assert_eq!(small.permits(1 << 30), 512);
    }
}
