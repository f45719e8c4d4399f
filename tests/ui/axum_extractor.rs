// A handler taking axum's `Path` instead of pronghorn's.
use pronghorn::Router;

fn main() {
    let _ = Router::new().get("/users/{id}", |axum::extract::Path(id): axum::extract::Path<u32>| {
        format!("user {id}")
    });
}
