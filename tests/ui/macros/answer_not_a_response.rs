// An answer that is not a response, checked by `#[debug_handler]`.
use pronghorn::debug_handler;

struct User;

#[debug_handler]
fn user() -> User {
    User
}

fn main() {}
