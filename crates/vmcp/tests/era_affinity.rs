//! Revision affinity, through the real gateway binary: a Streamable HTTP backend (rmcp,
//! [`BackendEra::Both`]) that serves 2025-11-25 sessions and 2026-07-28 stateless requests from
//! one URL is spoken to in each client's own revision.
//!
//! * A 2025-11-25 client is served over a backend session: elicitation, sampling and roots/list
//!   are sent by the backend mid-call and relayed to the client, progress comes back under the
//!   client's token, and `resources/subscribe` is forwarded so updates reach the subscriber.
//! * A 2026-07-28 client is served statelessly end to end: its `clientCapabilities` (with
//!   `extensions`) and `logLevel` reach the backend unchanged, and `input_required` passes through.
//! * Both kinds of client on one gateway, interleaved, each get their own revision.
//! * `/status` lists both revisions.
//!
//! Every claim is checked on what the backend observed (the revision and session of each call),
//! not only on what the client got back.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]
// resources/subscribe is deprecated by rmcp (2026-07-28 has none), but it is what a 2025-11-25
// client sends.
#![allow(deprecated)]

mod common;

use std::time::Duration;

use common::eras::*;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

fn args(v: Value) -> rmcp::model::JsonObject {
    v.as_object().unwrap().clone()
}

/// Calls `tool` with an rmcp client; the result as JSON (which must not be an error).
async fn call(client: &RmcpClient, tool: &str, arguments: Value) -> Value {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args(arguments));
    let r = step(&format!("tools/call {tool}"), client.call_tool(params))
        .await
        .unwrap_or_else(|e| panic!("tools/call {tool} failed: {e}"));
    let v = serde_json::to_value(&r).unwrap();
    assert_ne!(v["isError"], json!(true), "{tool} returned isError: {v}");
    v
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
        .to_string()
}

