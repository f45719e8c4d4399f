//! The elapsed time a monitor reports, and the longest wait there is.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

/// The longest a timer waits: 30 years, tokio's far future. A timeout
/// set longer (`Duration::MAX` for "never") is cut to it, so that no
/// instant plus a timeout overflows.
#[cfg(feature = "server")]
pub(crate) const FOREVER: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// When the inner service was called; the elapsed time is read from the
/// system clock only when a monitor asks for it, and then kept, so that
/// every monitor of a request sees the same figure.
pub(crate) struct Clock {
    start: Instant,
    /// The elapsed nanoseconds plus one, once read; 0 until then.
    elapsed: AtomicU64,
}

impl Clock {
    #[inline]
    pub(crate) fn start() -> Self {
        Self {
            start: Instant::now(),
            elapsed: AtomicU64::new(0),
        }
    }

    /// When the inner service was called, the elapsed time fixed now if
    /// no one has read it: for the calls after the response went out,
    /// which see the head's elapsed time.
    pub(crate) fn fixed_start(&self) -> Instant {
        self.elapsed();
        self.start
    }

    pub(crate) fn elapsed(&self) -> Duration {
        match self.elapsed.load(Ordering::Relaxed) {
            0 => {
                let elapsed = self.start.elapsed();
                let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX - 1);
                self.elapsed.store(nanos + 1, Ordering::Relaxed);
                Duration::from_nanos(nanos)
            }
            stored => Duration::from_nanos(stored - 1),
        }
    }
}
