//! Attribution is certain or nothing: every rule of who gets a backend's unsolicited message.

use serde_json::{Value, json};
use tokio::sync::mpsc::Receiver;
use vmcp_proto::Message;

use super::*;
use crate::sink::CallEvent;

fn note(method: &str, params: Value) -> Message {
    Message::Notification {
        method: method.into(),
        params: Some(params),
    }
}

fn log() -> Message {
    note(
        "notifications/message",
        json!({"level": "info", "data": "x"}),
    )
}

fn got(rx: &mut Receiver<CallEvent>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        match ev {
            CallEvent::Notification { method, .. } | CallEvent::Request { method, .. } => {
                out.push(method)
            }
            CallEvent::StreamOpened | CallEvent::StreamPaused { .. } => {}
        }
    }
    out
}

#[test]
fn a_requests_own_stream_goes_to_that_request() {
    let inbound = Inbound::new(Routes::new("b"), None);
    let (sink, mut rx) = CallSink::channel(8);
    let (other, mut other_rx) = CallSink::channel(8);
    let _a = inbound.track(1, Some(&sink));
    let _b = inbound.track(2, Some(&other));
    inbound.handle(log(), Channel::Request(Some(&sink)));
    assert_eq!(got(&mut rx), vec!["notifications/message"]);
    assert!(got(&mut other_rx).is_empty());
}

#[test]
fn a_shared_channel_goes_to_the_single_request_in_flight_only() {
    let inbound = Inbound::new(Routes::new("b"), None);
    let (a, mut a_rx) = CallSink::channel(8);
    let (b, mut b_rx) = CallSink::channel(8);
    let first = inbound.track(1, Some(&a));
    inbound.handle(log(), Channel::Shared);
    assert_eq!(got(&mut a_rx), vec!["notifications/message"]);
    let _second = inbound.track(2, Some(&b));
    inbound.handle(log(), Channel::Shared);
    assert!(
        got(&mut a_rx).is_empty(),
        "two in flight: not certain, not delivered"
    );
    assert!(got(&mut b_rx).is_empty());
    drop(first);
    inbound.handle(log(), Channel::Shared);
    assert_eq!(got(&mut b_rx), vec!["notifications/message"]);
}

#[test]
fn the_standalone_stream_never_goes_to_a_request_not_even_a_log() {
    let other = || note("notifications/custom", json!({}));
    let inbound = Inbound::new(Routes::new("b"), None);
    let (a, mut a_rx) = CallSink::channel(8);
    let _first = inbound.track(1, Some(&a));
    inbound.handle(other(), Channel::Standalone);
    // A log on the GET stream may be another client's tool talking after its call ended: the one
    // call in flight does not get it (it did once, and leaked across clients).
    inbound.handle(log(), Channel::Standalone);
    inbound.handle(log(), Channel::Standalone);
    assert!(got(&mut a_rx).is_empty());
    // A per-session connection's owner gets what belongs to no request, logs included.
    let (session, mut session_rx) = CallSink::channel(8);
    let owned = Inbound::new(Routes::new("b"), Some(session));
    let _t = owned.track(1, Some(&a));
    owned.handle(other(), Channel::Standalone);
    owned.handle(log(), Channel::Standalone);
    assert_eq!(
        got(&mut session_rx),
        vec!["notifications/custom", "notifications/message"]
    );
    assert!(got(&mut a_rx).is_empty());
}

#[test]
fn progress_goes_by_the_token_the_gateway_issued_with_the_callers_token_back() {
    let routes = Routes::new("b");
    let inbound = Inbound::new(routes.clone(), None);
    let (a, mut rx) = CallSink::channel(8);
    let _route = routes.progress("vmcp-7".into(), a, json!("client-token"));
    inbound.handle(
        note(
            "notifications/progress",
            json!({"progressToken": "vmcp-7", "progress": 1}),
        ),
        Channel::Standalone,
    );
    match rx.try_recv() {
        Ok(CallEvent::Notification {
            params: Some(p), ..
        }) => assert_eq!(p["progressToken"], "client-token"),
        other => panic!("expected progress, got {other:?}"),
    }
    inbound.handle(
        note(
            "notifications/progress",
            json!({"progressToken": "forged", "progress": 1}),
        ),
        Channel::Shared,
    );
    assert!(
        rx.try_recv().is_err(),
        "a token the gateway did not issue goes nowhere"
    );
}

