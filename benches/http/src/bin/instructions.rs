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

/// The route tables of `benches/router.rs` at 1,000 routes: half static, a
/// quarter with a parameter, a quarter catch-alls.
fn patterns() -> Vec<String> {
    let mut routes: Vec<String> = (0..500).map(|i| format!("/api/v1/resource{i}")).collect();
    routes.extend((0..250).map(|i| format!("/api/v1/resource{i}/{{id}}")));
    routes.extend((0..250).map(|i| format!("/files{i}/{{*path}}")));
    routes
}

/// `lookup-ROUTER-KIND`: N lookups of one path in the 1,000-route table.
fn lookup(router: &str, kind: &str, n: u64) {
    let path = match kind {
        "static" => "/api/v1/resource499",
        "dynamic" => "/api/v1/resource249/12345",
        "catch-all" => "/files0/assets/css/site.css",
        "miss" => "/zzzzzzzzzzzzzzzzzzzzzzzz",
        other => panic!("unknown lookup {other}"),
    };
    let routes = patterns();
    let mut found = 0;
    match router {
        "pronghorn" => {
            let table = routes
                .iter()
                .fold(pronghorn::Router::new(), |router, route| router.get(route, || ""))
                .compile()
                .unwrap();
            for _ in 0..n {
                found += usize::from(
                    table
                        .at(&http::Method::GET, std::hint::black_box(path))
                        .is_some(),
                );
            }
        }
        "matchit" => {
            let mut table = matchit::Router::new();
            for (index, route) in routes.iter().enumerate() {
                table.insert(route.clone(), index).unwrap();
            }
            for _ in 0..n {
                found += usize::from(table.at(std::hint::black_box(path)).is_ok());
            }
        }
        other => panic!("unknown router {other}"),
    }
    assert_eq!(found as u64, if kind == "miss" { 0 } else { n });
    eprintln!("allocations per request: -");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let stack = args.next().expect("usage: instructions STACK N");
    let n: u64 = args.next().and_then(|n| n.parse().ok()).expect("usage: instructions STACK N");
    match stack.as_str() {
        "bare" => drive(stacks::bare(), n),
        "layers" => drive(stacks::layers(), n),
        "hand-written" => drive(stacks::hand_written(), n),
        "tower-http" => drive(stacks::tower_http(), n),
        "layers-by-value" => drive(stacks::layers_by_value(), n),
        "async-layers" => drive(stacks::async_layers(), n),
        "router" => drive(stacks::router(), n),
        "router-by-value" => drive(stacks::router_by_value(), n),
        "router-dynamic" => drive(stacks::router_dynamic(), n),
        "router-1000" => drive(stacks::router_1000(), n),
        "reloadable" => drive(pronghorn::router::Reloadable::new(stacks::router_source()).unwrap(), n),
        "axum-from-fn" => drive(stacks::axum_from_fn(), n),
        "axum" => drive(stacks::axum_plain(), n),
        "router-plain" => drive(stacks::router_plain(), n),
        "router-check-prefix" => drive(stacks::router_check_prefix(), n),
        "router-from-fn" => drive(stacks::router_from_fn(), n),
        "router-trace" => drive(stacks::router_trace(), n),
        "router-layers" => drive(stacks::router_layers(), n),
        "axum-trace" => drive(stacks::axum_trace(), n),
        other => match other.strip_prefix("lookup-").and_then(|rest| rest.split_once('-')) {
            Some((router, kind)) => lookup(router, kind, n),
            None => panic!("unknown stack {other}"),
        },
    }
}
