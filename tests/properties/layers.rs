//! Stacks of pronghorn's tower layers, checked against the order their
//! nesting gives: the property of `tests/properties/main.rs` and the fuzz target
//! `fuzz/fuzz_targets/layers.rs`, which include this one file.
//!
//! A [`Stack`] is a list of layers, outermost first, around a handler; each
//! layer is a `PrefixLayer`, a `PostfixLayer` or a `MonitorLayer` whose
//! hook is written in one of its forms — in place, blind to the request, by
//! value, a future, or a `Step` ready or pending — and suspends once or not; a prefix may answer
//! (in the handler's stead), a postfix may replace the response. Requests
//! go through the stack as `tower::ServiceExt::oneshot` sends them, polled
//! as an executor would, and each must:
//!
//! - run the prefixes from the outside in, up to the first that answers,
//!   then the handler if none did, then every postfix and monitor outside
//!   the point the request reached, from the inside out, each monitor
//!   seeing the status of the response as it leaves the layers inside it;
//! - come back with the answer that order gives, headers of in-place
//!   postfixes included;
//! - be pending at most once per step that suspended (none when no step
//!   did: ready on its first poll), never without a wake-up, and poll no
//!   step's future after it answered.

use std::{cell::RefCell, convert::Infallible, ops::ControlFlow};

use http::{HeaderName, HeaderValue, Request, Response, StatusCode};
use pronghorn::{Exchange, MonitorLayer, PostfixLayer, PrefixLayer, RequestHead, Step};
use tower::{Layer, ServiceExt, service_fn, util::BoxCloneService};

use super::poll::{Suspension, drive};

type Res = Response<String>;
type Stacked = BoxCloneService<Request<()>, Res, Infallible>;

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Prefix,
    Postfix,
    Monitor,
}

/// How a hook is written.
#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Works on the message where it lies (prefix and postfix), or a plain
    /// closure (monitor); synchronous.
    InPlace,
    /// Sees the message alone, nothing of the request: a postfix that edits
    /// the response in place, a monitor that reads the outcome (a prefix
    /// works in place); synchronous.
    Blind,
    /// Takes the message and gives it back; synchronous.
    ByValue,
    /// Answers a future.
    Future,
    /// Answers a `Step`: ready, or pending with a future.
    StepReady,
    StepPending,
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug)]
pub struct LayerSpec {
    pub kind: Kind,
    pub form: Form,
    /// Whether a prefix answers, a postfix replaces the response.
    pub answers: bool,
}

#[cfg_attr(fuzzing, derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug)]
pub struct Stack {
    /// Outermost first.
    pub layers: Vec<LayerSpec>,
    /// Whether the handler suspends once.
    pub handler_suspends: bool,
    /// How many requests go through the stack.
    pub requests: u8,
}

impl LayerSpec {
    /// Whether the hook's future suspends (an in-place or by-value hook,
    /// or a ready `Step`, answers at once).
    fn suspends(&self) -> bool {
        matches!(self.form, Form::Future | Form::StepPending)
    }

    /// Whether the layer changes what passes: answering prefixes and
    /// replacing postfixes. An in-place postfix only adds its header.
    fn answers(&self) -> bool {
        self.answers
            && self.kind != Kind::Monitor
            && !(self.kind == Kind::Postfix && self.edits_in_place())
    }

    /// Whether a postfix of this form adds its header to the response
    /// where it lies.
    fn edits_in_place(&self) -> bool {
        matches!(self.form, Form::InPlace | Form::Blind)
    }
}

