//! Route lookup beside matchit, on the same tables, in one run: a static
//! route, a one-parameter route and a catch-all, at 10, 100 and 1,000
//! routes. Lookup only (no service call): `CompiledRouter::at` against
//! `matchit::Router::at`.
//!
//! Run: `cargo bench --bench router`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use http::Method;
use pronghorn::Router;

/// `size` routes: half static, a quarter with a parameter, a quarter
/// catch-alls.
fn patterns(size: usize) -> Vec<String> {
    let mut routes = Vec::with_capacity(size);
    for i in 0..size / 2 {
        routes.push(format!("/api/v1/resource{i}"));
    }
    for i in 0..size / 4 {
        routes.push(format!("/api/v1/resource{i}/{{id}}"));
    }
    for i in 0..size - routes.len() {
        routes.push(format!("/files{i}/{{*path}}"));
    }
    routes
}

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    for size in [10, 100, 1_000] {
        let routes = patterns(size);
        let pronghorn = routes
            .iter()
            .fold(Router::new(), |router, route| router.get(route, || ""))
            .compile()
            .unwrap();
        let mut matchit = matchit::Router::new();
        for (index, route) in routes.iter().enumerate() {
            matchit.insert(route.clone(), index).unwrap();
        }
        let last_static = size / 2 - 1;
        let last_dynamic = size / 4 - 1;
        let cases = [
            ("static", format!("/api/v1/resource{last_static}")),
            ("dynamic", format!("/api/v1/resource{last_dynamic}/12345")),
            ("catch-all", "/files0/assets/css/site.css".to_owned()),
        ];
        for (kind, path) in &cases {
            assert!(pronghorn.at(&Method::GET, path).is_some(), "{path}");
            assert!(matchit.at(path).is_ok(), "{path}");
            group.bench_with_input(
                BenchmarkId::new(format!("pronghorn {kind}"), size),
                path,
                |b, path| {
                    b.iter(|| black_box(pronghorn.at(&Method::GET, black_box(path)).is_some()))
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("matchit {kind}"), size),
                path,
                |b, path| b.iter(|| black_box(matchit.at(black_box(path)).is_ok())),
            );
        }
    }
    group.finish();
}

/// A whole request through the `CompiledRouter`, and through a
/// `Reloadable` serving the same table: the cost of hot reload per request.
fn reload(c: &mut Criterion) {
    use bytes::Bytes;
    use http::Request;
    use http_body_util::{BodyExt, Empty};
    use pronghorn::router::Reloadable;
    use std::{
        future::Future,
        pin::pin,
        task::{Context, Poll, Waker},
    };
    use tower::Service;

    fn once<S>(service: &mut S) -> usize
    where
        S: Service<Request<Empty<Bytes>>, Response = http::Response<pronghorn::Body>>,
        S::Error: std::fmt::Debug,
    {
        let request = Request::get("/api/v1/resource7/42")
            .body(Empty::new())
            .unwrap();
        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(response) = pin!(service.call(request)).poll(&mut cx) else {
            unreachable!("sync")
        };
        let body = response.unwrap().into_body();
        let Poll::Ready(Ok(body)) = pin!(body.collect()).poll(&mut cx) else {
            unreachable!("full")
        };
        body.to_bytes().len()
    }

    let routes = || {
        patterns(100).iter().fold(Router::new(), |router, route| {
            router.get(route, || "resource")
        })
    };
    let mut direct = routes().compile().unwrap();
    let mut reloadable = Reloadable::new(routes()).unwrap();
    let mut group = c.benchmark_group("reload");
    group.bench_function("CompiledRouter", |b| {
        b.iter(|| black_box(once(&mut direct)))
    });
    group.bench_function("Reloadable", |b| {
        b.iter(|| black_box(once(&mut reloadable)))
    });
    group.finish();
}

criterion_group!(benches, lookup, reload);
criterion_main!(benches);
