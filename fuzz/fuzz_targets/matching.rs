//! Random tables and random paths: lookup never panics, and a match binds
//! parameters that are non-empty slices of the path, and decoding them
//! never panics.
#![no_main]

use arbitrary::Arbitrary;
use http::Method;
use libfuzzer_sys::fuzz_target;
use pronghorn::Router;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    routes: Vec<&'a str>,
    paths: Vec<&'a str>,
}

fuzz_target!(|input: Input<'_>| {
    let mut router = Router::new();
    for route in input.routes.iter().take(32) {
        router = router.get(route, || "");
    }
    let Ok(router) = router.compile() else { return };
    for path in input.paths.iter().take(32) {
        if let Some(found) = router.at(&Method::GET, path) {
            let params = found.params();
            for (name, value) in params.iter_raw() {
                assert!(!value.is_empty(), "{name} is empty for {path} on {}", found.pattern());
                assert!(path.contains(value));
                let _ = params.get(name);
            }
        }
    }
});
