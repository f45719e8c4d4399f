//! What the size of an application costs: for 1,000, 10,000 and 100,000
//! routes in modules of 100, the time to build the table and its bytes
//! per route, the time of one request beside the same at 10 routes, the
//! time to register every module one by one on a `Reloadable` and to
//! replace one, the `Reloadable`'s bytes per route, and axum's build time
//! and bytes per route on the same routes.
//!
//! Every figure comes from a fresh process (this one, run again with the
//! figure's name), so that one figure's heap does not weigh on the next,
//! and is the median of three; bytes are the growth of the process's
//! resident set.
//!
//! The routes are a gateway's: a third `/api/v1/svc{i}/items`, a third
//! `/api/v1/svc{i}/items/{id}`, a third `/api/v1/svc{i}/items/{id}/detail`.
//!
//! Usage: `cargo bench --bench scale` (all sizes), or
//! `cargo bench --bench scale -- 10000` (one size).

use std::{
    hint::black_box,
    pin::pin,
    process::Command,
    task::{Context, Poll, Waker},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::Request;
use http_body_util::Empty;
use pronghorn::{Router, router::Reloadable};
use tower::Service;

/// Routes per module.
const MODULE: usize = 100;

#[path = "common/gateway.rs"]
mod gateway;

use gateway::{pattern, router};

/// A path the `n`th route answers.
fn path(n: usize) -> String {
    pattern(n).replace("{id}", "42")
}

/// The `k`th module, of routes `k * MODULE..(k + 1) * MODULE`, with
/// `tag` in the answer of each so that a replacement differs.
fn module(k: usize, tag: &'static str) -> Router {
    let routes = k * MODULE..(k + 1) * MODULE;
    routes.fold(Router::new(), |router, n| {
        router.get(&pattern(n), move || tag)
    })
}

/// The process's resident set, in bytes.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = (statm.split_whitespace().nth(1))
        .and_then(|pages| pages.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Nanoseconds per request through `service`, cycling through `paths`.
fn per_request<S>(mut service: S, paths: &[String]) -> f64
where
    S: Service<Request<Empty<Bytes>>>,
{
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut run = |count: usize| {
        let start = Instant::now();
        for n in 0..count {
            let request = Request::get(&paths[n % paths.len()])
                .body(Empty::new())
                .expect("a valid request");
            let future = pin!(service.call(request));
            let Poll::Ready(Ok(response)) = future.poll(&mut cx) else {
                panic!("a synchronous route answers in `call`");
            };
            black_box(response);
        }
        start.elapsed()
    };
    run(20_000);
    // The median of seven runs.
    let mut runs: Vec<Duration> = (0..7).map(|_| run(100_000)).collect();
    runs.sort();
    runs[3].as_nanos() as f64 / 100_000.0
}

/// The paths a request run cycles through: routes spread over the table.
fn spread(routes: usize) -> Vec<String> {
    (0..64).map(|k| path(k * 7919 % routes)).collect()
}

/// Runs one figure, in this process, and prints it.
fn figure(name: &str, routes: usize) {
    let value = match name {
        "build" => {
            let before = resident();
            let start = Instant::now();
            let compiled = router(0, routes).compile().expect("the routes compile");
            let elapsed = start.elapsed();
            let bytes = resident() - before;
            black_box(&compiled);
            format!("{} {}", elapsed.as_secs_f64() * 1e3, bytes / routes)
        }
        "request" => {
            let compiled = router(0, routes).compile().expect("the routes compile");
            format!("{}", per_request(compiled, &spread(routes)))
        }
        "register" => {
            let before = resident();
            let app = Reloadable::new(Router::new()).expect("an empty base compiles");
            let start = Instant::now();
            for k in 0..routes / MODULE {
                app.register(format!("m{k}"), module(k, "ok"))
                    .expect("modules of distinct routes");
            }
            let elapsed = start.elapsed();
            let bytes = resident() - before;
            // One module replaced, again and again: the median.
            let middle = routes / MODULE / 2;
            let mut replaces: Vec<Duration> = (0..21)
                .map(|n| {
                    let tag = if n % 2 == 0 { "new" } else { "ok" };
                    let next = module(middle, tag);
                    let start = Instant::now();
                    app.replace(format!("m{middle}"), next)
                        .expect("the same routes");
                    start.elapsed()
                })
                .collect();
            replaces.sort();
            let request = per_request(app.clone(), &spread(routes));
            format!(
                "{} {} {} {}",
                elapsed.as_secs_f64() * 1e3,
                bytes / routes,
                replaces[10].as_secs_f64() * 1e3,
                request
            )
        }
        "axum" => {
            let before = resident();
            let start = Instant::now();
            let router = (0..routes).fold(axum::Router::<()>::new(), |router, n| {
                router.route(&pattern(n), axum::routing::get(|| async { "ok" }))
            });
            let elapsed = start.elapsed();
            let bytes = resident() - before;
            black_box(&router);
            format!("{} {}", elapsed.as_secs_f64() * 1e3, bytes / routes)
        }
        other => panic!("no figure {other}"),
    };
    println!("{value}");
}

/// Runs `name` for `routes` in three fresh processes, one after the other;
/// the median of each of its figures.
fn fresh(name: &str, routes: usize) -> Vec<f64> {
    let runs: Vec<Vec<f64>> = (0..3)
        .map(|_| {
            let output = Command::new(std::env::current_exe().expect("this benchmark"))
                .args(["--figure", name, &routes.to_string()])
                .output()
                .expect("the benchmark runs again");
            assert!(output.status.success(), "{name} {routes}: {output:?}");
            String::from_utf8_lossy(&output.stdout)
                .split_whitespace()
                .map(|figure| figure.parse().expect("a number"))
                .collect()
        })
        .collect();
    (0..runs[0].len())
        .map(|field| {
            let mut values: Vec<f64> = runs.iter().map(|run| run[field]).collect();
            values.sort_by(f64::total_cmp);
            values[1]
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, name, routes] = args.as_slice() {
        if flag == "--figure" {
            return figure(name, routes.parse().expect("a number of routes"));
        }
    }
    let sizes: Vec<usize> = match args.iter().find_map(|arg| arg.parse().ok()) {
        Some(size) => vec![size],
        None => vec![1_000, 10_000, 100_000],
    };
    let small = fresh("request", 10)[0];
    println!("one request at 10 routes: {small:.0} ns\n");
    println!(
        "| routes | build | bytes / route | request (x at 10) | register one by one \
         (x build) | replace one | `Reloadable` bytes / route (x table) | request on it | \
         axum build | axum bytes / route |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for routes in sizes {
        let build = fresh("build", routes);
        let request = fresh("request", routes)[0];
        let reload = fresh("register", routes);
        let axum = fresh("axum", routes);
        println!(
            "| {routes} | {:.1} ms | {:.0} | {request:.0} ns ({:.2}) | {:.1} ms ({:.2}) | \
             {:.3} ms | {:.0} ({:.2}) | {:.0} ns | {:.1} ms | {:.0} |",
            build[0],
            build[1],
            request / small,
            reload[0],
            reload[0] / build[0],
            reload[2],
            reload[1],
            reload[1] / build[1],
            reload[3],
            axum[0],
            axum[1],
        );
    }
}
