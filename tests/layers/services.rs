//! The services themselves: custom hooks, readiness, auto traits, the
//! request head, clones of the inner service.

use super::*;

/// A hook type that answers now for one request and later for the next.
#[derive(Clone, Default)]
struct EveryOther(Arc<AtomicUsize>);

impl pronghorn::PrefixHook<String, Res> for EveryOther {
    type Future = std::future::Ready<ControlFlow<Res, Request<String>>>;

    fn call(
        &mut self,
        request: Request<String>,
    ) -> Step<ControlFlow<Res, Request<String>>, Self::Future> {
        if self.0.fetch_add(1, Ordering::SeqCst) % 2 == 0 {
            Step::Ready(ControlFlow::Continue(request))
        } else {
            Step::Pending(ready(ControlFlow::Continue(request)))
        }
    }
}

#[tokio::test]
async fn a_custom_hook_switches_between_ready_and_pending() {
    let hook = EveryOther::default();
    let mut service = Prefix::new(counted(Arc::default()), hook.clone());
    for n in 0..4 {
        let future = service.ready().await.unwrap().call(request("/"));
        // A `Ready` answer finishes in the first poll; a `Pending` one is
        // polled (here it is ready as soon as it is polled, too).
        let Poll::Ready(Ok(response)) = poll_once(pin!(future)) else {
            panic!("request {n} must finish");
        };
        assert_eq!(response.body(), "inner");
    }
    assert_eq!(hook.0.load(Ordering::SeqCst), 4);
}

/// A service that is ready only once told so.
#[derive(Clone, Debug, Default)]
struct Gated(Arc<Mutex<bool>>);

impl Service<Request<String>> for Gated {
    type Response = Res;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Res, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if *self.0.lock().unwrap() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    fn call(&mut self, _: Request<String>) -> Self::Future {
        ready(Ok(text(StatusCode::OK, "ready")))
    }
}

#[test]
fn poll_ready_is_forwarded() {
    let gated = Gated::default();
    let mut service = ServiceBuilder::new()
        .layer(MonitorLayer::new(|_: &Exchange<'_, Res, Infallible>| {}))
        .layer(PostfixLayer::new(|_: &RequestHead, response: Res| response))
        .layer(PrefixLayer::new(|request: Request<String>| {
            ControlFlow::Continue(request)
        }))
        .service(gated.clone());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_pending());
    *gated.0.lock().unwrap() = true;
    assert!(matches!(service.poll_ready(&mut cx), Poll::Ready(Ok(()))));
}

fn assert_send_sync_clone<T: Send + Sync + Clone + fmt::Debug>(_: &T) {}
fn assert_send<T: Send>(_: &T) {}

#[test]
fn services_layers_and_futures_are_send_sync_clone_and_debug() {
    let prefix =
        PrefixLayer::new(|request: Request<String>| ControlFlow::<Res, _>::Continue(request));
    let postfix = PostfixLayer::new(|_: &RequestHead, response: Res| async { response });
    let monitor = MonitorLayer::new(|_: &Exchange<'_, Res, Infallible>| {});
    assert_send_sync_clone(&prefix);
    assert_send_sync_clone(&postfix);
    assert_send_sync_clone(&monitor);
    let mut service = ServiceBuilder::new()
        .layer(monitor)
        .layer(postfix)
        .layer(prefix)
        .service(Gated(Arc::new(Mutex::new(true))));
    assert_send_sync_clone(&service);
    let future = service.call(request("/"));
    assert_send(&future);
    let debug = format!("{service:?}");
    assert!(
        debug.starts_with("Monitor { inner: Postfix { inner: Prefix {"),
        "{debug}"
    );
    assert!(format!("{future:?}").starts_with("ResponseFuture"));
    assert!(service.get_ref().get_ref().get_ref().0.lock().is_ok());

    // The forms that keep nothing of the request.
    let mut blind = ServiceBuilder::new()
        .layer(MonitorLayer::new(|_: Option<Result<&Res, &Infallible>>| {}))
        .layer(PostfixLayer::new(|_: &mut Res| {}))
        .service(Gated(Arc::new(Mutex::new(true))));
    assert_send_sync_clone(&blind);
    assert_send(&blind.call(request("/")));
}

#[test]
fn the_head_keeps_the_method_and_the_uri_in_every_form() {
    let forms = [
        (Method::GET, "/users/7?full=1"),
        (Method::GET, "/"),
        (Method::OPTIONS, "*"),
        (Method::GET, "http://example.com/x?y=1"),
        (Method::GET, "https://example.com"),
        (Method::CONNECT, "example.com:443"),
    ];
    for (method, uri) in forms {
        let request = Request::builder()
            .method(method.clone())
            .uri(uri)
            .version(Version::HTTP_10)
            .body(())
            .unwrap();
        let head = RequestHead::of(&request);
        assert_eq!(head.method(), method, "{uri}");
        assert_eq!(head.uri(), request.uri(), "{uri}");
        assert_eq!(head.uri().to_string(), request.uri().to_string());
        assert_eq!(head.uri().authority(), request.uri().authority(), "{uri}");
        assert_eq!(head.path(), request.uri().path(), "{uri}");
        assert_eq!(head.uri().query(), request.uri().query(), "{uri}");
        assert_eq!(head.version(), Version::HTTP_10);
    }
}

/// A synchronous prefix runs over a service that is not `Clone` (tower's
/// `RateLimit`, say): only a hook that may suspend needs a clone of it.
#[tokio::test]
async fn a_synchronous_prefix_needs_no_clone_of_the_inner_service() {
    /// A service that cannot be cloned.
    struct Single;

    impl Service<Request<String>> for Single {
        type Response = Res;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Res, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<String>) -> Self::Future {
            ready(Ok(text(StatusCode::OK, "inner")))
        }
    }

    let by_value = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: Request<String>| {
            if request.uri().path() == "/denied" {
                ControlFlow::Break(text(StatusCode::FORBIDDEN, "denied"))
            } else {
                ControlFlow::Continue(request)
            }
        }))
        .service(Single);
    let in_place = ServiceBuilder::new()
        .layer(PrefixLayer::new(|request: &mut Request<String>| {
            request
                .headers_mut()
                .insert("x-seen", HeaderValue::from_static("1"));
            ControlFlow::<Res>::Continue(())
        }))
        .service(Single);
    let denied = by_value.oneshot(request("/denied")).await.unwrap();
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);
    let passed = in_place.oneshot(request("/")).await.unwrap();
    assert_eq!(passed.body(), "inner");
}
