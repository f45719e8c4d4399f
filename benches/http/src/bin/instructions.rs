//! Runs N in-process requests through one stack of
//! `benches/common/stacks.rs`: `instructions STACK N`. Run it under
//! `valgrind --tool=callgrind` (see `instructions.sh`) for instructions per
//! request; it prints heap allocations per request itself.

#[path = "../../../common/stacks.rs"]
mod stacks;

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicU64, Ordering},
};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the only addition is a relaxed atomic counter.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded as received; `ptr` came from this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received; `ptr` came from this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn drive<S, B>(mut service: S, n: u64)
where
    S: tower::Service<stacks::Req, Response = http::Response<B>, Error = std::convert::Infallible>,
    B: http_body::Body<Data = bytes::Bytes>,
    B::Error: std::fmt::Debug,
{
    stacks::one(&mut service);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..n {
        std::hint::black_box(stacks::one(&mut service));
    }
    let per_request = (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / n as f64;
    eprintln!("allocations per request: {per_request}");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let stack = args.next().expect("usage: instructions STACK N");
    let n: u64 = args.next().and_then(|n| n.parse().ok()).expect("usage: instructions STACK N");
    match stack.as_str() {
        "bare" => drive(stacks::bare(), n),
        "layers" => drive(stacks::layers(), n),
        "async-layers" => drive(stacks::async_layers(), n),
        "router" => drive(stacks::router(), n),
        "router-dynamic" => drive(stacks::router_dynamic(), n),
        "router-1000" => drive(stacks::router_1000(), n),
        "reloadable" => drive(pronghorn::router::Reloadable::new(stacks::router()), n),
        "axum-from-fn" => drive(stacks::axum_from_fn(), n),
        "axum" => drive(stacks::axum_plain(), n),
        other => panic!("unknown stack {other}"),
    }
}
