//! Properties of the router. First: on random route sets in the syntax both routers support, and
//! random paths, pronghorn agrees with matchit on which route matches and
//! on its parameters.
//!
//! The generated routes keep to where the two routers' documented rules
//! agree: whole-segment parameters (one name per depth, as matchit
//! requires), catch-alls at the end, static text from a small alphabet;
//! paths have no empty segments (pronghorn ignores them, matchit does not).
//! A route matchit refuses to insert is left out of both tables.

#[path = "properties/exchange.rs"]
mod exchange;
#[cfg(feature = "json")]
#[path = "properties/extract.rs"]
mod extract;
#[path = "properties/layers.rs"]
mod layers;
#[path = "properties/poll.rs"]
mod poll;
#[cfg(feature = "server")]
#[path = "properties/sse.rs"]
mod sse;

use exchange::normal;
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
        .fold(Router::<()>::new(), |router, route| {
            router.get(route, || "")
        })
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
/// at the end, or none at the start.
fn slashed_path() -> impl Strategy<Value = String> {
    let slashes = prop::sample::select(vec!["/", "/", "/", "//", "///"]);
    (
        prop::sample::select(vec!["", "/", "//"]),
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
            let mut path = String::new();
            for (index, (slashes, text)) in segments.iter().enumerate() {
                path.push_str(if index == 0 { start } else { slashes });
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
        let mut router = Router::<()>::new();
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
        match Router::<()>::new().get(&pattern, || "").compile() {
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
        let router = routes.iter().fold(Router::<()>::new(), |router, route| router.get(route, || ""));
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
        let router = Router::<()>::new().get("/p/{value}", || "").compile().unwrap();
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

// ---- whole exchanges: tests/properties/exchange.rs ------------------------

fn piece() -> impl Strategy<Value = exchange::Piece> {
    use exchange::Piece;
    prop_oneof![
        6 => any::<u8>().prop_map(Piece::Text),
        3 => Just(Piece::Param),
        2 => any::<u8>().prop_map(Piece::Pair),
        1 => Just(Piece::CatchAll),
        1 => "[a-z{}*/.]{0,4}".prop_map(Piece::Raw),
    ]
}

fn verb() -> impl Strategy<Value = exchange::Verb> {
    prop::sample::select(exchange::Verb::ALL.to_vec())
}

fn table() -> impl Strategy<Value = exchange::Table> {
    use exchange::{HookSpec, Kind, RequestSpec, RouteSpec, Step, Table};
    let pattern = || prop::collection::vec(piece(), 0..4);
    let suspends = || prop::bool::weighted(0.25);
    let panics = || prop::bool::weighted(0.05);
    let route = (
        prop::option::weighted(0.8, verb()),
        pattern(),
        suspends(),
        panics(),
    )
        .prop_map(|(verb, pattern, suspends, panics)| RouteSpec {
            verb,
            pattern,
            suspends,
            panics,
        });
    let kind = prop::sample::select(vec![Kind::Prefix, Kind::Postfix, Kind::Monitor]);
    let hook = (
        (kind, prop::option::weighted(0.3, verb())),
        prop::collection::vec(piece(), 0..3),
        0..5u8,
        suspends(),
        prop::bool::weighted(0.15),
        panics(),
    )
        .prop_map(
            |((kind, verb), pattern, priority, suspends, answers, panics)| HookSpec {
                kind,
                verb,
                pattern,
                priority,
                suspends,
                answers,
                panics,
            },
        );
    let step = prop_oneof![
        8 => any::<u8>().prop_map(Step::Text),
        2 => Just(Step::Empty),
        1 => any::<u8>().prop_map(Step::Escape),
        1 => Just(Step::Dots),
        1 => "[a-z.%-]{0,3}".prop_map(Step::Raw),
    ];
    let request = (
        verb(),
        prop::collection::vec(step, 0..5),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(verb, path, trailing_slash, query)| RequestSpec {
            verb,
            path,
            trailing_slash,
            query,
        });
    (
        prop::collection::vec(route, 1..10),
        prop::collection::vec(pattern(), 0..3),
        prop::collection::vec(hook, 0..8),
        prop::collection::vec(request, 1..16),
    )
        .prop_map(|(routes, websockets, hooks, requests)| Table {
            routes,
            websockets,
            hooks,
            requests,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// fuzz/fuzz_targets/exchange.rs: every request through the service
    /// agrees with the lookup on its answer, its `Allow`, and the hooks
    /// that ran, and suspends no more often than its steps do, never
    /// without a wake-up (see tests/properties/exchange.rs).
    #[test]
    fn exchanges_agree_with_the_lookup(table in table()) {
        exchange::check(&table);
    }
}

// ---- extractors: tests/properties/extract.rs ------------------------------

#[cfg(feature = "json")]
fn call() -> impl Strategy<Value = extract::Call> {
    use extract::{CONTENT_TYPES, Call, Target};
    let target = prop::sample::select(vec![
        Target::Number,
        Target::Pair,
        Target::Named,
        Target::Color,
        Target::Query,
        Target::Json,
        Target::Text,
    ]);
    // Numbers, words, escapes good and bad, `+`, and the odd delimiter.
    let value = || {
        prop_oneof![
            4 => "[0-9]{1,3}",
            2 => "-?[0-9]{1,20}",
            2 => "(red|green|Red|blue)",
            3 => "([a-z0-9]|%[0-9A-Fa-f]{2}|%[G-Zg-z][0-9A-Fa-f]|%[0-9A-Za-z]?|\\+)+",
            1 => "[a-z=&/?#]{0,3}",
        ]
    };
    // The first value is mostly a number: the second then decides.
    let first = prop_oneof![3 => "-?[0-9]{1,10}", 1 => value()];
    let values = (first, value()).prop_map(|(first, second)| vec![first, second]);
    let query =
        prop::collection::vec(("(a|b|flag|c|%61|a\\+|)", value()), 0..4).prop_map(|pairs| {
            pairs
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join("&")
        });
    let body = prop_oneof![
        Just(b"{\"a\":[1,2,{\"b\":null}]}".to_vec()),
        Just(b"[1, 2".to_vec()),
        "\\PC{0,80}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..80),
    ];
    let delivery = (0..4u8, any::<bool>(), any::<bool>());
    (
        target,
        values,
        query,
        0..CONTENT_TYPES.len() as u8,
        body,
        delivery,
    )
        .prop_map(
            |(target, values, query, content_type, body, (pieces, waits, sized))| Call {
                target,
                values,
                query,
                content_type,
                body,
                pieces,
                waits,
                sized,
            },
        )
}

#[cfg(feature = "json")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// fuzz/fuzz_targets/extract.rs: `Path`, `Query`, `Json` and `String`
    /// answer what a reference decoder and parser predict, never a 500
    /// (see tests/properties/extract.rs).
    #[test]
    fn extractors_answer_as_the_reference_does(calls in prop::collection::vec(call(), 1..8)) {
        let mut router = extract::router();
        for call in &calls {
            extract::check(&mut router, call);
        }
    }
}

// ---- stacks of layers: tests/properties/layers.rs --------------------------

fn stack() -> impl Strategy<Value = layers::Stack> {
    use layers::{Form, Kind, LayerSpec, Stack};
    let kind = prop::sample::select(vec![Kind::Prefix, Kind::Postfix, Kind::Monitor]);
    let form = prop::sample::select(vec![
        Form::InPlace,
        Form::ByValue,
        Form::Future,
        Form::StepReady,
        Form::StepPending,
    ]);
    let layer =
        (kind, form, prop::bool::weighted(0.2)).prop_map(|(kind, form, answers)| LayerSpec {
            kind,
            form,
            answers,
        });
    (prop::collection::vec(layer, 0..7), any::<bool>(), 1..4u8).prop_map(
        |(layers, handler_suspends, requests)| Stack {
            layers,
            handler_suspends,
            requests,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// fuzz/fuzz_targets/layers.rs: a stack of prefix, postfix and monitor
    /// layers, each hook in any of its forms, runs its steps in the order
    /// the nesting gives and suspends no more often than they do (see
    /// tests/properties/layers.rs).
    #[test]
    fn stacks_of_layers_run_in_nesting_order(stack in stack()) {
        layers::check(&stack);
    }
}

// ---- server-sent events: tests/properties/sse.rs ---------------------------

/// Text rich in what the event-stream format gives a meaning to.
#[cfg(feature = "server")]
fn sse_text() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec!['\r', '\n', '\0', ':', ' ', '\u{feff}']);
    prop::collection::vec(prop_oneof![2 => special, 3 => any::<char>()], 0..10)
        .prop_map(|chars| chars.into_iter().collect())
}

#[cfg(feature = "server")]
fn sse_event() -> impl Strategy<Value = sse::Built> {
    (
        prop::option::of(sse_text()),
        prop::option::of(sse_text()),
        prop::option::weighted(0.8, sse_text()),
        prop::option::weighted(0.2, any::<u32>()),
    )
        .prop_map(|(event, id, data, retry)| sse::Built {
            event,
            id,
            data,
            retry,
        })
}

#[cfg(feature = "server")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Events written one after the other, as an `Sse` body sends them,
    /// read back as a browser's `EventSource` reads them: each comes back
    /// as built (see tests/properties/sse.rs).
    #[test]
    fn sse_events_read_back_as_a_browser_reads_them(events in prop::collection::vec(sse_event(), 1..5)) {
        if let Err(failure) = sse::check(&events) {
            return Err(TestCaseError::fail(failure));
        }
    }
}
