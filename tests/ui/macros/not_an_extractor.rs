// An argument that is not an extractor, checked by `#[debug_handler]`.
use pronghorn::{debug_handler, handler::Path};

struct Settings;

#[debug_handler]
fn show(Path(id): Path<u32>, _: Settings) -> String {
    format!("{id}")
}

fn main() {}
