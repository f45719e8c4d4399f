//! Extractors on hostile input: `Path`, `Query`, `Json` and `String` fed
//! raw parameters, query strings, content types and bodies, each answer
//! checked against the reference of `tests/properties/extract.rs` (which
//! `tests/properties/main.rs` also runs as a property).
#![no_main]

#[path = "../../tests/properties/extract.rs"]
mod extract;
#[path = "../../tests/properties/poll.rs"]
#[allow(dead_code)] // Bodies wait here; no step suspends.
mod poll;

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use pronghorn::router::CompiledRouter;

thread_local! {
    /// One router for every input: compiling it is not what is fuzzed.
    static ROUTER: RefCell<CompiledRouter> =
        RefCell::new(extract::router());
}

fuzz_target!(|calls: Vec<extract::Call>| {
    ROUTER.with_borrow_mut(|router| {
        for call in calls.iter().take(8) {
            extract::check(router, call);
        }
    });
});
