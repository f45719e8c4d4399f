//! The same request work done by each stack, side by side in one run (see
//! `benches/common/stacks.rs` for the work and the stacks):
//!
//! - a bare `service_fn` doing every step inline (the floor);
//! - the three steps as hand-written tower layers, and as tower-http's
//!   nearest layers;
//! - pronghorn's three layers, synchronous, and written as `async` closures;
//! - pronghorn's router with the three steps as path-scoped hooks;
//! - axum with the three steps as `from_fn` middleware, and axum's plain
//!   router for scale.
//!
//! Run: `cargo bench --bench pipeline`. Instruction counts, which do not
//! depend on the machine's noise: `benches/http/instructions.sh`.
//!
//! A second group, `costs`, times single operations whose cost in time is
//! far from their cost in instructions: the clock read a monitored request
//! starts with, and the copy of the request head that postfixes and
//! monitors see (a reference-count increment and decrement, both atomic).

#[path = "common/stacks.rs"]
mod stacks;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

fn pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    let mut bare = stacks::bare();
    group.bench_function("bare service_fn", |b| {
        b.iter(|| black_box(stacks::one(&mut bare)))
    });
    let mut hand_written = stacks::hand_written();
    group.bench_function("hand-written tower layers", |b| {
        b.iter(|| black_box(stacks::one(&mut hand_written)))
    });
    let mut tower_http = stacks::tower_http();
    group.bench_function("tower-http layers", |b| {
        b.iter(|| black_box(stacks::one(&mut tower_http)))
    });
    let mut layers = stacks::layers();
    group.bench_function("pronghorn layers, sync", |b| {
        b.iter(|| black_box(stacks::one(&mut layers)))
    });
    let mut async_layers = stacks::async_layers();
    group.bench_function("pronghorn layers, async hooks", |b| {
        b.iter(|| black_box(stacks::one(&mut async_layers)))
    });
    let mut router = stacks::router();
    group.bench_function("pronghorn router + 3 hooks", |b| {
        b.iter(|| black_box(stacks::one(&mut router)))
    });
    let mut router_dynamic = stacks::router_dynamic();
    group.bench_function("pronghorn router + 3 hooks, dynamic route", |b| {
        b.iter(|| black_box(stacks::one(&mut router_dynamic)))
    });
    let mut axum = stacks::axum_from_fn();
    group.bench_function("axum from_fn x3", |b| {
        b.iter(|| black_box(stacks::one(&mut axum)))
    });
    let mut axum_plain = stacks::axum_plain();
    group.bench_function("axum router", |b| {
        b.iter(|| black_box(stacks::one(&mut axum_plain)))
    });
    group.finish();
}

fn costs(c: &mut Criterion) {
    let mut group = c.benchmark_group("costs");
    group.bench_function("clock read (Instant::now)", |b| {
        b.iter(|| black_box(std::time::Instant::now()))
    });
    let request = stacks::request();
    group.bench_function("request head, copied and dropped", |b| {
        b.iter(|| black_box(pronghorn::RequestHead::of(black_box(&request))))
    });
    group.finish();
}

criterion_group!(benches, pipeline, costs);
criterion_main!(benches);
