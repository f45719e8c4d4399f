//! Moving an axum application onto pronghorn: what each part of axum's API
//! becomes, where pronghorn answers differently, and how to port an
//! application whose middleware is made of tower layers.
//!
//! # Side by side
//!
//! An axum 0.8 application and its port: only the imports change. A
//! `Router` is served as it is, as axum's is (`serve` compiles it before
//! it accepts a client, and returns its mistakes as its error), or
//! compiled first with [`compile`](crate::Router::compile), so that a
//! mistake in it is an error to handle where the router is built:
//!
//! ```
//! # mod axum_app {
//! use axum::{Json, Router, extract::{Path, State}, routing::get};
//! use tower_http::trace::TraceLayer;
//!
//! #[derive(Clone)]
//! struct Names(Vec<&'static str>);
//!
//! async fn list(State(names): State<Names>) -> Json<Vec<&'static str>> {
//!     Json(names.0)
//! }
//!
//! async fn one(Path(id): Path<usize>, State(names): State<Names>) -> String {
//!     names.0.get(id).copied().unwrap_or("nobody").to_owned()
//! }
//!
//! pub fn app() -> Router {
//!     Router::new()
//!         .route("/users", get(list))
//!         .route("/users/{id}", get(one))
//!         .layer(TraceLayer::new_for_http())
//!         .with_state(Names(vec!["ada", "grace"]))
//! }
//! # }
//! # mod pronghorn_app {
//! use pronghorn::{Router, handler::{Json, Path, State}, router::get};
//! use tower_http::trace::TraceLayer;
//!
//! #[derive(Clone)]
//! struct Names(Vec<&'static str>);
//!
//! async fn list(State(names): State<Names>) -> Json<Vec<&'static str>> {
//!     Json(names.0)
//! }
//!
//! async fn one(Path(id): Path<usize>, State(names): State<Names>) -> String {
//!     names.0.get(id).copied().unwrap_or("nobody").to_owned()
//! }
//!
//! pub fn app() -> Router {
//!     Router::new()
//!         .route("/users", get(list))
//!         .route("/users/{id}", get(one))
//!         .layer(TraceLayer::new_for_http())
//!         .with_state(Names(vec!["ada", "grace"]))
//! }
//! # }
//! # use http::Request;
//! # use http_body_util::BodyExt;
//! # use tower::ServiceExt;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # for path in ["/users", "/users/1"] {
//! #     let axum = axum_app::app().oneshot(Request::get(path).body(axum::body::Body::empty()).unwrap()).await.unwrap();
//! #     let ours = pronghorn_app::app().oneshot(Request::get(path).body(String::new()).unwrap()).await.unwrap();
//! #     assert_eq!(axum.status(), ours.status());
//! #     let axum = axum.into_body().collect().await.unwrap().to_bytes();
//! #     let ours = ours.into_body().collect().await.unwrap().to_bytes();
//! #     assert_eq!(axum, ours);
//! # }
//! # }
//! ```
//!
//! The example `todos` is axum's own `todos` example, ported the same way:
//! its timeout, whose error becomes a 408 through
//! [`HandleErrorLayer`](crate::HandleErrorLayer), and its `TraceLayer` stay
//! where axum puts them.
//!
//! # The API, mapped
//!
//! | axum | pronghorn |
//! | --- | --- |
//! | `Router::new().route(path, get(h).post(h2))` | the same, with [`router::get`](crate::router::get), [`post`](crate::router::post), … [`on`](crate::router::on), [`any`](crate::router::any); also `Router::get(path, h)`, one method a call |
//! | `get_service(svc)`, `route_service`, `nest_service`, `fallback_service` | the same names |
//! | `nest`, `merge`, `fallback`, `method_not_allowed_fallback`, `reset_fallback`, `has_routes`, `as_service`, `into_service` | the same (`method_not_allowed_fallback` also as [`Router::method_not_allowed`](crate::Router::method_not_allowed)) |
//! | `Router::layer`, `Router::route_layer`, `MethodRouter::layer`, `Handler::layer` | the same names, with [`Endpoint`](crate::handler::Endpoint) where axum writes `Route` (`L: Layer<Route>`); a layer that hands the handler another body type (tower-http's `RequestBodyLimitLayer`, `RequestDecompressionLayer`) is taken as written |
//! | `get(h).fallback(f)`, `fallback_service`, `merge`, `method_filter`, `get(h).with_state(s)`, a `MethodRouter` as a fallback or a service | the same; methods merged twice are an error of `compile` where they are routed (axum panics) |
//! | `DefaultBodyLimit::max(n)`, `DefaultBodyLimit::disable()` as a layer | the same, [`DefaultBodyLimit`](crate::handler::DefaultBodyLimit); or [`Router::body_limit`](crate::Router::body_limit) |
//! | `handler.into_service()` (`HandlerWithoutStateExt`); a value as a handler, `post((StatusCode::CREATED, "made"))` | the same, with [`router::HandlerWithoutStateExt`](crate::router::HandlerWithoutStateExt) (a [`Router`](crate::Router) with the handler as its fallback, so `.state(…)` gives it state); values as axum's |
//! | `HandleErrorLayer::new(\|error: BoxError\| async { … })` | [`HandleErrorLayer`](crate::HandleErrorLayer), the same, and a synchronous function too |
//! | `Router<AppState>`, `with_state(state)`, `State<T>` with `impl FromRef<AppState> for T` or `#[derive(FromRef)]`, `#[debug_handler(state = AppState)]` | the same: [`Router<S>`](crate::Router), [`Router::with_state`](crate::Router::with_state), [`FromRef`](crate::handler::FromRef) and its derive (feature `macros`); the `_with_state` middleware functions read their state's parts too. `Router<()>` is [`Router`](crate::Router) (whose state type is [`ByType`](crate::handler::ByType)); there [`state`](crate::Router::state) gives any number of states, each `State<T>` found by its type |
//! | `axum::serve(listener, app)` (or `app.into_make_service()`), on a `TcpListener`, a `UnixListener` or a `Listener` of one's own; `ListenerExt::tap_io`; `local_addr()` | [`serve`](crate::serve())`(listener, app)`, the same [`Listener`](crate::Listener) and [`ListenerExt`](crate::ListenerExt), with `connect_info(true)` for `ConnectInfo<L::Addr>`; `app.into_make_service_with_connect_info::<C>()` the same ([`Router::into_make_service_with_connect_info`](crate::Router::into_make_service_with_connect_info), or [`connect_info_as::<C>()`](crate::Serve::connect_info_as) on the server), `C` a [`Connected`](crate::handler::Connected)`<IncomingStream<'_, L>>` as axum's; a `Router` compiled before the first client (its mistakes the server's error, before it serves); or `app.compile()?` first, to handle them as errors of [`compile`](crate::Router::compile). [`ListenerExt::limit_connections(n)`](crate::ListenerExt::limit_connections) the same, the cap [`max_connections(n)`](crate::Serve::max_connections) sets (which `serve` holds by default): at the cap, the connection idle longest is shed to make room for a new client, where axum's makes the new one wait; `with_executor` is [`workers`](crate::Serve::workers) (threads of `serve`'s own, each a runtime) |
//! | `middleware::from_fn(f)`, `Next`, `from_fn_with_state`, `map_request`, `map_response`, `from_extractor::<E>()` and their `_with_state` forms | the same, in [`middleware`](crate::middleware), its extractors pronghorn's; or a [prefix](crate::Router::prefix) or [postfix](crate::Router::postfix) hook, or [`PrefixLayer`](crate::PrefixLayer) / [`PostfixLayer`](crate::PostfixLayer) given to `layer`. axum's own `from_fn` and `map_response` layers (an ecosystem crate's, as axum-login's `login_required!`) are taken as they are, `from_fn` with feature `axum`; axum's `map_request` of a function generic over the body is not (the body it would hand on is ambiguous): use pronghorn's |
//! | `Path`, `RawPathParams`, `Query`, `RawQuery`, `Json`, `Form`, `RawForm`, `State`, `Extension`, `ConnectInfo`, `MatchedPath`, `NestedPath`, `OriginalUri`, `HeaderMap`, `Method`, `Uri`, `Bytes`, `String`, `Request`, `http::request::Parts` | the same names in [`handler`](crate::handler), the wrappers with `Deref` to their value, and `Form` reading a GET's query string; below a `nest`, `Uri`, `Request` and `Parts` see the path without the base, as axum's; `Extension(value)` is a layer too; `Query::try_from_uri`, `Json::from_bytes`; `Json` and `Form` are answers too |
//! | `axum::response::Response`, `axum::extract::Request` | [`Response`](crate::Response), [`Request`](crate::Request) (also `handler::Request`) |
//! | `axum::http` | [`pronghorn::http`](crate::http), the same crate |
//! | `axum::body::{Body, Bytes, to_bytes}` | [`pronghorn::body`](crate::body), the same names |
//! | `IntoResponse`, `IntoResponseParts`, `ResponseParts`, `AppendHeaders`, `ForceStatusCode`, `NoContent`, `Html`, `Redirect`, `IntoResponseFailed`, `response::Result` and `ErrorResponse` | the same names in [`handler`](crate::handler), composing in the same tuples: `(StatusCode, parts…, answer)`, `(Parts, parts…, answer)`, `(Redirect::to(u), Html(…))` |
//! | `Multipart`, `Option<Multipart>`, `Field`, `MultipartError` | `handler::Multipart`, the same (feature `multipart`) |
//! | `TypedHeader`, `TypedHeaderRejection` (axum-extra) | `handler::TypedHeader` and `handler::TypedHeaderRejection`, the same (feature `typed-header`); or [`Header<N>`](crate::handler::Header), a header's raw value by its name's type |
//! | `WebSocketUpgrade`, `on_failed_upgrade`, `WebSocket::recv` / `send`, `ws::rejection::WebSocketUpgradeRejection`, WebSocket over HTTP/2 (`any(handler)`) | `ws::WebSocketUpgrade`, the same (feature `ws`): the handler upgrades, or answers plain HTTP, over HTTP/1.1 or HTTP/2's extended CONNECT, which `serve` advertises; or [`Router::websocket`](crate::Router::websocket) for a route that is a WebSocket, its monitors run at the connection's end |
//! | `Sse`, `KeepAlive`, `Event` (`comment`, `json_data`, `into_data_writer`) | [`Sse`](crate::sse::Sse), [`KeepAlive`](crate::sse::KeepAlive) and [`Event`](crate::sse::Event), the same (`text`, `event`, `interval`); a line break in a one-line field is dropped where axum's panics |
//! | `app.oneshot(request)`, `app.into_service()` in tests | the same, on a [`Router`](crate::Router) or a [`CompiledRouter`](crate::CompiledRouter) (also [`as_service`](crate::CompiledRouter::as_service)); the example `testing` is axum's, its tests unchanged |
//! | `request.extensions().get::<MatchedPath>()` in a layer | the same, with pronghorn's [`MatchedPath`](crate::handler::MatchedPath); the parameters are in its [`RouteMatch`](crate::handler::RouteMatch) |
//! | `impl FromRequest` with `async fn from_request` | [`FromRequest`](crate::handler::FromRequest), the same but for the state argument (a head extractor reads it); `FromRequestParts` is [`FromRequestHead`](crate::handler::FromRequestHead), synchronous; `OptionalFromRequestParts` is its [`from_head_optional`](crate::handler::FromRequestHead::from_head_optional), which `Option<T>` reads, and `OptionalFromRequest` an impl of [`FromRequestBody`](crate::handler::FromRequestBody) for `Option<T>` |
//! | `Json::<T>::from_request(req, &state).await`, `req.extract::<E, _>()`, `req.extract_parts::<E>()` (`RequestExt`) | [`RequestExt`](crate::handler::RequestExt): `req.extract::<Json<T>>().await`, `req.extract_parts::<Path<T>>()`, with the route's parameters, state and wording; `Result<Json<T>, JsonRejection>` for the typed rejection. In a `FromRequestHead`, call the other's `from_head(context)` |
//! | `WithRejection<E, R>` (axum-extra), `#[derive(FromRequest)]` / `FromRequestParts` with `#[from_request(via(..), rejection(..))]` | [`WithRejection`](crate::handler::WithRejection), and the same derives in `handler` (feature `macros`), for one-field tuple structs |
//! | `MockConnectInfo(addr)` in tests | [`MockConnectInfo`](crate::handler::MockConnectInfo), the same |
//! | an axum extractor or response in a pronghorn handler | [`Axum`](crate::handler::Axum) (feature `axum`) |
//!
//! # Where pronghorn answers differently
//!
//! On purpose, and each a setting or a line to change where it matters.
//! [`Router::answers`](crate::Router::answers)`(`[`Answers::Axum`](crate::router::Answers)`)`
//! on the router that is compiled answers the first five as axum does:
//!
//! - **Its own 404 and 405** carry a short `text/plain` body (`Not Found`,
//!   `Method Not Allowed`), axum's none; `Allow` reads `GET, POST, HEAD`,
//!   axum's `GET,HEAD,POST`. A [fallback](crate::Router::fallback) and a
//!   [`method_not_allowed`](crate::Router::method_not_allowed) handler
//!   answer as you write them.
//! - **Paths**: empty segments are ignored, so `/users/` is answered by
//!   `/users`, which axum does not match; `/users` and `/users/` are one
//!   route (both at once are an error of `compile`). With `Answers::Axum`
//!   they are two, matched as axum matches them.
//! - **Precedence**: a request's method is searched first (`GET /admin`
//!   goes to `GET /{*path}` before `ANY /admin`, and to `GET /{id}`
//!   before a `POST /admin`'s 405), and a node's parameters in the order
//!   they were registered. axum takes the most specific path first, then
//!   the method among its routes, and ranks `a{c}c` above `{a}`; so does
//!   `Answers::Axum`, where a nested router's fallback also competes as
//!   `/base/{*rest}` (pronghorn's ranks below every route).
//! - **OPTIONS** on a routed path without an OPTIONS route is answered 204
//!   with `Allow` (after the prefix hooks, so a CORS prefix can answer a
//!   preflight); axum answers 405.
//! - **Rejections** name the same faults, and the field at fault, in
//!   other words (``invalid JSON body: items[1].id: …`` for axum's
//!   `Failed to deserialize the JSON body into the target type: items[1].id: …`);
//!   [`Router::rejection`](crate::Router::rejection) shapes them all, and
//!   [`PathRejection::kind`](crate::handler::PathRejection::kind) tells a
//!   `Path`'s fault as axum's `path::ErrorKind` does. A rejection a handler
//!   takes (`Result<Json<T>, JsonRejection>`, `WithRejection`) is axum's
//!   enum of variants, in [`handler::rejection`](crate::handler::rejection),
//!   and worded as the router answers.
//! - **A catch-all** read with `Path<String>` leaves out the path's empty
//!   segments (`a/b` for `a//b`); its raw value keeps them
//!   ([`Params::get_raw`](crate::router::Params::get_raw)).
//! - **With `Router::layer`**, the router's own 404 and 405 go through the
//!   layers as a fallback's answers, with the hooks over the path around
//!   them; `route_layer` leaves the 404 alone and wraps the 405 of its
//!   paths, as in axum. A 405 is the router's, not a method router's, so
//!   `MethodRouter::layer` does not wrap it, and a `layer` given before a
//!   `route_layer` wraps a 405 once, outside (axum: inside).
//! - **Nesting** strips the base from the URI below it, as axum's does
//!   (`OriginalUri` keeps the whole), and a `Router` given to
//!   `nest_service` joins the app as `nest` joins it: so a route of the
//!   outer router on one of its paths is an error of `compile` (in axum
//!   the outer route wins), and a path below the base that none of its
//!   routes takes goes to the outer fallback when it has none of its own
//!   (in axum, to its own 404). `nest("/", …)` and `nest("", …)` are
//!   `merge` (axum refuses them).
//! - **Layers and WebSockets**: the handshake of a route given to
//!   `Router::websocket` is the router's, which tower layers do not wrap
//!   (prefix hooks run before it); a handler taking `WebSocketUpgrade` is
//!   wrapped as any handler.
//! - **`MatchedPath` of a `nest_service`**: a service nested with
//!   `nest_service` (and the layers outside it) reads its base as the
//!   `MatchedPath`, where axum gives none: tracing and metrics layers group
//!   its requests under one route rather than under no route at all.
//! - **`HandleErrorLayer`** takes the error alone, no extractors before it.
//! - **State**: a `Router` that names no state type (axum's
//!   `Router<()>`) finds each `State<T>` by type among the states given
//!   with `.state(value)`, its own router's first, and `compile` refuses
//!   a route whose state no router holds; a `Router<S>` reads its `S` and
//!   the parts `FromRef` names, as axum's. `()` is a state type like any
//!   other here: write `Router` where axum writes `Router<()>`. `State` is
//!   no `FromRequestHead` (it is told its router's state type as a
//!   handler's argument), so `Option<State<T>>` is not an extractor, and
//!   `RequestExt::extract_parts::<State<T>>` and a route's prefix hooks
//!   find it by type. An axum extractor taken as `Axum<T>` is handed the
//!   state `()` (pronghorn's `FromRef` is not axum's): one that reads a
//!   part of the state, as axum-extra's `SignedCookieJar<Key>` does, is
//!   refused by the compiler; read the part as `State<Key>` and build the
//!   jar with `SignedCookieJar::from_headers(&headers, key)`.
//! - **Rejections**: `JsonRejection`, `FormRejection`, `RawFormRejection`,
//!   `QueryRejection`, `PathRejection`, `RawPathParamsRejection`,
//!   `ExtensionRejection`, `NestedPathRejection` and
//!   `MatchedPathRejection` are axum's, in
//!   [`handler::rejection`](crate::handler::rejection) (a fallback's
//!   plain `MatchedPath` is refused by `compile`, where axum's fails each
//!   request), with `StringRejection` and `BytesRejection`, whose
//!   `FailedToBufferBody::UnknownBodyError` is also a body not received
//!   within the body timeout (408); `Header` is pronghorn's own. Without `Answers::Axum`, a missing
//!   `Extension` or `NestedPath` answers a bare 500, its cause logged.
//! - **Bodies**: extractors read at most 2 MiB (axum: 2 MB) and wait at
//!   most 30 s for a body (axum: no limit); see
//!   [`body_limit`](crate::Router::body_limit) and `body_timeout`.
//!
//! # Porting a layered application
//!
//! 1. Change the imports: `axum::routing::{get, post}` to
//!    `pronghorn::router::{get, post}`, extractors to `pronghorn::handler`,
//!    `axum::error_handling::HandleErrorLayer` to
//!    `pronghorn::HandleErrorLayer`, `axum::BoxError` to
//!    `pronghorn::BoxError`.
//! 2. Keep every `.layer(…)` and `.route_layer(…)` where it is: they wrap
//!    what they wrap in axum, after routing, with `MatchedPath` in the
//!    request.
//! 3. Serve the router with `pronghorn::serve` as it is, or end the chain
//!    with `.compile()` to handle its mistakes where it is built; or nest
//!    it in an axum router with `nest_service` while the rest moves.
//! 4. Where a `from_fn` middleware only looks at the request or edits the
//!    response, a prefix or postfix hook does it without a boxed future.
//! 5. In tests, `app.into_service()` names the request's body type once,
//!    for `ready()` and `call`.
