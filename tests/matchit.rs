//! Property: on random route sets in the syntax both routers support, and
//! random paths, pronghorn agrees with matchit on which route matches and
//! on its parameters.
//!
//! The generated routes keep to where the two routers' documented rules
//! agree: whole-segment parameters (one name per depth, as matchit
//! requires), catch-alls at the end, static text from a small alphabet;
//! paths have no empty segments (pronghorn ignores them, matchit does not).
//! A route matchit refuses to insert is left out of both tables.

use http::Method;
use pronghorn::Router;
use proptest::prelude::*;

fn segment(depth: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "c", "ab"]).prop_map(str::to_owned),
        2 => Just(format!("{{p{depth}}}")),
    ]
}

fn route() -> impl Strategy<Value = String> {
    (prop::collection::vec(0..6usize, 0..4), any::<bool>()).prop_flat_map(|(depths, catch_all)| {
        let segments: Vec<_> = (0..depths.len()).map(segment).collect();
        (segments, Just(catch_all)).prop_map(|(segments, catch_all)| {
            let mut route: String = segments.iter().map(|s| format!("/{s}")).collect();
            if catch_all {
                route.push_str("/{*rest}");
            }
            if route.is_empty() {
                route.push('/');
            }
            route
        })
    })
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "c", "ab", "x", "a.b"]),
        0..6,
    )
    .prop_map(|segments| {
        if segments.is_empty() {
            "/".to_owned()
        } else {
            segments.iter().map(|s| format!("/{s}")).collect()
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_matchit(routes in prop::collection::vec(route(), 1..12), paths in prop::collection::vec(path(), 1..16)) {
        let mut reference = matchit::Router::new();
        let mut accepted: Vec<String> = Vec::new();
        for route in routes {
            if accepted.contains(&route) {
                continue;
            }
            if reference.insert(route.clone(), accepted.len()).is_ok() {
                accepted.push(route);
            }
        }
        let router = accepted
            .iter()
            .fold(Router::<()>::new(), |router, route| router.get(route, || ""))
            .compile()
            .unwrap();
        for path in &paths {
            let theirs = reference.at(path).ok().map(|m| {
                let params: Vec<(String, String)> = m.params.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
                (accepted[*m.value].clone(), params)
            });
            let ours = router.at(&Method::GET, path).map(|m| {
                let params: Vec<(String, String)> = m.params().iter_raw().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
                (m.pattern().to_owned(), params)
            });
            prop_assert_eq!(ours, theirs, "path {} in {:?}", path, accepted);
        }
    }
}
