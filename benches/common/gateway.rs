//! The routes of the scale figures, a gateway's: a third
//! `/api/v1/svc{i}/items`, a third `/api/v1/svc{i}/items/{id}`, a third
//! `/api/v1/svc{i}/items/{id}/detail`. Shared by `benches/scale.rs` and
//! `benches/http/src/bin/table_bytes.rs` (the cost guard's bytes per route).

/// The pattern of the `n`th route.
pub fn pattern(n: usize) -> String {
    let service = n / 3;
    match n % 3 {
        0 => format!("/api/v1/svc{service}/items"),
        1 => format!("/api/v1/svc{service}/items/{{id}}"),
        _ => format!("/api/v1/svc{service}/items/{{id}}/detail"),
    }
}

/// The routes `from..to`, each answering "ok", as a router.
pub fn router(from: usize, to: usize) -> pronghorn::Router {
    (from..to).fold(pronghorn::Router::new(), |router, n| {
        router.get(&pattern(n), || "ok")
    })
}
