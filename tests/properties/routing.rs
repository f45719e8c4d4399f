//! Routing: on random route sets in the syntax both routers support, and
//! random paths, pronghorn agrees with matchit on which route matches and
//! on its parameters.
//!
//! The generated routes keep to where the two routers' documented rules
//! agree: whole-segment parameters (one name per depth, as matchit
//! requires), catch-alls at the end, static text from a small alphabet;
//! paths have no empty segments (pronghorn ignores them, matchit does not).
//! A route matchit refuses to insert is left out of both tables.

use crate::exchange::normal;
use http::Method;
use pronghorn::Router;
use proptest::prelude::*;

/// Static segments of the narrow tables: few children per node.
const NARROW: &[&str] = &["a", "b", "c", "ab"];
/// Static segments of the wide tables: nodes with many children and long
/// static paths (which go to the static index).
const WIDE: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "ab", "ac", "ad", "ae", "af",
];

fn segment(depth: usize, text: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(text).prop_map(str::to_owned),
        2 => Just(format!("{{p{depth}}}")),
    ]
}

fn route_from(text: &'static [&'static str]) -> impl Strategy<Value = String> {
    (prop::collection::vec(0..6usize, 0..5), any::<bool>()).prop_flat_map(
        move |(depths, catch_all)| {
            let segments: Vec<_> = (0..depths.len())
                .map(|depth| segment(depth, text))
                .collect();
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
        },
    )
}

fn route() -> impl Strategy<Value = String> {
    route_from(NARROW)
}

fn path_from(text: &'static [&'static str]) -> impl Strategy<Value = String> {
    let mut segments = text.to_vec();
    segments.extend(["x", "a.b"]);
    prop::collection::vec(prop::sample::select(segments), 0..6).prop_map(|segments| {
        if segments.is_empty() {
            "/".to_owned()
        } else {
            segments.iter().map(|s| format!("/{s}")).collect()
        }
    })
}

fn path() -> impl Strategy<Value = String> {
    path_from(NARROW)
}

