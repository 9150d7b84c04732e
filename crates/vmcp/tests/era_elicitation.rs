//! Elicitation across the era matrix, through the real gateway binary (see `era_matrix.rs` for
//! the setup): what each pairing of client era and backend era does when a backend needs input.
//!
//! * Modern client, Modern backend: the backend's `input_required` passes through; the client
//!   retries with `inputResponses` + `requestState`.
//! * Legacy client, Modern backend: the gateway asks the session (`elicitation/create` on the
//!   tools/call stream) and retries the backend with the answers.
//! * Modern client, Legacy backend eliciting mid-call: refused, -32021 (capability not declared)
//!   or -32603 (declared), HTTP 200.
//! * Legacy client, Legacy backend: relayed mid-call.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use common::eras::*;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn elicitation_answer(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_modern_backend_elicitation_passes_input_required_through() {
    let s = setup(Era::Modern, 0, 0).await;
    let m = ModernClient::with_caps(&s.gw.url, json!({"elicitation": {}}));

    // Round 1: the backend's input_required reaches the client as it is, under the client's id.
    let a = m
        .request(
            "tools/call",
            json!({"name": "sdk_ask", "arguments": {"question": "q1"}}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let r = &a.body["result"];
    assert_eq!(r["resultType"], "input_required", "{}", a.text);
    assert_eq!(r["requestState"], "ask:q1", "{r}");
    let asked = &r["inputRequests"]["who"];
    assert_eq!(asked["method"], "elicitation/create", "{r}");
    assert_eq!(asked["params"]["message"], "Who asks \"q1\"?", "{r}");
    assert_eq!(
        asked["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(r["_meta"][SI]["name"], "vmcp", "{r}");
    assert_only_our_reserved_keys(r);
    assert!(
        r.get("ttlMs").is_none(),
        "input_required is not cacheable: {r}"
    );
    assert!(r.get("content").is_none(), "{r}");

    // Round 2: a new request with inputResponses + requestState gets the final result.
    let retry = m
        .ok(
            "tools/call",
            json!({"name": "sdk_ask", "arguments": {"question": "q1"},
                "inputResponses": {"who": elicitation_answer("Ada")},
                "requestState": "ask:q1"}),
        )
        .await;
    assert_modern_envelope(&retry);
    assert_eq!(retry["content"][0]["text"], "q1 -> Ada", "{retry}");

    // The backend got the client's capabilities mirrored, then the answers and its state verbatim.
    let metas = s.sdk.seen().metas_of("ask");
    assert_eq!(metas.len(), 2, "{metas:?}");
    for meta in &metas {
        assert_eq!(meta[CC], json!({"elicitation": {}}), "{meta}");
        assert_eq!(meta[PV], MODERN, "{meta}");
    }
    let asks = s.sdk.seen().asks.lock().unwrap().clone();
    assert_eq!(
        asks,
        vec![
            (None, None),
            (
                Some("ask:q1".to_string()),
                Some(json!({"who": elicitation_answer("Ada")}))
            )
        ]
    );

    // A client that did not declare elicitation gets the backend's own refusal (-32021).
    let bare = ModernClient::new(&s.gw.url);
    let a = bare
        .request(
            "tools/call",
            json!({"name": "sdk_ask", "arguments": {"question": "q2"}}),
        )
        .await;
    assert_eq!(a.body["error"]["code"], -32021, "{}", a.text);
    assert_eq!(
        a.body["error"]["data"]["requiredCapabilities"]["elicitation"],
        json!({}),
        "{}",
        a.text
    );
    assert_eq!(
        a.status, 400,
        "-32021 is HTTP 400 (spec: basic/index.mdx, per-request protocol fields): {}",
        a.text
    );

    // rmcp's Modern client drives the rounds itself through its elicitation handler.
    let answerer = Answerer::new("rmcp-modern", json!({"elicitation": {}}));
    let asked = answerer.asked.clone();
    let rmcp = rmcp_modern(&s.gw.url, answerer).await;
    let params = CallToolRequestParams::new("sdk_ask")
        .with_arguments(json!({"question": "q3"}).as_object().unwrap().clone());
    let r = step("rmcp MRTR tools/call", rmcp.call_tool(params))
        .await
        .expect("rmcp MRTR tools/call");
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["content"][0]["text"], "q3 -> rmcp-modern", "{r}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["message"], "Who asks \"q3\"?");
    let _ = step("rmcp close", rmcp.cancel()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_modern_backend_elicitation_is_bridged_onto_the_session() {
    let s = setup(Era::Modern, 0, 0).await;
    let c = legacy_connect(&s.gw.url, json!({"elicitation": {}})).await;

    let (requests, answer) =
        legacy_call_answering(&c, "sdk_ask", json!({"question": "q1"}), |_| {
            elicitation_answer("Bob")
        })
        .await;
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["method"], "elicitation/create");
    assert_eq!(requests[0]["params"]["message"], "Who asks \"q1\"?");
    assert_eq!(
        requests[0]["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "q1 -> Bob",
        "{answer}"
    );
    assert_ne!(answer["result"]["resultType"], "input_required", "{answer}");

    // The backend saw the session's capabilities, then its own state and the client's answer.
    let metas = s.sdk.seen().metas_of("ask");
    assert_eq!(metas.len(), 2, "{metas:?}");
    assert_eq!(metas[0][CC], json!({"elicitation": {}}), "{}", metas[0]);
    let asks = s.sdk.seen().asks.lock().unwrap().clone();
    assert_eq!(
        asks,
        vec![
            (None, None),
            (
                Some("ask:q1".to_string()),
                Some(json!({"who": elicitation_answer("Bob")}))
            )
        ]
    );

    // rmcp's Legacy client answers through its elicitation handler.
    let answerer = Answerer::new("rmcp-legacy", json!({"elicitation": {}}));
    let asked = answerer.asked.clone();
    let rmcp = rmcp_legacy(&s.gw.url, answerer).await;
    let params = CallToolRequestParams::new("sdk_ask")
        .with_arguments(json!({"question": "q2"}).as_object().unwrap().clone());
    let r = step("rmcp legacy tools/call", rmcp.call_tool(params))
        .await
        .expect("rmcp legacy tools/call");
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["content"][0]["text"], "q2 -> rmcp-legacy", "{r}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    let _ = step("rmcp close", rmcp.cancel()).await;

    // A session that did not declare elicitation: the backend refuses (-32021), nothing is relayed.
    let bare = legacy_connect(&s.gw.url, json!({})).await;
    let (requests, answer) =
        legacy_call_answering(&bare, "sdk_ask", json!({"question": "q3"}), |_| {
            elicitation_answer("nobody")
        })
        .await;
    assert!(requests.is_empty(), "{requests:?}");
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"]["elicitation"],
        json!({}),
        "{answer}"
    );
}

/// A Modern client calling a Legacy backend that elicits mid-call: refused, per the contract.
async fn modern_client_legacy_backend_refusal(caps: Value) -> (common::Answer, Setup) {
    let s = setup(Era::Legacy, 0, 0).await;
    let m = ModernClient::with_caps(&s.gw.url, caps);
    let a = m
        .request(
            "tools/call",
            json!({"name": "sdk_ask", "arguments": {"question": "q"}}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(a.body.get("result").is_none(), "{}", a.text);
    // The backend's elicitation was refused, not left hanging.
    let elicited = s.sdk.seen().elicited.lock().unwrap().clone();
    assert_eq!(elicited.len(), 1, "{elicited:?}");
    assert!(elicited[0].is_err(), "{elicited:?}");
    (a, s)
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_legacy_backend_elicitation_is_refused_with_32021() {
    let (a, _s) = modern_client_legacy_backend_refusal(json!({})).await;
    assert_eq!(a.body["error"]["code"], -32021, "{}", a.text);
    assert_eq!(
        a.body["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}}),
        "{}",
        a.text
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_legacy_backend_elicitation_declared_is_refused_with_32603() {
    let (a, _s) = modern_client_legacy_backend_refusal(json!({"elicitation": {}})).await;
    assert_eq!(a.body["error"]["code"], -32603, "{}", a.text);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("elicitation"),
        "{}",
        a.text
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_legacy_backend_elicitation_is_relayed_mid_call() {
    let s = setup(Era::Legacy, 0, 0).await;
    let c = legacy_connect(&s.gw.url, json!({"elicitation": {}})).await;
    let (requests, answer) = legacy_call_answering(&c, "sdk_ask", json!({"question": "q"}), |_| {
        elicitation_answer("Eve")
    })
    .await;
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["method"], "elicitation/create");
    assert_eq!(requests[0]["params"]["message"], "Who asks \"q\"?");
    assert_eq!(
        answer["result"]["content"][0]["text"], "q -> Eve",
        "{answer}"
    );
    let elicited = s.sdk.seen().elicited.lock().unwrap().clone();
    assert_eq!(elicited.len(), 1);
    assert_eq!(
        elicited[0].as_ref().unwrap()["content"],
        json!({"name": "Eve"})
    );
}
