// A std `MutexGuard` held across an `.await`, checked by `#[debug_handler]`.
use std::sync::Mutex;

use pronghorn::debug_handler;

static COUNT: Mutex<u32> = Mutex::new(0);

#[debug_handler]
async fn count() -> String {
    let mut count = COUNT.lock().unwrap();
    tokio::task::yield_now().await;
    *count += 1;
    count.to_string()
}

fn main() {}
