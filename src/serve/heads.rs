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
//! always fits, whatever its size.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use http::Request;

/// What every field of a header list counts beside its name and value
/// (RFC 9113, 6.5.2): the cost of keeping it.
const FIELD: usize = 32;

/// The bytes of the HTTP/2 request heads being answered on all
/// connections, and their bound.
///
/// The rule of an HTTP/2 connection's body allowance (`BodyAllowance`:
/// one alone always fits, others while they fit), on one atomic count
/// instead of a count of holders under a lock: a head is never empty, so
/// the bytes held tell whether any head is, and this count is shared by
/// every connection's task, on the path of every HTTP/2 request. (A body
/// may reserve nothing, so its allowance counts its holders; on the lock,
/// HTTP/2 GETs cost 0.6% more instructions.)
#[derive(Clone, Debug)]
pub(super) struct HeadAllowance(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    limit: usize,
    held: AtomicUsize,
}

impl HeadAllowance {
    /// A bound of `limit` bytes; `None` for zero, which bounds nothing.
    pub(super) fn new(limit: usize) -> Option<Self> {
        (limit > 0).then(|| {
            Self(Arc::new(Shared {
                limit,
                held: AtomicUsize::new(0),
            }))
        })
    }

    /// Counts `request`'s head until the reservation is dropped, or
    /// `None` when it does not fit beside the heads already counted.
    pub(super) fn reserve<B>(&self, request: &Request<B>) -> Option<HeadReservation> {
        self.reserve_bytes(header_list_size(request))
    }

    fn reserve_bytes(&self, bytes: usize) -> Option<HeadReservation> {
        // Only a count: no other memory is published through it.
        let before = self.0.held.fetch_add(bytes, Ordering::Relaxed);
        if before > 0 && before.saturating_add(bytes) > self.0.limit {
            self.0.held.fetch_sub(bytes, Ordering::Relaxed);
            return None;
        }
        Some(HeadReservation {
            allowance: Arc::clone(&self.0),
            bytes,
        })
    }
}

/// A request head's place in the [`HeadAllowance`], given back on drop.
#[derive(Debug)]
pub(super) struct HeadReservation {
    allowance: Arc<Shared>,
    bytes: usize,
}

impl Drop for HeadReservation {
    fn drop(&mut self) {
        self.allowance.held.fetch_sub(self.bytes, Ordering::Relaxed);
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
        let heads = HeadAllowance::new(100).unwrap();
        let alone = heads.reserve_bytes(150).expect("alone, it fits");
        assert!(heads.reserve_bytes(1).is_none(), "past the bound");
        drop(alone);
        let first = heads.reserve_bytes(60).unwrap();
        let second = heads.reserve_bytes(40).expect("up to the bound");
        assert!(heads.reserve_bytes(1).is_none());
        drop(first);
        let third = heads.reserve_bytes(60).expect("room given back");
        drop((second, third));
        assert_eq!(heads.0.held.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn no_bound_is_zero() {
        assert!(HeadAllowance::new(0).is_none());
    }
}
