//! What a postfix or a monitor layer keeps of the request for its hook,
//! chosen by the hook's marker at compile time.

use http::Request;

use super::{Custom, FnAsync, FnBare, FnEdit, FnStep, FnSync};
use crate::{clock::Clock, head::RequestHead};

/// What a layer keeps of the request for a hook with this marker: the
/// request head (and, for a monitor, a clock started when the inner service
/// is called), or nothing for a hook that sees the message alone
/// ([`FnBare`]). Nothing that is not read is copied, and nothing is
/// checked per request: the kept types are `()` when the hook reads
/// nothing.
#[doc(hidden)]
pub trait Keep {
    /// The request head, or nothing.
    type Head;
    /// A monitor's clock, or nothing.
    type Clock;

    /// Keeps the head of `request`, if the hook reads it.
    fn head<B>(request: &Request<B>) -> Self::Head;

    /// Starts a monitor's clock, if the hook reads it.
    fn clock() -> Self::Clock;

    /// The head kept, if the hook reads one.
    fn kept_head(head: &Self::Head) -> Option<&RequestHead>;

    /// The head and clock kept for a monitor, if it reads them.
    fn kept<'a>(
        head: &'a Self::Head,
        clock: &'a Self::Clock,
    ) -> Option<(&'a RequestHead, &'a Started)>;
}

/// The clock a monitor that sees the exchange reads, started when the
/// inner service was called.
#[doc(hidden)]
pub struct Started(Clock);

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started").finish_non_exhaustive()
    }
}

impl Started {
    pub(crate) fn clock(&self) -> &Clock {
        &self.0
    }
}

macro_rules! keeps_the_head {
    ($($marker:ty),*) => {$(
        impl Keep for $marker {
            type Head = RequestHead;
            type Clock = Started;

            #[inline(always)]
            fn head<B>(request: &Request<B>) -> RequestHead {
                RequestHead::of(request)
            }

            #[inline(always)]
            fn clock() -> Started {
                Started(Clock::start())
            }

            #[inline(always)]
            fn kept_head(head: &RequestHead) -> Option<&RequestHead> {
                Some(head)
            }

            #[inline(always)]
            fn kept<'a>(head: &'a RequestHead, clock: &'a Started) -> Option<(&'a RequestHead, &'a Started)> {
                Some((head, clock))
            }
        }
    )*};
}

keeps_the_head!(FnSync, FnAsync, FnStep, FnEdit, Custom);

impl Keep for FnBare {
    type Head = ();
    type Clock = ();

    #[inline(always)]
    fn head<B>(_: &Request<B>) {}

    #[inline(always)]
    fn clock() {}

    #[inline(always)]
    fn kept_head(_: &()) -> Option<&RequestHead> {
        None
    }

    #[inline(always)]
    fn kept<'a>(_: &'a (), _: &'a ()) -> Option<(&'a RequestHead, &'a Started)> {
        None
    }
}