/// The single hop of `tool`, which must have come over a 2025-11-25 session; its session id.
fn session_hop(seen: &Seen, tool: &str) -> String {
    let hops = seen.hops_of(tool);
    assert_eq!(hops.len(), 1, "{tool}: {hops:?}");
    assert_eq!(
        hops[0].revision.as_deref(),
        Some(LEGACY),
        "{tool} did not reach the backend in 2025-11-25: {hops:?}"
    );
    hops[0]
        .session
        .clone()
        .unwrap_or_else(|| panic!("{tool} reached the backend without a session: {hops:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_is_served_over_a_backend_session_with_mid_call_requests_relayed() {
    let s = setup_both().await;
    let seen = s.sdk.seen();
    let alice = Answerer::new(
        "alice",
        json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}}),
    );
    let client = rmcp_legacy(&s.gw.url, alice.clone()).await;
    let info = serde_json::to_value(client.peer_info().expect("server info")).unwrap();
    assert_eq!(info["protocolVersion"], LEGACY, "{info}");
    assert_eq!(
        info["capabilities"]["resources"]["subscribe"], true,
        "{info}"
    );

    // Elicitation: the backend asks mid-call, the client answers, the call completes in one go.
    let r = call(&client, "sdk_ask", json!({"question": "q1"})).await;
    assert_eq!(text(&r), "q1 -> alice", "{r}");
    let asked = alice.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["message"], "Who asks \"q1\"?");
    // ...once, with no requestState / inputResponses: no input_required bridging.
    assert_eq!(*seen.asks.lock().unwrap(), vec![(None, None)]);
    let elicited = seen.elicited.lock().unwrap().clone();
    assert_eq!(elicited.len(), 1, "{elicited:?}");
    let answer = elicited[0].as_ref().unwrap();
    assert_eq!(answer["action"], "accept", "{answer}");
    assert_eq!(answer["content"], json!({"name": "alice"}), "{answer}");
    let session = session_hop(seen, "ask");

    // Sampling.
    let r = call(&client, "sdk_sample", json!({"question": "What is 6x7?"})).await;
    let sampled: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(sampled["model"], "alice-model", "{sampled}");
    assert_eq!(
        sampled["content"]["text"], "alice answers: What is 6x7?",
        "{sampled}"
    );
    let asked = alice.of("sampling/createMessage");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["maxTokens"], 50, "{asked:?}");

    // roots/list.
    let r = call(&client, "sdk_roots", json!({})).await;
    let roots: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(
        roots["roots"],
        json!([{"uri": "file:///work/alice", "name": "work"}]),
        "{roots}"
    );
    assert_eq!(alice.of("roots/list").len(), 1);

    // The backend sent both on its session and got the client's answers.
    let relayed = seen.relayed.lock().unwrap().clone();
    let methods: Vec<&str> = relayed.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(
        methods,
        ["sampling/createMessage", "roots/list"],
        "{relayed:?}"
    );
    for r in &relayed {
        assert_eq!(r.session.as_ref(), Some(&session), "{relayed:?}");
        assert!(r.answer.is_ok(), "{relayed:?}");
    }
    assert_eq!(relayed[0].answer.as_ref().unwrap()["model"], "alice-model");
    assert_eq!(session_hop(seen, "sample"), session);
    assert_eq!(session_hop(seen, "roots"), session);

    // Progress, under the client's own token.
    let params = CallToolRequestParams::new("sdk_progress").with_arguments(args(json!({})));
    let handle = step(
        "send tools/call sdk_progress",
        client.send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        ),
    )
    .await
    .expect("send tools/call");
    let token = serde_json::to_value(&handle.progress_token).unwrap();
    let r = step("tools/call sdk_progress", handle.await_response())
        .await
        .expect("tools/call sdk_progress");
    let r = serde_json::to_value(r).unwrap();
    let backend_view: Value = serde_json::from_str(&text(&r)).unwrap();
    assert!(
        !backend_view["backendToken"].is_null(),
        "the backend got no progress token: {r}"
    );
    let mut progress = alice.wait_for("notifications/progress", 3).await;
    progress.sort_by(|a, b| {
        a["progress"]
            .as_f64()
            .partial_cmp(&b["progress"].as_f64())
            .unwrap()
    });
    let expected: Vec<Value> = (1..=3)
        .map(|i| {
            json!({"progressToken": token, "progress": f64::from(i), "total": 3.0,
                   "message": format!("step {i}")})
        })
        .collect();
    assert_eq!(progress, expected);
    assert_eq!(
        *seen.progress_tokens.lock().unwrap(),
        vec![Some(backend_view["backendToken"].clone())]
    );
    assert_eq!(session_hop(seen, "progress"), session);

    // Every call came over the one session the gateway opened, in 2025-11-25.
    let opened = seen.sessions.lock().unwrap().clone();
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["protocolVersion"], LEGACY, "{opened:?}");
    let hops = seen.hops.lock().unwrap().clone();
    assert!(
        hops.iter()
            .all(|h| h.revision.as_deref() == Some(LEGACY) && h.session.as_ref() == Some(&session)),
        "{hops:?}"
    );

    // resources/subscribe is forwarded over that session; the backend's update reaches the
    // subscriber only.
    let bob = Answerer::new("bob", json!({}));
    let bystander = rmcp_legacy(&s.gw.url, bob.clone()).await;
    s.gw.wait_streams(2).await;
    let uri = s.sdk.server.resource_uri();
    step(
        "resources/subscribe",
        client.subscribe(from::<SubscribeRequestParams>(json!({"uri": uri}))),
    )
    .await
    .expect("resources/subscribe");
    assert_eq!(
        *seen.subscriptions.lock().unwrap(),
        vec![("subscribe".to_string(), uri.clone(), Some(session.clone()))]
    );
    assert_eq!(s.sdk.touch(&uri).await, 1, "the backend has one subscriber");
    let updates = alice.wait_for("notifications/resources/updated", 1).await;
    assert_eq!(updates, vec![json!({"uri": uri})]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(alice.of("notifications/resources/updated").len(), 1);
    assert!(
        bob.of("notifications/resources/updated").is_empty(),
        "{:?}",
        bob.events.lock().unwrap()
    );

    step(
        "resources/unsubscribe",
        client.unsubscribe(from::<UnsubscribeRequestParams>(json!({"uri": uri}))),
    )
    .await
    .expect("resources/unsubscribe");
    assert_eq!(
        seen.subscriptions.lock().unwrap().last(),
        Some(&(
            "unsubscribe".to_string(),
            uri.clone(),
            Some(session.clone())
        ))
    );
    assert_eq!(
        seen.sessions.lock().unwrap().len(),
        1,
        "a second backend session was opened"
    );

    let _ = step("rmcp close", client.cancel()).await;
    let _ = step("rmcp close", bystander.cancel()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_is_served_statelessly_end_to_end() {
    let s = setup_both().await;
    let seen = s.sdk.seen();
    let caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let m = ModernClient::with_caps(&s.gw.url, caps.clone());

    // Round 1: the backend's input_required passes through.
    let a = m
        .request(
            "tools/call",
            json!({"name": "sdk_ask", "arguments": {"question": "q1"},
                "_meta": {LOG_LEVEL: "debug"}}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let r = &a.body["result"];
    assert_eq!(r["resultType"], "input_required", "{}", a.text);
    assert_eq!(r["requestState"], "ask:q1", "{r}");
    assert_eq!(
        r["inputRequests"]["who"]["method"], "elicitation/create",
        "{r}"
    );
    assert_eq!(
        r["inputRequests"]["who"]["params"]["message"], "Who asks \"q1\"?",
        "{r}"
    );

    // Round 2: the retry with inputResponses + requestState completes.
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let retry = m
        .ok(
            "tools/call",
            json!({"name": "sdk_ask", "arguments": {"question": "q1"},
                "inputResponses": {"who": answer}, "requestState": "ask:q1",
                "_meta": {LOG_LEVEL: "debug"}}),
        )
        .await;
    assert_modern_envelope(&retry);
    assert_eq!(retry["content"][0]["text"], "q1 -> Ada", "{retry}");

    // The backend saw two stateless 2026-07-28 requests, not a session, and nothing mid-call.
    let stateless = Hop {
        tool: "ask".to_string(),
        revision: Some(MODERN.to_string()),
        session: None,
        tasks: true,
    };
    assert_eq!(seen.hops_of("ask"), vec![stateless.clone(), stateless]);
    for meta in seen.metas_of("ask") {
        assert_eq!(meta[PV], MODERN, "{meta}");
        assert_eq!(
            meta[CC], caps,
            "clientCapabilities changed on the way: {meta}"
        );
        assert_eq!(meta[LOG_LEVEL], "debug", "{meta}");
    }
    assert_eq!(
        *seen.asks.lock().unwrap(),
        vec![
            (None, None),
            (Some("ask:q1".to_string()), Some(json!({"who": answer})))
        ]
    );
    assert!(seen.elicited.lock().unwrap().is_empty());

    // The log level is the request's own.
    let r = m
        .ok(
            "tools/call",
            json!({"name": "sdk_spy", "arguments": {}, "_meta": {LOG_LEVEL: "error"}}),
        )
        .await;
    assert_modern_envelope(&r);
    let spied = seen.metas_of("spy");
    assert_eq!(spied.len(), 1, "{spied:?}");
    assert_eq!(spied[0][LOG_LEVEL], "error", "{}", spied[0]);
    assert_eq!(spied[0][CC], caps, "{}", spied[0]);
    let hops = seen.hops_of("spy");
    assert_eq!(hops.len(), 1, "{hops:?}");
    assert_eq!(hops[0].revision.as_deref(), Some(MODERN), "{hops:?}");
    assert_eq!(hops[0].session, None, "{hops:?}");

    // No session was ever opened with the backend.
    let opened = seen.sessions.lock().unwrap().clone();
    assert!(
        opened.is_empty(),
        "the gateway opened a session: {opened:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_lists_both_revisions_once_both_hops_were_used() {
    let s = setup_both().await;
    let seen = s.sdk.seen();

    let m = ModernClient::new(&s.gw.url);
    let r = m
        .ok("tools/call", json!({"name": "sdk_spy", "arguments": {}}))
        .await;
    assert_modern_envelope(&r);
    let c = legacy_connect(&s.gw.url, json!({})).await;
    let r = step("legacy tools/call", c.call("sdk_spy", json!({}))).await;
    assert!(r.get("error").is_none(), "{r}");

    let hops = seen.hops_of("spy");
    assert_eq!(hops.len(), 2, "{hops:?}");
    assert_eq!(hops[0].revision.as_deref(), Some(MODERN), "{hops:?}");
    assert_eq!(hops[0].session, None, "{hops:?}");
    assert_eq!(hops[1].revision.as_deref(), Some(LEGACY), "{hops:?}");
    assert!(hops[1].session.is_some(), "{hops:?}");

    let b = backend_status(&s.gw.base, "sdk").await;
    assert_eq!(b["mcpRevisions"], json!([MODERN, LEGACY]), "{b}");
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_of_both_revisions_side_by_side_each_get_their_own() {
    let s = setup_both().await;
    let seen = s.sdk.seen();

    // rmcp's own 2026-07-28 client drives input_required itself through its handler.
    let answerer = Answerer::new("rmcp-modern", json!({"elicitation": {}}));
    let modern = rmcp_modern(&s.gw.url, answerer.clone()).await;
    // A raw 2025-11-25 session on the same gateway, answering on the call's stream.
    let legacy = legacy_connect(&s.gw.url, json!({"elicitation": {}})).await;

    let r = call(&modern, "sdk_ask", json!({"question": "m1"})).await;
    assert_eq!(text(&r), "m1 -> rmcp-modern", "{r}");
    assert_eq!(answerer.asked.lock().unwrap().len(), 1);
    let (requests, answer) = legacy_call_answering(
        &legacy,
        "sdk_ask",
        json!({"question": "l1"}),
        |_| json!({"action": "accept", "content": {"name": "Eve"}}),
    )
    .await;
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["method"], "elicitation/create", "{requests:?}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "l1 -> Eve",
        "{answer}"
    );
    let r = call(&modern, "sdk_ask", json!({"question": "m2"})).await;
    assert_eq!(text(&r), "m2 -> rmcp-modern", "{r}");

    // The backend: two stateless rounds per 2026-07-28 call, one session call in between that
    // elicited mid-call.
    let hops = seen.hops_of("ask");
    let shape: Vec<(Option<&str>, bool)> = hops
        .iter()
        .map(|h| (h.revision.as_deref(), h.session.is_some()))
        .collect();
    assert_eq!(
        shape,
        [
            (Some(MODERN), false),
            (Some(MODERN), false),
            (Some(LEGACY), true),
            (Some(MODERN), false),
            (Some(MODERN), false),
        ],
        "{hops:?}"
    );
    let asks = seen.asks.lock().unwrap().clone();
    let states: Vec<Option<&str>> = asks.iter().map(|(s, _)| s.as_deref()).collect();
    assert_eq!(
        states,
        [None, Some("ask:m1"), None, None, Some("ask:m2")],
        "{asks:?}"
    );
    let elicited = seen.elicited.lock().unwrap().clone();
    assert_eq!(elicited.len(), 1, "{elicited:?}");
    assert_eq!(
        elicited[0].as_ref().unwrap()["content"],
        json!({"name": "Eve"})
    );
    assert_eq!(seen.sessions.lock().unwrap().len(), 1);

    let _ = step("rmcp close", modern.cancel()).await;
}
