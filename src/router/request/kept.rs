//! The copy of a request's headers kept for the monitors while a prefix
//! holds the request.

use std::cell::Cell;

use http::{HeaderMap, HeaderValue};

thread_local! {
    /// The map a finished request left behind, its values emptied, its
    /// names and room kept: the next copy on this thread fills it rather
    /// than allocating one.
    static SPARE: Cell<Option<Box<HeaderMap>>> = const { Cell::new(None) };
}

/// The request's headers as they were when a prefix took the request by
/// value: the monitors see them even if the prefix answers early, fails,
/// or its future never gives the request back.
///
/// In the steady state the copy allocates nothing. It refills a map the
/// thread keeps from an earlier request; values are shared byte buffers,
/// so copying one counts a reference; and when the request sends the
/// names the last one on the thread sent, in the same order, as one
/// client's requests do, the names are kept and only the values change.
/// That matters for names outside the standard set: hyper copies those
/// out of its read buffer, and the first copy of such a name allocates.
#[derive(Default)]
pub(crate) struct KeptHeaders(Option<Box<HeaderMap>>);

impl KeptHeaders {
    /// Keeps a copy of `headers`, replacing any kept before.
    pub(crate) fn keep(&mut self, headers: &HeaderMap) {
        let kept = self
            .0
            .get_or_insert_with(|| (SPARE.try_with(Cell::take).ok().flatten()).unwrap_or_default());
        let same_names = kept.len() == headers.len()
            && (kept.iter().zip(headers)).all(|((kept, _), (name, _))| kept == name);
        if same_names {
            // The usual case, one client's requests one after another:
            // only the values change.
            for ((_, kept), (_, value)) in kept.iter_mut().zip(headers) {
                kept.clone_from(value);
            }
        } else {
            kept.clear();
            for (name, value) in headers {
                kept.append(name.clone(), value.clone());
            }
        }
    }

    /// The headers kept, if a prefix took the request.
    pub(crate) fn get(&self) -> Option<&HeaderMap> {
        self.0.as_deref()
    }
}

impl Drop for KeptHeaders {
    #[inline]
    fn drop(&mut self) {
        if let Some(kept) = self.0.take() {
            give_back(kept);
        }
    }
}

/// Leaves `kept` for the thread's next copy.
#[inline(never)]
fn give_back(mut kept: Box<HeaderMap>) {
    // The values share the connection's read buffer: let it go.
    for value in kept.values_mut() {
        *value = HeaderValue::from_static("");
    }
    // Dropped with the map instead on a thread that is ending.
    let _ = SPARE.try_with(|spare| spare.set(Some(kept)));
}

#[cfg(test)]
mod tests {
    use http::header;

    use super::*;

    #[test]
    fn a_copy_holds_every_value_of_every_name() {
        let mut headers = HeaderMap::new();
        headers.append(header::ACCEPT, HeaderValue::from_static("text/html"));
        headers.append(header::ACCEPT, HeaderValue::from_static("*/*"));
        headers.insert("x-trace", HeaderValue::from_static("7"));
        let mut kept = KeptHeaders::default();
        kept.keep(&HeaderMap::new());
        kept.keep(&headers);
        assert_eq!(kept.get(), Some(&headers));
    }

    #[test]
    fn a_copy_holds_no_name_the_last_request_sent_and_this_one_did_not() {
        let mut first = HeaderMap::new();
        first.insert(header::HOST, HeaderValue::from_static("example.com"));
        first.insert("x-old", HeaderValue::from_static("1"));
        let mut second = HeaderMap::new();
        second.insert(header::HOST, HeaderValue::from_static("example.org"));
        second.append("x-new", HeaderValue::from_static("a"));
        second.append("x-new", HeaderValue::from_static("b"));
        let mut kept = KeptHeaders::default();
        kept.keep(&first);
        drop(kept);
        let mut kept = KeptHeaders::default();
        kept.keep(&second);
        assert_eq!(kept.get(), Some(&second));
    }

    #[test]
    fn a_dropped_copy_holds_no_value_for_the_next() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("example.com"));
        let mut first = KeptHeaders::default();
        first.keep(&headers);
        drop(first);
        let spare = SPARE.take().expect("the map is left for the next copy");
        assert!(spare.values().all(|value| value.is_empty()));
    }
}
