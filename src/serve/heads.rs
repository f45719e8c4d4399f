//! A bound on the HTTP/2 request heads all connections hold at once.
//!
//! An HTTP/2 connection carries up to `http2_max_streams` requests at
//! once, and each holds its head — up to `http2_max_header_size` — until
//! its answer is ready. A crowd of connections whose requests never end
//! (a slow handler, a body that never comes) held about 34 KiB for each
//! 15 KiB header list: 339 MB for 100 connections of 100 streams, 3.4 GB
//! at the default connection limit. An HTTP/1 connection reads one
//! request at a time, so its heads need no count: at most
//! `max_header_size` a connection.
//!
//! [`HeadAllowance`] counts the header-list size of the HTTP/2 requests
//! being answered on all connections, from the call to the service until
//! its answer is ready; a request that would take the count past the
//! bound is answered 503 at once, which frees its head. A request alone
//! always fits, whatever its size (beside what threads keep unused of
//! their shares, below).
//!
//! The count is shared by every connection's thread, so each thread takes
//! its part of it in shares: a thread's share (at most 64 KiB, and at most
//! a 64th of the bound) is counted once, then its requests' heads are
//! counted against it on that thread alone, and it gives back what goes
//! unused past two shares. Shares count as held, so the bound holds
//! exactly; what threads keep unused — two shares each at most — only
//! refuses earlier. A head larger than a share, or one a share cannot be
//! taken for, is counted on the shared count itself; a bound under
//! 64 KiB has no shares.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use http::Request;

use crate::shares::{Pool, Shares};

/// What every field of a header list counts beside its name and value
/// (RFC 9113, 6.5.2): the cost of keeping it.
const FIELD: usize = 32;

/// The most a thread takes of the shared count at a time.
const SHARE: usize = 64 * 1024;

/// The fewest shares a bound is cut into: a bound of less than 64 shares
/// has smaller shares.
const SHARES: usize = 64;

/// The smallest share: a bound under 64 KiB has none, and counts every
/// head on the shared count.
const LEAST_SHARE: usize = 1024;

/// The bytes of the HTTP/2 request heads being answered on all
/// connections, and their bound, taken by each thread in shares.
#[derive(Clone, Debug)]
pub(super) struct HeadAllowance(Shares<Count>);

/// The rule of an HTTP/2 connection's body allowance (`BodyAllowance`:
/// one alone always fits, others while they fit), on one atomic count
/// instead of a count of holders under a lock: a head is never empty, so
/// the bytes held tell whether any head is. (A body may reserve nothing,
/// so its allowance counts its holders.)
#[derive(Debug)]
pub(super) struct Count {
    limit: usize,
    /// The bytes of the heads counted here and of the threads' shares.
    held: AtomicUsize,
}