thread_local! {
    /// What ran for the request being checked, in order.
    static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn log(entry: String) {
    LOG.with(|log| log.borrow_mut().push(entry));
}

fn text(status: StatusCode, body: String) -> Res {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

/// A prefix's answer, a postfix's replacement.
fn answer(index: usize, kind: Kind) -> Res {
    match kind {
        Kind::Prefix => text(StatusCode::ACCEPTED, format!("P{index}")),
        _ => text(
            StatusCode::NON_AUTHORITATIVE_INFORMATION,
            format!("Q{index}"),
        ),
    }
}

/// The header an in-place postfix adds.
fn header(index: usize) -> HeaderName {
    HeaderName::try_from(format!("x-q{index}")).expect("a header name")
}

fn prefix(service: Stacked, index: usize, spec: LayerSpec) -> Stacked {
    let answers = spec.answers;
    let flow = move |request: Request<()>| {
        log(format!("P{index}"));
        match answers {
            true => ControlFlow::Break(answer(index, Kind::Prefix)),
            false => ControlFlow::Continue(request),
        }
    };
    match spec.form {
        // A prefix has no form blind to the request: it is the request's.
        Form::InPlace | Form::Blind => BoxCloneService::new(
            PrefixLayer::new(move |_: &mut Request<()>| {
                log(format!("P{index}"));
                match answers {
                    true => ControlFlow::Break(answer(index, Kind::Prefix)),
                    false => ControlFlow::Continue(()),
                }
            })
            .layer(service),
        ),
        Form::ByValue => BoxCloneService::new(PrefixLayer::new(flow).layer(service)),
        Form::Future => BoxCloneService::new(
            PrefixLayer::new(move |request: Request<()>| async move {
                Suspension::default().await;
                flow(request)
            })
            .layer(service),
        ),
        Form::StepReady | Form::StepPending => {
            let pending = spec.form == Form::StepPending;
            BoxCloneService::new(
                PrefixLayer::new(move |request: Request<()>| match pending {
                    false => Step::Ready(flow(request)),
                    true => Step::Pending(async move {
                        Suspension::default().await;
                        flow(request)
                    }),
                })
                .layer(service),
            )
        }
    }
}

fn postfix(service: Stacked, index: usize, spec: LayerSpec) -> Stacked {
    let answers = spec.answers;
    let after = move |response: Res| {
        log(format!("Q{index}"));
        match answers {
            true => answer(index, Kind::Postfix),
            false => response,
        }
    };
    match spec.form {
        Form::InPlace => BoxCloneService::new(
            PostfixLayer::new(move |_: &RequestHead, response: &mut Res| {
                log(format!("Q{index}"));
                response
                    .headers_mut()
                    .insert(header(index), HeaderValue::from_static("ran"));
            })
            .layer(service),
        ),
        Form::Blind => BoxCloneService::new(
            PostfixLayer::new(move |response: &mut Res| {
                log(format!("Q{index}"));
                response
                    .headers_mut()
                    .insert(header(index), HeaderValue::from_static("ran"));
            })
            .layer(service),
        ),
        Form::ByValue => BoxCloneService::new(
            PostfixLayer::new(move |_: &RequestHead, response: Res| after(response)).layer(service),
        ),
        Form::Future => BoxCloneService::new(
            PostfixLayer::new(move |_: &RequestHead, response: Res| async move {
                Suspension::default().await;
                after(response)
            })
            .layer(service),
        ),
        Form::StepReady | Form::StepPending => {
            let pending = spec.form == Form::StepPending;
            BoxCloneService::new(
                PostfixLayer::new(move |_: &RequestHead, response: Res| match pending {
                    false => Step::Ready(after(response)),
                    true => Step::Pending(async move {
                        Suspension::default().await;
                        after(response)
                    }),
                })
                .layer(service),
            )
        }
    }
}

fn monitor(service: Stacked, index: usize, spec: LayerSpec) -> Stacked {
    let seen = move |exchange: &Exchange<'_, Res, Infallible>| {
        let status = exchange.status().expect("the handler never fails");
        log(format!("M{index} {}", status.as_u16()));
    };
    match spec.form {
        Form::InPlace | Form::ByValue => {
            BoxCloneService::new(MonitorLayer::new(seen).layer(service))
        }
        Form::Blind => BoxCloneService::new(
            MonitorLayer::new(move |outcome: Option<Result<&Res, &Infallible>>| {
                let Some(Ok(response)) = outcome else {
                    panic!("the handler never fails and no request is cancelled");
                };
                log(format!("M{index} {}", response.status().as_u16()));
            })
            .layer(service),
        ),
        Form::Future => BoxCloneService::new(
            MonitorLayer::new(move |exchange: &Exchange<'_, Res, Infallible>| {
                seen(exchange);
                Suspension::default()
            })
            .layer(service),
        ),
        Form::StepReady | Form::StepPending => {
            let pending = spec.form == Form::StepPending;
            BoxCloneService::new(
                MonitorLayer::new(move |exchange: &Exchange<'_, Res, Infallible>| {
                    seen(exchange);
                    match pending {
                        false => Step::Ready(()),
                        true => Step::Pending(Suspension::default()),
                    }
                })
                .layer(service),
            )
        }
    }
}

