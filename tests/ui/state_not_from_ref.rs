// A handler reading a part of the router's state that no `FromRef` names.
use pronghorn::{Router, handler::State, router::get};

#[derive(Clone)]
struct AppState;

#[derive(Clone)]
struct Key;

async fn sign(State(_): State<Key>) {}

fn main() {
    let _: Router = Router::new().route("/", get(sign)).with_state(AppState);
}