#[test]
fn list_changes_and_resource_updates_are_announced_to_the_gateway() {
    let routes = Routes::new("b");
    let mut notices = routes.subscribe();
    let inbound = Inbound::new(routes, None);
    inbound.handle(
        note("notifications/tools/list_changed", json!({})),
        Channel::Standalone,
    );
    inbound.handle(
        note("notifications/resources/updated", json!({"uri": "u://x"})),
        Channel::Shared,
    );
    assert_eq!(notices.try_recv().ok(), Some(Notice::ListChanged("tools")));
    assert_eq!(
        notices.try_recv().ok(),
        Some(Notice::ResourceUpdated(json!({"uri": "u://x"})))
    );
}

#[tokio::test]
async fn an_unattributable_request_is_refused_with_a_reason() {
    let inbound = Inbound::new(Routes::new("files"), None);
    let req = Message::Request {
        id: json!(5),
        method: "elicitation/create".into(),
        params: Some(json!({})),
    };
    let answer = inbound
        .handle(req, Channel::Standalone)
        .expect("needs an answer")
        .answer()
        .await;
    match answer {
        Message::Error { id, error } => {
            assert_eq!(id, json!(5));
            assert!(
                error.message.contains("isolation: perSession"),
                "{}",
                error.message
            );
        }
        other => panic!("expected an error, got {other:?}"),
    }
    let ping = Message::Request {
        id: json!(6),
        method: "ping".into(),
        params: None,
    };
    let answer = inbound
        .handle(ping, Channel::Standalone)
        .expect("answer")
        .answer()
        .await;
    assert_eq!(
        answer,
        Message::Response {
            id: json!(6),
            result: json!({})
        }
    );
}

#[tokio::test]
async fn a_flood_of_requests_is_refused_past_the_bound() {
    let inbound = Inbound::new(Routes::new("b"), None);
    let mut held = Vec::new();
    for i in 0..MAX_OUTSTANDING {
        held.push(inbound.handle(
            Message::Request {
                id: json!(i),
                method: "roots/list".into(),
                params: None,
            },
            Channel::Shared,
        ));
    }
    let extra = inbound.handle(
        Message::Request {
            id: json!("x"),
            method: "roots/list".into(),
            params: None,
        },
        Channel::Shared,
    );
    match extra.expect("answer").answer().await {
        Message::Error { error, .. } => {
            assert!(error.message.contains("await answers"), "{}", error.message)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    drop(held);
    let again = inbound.handle(
        Message::Request {
            id: json!("y"),
            method: "ping".into(),
            params: None,
        },
        Channel::Shared,
    );
    assert!(matches!(
        again.expect("answer").answer().await,
        Message::Response { .. }
    ));
}

fn sink_of(caller: Option<&str>) -> (CallSink, Receiver<CallEvent>) {
    CallSink::for_client(
        8,
        crate::sink::ClientView {
            caller: caller.map(Into::into),
            ..Default::default()
        },
    )
}

#[test]
fn once_two_callers_used_a_shared_channel_its_single_call_gets_nothing() {
    let inbound = Inbound::new(Routes::new("b"), None);
    // One caller's calls, one after another: each is the single call in flight.
    let (a1, mut a1_rx) = sink_of(Some("idp\u{0}alice"));
    let (a2, mut a2_rx) = sink_of(Some("idp\u{0}alice"));
    drop(inbound.track(1, Some(&a1)));
    let _t = inbound.track(2, Some(&a2));
    inbound.handle(log(), Channel::Shared);
    assert_eq!(got(&mut a2_rx), vec!["notifications/message"]);
    assert!(got(&mut a1_rx).is_empty());
    drop(_t);
    // Bob's call is alone in flight, but alice's tool may still talk: nothing is attributed.
    let (bob, mut bob_rx) = sink_of(Some("idp\u{0}bob"));
    let _b = inbound.track(3, Some(&bob));
    inbound.handle(log(), Channel::Shared);
    assert!(got(&mut bob_rx).is_empty());
    // Nor is a request to the client: it is refused (its `to` is nobody).
    let asked = inbound.handle(
        Message::Request {
            id: json!(7),
            method: "elicitation/create".into(),
            params: Some(json!({})),
        },
        Channel::Shared,
    );
    assert!(asked.is_some_and(|r| r.to.is_none()));
    // The request's own stream still reaches it.
    inbound.handle(log(), Channel::Request(Some(&bob)));
    assert_eq!(got(&mut bob_rx), vec!["notifications/message"]);
}

#[test]
fn anonymous_callers_are_one_caller() {
    let inbound = Inbound::new(Routes::new("b"), None);
    let (x, _x_rx) = sink_of(None);
    let (y, mut y_rx) = sink_of(None);
    drop(inbound.track(1, Some(&x)));
    let _t = inbound.track(2, Some(&y));
    inbound.handle(log(), Channel::Shared);
    assert_eq!(got(&mut y_rx), vec!["notifications/message"]);
}
