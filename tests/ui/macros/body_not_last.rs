// A body extractor before the last argument, checked by `#[debug_handler]`.
use pronghorn::{debug_handler, handler::Path};

#[debug_handler]
async fn note(body: String, Path(id): Path<u32>) -> String {
    format!("{id}: {body}")
}

fn main() {}
