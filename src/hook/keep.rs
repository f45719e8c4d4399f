//! What a postfix or a monitor layer keeps of the request for its hook,
//! chosen by the hook's marker at compile time.

use http::Request;

use super::{Custom, FnAsync, FnBare, FnEdit, FnStep, FnSync};
use crate::{RequestHead, clock::Clock};

/// What a layer keeps of the request for a hook with this marker: the
/// request head (and, for a monitor, a clock started when the inner service
/// is called), or nothing for a hook that sees the message alone
/// ([`FnBare`]). Nothing that is not read is copied, and nothing is
/// checked per request: the kept type is `()` when the hook reads nothing.
#[doc(hidden)]
pub trait Keep {
    /// What a postfix layer keeps.
    type Head;
    /// What a monitor layer keeps.
    type Seen;

    /// Keeps what a postfix hook reads of `request`.
    fn head<B>(request: &Request<B>) -> Self::Head;

    /// Keeps what a monitor hook reads of `request`.
    fn seen<B>(request: &Request<B>) -> Self::Seen;

    /// The head kept for a postfix hook, if it reads one.
    fn kept_head(head: &Self::Head) -> Option<&RequestHead>;

    /// The head and clock kept for a monitor hook, if it reads them.
    fn kept_seen(seen: &Self::Seen) -> Option<&Seen>;
}

/// The head and the clock a monitor that sees the exchange reads.
#[doc(hidden)]
pub struct Seen {
    pub(crate) head: RequestHead,
    pub(crate) clock: Clock,
}

impl std::fmt::Debug for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seen")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

macro_rules! keeps_the_head {
    ($($marker:ty),*) => {$(
        impl Keep for $marker {
            type Head = RequestHead;
            type Seen = Seen;

            #[inline(always)]
            fn head<B>(request: &Request<B>) -> RequestHead {
                RequestHead::of(request)
            }

            #[inline(always)]
            fn seen<B>(request: &Request<B>) -> Seen {
                Seen {
                    head: RequestHead::of(request),
                    clock: Clock::start(),
                }
            }

            #[inline(always)]
            fn kept_head(head: &RequestHead) -> Option<&RequestHead> {
                Some(head)
            }

            #[inline(always)]
            fn kept_seen(seen: &Seen) -> Option<&Seen> {
                Some(seen)
            }
        }
    )*};
}

keeps_the_head!(FnSync, FnAsync, FnStep, FnEdit, Custom);

impl Keep for FnBare {
    type Head = ();
    type Seen = ();

    #[inline(always)]
    fn head<B>(_: &Request<B>) {}

    #[inline(always)]
    fn seen<B>(_: &Request<B>) {}

    #[inline(always)]
    fn kept_head(_: &()) -> Option<&RequestHead> {
        None
    }

    #[inline(always)]
    fn kept_seen(_: &()) -> Option<&Seen> {
        None
    }
}
