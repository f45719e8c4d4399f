//! What the body extractors of one HTTP/2 connection may hold at once.
//!
//! A body extractor keeps what it has read until the body is complete, up
//! to the body limit. Over HTTP/1 a connection reads one request at a time;
//! over HTTP/2 a client may start a body on every stream it opens and
//! never end them: two connections of 100 streams held 400 MB of
//! unfinished JSON bodies until the body timeout.
//!
//! `serve` gives each HTTP/2 request its connection's [`BodyAllowance`].
//! A body extractor reserves what the body may take (its declared length,
//! else the limit) before reading it. The first body a connection reads is
//! always let through, whatever its size; another is let through while the
//! reservations fit the allowance, and is answered 503 otherwise — not made
//! to wait: a stream waiting unread would hold the connection's
//! flow-control window, and the streams being read could stall behind it.

use std::sync::{Arc, Mutex, PoisonError};

/// One connection's allowance for the bodies its extractors read at once.
#[derive(Clone, Debug)]
pub(crate) struct BodyAllowance {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    limit: usize,
    reading: Mutex<Reading>,
}

/// The bodies being read, and the bytes reserved for them.
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

impl BodyAllowance {
    /// An allowance of `limit` bytes.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                limit,
                reading: Mutex::default(),
            }),
        }
    }

    /// Reserves `bytes` for a body about to be read: `None` when other
    /// bodies are being read and this one would take the connection past
    /// its allowance.
    pub(crate) fn reserve(&self, bytes: usize) -> Option<Reservation> {
        let mut reading = self.shared.reading();
        let reserved = reading.reserved.saturating_add(bytes);
        if reading.bodies > 0 && reserved > self.shared.limit {
            return None;
        }
        *reading = Reading {
            bodies: reading.bodies + 1,
            reserved,
        };
        Some(Reservation {
            shared: Arc::clone(&self.shared),
            bytes,
        })
    }
}

/// Bytes reserved for a body being read, given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    shared: Arc<Shared>,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut reading = self.shared.reading();
        reading.bodies -= 1;
        reading.reserved -= self.bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_body_is_let_through_and_others_while_they_fit() {
        let allowance = BodyAllowance::new(100);
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
        assert_eq!(*allowance.shared.reading(), Reading::default());
    }
}
