//! Hot reload: swaps under load over loopback lose nothing; modules come
//! and go by id; a conflicting module leaves the live table untouched.

mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use pronghorn::{
    Body, Router,
    router::{Reloadable, Route, RouteExchange},
};
use tokio::net::TcpListener;
use tower::ServiceExt;

fn table(name: &'static str) -> Router {
    Router::new()
        .get("/v", move || name)
        .get("/v/{id}", move || name)
}

async fn fetch(
    sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    path: &str,
) -> Result<(StatusCode, Bytes), String> {
    sender.ready().await.map_err(|e| e.to_string())?;
    let request = Request::get(path)
        .header("host", "localhost")
        .body(Empty::new())
        .unwrap();
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, body))
}

/// Serves `app` on loopback to four clients that ask for `/v` and `/v/7`
/// without pause, while `change` makes table `B`, then `A`, then `B`…
/// live, at least 200 times and for at least 2 s. A request sent after a
/// change sees the new table, and every client's request is answered by
/// one table or the other: none fails, none finds the route missing.
async fn changes_under_load(app: Reloadable, change: impl Fn(&'static str)) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        pronghorn::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );

    let running = Arc::new(AtomicBool::new(true));
    // Answered by A or B, answered otherwise, failed.
    let counts = Arc::new([const { AtomicU64::new(0) }; 3]);
    let clients: Vec<_> = (0..4)
        .map(|n| {
            let (running, counts) = (running.clone(), counts.clone());
            tokio::spawn(async move {
                let mut sender = common::connect(address).await;
                let path = if n % 2 == 0 { "/v" } else { "/v/7" };
                while running.load(Ordering::Relaxed) {
                    let outcome = match fetch(&mut sender, path).await {
                        Ok((StatusCode::OK, body)) if body == "A" || body == "B" => 0,
                        Ok(_) => 1,
                        Err(_) => 2,
                    };
                    counts[outcome].fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    let started = Instant::now();
    let mut changes = 0u32;
    let mut checker = common::connect(address).await;
    while changes < 200 || started.elapsed() < Duration::from_secs(2) {
        let next = if changes % 2 == 0 { "B" } else { "A" };
        change(next);
        changes += 1;
        let (status, body) = fetch(&mut checker, "/v").await.unwrap();
        assert_eq!(
            (status, &body[..]),
            (StatusCode::OK, next.as_bytes()),
            "after change {changes}"
        );
    }
    running.store(false, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    let _ = stop_server.send(());
    server.await.unwrap().unwrap();

    let [ok, foreign, failed] = counts.each_ref().map(|count| count.load(Ordering::Relaxed));
    println!(
        "{changes} changes in {:?}; {ok} requests answered by A or B, {failed} failed, {foreign} other",
        started.elapsed()
    );
    assert!(ok > 1_000, "the clients kept sending: {ok}");
    assert_eq!((failed, foreign), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swaps_under_load_lose_no_request() {
    let app = Reloadable::new(table("A")).unwrap();
    let changed = app.clone();
    changes_under_load(app, |next| changed.swap(table(next)).unwrap()).await;
}

/// `replace` changes a module in one step: its routes never go missing,
/// as they would between `unregister` and `register`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_replaced_under_load_is_never_missing() {
    let app = Reloadable::new(Router::new().get("/", || "base")).unwrap();
    app.register("m", table("A")).unwrap();
    let changed = app.clone();
    changes_under_load(app.clone(), |next| {
        assert!(changed.replace("m", table(next)).unwrap());
    })
    .await;
    assert_eq!(app.modules(), ["m"]);
}

#[tokio::test]
async fn modules_register_and_unregister_by_id() {
    let events = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = |name: &'static str| {
        let events = events.clone();
        move |request: Request<Body>, _: &mut Route<'_>| {
            events.lock().unwrap().push(name.to_owned());
            request
        }
    };
    let app = Reloadable::new(Router::new().get("/", || "home")).unwrap();
    let blog = Router::new()
        .get("/blog", || "posts")
        .get("/blog/{id}", || "post")
        .prefix("/blog", log("blog prefix"));
    app.register("blog", blog).unwrap();
    // The same id again: another route and a monitor, both removed with it.
    let seen = events.clone();
    app.register(
        "blog",
        Router::new()
            .post("/blog", || "created")
            .monitor("/blog", move |x: &RouteExchange<'_>| {
                seen.lock()
                    .unwrap()
                    .push(format!("blog monitor {}", x.status().unwrap().as_u16()));
            }),
    )
    .unwrap();
    app.register("shop", Router::new().get("/shop", || "shop"))
        .unwrap();
    assert_eq!(app.modules(), ["blog", "shop"]);

    let call = |method: Method, path: &str| {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .body(String::new())
            .unwrap();
        app.clone().oneshot(request)
    };
    let body = |response: Response<Body>| async move {
        response.into_body().collect().await.unwrap().to_bytes()
    };
    assert_eq!(
        body(call(Method::GET, "/blog/1").await.unwrap()).await,
        "post"
    );
    assert_eq!(
        body(call(Method::POST, "/blog").await.unwrap()).await,
        "created"
    );
    assert_eq!(
        *events.lock().unwrap(),
        [
            "blog prefix",
            "blog monitor 200",
            "blog prefix",
            "blog monitor 200"
        ]
    );

    // A conflicting registration is refused and changes nothing.
    let conflict = app
        .register("broken", Router::new().get("/shop", || "other shop"))
        .unwrap_err();
    assert!(conflict.to_string().contains("/shop"), "{conflict}");
    let bad_pattern = app
        .register("broken", Router::new().get("/x/{", || "x"))
        .unwrap_err();
    assert!(bad_pattern.to_string().contains("/x/{"), "{bad_pattern}");
    assert_eq!(app.modules(), ["blog", "shop"]);
    assert_eq!(
        body(call(Method::GET, "/shop").await.unwrap()).await,
        "shop"
    );

    // Unregistering removes every route and hook of the id.
    events.lock().unwrap().clear();
    assert!(app.unregister("blog").unwrap());
    assert!(!app.unregister("blog").unwrap());
    assert_eq!(
        call(Method::GET, "/blog/1").await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(Method::POST, "/blog").await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert!(
        events.lock().unwrap().is_empty(),
        "{:?}",
        events.lock().unwrap()
    );
    assert_eq!(body(call(Method::GET, "/").await.unwrap()).await, "home");
    assert_eq!(app.modules(), ["shop"]);

    // `GET /reload` replaced by its module's id.
    app.register("r", Router::new().get("/reload", || "old"))
        .unwrap();
    assert_eq!(
        body(call(Method::GET, "/reload").await.unwrap()).await,
        "old"
    );
    app.unregister("r").unwrap();
    app.register("r", Router::new().get("/reload", || "new"))
        .unwrap();
    assert_eq!(
        body(call(Method::GET, "/reload").await.unwrap()).await,
        "new"
    );

    // `replace`: a new id comes last; a known one keeps its place and loses
    // all its registrations; a refused one changes nothing.
    assert!(
        !app.replace("late", Router::new().get("/late", || "late"))
            .unwrap()
    );
    assert_eq!(app.modules(), ["shop", "r", "late"]);
    app.register("shop", Router::new().get("/shop/more", || "more"))
        .unwrap();
    assert!(
        app.replace("shop", Router::new().get("/shop", || "shop 2"))
            .unwrap()
    );
    assert_eq!(app.modules(), ["shop", "r", "late"]);
    assert_eq!(
        body(call(Method::GET, "/shop").await.unwrap()).await,
        "shop 2"
    );
    assert_eq!(
        call(Method::GET, "/shop/more").await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let conflict = app
        .replace("late", Router::new().get("/reload", || "taken"))
        .unwrap_err();
    assert!(conflict.to_string().contains("/reload"), "{conflict}");
    assert_eq!(app.modules(), ["shop", "r", "late"]);
    assert_eq!(
        body(call(Method::GET, "/late").await.unwrap()).await,
        "late"
    );
}

#[tokio::test]
async fn a_request_in_flight_finishes_on_the_table_it_started_with() {
    let (release, wait) = tokio::sync::oneshot::channel::<()>();
    let wait = Arc::new(tokio::sync::Mutex::new(Some(wait)));
    let slow = Router::new().get("/slow", move || {
        let wait = wait.clone();
        async move {
            if let Some(wait) = wait.lock().await.take() {
                let _ = wait.await;
            }
            "old table"
        }
    });
    let app = Reloadable::new(slow).unwrap();
    let mut in_flight = Box::pin(
        app.clone()
            .oneshot(Request::get("/slow").body(String::new()).unwrap()),
    );
    // The first poll calls the service: the request has picked its table.
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(std::future::Future::poll(in_flight.as_mut(), &mut cx).is_pending());
    app.swap(Router::new().get("/slow", || "new table"))
        .unwrap();
    let fresh = app
        .clone()
        .oneshot(Request::get("/slow").body(String::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(
        fresh.into_body().collect().await.unwrap().to_bytes(),
        "new table"
    );
    release.send(()).unwrap();
    let old = in_flight.await.unwrap();
    assert_eq!(
        old.into_body().collect().await.unwrap().to_bytes(),
        "old table"
    );
}

/// The tables a swap replaced live on only while requests suspended on
/// them do: the last to end lets them go, and with them what their
/// handlers hold, even with requests suspended on the new tables beside.
#[tokio::test]
async fn replaced_tables_are_let_go_when_their_last_suspended_request_ends() {
    /// Tells when the handler that owns it is dropped.
    struct Owned(Arc<AtomicBool>);
    impl Drop for Owned {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let owned = Arc::new(Owned(dropped.clone()));
    let pending = |router: Router| router.get("/pending", std::future::pending::<&str>);
    let old = pending(Router::new()).get("/owned", move || {
        let _ = &owned;
        "old"
    });
    let mut app = Reloadable::new(old).unwrap();
    // Called on `app` itself, which looks up the live tables anew at each
    // call (a handle keeps the tables it last served until its next call).
    let call = |app: &mut Reloadable| {
        let request = Request::get("/pending").body(String::new()).unwrap();
        Box::pin(tower::Service::call(app, request))
    };
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut on_old: Vec<_> = (0..3).map(|_| call(&mut app)).collect();
    for request in &mut on_old {
        assert!(std::future::Future::poll(request.as_mut(), &mut cx).is_pending());
    }
    app.swap(pending(Router::new())).unwrap();
    let mut on_new = call(&mut app);
    assert!(std::future::Future::poll(on_new.as_mut(), &mut cx).is_pending());
    on_old.truncate(1);
    assert!(
        !dropped.load(Ordering::SeqCst),
        "a request still runs on them"
    );
    drop(on_old);
    assert!(dropped.load(Ordering::SeqCst), "the old tables are let go");
    drop(on_new);
}

#[test]
fn an_update_makes_all_its_changes_live_at_once_or_none() {
    let app = Reloadable::new(Router::new().get("/", || "home")).unwrap();
    app.register("a", Router::new().get("/a", || "a")).unwrap();
    app.register("b", Router::new().get("/b", || "b")).unwrap();
    let live = |path: &str| app.current().at(&Method::GET, path).is_some();

    // Several changes, one new table.
    let replaced = app
        .update(|modules| {
            modules.register("c", Router::new().get("/c", || "c"));
            let replaced = modules.replace("a", Router::new().get("/a2", || "a2"));
            assert!(modules.unregister("b"));
            assert_eq!(
                modules.ids(),
                ["a", "c"],
                "the replaced module keeps its place"
            );
            Ok::<_, pronghorn::router::RouteError>(replaced)
        })
        .unwrap();
    assert!(replaced);
    assert_eq!(app.modules(), ["a", "c"]);
    assert!(live("/a2") && live("/c"));
    assert!(!live("/a") && !live("/b"));

    // A conflict anywhere in an update refuses all of it, and so does the
    // caller's own error, before anything is compiled.
    #[derive(Debug)]
    enum Refused {
        ByCaller,
        Route(pronghorn::router::RouteError),
    }
    impl From<pronghorn::router::RouteError> for Refused {
        fn from(error: pronghorn::router::RouteError) -> Self {
            Refused::Route(error)
        }
    }
    let refused = app.update(|modules| {
        modules.unregister("c");
        modules.register("d", Router::new().get("/d", || "d"));
        modules.register("clash", Router::new().get("/a2", || "again"));
        Ok::<_, Refused>(())
    });
    let Err(Refused::Route(error)) = refused else {
        panic!("the conflict must refuse the update: {refused:?}");
    };
    assert!(error.to_string().contains("/a2"), "{error}");
    assert_eq!(app.modules(), ["a", "c"]);
    assert!(live("/c") && !live("/d"));
    let refused = app.update(|modules| {
        modules.unregister("a");
        Err::<(), _>(Refused::ByCaller)
    });
    assert!(matches!(refused, Err(Refused::ByCaller)));
    assert!(live("/a2"));
}

#[tokio::test]
async fn state_one_module_gives_serves_the_others_until_it_goes() {
    use pronghorn::{handler::State, router::RouteError};

    #[derive(Clone)]
    struct Db(&'static str);
    let reader = || Router::new().get("/read", |State(db): State<Db>| db.0);
    let app = Reloadable::new(Router::new()).unwrap();

    // Alone, the reader lacks its state; beside its giver in one update,
    // it has it, whichever comes first.
    let alone = app.register("reader", reader()).unwrap_err();
    assert!(matches!(alone, RouteError::MissingState { .. }), "{alone}");
    app.update(|modules| {
        modules.register("reader", reader());
        modules.register("db", Router::new().state(Db("rows")));
        Ok::<_, RouteError>(())
    })
    .unwrap();
    let answer = |app: &Reloadable| {
        let request = Request::get("/read").body(String::new()).unwrap();
        let served = app.clone().oneshot(request);
        async move {
            let body = served.await.unwrap().into_body().collect().await;
            body.unwrap().to_bytes()
        }
    };
    assert_eq!(answer(&app).await, "rows");

    // Its giver cannot go while it reads the state, nor give it twice; a
    // replacement that gives it again may.
    let gone = app.unregister("db").unwrap_err();
    assert!(gone.to_string().contains("/read"), "{gone}");
    let twice = app
        .register("again", Router::new().state(Db("copy")))
        .unwrap_err();
    assert!(
        matches!(twice, RouteError::DuplicateState { .. }),
        "{twice}"
    );
    assert_eq!(app.modules(), ["reader", "db"]);
    app.replace("db", Router::new().state(Db("new rows")))
        .unwrap();
    assert_eq!(answer(&app).await, "new rows");
    app.update(|modules| {
        modules.unregister("db");
        modules.unregister("reader");
        Ok::<_, RouteError>(())
    })
    .unwrap();
    assert!(app.modules().is_empty());
}
