//! The heap a route table holds, per route: `table_bytes table N` for a
//! compiled router of N routes, `table_bytes reloadable N` for a
//! `Reloadable` registered a module of 100 routes at a time. The routes
//! are `benches/scale.rs`'s, a gateway's. Live bytes, counted by the
//! allocator here, not the resident set: the same figure on every run.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicUsize, Ordering},
};

struct Counting;

/// Bytes allocated and not yet freed.
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the only addition is a relaxed atomic count of live bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received; `ptr` came from this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received; `ptr` came from this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[path = "../../../common/gateway.rs"]
mod gateway;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: table_bytes table|reloadable ROUTES";
    let kind = args.next().expect(usage);
    let routes: usize = args.next().and_then(|n| n.parse().ok()).expect(usage);
    let before = LIVE.load(Ordering::Relaxed);
    let held: Box<dyn std::any::Any> = match kind.as_str() {
        "table" => Box::new(gateway::router(0, routes).compile().unwrap()),
        "reloadable" => {
            let app = pronghorn::router::Reloadable::new(pronghorn::Router::new()).unwrap();
            for k in 0..routes / 100 {
                app.register(format!("m{k}"), gateway::router(k * 100, (k + 1) * 100))
                    .unwrap();
            }
            Box::new(app)
        }
        other => panic!("unknown table {other}; {usage}"),
    };
    let bytes = LIVE.load(Ordering::Relaxed) - before;
    std::hint::black_box(&held);
    println!("{}", bytes / routes);
}
