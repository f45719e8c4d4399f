//! Percent-decoding of parameters: any bytes in a parameter decode to
//! valid UTF-8 or a `DecodeError` carrying the raw text, never a panic; a
//! value with no `%` is returned as it is.
#![no_main]

use http::Method;
use libfuzzer_sys::fuzz_target;
use pronghorn::Router;

fuzz_target!(|value: &str| {
    if value.is_empty() || value.contains('/') {
        return;
    }
    let router = Router::new().get("/p/{value}", || "").compile().unwrap();
    let path = format!("/p/{value}");
    let found = router.at(&Method::GET, &path).expect("one segment always matches");
    match found.params().get("value").unwrap() {
        Ok(decoded) => {
            if !value.contains('%') {
                assert_eq!(decoded, value);
            }
        }
        Err(error) => assert_eq!(error.raw(), value),
    }
});
