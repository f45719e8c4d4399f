//! The slots of upgraded (WebSocket) connections, a share of the server's
//! connection cap. Below `serve/` and `ws/`, which both use it, so that
//! neither imports the other.

use std::{fmt, sync::Arc};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots of upgraded (WebSocket) connections, a share of the
/// connection cap: they are never idle as a request waits, so they are
/// never shed, and without a cap of their own they could take every slot.
/// `serve` puts it in the extensions of the requests that ask for an
/// upgrade; a WebSocket handshake takes a slot, or is answered 503.
#[derive(Clone, Debug)]
pub(crate) struct UpgradeSlots {
    slots: Arc<Semaphore>,
    /// Over HTTP/2, what keeps the connection from counting as idle while
    /// the upgraded stream lives: the stream is one of its own.
    stream: Option<Held>,
}

/// Something held for as long as an upgraded connection lives.
#[derive(Clone)]
struct Held {
    _value: Arc<dyn Send + Sync>,
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Held")
    }
}

/// A slot taken, held until dropped with the upgraded connection.
#[derive(Debug)]
pub(crate) struct UpgradeSlot {
    _permit: OwnedSemaphorePermit,
    _stream: Option<Held>,
}

impl UpgradeSlots {
    /// `max` slots.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max.min(Semaphore::MAX_PERMITS))),
            stream: None,
        }
    }

    /// The same slots, for an upgrade over an HTTP/2 stream: its slot
    /// holds `stream` too, for as long as the upgraded stream lives.
    pub(crate) fn holding(&self, stream: impl Send + Sync + 'static) -> Self {
        Self {
            slots: Arc::clone(&self.slots),
            stream: Some(Held {
                _value: Arc::new(stream),
            }),
        }
    }

    /// A slot for an upgraded connection, held until dropped, if one is
    /// free.
    pub(crate) fn try_take(&self) -> Option<UpgradeSlot> {
        let permit = Arc::clone(&self.slots).try_acquire_owned().ok()?;
        Some(UpgradeSlot {
            _permit: permit,
            _stream: self.stream.clone(),
        })
    }
}
