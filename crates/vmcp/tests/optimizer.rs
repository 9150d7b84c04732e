//! The optimizer's keyword tier through the binary: `tools/list` shows `find_tool` and
//! `call_tool` on both revisions; `find_tool` ranks the catalog with BM25 and shows a caller
//! only what it may call; `call_tool` runs the found tool through the normal path (hoisting a
//! nested `tool_name`, refusing a denied tool with the direct call's 403).

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use common::eras::*;
use common::{Gateway, found, stdio_backend};
use serde_json::{Value, json};

fn gateway(extra: &str) -> Gateway {
    gateway_with(extra, "{maxToolsToReturn: 3}")
}

fn gateway_with(extra: &str, optimizer: &str) -> Gateway {
    let yaml = format!(
        "name: optimized\n{extra}backends:\n{}{}optimizer: {optimizer}\n",
        stdio_backend("notes", ""),
        stdio_backend("weather", ""),
    );
    Gateway::start(&yaml)
}

#[tokio::test(flavor = "multi_thread")]
async fn find_and_call_on_both_revisions() {
    let gw = gateway("");
    let c = legacy_connect(&gw.url, json!({})).await;
    assert_eq!(c.tool_names().await, ["call_tool", "find_tool"]);
    let listed = c.ok("tools/list", json!({})).await;
    let find = &listed["tools"][1];
    let description = find["description"].as_str().unwrap();
    assert!(
        description.contains("notes (") && description.contains("weather ("),
        "{description}"
    );

    let r = c
        .call(
            "find_tool",
            json!({"tool_description": "add two numbers together"}),
        )
        .await;
    let names = found(&r["result"]);
    assert!(names.len() <= 3, "{names:?}");
    assert!(names[0].ends_with("_add"), "{names:?}");
    let metrics = &r["result"]["structuredContent"]["token_metrics"];
    assert!(
        metrics["baseline_tokens"].as_u64().unwrap() > metrics["returned_tokens"].as_u64().unwrap()
    );
    // Keywords steer the search (vmcp weighs them above the task); stop words are dropped.
    let r = c
        .call(
            "find_tool",
            json!({"tool_description": "anything", "tool_keywords": ["echo", "tool"]}),
        )
        .await;
    assert!(
        found(&r["result"]).iter().all(|n| n.ends_with("_echo")),
        "{r}"
    );
    let r = c
        .call(
            "find_tool",
            json!({"tool_description": "name description data table"}),
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"]["tools"],
        Value::Null,
        "only stop words: {r}"
    );
    let r = c.call("find_tool", json!({})).await;
    assert_eq!(r["result"]["isError"], true);

    let r = c
        .call(
            "call_tool",
            json!({"tool_name": "notes_add", "parameters": {"a": 2, "b": 40}}),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"]["sum"], 42.0, "{r}");
    // A nested tool_name is hoisted, as models send it.
    let r = c
        .call(
            "call_tool",
            json!({"parameters": {"tool_name": "weather_whoami"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "weather", "{r}");
    let r = c
        .call("call_tool", json!({"tool_name": "nope", "parameters": {}}))
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "tool not found: nope (search with find_tool)",
        "{r}"
    );
    // A near miss answers with the closest names.
    let r = c
        .call("call_tool", json!({"tool_name": "add", "parameters": {}}))
        .await;
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("tool not found: add; closest matches: ")
            && text.contains("notes_add")
            && text.contains("weather_add"),
        "{text}"
    );
    let r = c
        .call(
            "call_tool",
            json!({"tool_name": "notes_add", "parameters": "a=1"}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("parameters must be an object"),
        "{r}"
    );
    let r = c.call("call_tool", json!({"parameters": {"x": 1}})).await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("tool_name is required"),
        "{r}"
    );

    // A 2026-07-28 client gets the same two tools and the same answers.
    let m = ModernClient::new(&gw.url);
    let (tools, _) = m.list_all("tools/list", "tools").await;
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["call_tool", "find_tool"]);
    let r = m
        .ok("tools/call", json!({"name": "find_tool", "arguments": {"tool_description": "add two numbers together"}}))
        .await;
    assert!(found(&r)[0].ends_with("_add"), "{r}");
    let r = m
        .ok("tools/call", json!({"name": "call_tool", "arguments": {"tool_name": "notes_echo", "parameters": {"text": "hi"}}}))
        .await;
    assert_eq!(r["content"][0]["text"], "hi", "{r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ranking_toolhive_keeps_toolhives_rules() {
    // ToolHive: keywords replace the task text. vmcp (the default): both count, keywords more.
    let args = json!({"tool_description": "echo it back", "tool_keywords": ["add"]});
    let toolhive = gateway_with("", "{maxToolsToReturn: 3, ranking: toolhive}");
    let c = legacy_connect(&toolhive.url, json!({})).await;
    let names = found(&c.call("find_tool", args.clone()).await["result"]);
    assert!(
        !names.is_empty() && names.iter().all(|n| n.ends_with("_add")),
        "{names:?}"
    );
    let vmcp = gateway_with("", "{maxToolsToReturn: 3, ranking: vmcp}");
    let c = legacy_connect(&vmcp.url, json!({})).await;
    let names = found(&c.call("find_tool", args).await["result"]);
    assert!(names[0].ends_with("_add"), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with("_echo")), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_authorization_find_tool_shows_only_callable_tools() {
    let auth = "incomingAuth:\n  type: anonymous\n  authz:\n    type: cedar\n    policies:\n      - 'permit(principal, action == Action::\"call_tool\", resource == Tool::\"find_tool\");'\n      - 'permit(principal, action == Action::\"call_tool\", resource == Tool::\"call_tool\");'\n      - 'permit(principal, action == Action::\"call_tool\", resource in Backend::\"notes\");'\n";
    let gw = gateway(auth);
    let c = legacy_connect(&gw.url, json!({})).await;
    assert_eq!(c.tool_names().await, ["call_tool", "find_tool"]);
    let r = c
        .call(
            "find_tool",
            json!({"tool_description": "add two numbers whoami echo"}),
        )
        .await;
    let names = found(&r["result"]);
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with("notes_")),
        "{names:?}"
    );
    let denied = c
        .call(
            "call_tool",
            json!({"tool_name": "weather_add", "parameters": {"a": 1, "b": 1}}),
        )
        .await;
    let direct = c.call("weather_add", json!({"a": 1, "b": 1})).await;
    assert_eq!(denied["error"]["code"], 403, "{denied}");
    assert_eq!(
        denied["error"], direct["error"],
        "the same refusal as a direct call"
    );
    let ok = c
        .call(
            "call_tool",
            json!({"tool_name": "notes_add", "parameters": {"a": 1, "b": 1}}),
        )
        .await;
    assert_eq!(ok["result"]["structuredContent"]["sum"], 2.0, "{ok}");
    // With authorization an unknown name is refused like a denied one: no hint at what exists.
    let r = c
        .call("call_tool", json!({"tool_name": "add", "parameters": {}}))
        .await;
    assert_eq!(r["error"], direct["error"], "{r}");
}
