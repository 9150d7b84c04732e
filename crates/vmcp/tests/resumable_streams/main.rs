//! Resumable SSE streams through the binary (2025-11-25 transports, SEP-1699): a call the backend
//! answers with a stream is answered with one, primed with an id and a `retry` hint, every event
//! numbered; a backend pausing its stream pauses the client's, and a `GET` with `Last-Event-ID`
//! delivers the rest exactly once, as it does after a cut connection and on the GET stream; a
//! silent call gets keep-alive comments; a JSON backend's answers stay JSON.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::time::Duration;

use common::{Client, Gateway, JSON_AND_SSE, http, http_backend, stdio_backend};
use serde_json::{Value, json};
use vmcp_testkit::{FixtureOptions, serve_http_in_process, serve_legacy_conformance_in_process};

const WAIT: Duration = Duration::from_secs(20);

/// One SSE event as the wire carries it (a comment is an event of its own here).
#[derive(Debug, Default, Clone)]
struct Event {
    id: Option<String>,
    retry: Option<u64>,
    data: String,
    comment: bool,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

/// Reads SSE events, ids, `retry` fields and comments included.
struct Events {
    resp: reqwest::Response,
    buf: String,
}

impl Events {
    fn new(resp: reqwest::Response) -> Self {
        let ctype = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ctype.starts_with("text/event-stream"), "{ctype}");
        Events {
            resp,
            buf: String::new(),
        }
    }

    /// The next event or comment; None when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        tokio::time::timeout(WAIT, self.next_inner())
            .await
            .expect("an SSE event in time")
    }

    async fn next_inner(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut ev = Event::default();
                for line in block.lines() {
                    if line.starts_with(':') {
                        ev.comment = true;
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        ev.id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("retry: ") {
                        ev.retry = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        ev.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                return Some(ev);
            }
            match self.resp.chunk().await {
                Ok(Some(c)) => self.buf.push_str(&String::from_utf8_lossy(&c)),
                _ => return None,
            }
        }
    }

    /// Every event until the stream ends, comments left out.
    async fn rest(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(ev) = self.next().await {
            if !ev.comment {
                out.push(ev);
            }
        }
        out
    }
}

fn post(c: &Client, body: &Value) -> reqwest::RequestBuilder {
    http()
        .post(&c.url)
        .header("content-type", "application/json")
        .header("accept", JSON_AND_SSE)
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", &c.version)
        .json(body)
}

/// `GET` on the session, resuming after `last` when given.
async fn get(c: &Client, last: Option<&str>) -> reqwest::Response {
    let mut req = http()
        .get(&c.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", &c.version);
    if let Some(last) = last {
        req = req.header("last-event-id", last);
    }
    req.send().await.unwrap()
}

fn call(id: u64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": {"progressToken": id}}})
}

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

/// Asserts the stream's event ids are `<stream>:<n>` with one stream and `n` counting up by one.
fn assert_numbered(events: &[Event]) {
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_deref().unwrap()).collect();
    let (stream, first) = ids[0].rsplit_once(':').unwrap();
    let first: u64 = first.parse().unwrap();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(*id, format!("{stream}:{}", first + i as u64), "{ids:?}");
    }
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
