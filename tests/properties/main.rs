//! Properties checked on random input: routing against matchit, whole
//! exchanges through the router, extractors on hostile input, stacks of
//! layers and server-sent events. The checks of `exchange`, `extract`,
//! `layers` and `sse` are shared with the fuzz targets in `fuzz/`; the
//! strategies that drive them here are below.

mod exchange;
#[cfg(feature = "json")]
mod extract;
mod layers;
mod poll;
mod routing;
#[cfg(feature = "server")]
mod sse;

use proptest::prelude::*;

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

fn change() -> impl Strategy<Value = exchange::Change> {
    use exchange::Change;
    prop_oneof![
        4 => any::<u8>().prop_map(Change::Register),
        2 => any::<u8>().prop_map(Change::Unregister),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(n, with)| Change::Replace(n, with)),
    ]
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

    /// Modules registered, replaced and removed one by one serve what
    /// the router compiled at once from them serves, and refuse what it
    /// would refuse (see `exchange::check_reload`).
    #[test]
    fn a_reloadable_changed_by_module_serves_what_a_compile_of_its_modules_does(
        table in table(),
        changes in prop::collection::vec(change(), 1..8),
        deal in any::<u8>(),
    ) {
        exchange::check_reload(&table, &changes, deal);
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
        Target::Pairs,
        Target::MaybeQuery,
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
        Form::Blind,
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

    /// Data written to an event's data writer in pieces, split anywhere
    /// (inside a `\r\n` too), makes the event that the whole data makes.
    #[test]
    fn sse_data_written_in_pieces_is_the_data_written_at_once(
        pieces in prop::collection::vec(sse_text(), 1..5),
    ) {
        use std::fmt::Write;
        let mut writer = pronghorn::sse::Event::default().event("e").into_data_writer();
        for piece in &pieces {
            writer.write_str(piece).unwrap();
        }
        let whole = pronghorn::sse::Event::default().event("e").data(&pieces.concat());
        prop_assert_eq!(writer.into_event().to_string(), whole.to_string());
    }
}
