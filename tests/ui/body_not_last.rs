// A body extractor that is not the handler's last argument.
use pronghorn::{Router, handler::Path};

fn main() {
    let _ = Router::new().post("/notes/{id}", |body: String, Path(id): Path<u32>| {
        format!("{id}: {body}")
    });
}
