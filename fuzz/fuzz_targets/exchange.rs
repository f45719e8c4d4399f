//! Whole exchanges: random tables of routes and hooks, random requests
//! through the service's `call`, every answer checked against the lookup —
//! status, `Allow`, HEAD's length, which hooks ran and in what order (the
//! checks of `tests/properties/exchange.rs`, which `tests/properties/main.rs`
//! also runs as a property).
#![no_main]

#[path = "../../tests/properties/exchange.rs"]
mod exchange;
#[path = "../../tests/properties/poll.rs"]
mod poll;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|table: exchange::Table| {
    // Larger tables find nothing smaller ones do not, only more slowly.
    if table.routes.len() > 16 || table.hooks.len() > 16 || table.requests.len() > 32 {
        return;
    }
    exchange::check(&table);
});
