//! Any string as a route pattern: `compile` answers `Ok` or a `RouteError`
//! naming that pattern, never panics; an accepted pattern matches a path
//! built from its own static text without panicking.
#![no_main]

use http::Method;
use libfuzzer_sys::fuzz_target;
use pronghorn::Router;

fuzz_target!(|pattern: &str| {
    match Router::new().get(pattern, || "").compile() {
        Ok(router) => {
            let path = pattern.replace(['{', '}', '*'], "");
            let _ = router.at(&Method::GET, &path);
            let _ = router.at(&Method::GET, pattern);
        }
        Err(error) => assert!(error.to_string().contains(pattern), "{error} does not name `{pattern}`"),
    }
});
