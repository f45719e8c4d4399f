//! Mistakes in handlers and hooks are reported by the compiler in words
//! that name the cause: the messages of `tests/ui/*.stderr`.

#[test]
fn mistakes_in_handlers_and_hooks_name_their_cause() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

/// `#[debug_handler]` names the part of a handler that is wrong: the
/// argument, the body extractor out of place, the answer, the value that
/// keeps a future from being `Send` (the messages of
/// `tests/ui/macros/*.stderr`).
#[cfg(feature = "macros")]
#[test]
fn debug_handler_names_the_mistaken_part_of_a_handler() {
    trybuild::TestCases::new().compile_fail("tests/ui/macros/*.rs");
}
