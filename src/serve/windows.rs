//! A bound on the HTTP/2 flow-control windows all connections grant.
//!
//! An HTTP/2 client may send as much of its request bodies as the
//! connection's receive window allows before the server reads any of it,
//! and hyper keeps what arrives until the body is read. A crowd of
//! connections each sending its window and then nothing held 527 MB for
//! 500 connections at the 1 MiB window: up to 1 GiB at the default
//! connection limit.
//!
//! [`WindowAllowance`] counts the windows granted to open connections. A
//! new connection is granted the full window while the windows granted
//! fit within the bound, else what is left of it; never less than the 65,535
//! bytes every HTTP/2 connection starts with, which are not counted. A
//! connection gives its grant back when it closes, or as soon as its first
//! request shows it speaks HTTP/1, which has no windows.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

/// The window every HTTP/2 connection and stream starts with (RFC 9113,
/// 6.9.2); a server cannot grant less.
pub(super) const INITIAL_WINDOW: u32 = 65_535;

/// The bytes of the HTTP/2 receive windows granted to open connections,
/// beyond the initial window each has, and their bound.
#[derive(Clone, Debug)]
pub(super) struct WindowAllowance(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    limit: usize,
    granted: AtomicUsize,
}

impl WindowAllowance {
    /// A bound of `limit` bytes on the windows granted beyond the
    /// initial ones.
    pub(super) fn new(limit: usize) -> Self {
        Self(Arc::new(Shared {
            limit,
            granted: AtomicUsize::new(0),
        }))
    }

    /// The window for a new connection: `full` if it fits beside the
    /// windows granted, else what is left, at least [`INITIAL_WINDOW`].
    pub(super) fn grant(&self, full: u32) -> WindowGrant {
        let wanted = full.saturating_sub(INITIAL_WINDOW) as usize;
        // Only a count: no other memory is published through it.
        let mut granted = self.0.granted.load(Ordering::Relaxed);
        let extra = loop {
            let extra = wanted.min(self.0.limit.saturating_sub(granted));
            match self.0.granted.compare_exchange_weak(
                granted,
                granted + extra,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break extra,
                Err(now) => granted = now,
            }
        };
        WindowGrant {
            allowance: Arc::clone(&self.0),
            // At most `full`, a `u32`.
            window: INITIAL_WINDOW + extra as u32,
            extra,
        }
    }
}

/// A connection's window, counted in the [`WindowAllowance`] until it is
/// dropped.
#[derive(Debug)]
pub(super) struct WindowGrant {
    allowance: Arc<Shared>,
    window: u32,
    extra: usize,
}

impl WindowGrant {
    /// The receive window granted: the connection's and each stream's.
    pub(super) fn window(&self) -> u32 {
        self.window
    }
}

impl Drop for WindowGrant {
    fn drop(&mut self) {
        self.allowance
            .granted
            .fetch_sub(self.extra, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u32 = 1024 * 1024;

    fn granted(allowance: &WindowAllowance) -> usize {
        allowance.0.granted.load(Ordering::Relaxed)
    }

    #[test]
    fn connections_get_the_full_window_while_it_fits_then_what_is_left() {
        let extra = (MIB - INITIAL_WINDOW) as usize;
        let allowance = WindowAllowance::new(extra + extra / 2);
        let first = allowance.grant(MIB);
        assert_eq!(first.window(), MIB);
        let second = allowance.grant(MIB);
        assert_eq!(
            second.window() as usize,
            INITIAL_WINDOW as usize + extra / 2
        );
        let third = allowance.grant(MIB);
        assert_eq!(third.window(), INITIAL_WINDOW);
        assert_eq!(granted(&allowance), extra + extra / 2);

        drop(first);
        assert_eq!(granted(&allowance), extra / 2);
        assert_eq!(allowance.grant(MIB).window(), MIB);
        drop((second, third));
        assert_eq!(granted(&allowance), 0);
    }

    #[test]
    fn the_initial_window_is_never_counted() {
        let allowance = WindowAllowance::new(MIB as usize);
        let grant = allowance.grant(INITIAL_WINDOW);
        assert_eq!(grant.window(), INITIAL_WINDOW);
        assert_eq!(granted(&allowance), 0);
        let allowance = WindowAllowance::new(1);
        let first = allowance.grant(MIB);
        assert_eq!(first.window(), INITIAL_WINDOW + 1);
        assert_eq!(allowance.grant(MIB).window(), INITIAL_WINDOW);
    }
}