/// Builds both routers from `routes` and checks that they answer every
/// path alike.
fn agree(routes: Vec<String>, paths: &[String]) -> Result<(), TestCaseError> {
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
        .fold(Router::new(), |router, route| router.get(route, || ""))
        .compile()
        .unwrap();
    for path in paths {
        let theirs = reference.at(path).ok().map(|m| {
            let params: Vec<(String, String)> = m
                .params
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            (accepted[*m.value].clone(), params)
        });
        let ours = router.at(&Method::GET, path).map(|m| {
            let params: Vec<(String, String)> = m
                .params()
                .iter_raw()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            (m.pattern().to_owned(), params)
        });
        prop_assert_eq!(ours, theirs, "path {} in {:?}", path, accepted);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_matchit(routes in prop::collection::vec(route(), 1..12), paths in prop::collection::vec(path(), 1..16)) {
        agree(routes, &paths)?;
    }

    #[test]
    fn agrees_with_matchit_on_wide_tables(
        routes in prop::collection::vec(route_from(WIDE), 8..48),
        paths in prop::collection::vec(path_from(WIDE), 1..24),
    ) {
        agree(routes, &paths)?;
    }
}

// ---- empty segments ------------------------------------------------------

/// A route in the fuller syntax: several parameters in a segment, literal
/// text around them, catch-alls with static segments after them.
fn rich_route() -> impl Strategy<Value = String> {
    let segment = |depth: usize| {
        prop_oneof![
            3 => prop::sample::select(vec!["a", "b", "ab", "x.json"]).prop_map(str::to_owned),
            2 => Just(format!("{{p{depth}}}")),
            1 => Just(format!("{{p{depth}}}.{{q{depth}}}")),
            1 => Just(format!("v{{p{depth}}}")),
        ]
    };
    (prop::collection::vec(0..6usize, 0..4), 0..3usize).prop_flat_map(move |(depths, tail)| {
        let segments: Vec<_> = (0..depths.len()).map(segment).collect();
        (segments, Just(tail)).prop_map(|(segments, tail)| {
            let mut route: String = segments.iter().map(|s| format!("/{s}")).collect();
            match tail {
                1 => route.push_str("/{*rest}"),
                2 => route.push_str("/{*rest}/a"),
                _ => {}
            }
            if route.is_empty() {
                route.push('/');
            }
            route
        })
    })
}

/// A path with runs of slashes anywhere: at the start, between segments,
/// at the end. (A target without its leading slash is no path.)
fn slashed_path() -> impl Strategy<Value = String> {
    let slashes = prop::sample::select(vec!["/", "/", "/", "//", "///"]);
    (
        prop::sample::select(vec!["/", "/", "//"]),
        prop::collection::vec(
            (
                slashes,
                prop::sample::select(vec!["a", "b", "ab", "x.json", "v1", "1.2", "a.b"]),
            ),
            0..5,
        ),
        prop::sample::select(vec!["", "", "/", "//"]),
    )
        .prop_map(|(start, segments, end)| {
            let mut path = start.to_owned();
            for (index, (slashes, text)) in segments.iter().enumerate() {
                if index > 0 {
                    path.push_str(slashes);
                }
                path.push_str(text);
            }
            path.push_str(end);
            path
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Empty segments take no part: a path finds the route its normal form
    /// finds, with the same parameters (a catch-all's value as received,
    /// its runs of slashes aside).
    #[test]
    fn a_path_matches_as_its_normal_form(
        routes in prop::collection::vec(rich_route(), 1..12),
        paths in prop::collection::vec(slashed_path(), 1..16),
    ) {
        let mut router = Router::new();
        let mut seen = Vec::new();
        for route in routes {
            if !seen.contains(&route) {
                router = router.get(&route, || "");
                seen.push(route);
            }
        }
        // Two routes may still conflict (`/{p0}` and `/{p1}`): no table then.
        let Ok(router) = router.compile() else { return Ok(()) };
        for path in &paths {
            let form = normal(path);
            let found = |path: &str| {
                router.at(&Method::GET, path).map(|m| {
                    let params: Vec<(String, String)> = m
                        .params()
                        .iter_raw()
                        .map(|(k, v)| (k.to_owned(), normal(v)[1..].to_owned()))
                        .collect();
                    (m.pattern().to_owned(), params)
                })
            };
            prop_assert_eq!(found(path), found(&form), "path {:?} in {:?}", path, seen);
        }
    }
}

// ---- mirrors of the fuzz targets in fuzz/, so that CI keeps them --------

fn route_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("/".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("*".to_owned()),
            Just("{{".to_owned()),
            Just("{a}".to_owned()),
            Just("{*r}".to_owned()),
            "[a-z_0-9.-]{0,3}",
            any::<char>().prop_map(String::from),
        ],
        0..10,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// fuzz/fuzz_targets/pattern.rs: any pattern compiles or is refused with
    /// an error naming it; lookups on what compiled never panic.
    #[test]
    fn any_pattern_compiles_or_names_itself(pattern in route_text()) {
        match Router::new().get(&pattern, || "").compile() {
            Ok(router) => {
                let path = pattern.replace(['{', '}', '*'], "");
                let _ = router.at(&Method::GET, &path);
                let _ = router.at(&Method::GET, &pattern);
            }
            Err(error) => prop_assert!(error.to_string().contains(&pattern), "{} does not name {:?}", error, pattern),
        }
    }

    /// fuzz/fuzz_targets/matching.rs: random tables and paths; every bound
    /// parameter is a non-empty slice of the path and decodes without panic.
    #[test]
    fn matches_bind_non_empty_slices_of_the_path(
        routes in prop::collection::vec(route_text(), 1..8),
        paths in prop::collection::vec("(/[a-z{}%.*0-9]{0,4}){0,5}", 1..8),
    ) {
        let router = routes.iter().fold(Router::new(), |router, route| router.get(route, || ""));
        if let Ok(router) = router.compile() {
            for path in &paths {
                if let Some(found) = router.at(&Method::GET, path) {
                    for (name, value) in found.params().iter_raw() {
                        prop_assert!(!value.is_empty(), "{} empty for {} on {}", name, path, found.pattern());
                        prop_assert!(path.contains(value));
                        let _ = found.params().get(name);
                    }
                }
            }
        }
    }

    /// fuzz/fuzz_targets/decode.rs: a parameter decodes to UTF-8 or to an
    /// error carrying the raw text; without `%` it comes back unchanged.
    #[test]
    fn parameters_decode_or_keep_their_raw_text(value in "([^/%]|%[0-9A-Fa-f]{2}|%[^/]{0,2}){1,12}") {
        let router = Router::new().get("/p/{value}", || "").compile().unwrap();
        let path = format!("/p/{value}");
        let found = router.at(&Method::GET, &path).expect("one segment always matches");
        match found.params().get("value").unwrap() {
            Ok(decoded) => {
                if !value.contains('%') {
                    prop_assert_eq!(decoded.as_ref(), value.as_str());
                }
            }
            Err(error) => prop_assert_eq!(error.raw(), value.as_str()),
        }
    }
}
