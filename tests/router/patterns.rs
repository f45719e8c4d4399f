//! Patterns and paths: what a pattern matches and the parameters it binds.

use super::*;

#[tokio::test]
async fn patterns_and_parameters() {
    let router = routes(&[
        "/files/{base}.{ext}",
        "/slug/{slug}.json",
        "/v{major}.{minor}",
        "/f/pre{id}.json",
        "/f/{first}-{second}.tail",
        "/p/p{id}",
        "/cat/{*rest}",
        "/edit/{*path}/edit",
        "/brace/{{x}}",
        "/under/{snake_case_1}",
    ]);
    let cases: &[(&str, Option<&str>)] = &[
        (
            "/files/report.final.json",
            Some("/files/{base}.{ext} base=report ext=final.json"),
        ),
        ("/slug/a.b.json", Some("/slug/{slug}.json slug=a.b")),
        ("/v1.2", Some("/v{major}.{minor} major=1 minor=2")),
        ("/f/prevalue.json", Some("/f/pre{id}.json id=value")),
        (
            "/f/left-right.tail",
            Some("/f/{first}-{second}.tail first=left second=right"),
        ),
        ("/f/value.json", None),
        ("/p/p", None),
        ("/p/px", Some("/p/p{id} id=x")),
        ("/cat/a/b/c", Some("/cat/{*rest} rest=a/b/c")),
        ("/cat//a///b/", Some("/cat/{*rest} rest=a/b")),
        ("/edit//a//b//edit", Some("/edit/{*path}/edit path=a/b")),
        ("/cat", None),
        ("/edit/a/b/edit", Some("/edit/{*path}/edit path=a/b")),
        ("/edit/edit", None),
        ("/brace/{x}", Some("/brace/{{x}}")),
        ("/under/ok", Some("/under/{snake_case_1} snake_case_1=ok")),
    ];
    for &(path, expected) in cases {
        let answer = get(&router, path).await;
        match expected {
            Some(body) => assert_eq!(
                (answer.status, answer.body.as_str()),
                (StatusCode::OK, body),
                "{path}"
            ),
            None => assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}"),
        }
    }
}

#[tokio::test]
async fn paths_match_as_received() {
    let router = Router::new()
        .get("/a/b", || "ab")
        .get("/Case", || "upper")
        .get("/sp%20ace", || "space")
        .get("/d/{v}", echo("d"))
        .get("/typed/{n}", |Path(n): Path<u32>| format!("n={n}"))
        .get("/files/{*path}", echo("files"))
        .compile()
        .unwrap();
    for path in ["/a/b", "/a/b/", "/a//b", "//a/b//"] {
        assert_eq!(
            get(&router, path).await.body,
            "ab",
            "{path}: empty segments are ignored"
        );
    }
    assert_eq!(
        get(&router, "/case").await.status,
        StatusCode::NOT_FOUND,
        "case-sensitive"
    );
    assert_eq!(
        get(&router, "/sp%20ace").await.body,
        "space",
        "still encoded"
    );
    assert_eq!(
        get(&router, "/%73p%20ace").await.status,
        StatusCode::NOT_FOUND,
        "not decoded before matching"
    );
    assert_eq!(
        get(&router, "/a/b?x=1").await.body,
        "ab",
        "the query takes no part"
    );
    assert_eq!(
        get(&router, "/d/a%20b").await.body,
        "d v=a b",
        "decoded on access"
    );
    assert_eq!(get(&router, "/d/caf%C3%A9").await.body, "d v=café");
    let bad = get(&router, "/d/%ZZ").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("`v`"), "{}", bad.body);
    assert_eq!(get(&router, "/typed/%34%32").await.body, "n=42");
    let not_a_number = get(&router, "/typed/abc").await;
    assert_eq!(not_a_number.status, StatusCode::BAD_REQUEST);
    assert!(not_a_number.body.contains("`n`"), "{}", not_a_number.body);
    assert_eq!(
        get(&router, "/files/../etc/passwd").await.body,
        "files path=../etc/passwd",
        "dot segments reach the handler"
    );
}

#[tokio::test]
async fn parameters_inside_segments_are_matched_by_prefix_and_suffix() {
    let router = routes(&["/f/pre{id}.json", "/f/{first}-{second}.tail"]);
    assert_eq!(
        get(&router, "/f/prevalue.json").await.body,
        "/f/pre{id}.json id=value"
    );
    assert_eq!(
        get(&router, "/f/left-right.tail").await.body,
        "/f/{first}-{second}.tail first=left second=right"
    );
    assert_eq!(
        get(&router, "/f/value.json").await.status,
        StatusCode::NOT_FOUND
    );
}
