//! Resumable SSE streams through the binary (2025-11-25 transports, SEP-1699): a call the backend
//! answers with a stream is answered with one, primed with an id and a `retry` hint, every event
//! numbered; a backend pausing its stream pauses the client's, and a `GET` with `Last-Event-ID`
//! delivers the rest exactly once, as it does after a cut connection and on the GET stream; a
//! silent call gets keep-alive comments; a JSON backend's answers stay JSON. With sessions shared
//! through Redis, a stream resumes on another replica (`replicas`).

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

#[path = "../common/mod.rs"]
mod common;
mod events;
mod replicas;

use common::{Client, Gateway, http_backend, stdio_backend};
use events::{Event, Events, assert_numbered, call, get, post};
use serde_json::{Value, json};
use vmcp_testkit::{FixtureOptions, serve_http_in_process, serve_legacy_conformance_in_process};

/// The conformance fixture (every answer an SSE stream; 2025-11-25 only, where
/// `test_reconnection` is listed) behind a gateway.
async fn streaming_gateway(extra: &str) -> (Gateway, tokio::task::JoinHandle<()>) {
    let (url, task) = serve_legacy_conformance_in_process().await;
    let gw = Gateway::start(&format!(
        "name: streams\nbackends:\n{}{extra}",
        http_backend("conf", &url)
    ));
    (gw, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_answer_is_primed_and_every_event_has_an_id() {
    let (gw, _fixture) = streaming_gateway("").await;
    let c = Client::connect(&gw.url).await;
    let resp = post(&c, &call(7, "conf_test_tool_with_progress", json!({})))
        .send()
        .await
        .unwrap();
    let events = Events::new(resp).rest().await;
    let first = &events[0];
    assert!(
        first.id.is_some() && first.data.is_empty() && first.retry.is_some(),
        "the priming event comes first: {events:?}"
    );
    assert_numbered(&events);
    let progress = events
        .iter()
        .filter(|e| e.json()["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{events:?}");
    let last = events.last().unwrap().json();
    assert_eq!(last["id"], 7, "the answer ends the stream: {last}");
    assert!(last["result"]["content"].is_array(), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_backend_stream_pauses_the_clients_and_the_resume_delivers_the_answer_once() {
    let (gw, _fixture) = streaming_gateway("").await;
    let c = Client::connect(&gw.url).await;
    let resp = post(&c, &call(8, "conf_test_reconnection", json!({})))
        .send()
        .await
        .unwrap();
    let before = Events::new(resp).rest().await;
    assert!(
        before.iter().all(|e| e.data.is_empty()),
        "the answer waits for the resume: {before:?}"
    );
    let pause = before.last().unwrap();
    assert!(
        pause.retry.is_some() && before.len() >= 2,
        "the stream closes with a retry hint: {before:?}"
    );
    let last = pause.id.clone().unwrap();

    let resumed = get(&c, Some(&last)).await;
    assert_eq!(resumed.status(), 200);
    let after = Events::new(resumed).rest().await;
    let answers: Vec<Value> = after
        .iter()
        .map(Event::json)
        .filter(|m| m["id"] == 8)
        .collect();
    assert_eq!(answers.len(), 1, "exactly once: {after:?}");
    assert_eq!(
        answers[0]["result"]["content"][0]["text"],
        "Reconnection test completed successfully"
    );
    let mut all = before.clone();
    all.extend(after.iter().cloned());
    assert_numbered(&all);

    // Resuming after the answer has nothing more to give, and the stream is not repeated.
    let again = get(&c, after.last().unwrap().id.as_deref()).await;
    assert_eq!(again.status(), 200);
    assert!(Events::new(again).rest().await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_earlier_revisions_client_gets_ids_but_neither_priming_nor_pauses() {
    let (gw, _fixture) = streaming_gateway("").await;
    let c = Client::connect_version(&gw.url, "2025-06-18").await;
    let resp = post(&c, &call(14, "conf_test_reconnection", json!({})))
        .send()
        .await
        .unwrap();
    let events = Events::new(resp).rest().await;
    assert!(
        events
            .iter()
            .all(|e| !e.data.is_empty() && e.retry.is_none()),
        "SEP-1699 is 2025-11-25's: {events:?}"
    );
    assert_numbered(&events);
    assert_eq!(events.last().unwrap().json()["id"], 14, "{events:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_cut_mid_call_resumes_after_the_last_event_seen() {
    let (gw, _fixture) = streaming_gateway("").await;
    let c = Client::connect(&gw.url).await;
    let resp = post(&c, &call(9, "conf_test_tool_with_progress", json!({})))
        .send()
        .await
        .unwrap();
    let mut events = Events::new(resp);
    let mut seen = Vec::new();
    while let Some(ev) = events.next().await {
        if ev.comment {
            continue;
        }
        let progress = ev.json()["method"] == "notifications/progress";
        seen.push(ev);
        if progress {
            break;
        }
    }
    // The client's connection is cut after its first progress notification.
    drop(events);
    let last = seen.last().unwrap().id.clone().unwrap();
    let rest = Events::new(get(&c, Some(&last)).await).rest().await;
    let mut all = seen.clone();
    all.extend(rest.iter().cloned());
    assert_numbered(&all);
    let progress = all
        .iter()
        .filter(|e| e.json()["method"] == "notifications/progress")
        .count();
    let answers = all.iter().filter(|e| e.json()["id"] == 9).count();
    assert_eq!((progress, answers), (3, 1), "{all:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_and_other_sessions_event_ids_are_refused_alike() {
    let (gw, _fixture) = streaming_gateway("").await;
    let alice = Client::connect(&gw.url).await;
    let bob = Client::connect(&gw.url).await;
    let mut bobs = Events::new(get(&bob, None).await);
    let bobs_id = bobs.next().await.unwrap().id.unwrap();
    let refusals = [
        get(&alice, Some(&bobs_id)).await,
        get(&alice, Some("nonsense")).await,
        get(&alice, Some(&format!("{bobs_id}0"))).await,
    ];
    let mut bodies = Vec::new();
    for r in refusals {
        assert_eq!(r.status(), 400);
        bodies.push(r.text().await.unwrap());
    }
    assert!(bodies.iter().all(|b| *b == bodies[0]), "{bodies:?}");
    assert!(bodies[0].contains("Last-Event-ID"), "{}", bodies[0]);
    // Bob's own id is his to resume.
    assert_eq!(get(&bob, Some(&bobs_id)).await.status(), 200);
}

fn config(backends: &[&str], extra: &str) -> String {
    let mut yaml = "name: streams\nbackends:\n".to_owned();
    for name in backends {
        yaml.push_str(&stdio_backend(name, ""));
    }
    yaml.push_str(extra);
    yaml
}

#[tokio::test(flavor = "multi_thread")]
async fn the_get_stream_resumes_with_what_was_missed() {
    let gw = Gateway::start(&config(&["notes"], ""));
    let c = Client::connect(&gw.url).await;
    let mut stream = Events::new(get(&c, None).await);
    let priming = stream.next().await.unwrap();
    assert!(priming.data.is_empty() && priming.retry.is_some());
    // The client loses its GET stream; meanwhile a backend joins.
    drop(stream);
    std::fs::write(&gw.config_path, config(&["notes", "extra"], "")).unwrap();
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &gw.pid().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let mut resumed = Events::new(get(&c, priming.id.as_deref()).await);
    let missed = loop {
        let ev = resumed.next().await.expect("the missed notification");
        if !ev.comment {
            break ev;
        }
    };
    assert_eq!(
        missed.json()["method"],
        "notifications/tools/list_changed",
        "{missed:?}"
    );
    assert_numbered(&[priming, missed]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_call_gets_keepalive_comments_on_a_stream() {
    let (url, _fixture) = serve_http_in_process(FixtureOptions::default()).await;
    let gw = Gateway::start(&format!(
        "name: streams\nbackends:\n{}server:\n  sseKeepAlive: 100ms\n",
        http_backend("slow", &url)
    ));
    let c = Client::connect(&gw.url).await;
    let resp = post(&c, &call(10, "slow_sleep", json!({"ms": 2000})))
        .send()
        .await
        .unwrap();
    let mut events = Events::new(resp);
    let mut seen = Vec::new();
    while let Some(ev) = events.next().await {
        seen.push(ev);
    }
    assert!(
        seen[0].id.is_some() && seen[0].data.is_empty(),
        "primed: {seen:?}"
    );
    assert!(seen.iter().any(|e| e.comment), "keep-alives: {seen:?}");
    let answer = seen.last().unwrap().json();
    assert_eq!(answer["id"], 10, "{answer}");
    assert!(answer["result"].is_object(), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_keep_the_backends_form() {
    let (json_url, _a) = serve_http_in_process(FixtureOptions::default()).await;
    let json_gw = Gateway::start(&format!(
        "name: json\nbackends:\n{}",
        http_backend("plain", &json_url)
    ));
    let c = Client::connect(&json_gw.url).await;
    for body in [
        call(11, "plain_echo", json!({"text": "hi"})),
        json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list"}),
    ] {
        let resp = post(&c, &body).send().await.unwrap();
        assert_eq!(
            resp.headers()["content-type"],
            "application/json",
            "a JSON backend's answers stay JSON"
        );
    }

    let (gw, _fixture) = streaming_gateway("").await;
    let c = Client::connect(&gw.url).await;
    // The gateway learns the backend's form from its answers.
    c.call("conf_test_simple_text", json!({})).await;
    let resp = post(
        &c,
        &json!({"jsonrpc": "2.0", "id": 13, "method": "tools/list"}),
    )
    .send()
    .await
    .unwrap();
    let events = Events::new(resp).rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].json()["result"]["tools"].is_array());
}
