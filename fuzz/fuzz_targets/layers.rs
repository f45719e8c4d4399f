//! Stacks of prefix, postfix and monitor layers, each hook in any of its
//! forms, synchronous or suspending, answering or not: the order of their
//! steps, the answer and the polls checked against the nesting (the checks
//! of `tests/properties/layers.rs`, which `tests/properties/main.rs` also runs
//! as a property).
#![no_main]

#[path = "../../tests/properties/layers.rs"]
mod layers;
#[path = "../../tests/properties/poll.rs"]
mod poll;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|stack: layers::Stack| {
    // Deeper stacks find nothing shallower ones do not, only more slowly.
    if stack.layers.len() > 12 {
        return;
    }
    layers::check(&stack);
});
