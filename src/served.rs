//! What the server asks of a service before it serves it, told by the
//! layer that knows the service: serving imports nothing of routing, so
//! the router tells it how a `Router` is checked (compiled, its mistakes
//! the server's error before it accepts a client).

use std::{any::Any, io, sync::OnceLock};

/// A check of a service, by its type: `None` for a service it does not
/// know.
pub(crate) type Check = fn(&dyn Any) -> Option<io::Result<()>>;

static CHECK: OnceLock<Check> = OnceLock::new();

/// Tells the server how to check the services `check` knows. The first
/// check told stands: there is one router type.
pub(crate) fn check_before_serving(check: Check) {
    let _ = CHECK.set(check);
}

/// Checks `service` before it is served: `Ok` for a service no check
/// knows.
pub(crate) fn check(service: &dyn Any) -> io::Result<()> {
    CHECK
        .get()
        .and_then(|check| check(service))
        .unwrap_or(Ok(()))
}
