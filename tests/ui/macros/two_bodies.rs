// Two body extractors, checked by `#[debug_handler]`.
use pronghorn::{debug_handler, handler::Json};

#[debug_handler]
async fn twice(Json(first): Json<String>, second: String) -> String {
    format!("{first} {second}")
}

fn main() {}
