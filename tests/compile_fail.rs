//! Mistakes in handlers and hooks are reported by the compiler in words
//! that name the cause: the messages of `tests/ui/*.stderr`.

#[test]
fn mistakes_in_handlers_and_hooks_name_their_cause() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
