//! Logging that a client cannot turn into a flood.

use std::{
    sync::{
        OnceLock,
        atomic::{AtomicU32, AtomicU64, Ordering},
    },
    time::Instant,
};

/// Events logged per second and call site before the rest are counted.
const BURST: u32 = 100;

/// A rate limit on one log event: at most a hundred a second are logged;
/// the rest are counted, and the next one logged says how many were not
/// (its `suppressed` field).
///
/// A client that can make the server log at will (a request to a
/// panicking route, a connection flood that exhausts file descriptors)
/// must not fill the disk with it.
#[derive(Debug)]
pub(crate) struct RateLimit {
    /// How many events a second are logged.
    burst: u32,
    /// The second the counts are for, since the process's first event.
    second: AtomicU64,
    logged: AtomicU32,
    suppressed: AtomicU64,
}

impl RateLimit {
    pub(crate) const fn new() -> Self {
        Self::per_second(BURST)
    }

    /// At most `burst` events a second logged, the rest counted.
    pub(crate) const fn per_second(burst: u32) -> Self {
        Self {
            burst,
            second: AtomicU64::new(0),
            logged: AtomicU32::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Whether the event may be logged now: `Some` with the number of
    /// events left unlogged since the last one that was, or `None`.
    pub(crate) fn admit(&self) -> Option<u64> {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        let now = EPOCH.get_or_init(Instant::now).elapsed().as_secs();
        let second = self.second.load(Ordering::Relaxed);
        if now != second
            && self
                .second
                .compare_exchange(second, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.logged.store(0, Ordering::Relaxed);
        }
        if self.logged.fetch_add(1, Ordering::Relaxed) < self.burst {
            Some(self.suppressed.swap(0, Ordering::Relaxed))
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

/// `tracing::error!` under a [`RateLimit`] of its own, with the count of
/// events suppressed before it as the field `suppressed`.
macro_rules! error_limited {
    ($($event:tt)+) => {{
        static LIMIT: $crate::log::RateLimit = $crate::log::RateLimit::new();
        if let Some(suppressed) = LIMIT.admit() {
            tracing::error!(suppressed, $($event)+);
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_logged_and_the_rest_counted() {
        let limit = RateLimit::new();
        let (mut admitted, mut reported) = (0, 0);
        for _ in 0..10_000 {
            if let Some(suppressed) = limit.admit() {
                admitted += 1;
                reported += suppressed;
            }
        }
        // The loop may straddle a second: two bursts at most.
        assert!((BURST..=2 * BURST).contains(&admitted), "{admitted}");
        let unreported = limit.suppressed.load(Ordering::Relaxed);
        assert_eq!(u64::from(admitted) + reported + unreported, 10_000);
    }

    #[test]
    fn a_limit_of_one_a_second_logs_one_and_counts_the_rest() {
        let limit = RateLimit::per_second(1);
        let admitted = (0..1_000).filter(|_| limit.admit().is_some()).count();
        // The loop may straddle a second.
        assert!((1..=2).contains(&admitted), "{admitted}");
    }
}