/// The stack of `stack`, outermost layer first.
fn service(stack: &Stack) -> Stacked {
    let suspends = stack.handler_suspends;
    let handler = service_fn(move |_: Request<()>| async move {
        if suspends {
            Suspension::default().await;
        }
        log("H".to_owned());
        Ok::<_, Infallible>(text(StatusCode::OK, "H".to_owned()))
    });
    let mut service = BoxCloneService::new(handler);
    for (index, spec) in stack.layers.iter().enumerate().rev() {
        service = match spec.kind {
            Kind::Prefix => prefix(service, index, *spec),
            Kind::Postfix => postfix(service, index, *spec),
            Kind::Monitor => monitor(service, index, *spec),
        };
    }
    service
}

/// What a stack must do with each request.
struct Expected {
    /// The steps that run, in order.
    log: Vec<String>,
    status: StatusCode,
    body: String,
    /// The headers in-place postfixes add that reach the client, sorted.
    headers: Vec<String>,
    /// How many steps suspend.
    suspended: usize,
}

fn expected(stack: &Stack) -> Expected {
    let layers = &stack.layers;
    let mut log = Vec::new();
    let mut suspended = 0;
    // Inward, up to the first prefix that answers.
    let mut answered = None;
    for (index, spec) in layers.iter().enumerate() {
        if spec.kind != Kind::Prefix {
            continue;
        }
        log.push(format!("P{index}"));
        suspended += usize::from(spec.suspends());
        if spec.answers() {
            answered = Some(index);
            break;
        }
    }
    let (reached, mut response) = match answered {
        Some(index) => (index, answer(index, Kind::Prefix)),
        None => {
            log.push("H".to_owned());
            suspended += usize::from(stack.handler_suspends);
            (layers.len(), text(StatusCode::OK, "H".to_owned()))
        }
    };
    // Outward, from the layer outside the one that answered.
    let mut headers = Vec::new();
    for (index, spec) in layers[..reached].iter().enumerate().rev() {
        match spec.kind {
            Kind::Prefix => continue,
            Kind::Postfix => {
                log.push(format!("Q{index}"));
                if spec.answers() {
                    // A new response: the headers added inside are gone.
                    response = answer(index, Kind::Postfix);
                    headers.clear();
                } else if spec.edits_in_place() {
                    headers.push(header(index).to_string());
                }
            }
            Kind::Monitor => log.push(format!("M{index} {}", response.status().as_u16())),
        }
        suspended += usize::from(spec.suspends());
    }
    headers.sort();
    Expected {
        log,
        status: response.status(),
        body: response.into_body(),
        headers,
        suspended,
    }
}

/// Sends the requests of `stack` through it and checks each (see the
/// module docs).
pub fn check(stack: &Stack) {
    let service = service(stack);
    let expected = expected(stack);
    for _ in 0..stack.requests.clamp(1, 3) {
        LOG.with(|log| log.borrow_mut().clear());
        Suspension::reset();
        let (response, pending) = drive(service.clone().oneshot(Request::new(())));
        let response = response.unwrap_or_else(|never| match never {});
        let ran = LOG.with(|log| log.take());
        assert_eq!(ran, expected.log, "in {stack:?}");
        let suspended = Suspension::count();
        assert_eq!(
            suspended, expected.suspended,
            "steps that suspended in {stack:?}"
        );
        assert!(
            pending <= suspended,
            "pending {pending} times for {suspended} suspensions: {stack:?}"
        );
        assert_eq!(response.status(), expected.status, "in {stack:?}");
        let mut added: Vec<String> = (response.headers().keys())
            .filter(|name| name.as_str().starts_with("x-q"))
            .map(|name| name.to_string())
            .collect();
        added.sort();
        assert_eq!(added, expected.headers, "in {stack:?}");
        assert_eq!(response.into_body(), expected.body, "in {stack:?}");
    }
}