impl Pool for Count {
    fn take(&self, bytes: usize) -> bool {
        // Only a count: no other memory is published through it.
        let before = self.held.fetch_add(bytes, Ordering::Relaxed);
        if before > 0 && before.saturating_add(bytes) > self.limit {
            self.held.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }

    fn give(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl HeadAllowance {
    /// A bound of `limit` bytes; `None` for zero, which bounds nothing.
    pub(super) fn new(limit: usize) -> Option<Self> {
        (limit > 0).then(|| {
            let share = Some(SHARE.min(limit / SHARES)).filter(|&share| share >= LEAST_SHARE);
            let count = Count {
                limit,
                held: AtomicUsize::new(0),
            };
            Self(Shares::new(count, share.unwrap_or(0)))
        })
    }

    /// A connection's handle on the allowance: its requests' reservations
    /// hold the connection's, not the server's, reference count.
    pub(super) fn for_connection(&self) -> ConnectionHeads {
        ConnectionHeads(Arc::new(self.clone()))
    }
}

/// One connection's handle on the [`HeadAllowance`].
#[derive(Clone, Debug)]
pub(super) struct ConnectionHeads(Arc<HeadAllowance>);

impl ConnectionHeads {
    /// Counts `request`'s head until the reservation is dropped, or
    /// `None` when it does not fit beside the heads already counted.
    pub(super) fn reserve<B>(&self, request: &Request<B>) -> Option<HeadReservation> {
        self.reserve_bytes(header_list_size(request))
    }

    fn reserve_bytes(&self, bytes: usize) -> Option<HeadReservation> {
        let shares = &self.0.0;
        let shared = shares.take(bytes);
        if !shared && !shares.pool().take(bytes) {
            return None;
        }
        Some(HeadReservation {
            heads: Arc::clone(&self.0),
            bytes,
            shared,
        })
    }
}

/// A request head's place in the [`HeadAllowance`], given back on drop.
#[derive(Debug)]
pub(super) struct HeadReservation {
    heads: Arc<HeadAllowance>,
    bytes: usize,
    /// Counted against a thread's share.
    shared: bool,
}

impl Drop for HeadReservation {
    fn drop(&mut self) {
        let shares = &self.heads.0;
        match self.shared {
            true => shares.give(self.bytes),
            false => shares.pool().give(self.bytes),
        }
    }
}

/// The size of `request`'s head as HTTP/2 counts a header list: each
/// field's name and value and 32 more, the pseudo-header fields
/// (`:method`, `:scheme`, `:authority`, `:path`) included.
fn header_list_size<B>(request: &Request<B>) -> usize {
    let uri = request.uri();
    let pseudo = [
        ":method".len() + request.method().as_str().len(),
        ":scheme".len() + uri.scheme_str().map_or(0, str::len),
        ":authority".len()
            + uri
                .authority()
                .map_or(0, |authority| authority.as_str().len()),
        ":path".len() + uri.path_and_query().map_or(0, |path| path.as_str().len()),
    ];
    let fields = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len());
    pseudo
        .into_iter()
        .chain(fields)
        .map(|field| field + FIELD)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_counts_its_fields_as_http2_does() {
        let request = Request::get("http://example.com/users?page=2")
            .header("accept", "application/json")
            .header("x-id", "7")
            .body(())
            .unwrap();
        let expected = (7 + 3 + 32)
            + (7 + 4 + 32)
            + (10 + 11 + 32)
            + (5 + 13 + 32)
            + (6 + 16 + 32)
            + (4 + 1 + 32);
        assert_eq!(header_list_size(&request), expected);
    }

    #[test]
    fn heads_are_let_through_while_they_fit_and_one_alone_always() {
        let allowance = HeadAllowance::new(100).unwrap();
        let heads = allowance.for_connection();
        let alone = heads.reserve_bytes(150).expect("alone, it fits");
        assert!(heads.reserve_bytes(1).is_none(), "past the bound");
        drop(alone);
        let first = heads.reserve_bytes(60).unwrap();
        let second = heads.reserve_bytes(40).expect("up to the bound");
        assert!(heads.reserve_bytes(1).is_none());
        drop(first);
        let third = heads.reserve_bytes(60).expect("room given back");
        drop((second, third));
        assert_eq!(allowance.0.pool().held.load(Ordering::Relaxed), 0);
    }

    fn held(allowance: &HeadAllowance) -> usize {
        allowance.0.pool().held.load(Ordering::Relaxed)
    }

    #[test]
    fn a_thread_counts_its_heads_against_its_share_not_the_shared_count() {
        let allowance = HeadAllowance::new(64 << 20).unwrap();
        let heads = allowance.for_connection();
        let first = heads.reserve_bytes(1000).unwrap();
        assert_eq!(held(&allowance), SHARE, "one share taken");
        let more: Vec<_> = (0..20)
            .map(|_| heads.reserve_bytes(1000).unwrap())
            .collect();
        assert_eq!(held(&allowance), SHARE, "counted against the share");
        drop((first, more));
        assert_eq!(held(&allowance), SHARE, "kept for the next heads");
        // Past a share, another is taken; past two unused, all but one
        // go back.
        let many: Vec<_> = (0..150)
            .map(|_| heads.reserve_bytes(1000).unwrap())
            .collect();
        assert_eq!(held(&allowance), 3 * SHARE);
        drop(many);
        let kept = held(&allowance);
        assert!((SHARE..=2 * SHARE).contains(&kept), "{kept}");
    }

    #[test]
    fn a_thread_that_ends_gives_its_share_back() {
        let allowance = HeadAllowance::new(64 << 20).unwrap();
        let heads = allowance.for_connection();
        let kept = std::thread::spawn(move || drop(heads.reserve_bytes(1000)));
        kept.join().unwrap();
        assert_eq!(held(&allowance), 0);
    }

    #[test]
    fn shares_count_as_held_so_the_bound_holds() {
        // Shares of 2 KiB.
        let allowance = HeadAllowance::new(128 * 1024).unwrap();
        assert_eq!(allowance.0.share(), 2048);
        let heads = allowance.for_connection();
        let (mut held_heads, mut bytes) = (Vec::new(), 0);
        while let Some(head) = heads.reserve_bytes(1000) {
            held_heads.push(head);
            bytes += 1000;
        }
        assert!(bytes <= 128 * 1024 && bytes > 120 * 1024, "{bytes}");
        // Heads larger than a share count on the shared count.
        drop(held_heads);
        let large = heads.reserve_bytes(4096).unwrap();
        assert!(!large.shared);
    }

    #[test]
    fn a_bound_under_64_kib_has_no_shares() {
        let allowance = HeadAllowance::new(8 * 1024).unwrap();
        assert_eq!(allowance.0.share(), 0);
        let head = allowance.for_connection().reserve_bytes(100).unwrap();
        assert!(!head.shared);
        assert_eq!(held(&allowance), 100);
    }

    #[test]
    fn no_bound_is_zero() {
        assert!(HeadAllowance::new(0).is_none());
    }
}
