//! The slots of upgraded (WebSocket) connections, a share of the server's
//! connection cap. Below `serve/` and `ws/`, which both use it, so that
//! neither imports the other.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots of upgraded (WebSocket) connections, a share of the
/// connection cap: they are never idle as a request waits, so they are
/// never shed, and without a cap of their own they could take every slot.
/// `serve` puts it in the extensions of the requests that ask for an
/// upgrade; a WebSocket handshake takes a slot, or is answered 503.
#[derive(Clone, Debug)]
pub(crate) struct UpgradeSlots(Arc<Semaphore>);

impl UpgradeSlots {
    /// `max` slots.
    pub(crate) fn new(max: usize) -> Self {
        Self(Arc::new(Semaphore::new(max.min(Semaphore::MAX_PERMITS))))
    }

    /// A slot for an upgraded connection, held until dropped, if one is
    /// free.
    pub(crate) fn try_take(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.0).try_acquire_owned().ok()
    }
}
