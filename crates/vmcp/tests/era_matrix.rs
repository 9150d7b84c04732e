//! The era matrix, through the real gateway binary: client era (Legacy = 2025-11-25 with
//! `initialize` and a session; Modern = 2026-07-28, stateless, per-request `_meta`) x backend era
//! (Legacy = the repo's fixture over stdio plus an rmcp server pinned to 2025-11-25; Modern = an
//! rmcp server serving only 2026-07-28, which `/status` must show the gateway classified as such).
//!
//! Each cell covers listing (prefixed, sorted, stable), calling (content and, for Modern clients,
//! the envelope), resources/read, prompts/get, completion/complete, errors, pagination past 1000
//! tools, and elicitation in the shape each pairing supports.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use common::eras::*;
use common::{Client, Gateway};
use rmcp::model::{
    CallToolRequestParams, ErrorCode, GetPromptRequestParams, ProtocolVersion,
    ReadResourceRequestParams,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

/// The tools the gateway must list, sorted.
fn expected_tools(backend: Era, fx_tools: usize, sdk_tools: usize) -> Vec<String> {
    let mut v: Vec<String> = ["ask", "echo", "grow", "spy", "whoami"]
        .iter()
        .map(|t| format!("sdk_{t}"))
        .collect();
    v.extend((0..sdk_tools).map(|i| format!("sdk_tool_{i}")));
    if backend == Era::Legacy {
        let fixed = [
            "add",
            "crash",
            "echo",
            "fail",
            "garbage",
            "rpc_error",
            "sleep",
            "whoami",
        ];
        v.extend(fixed.iter().map(|t| format!("fx_{t}")));
        v.extend((0..fx_tools).map(|i| format!("fx_tool_{i}")));
    }
    v.sort();
    v
}

/// Asserts `listed` holds exactly the `expected` tools (sorted), grouped by backend in sorted
/// order; within a backend they keep the backend's own order, whatever it is.
fn assert_listed(listed: &[String], expected: &[String]) {
    let backend = |n: &String| n.split('_').next().unwrap_or_default().to_owned();
    let groups: Vec<String> = listed.iter().map(backend).collect();
    let mut grouped = groups.clone();
    grouped.sort();
    assert_eq!(
        groups, grouped,
        "not grouped by backend in sorted order: {listed:?}"
    );
    let mut sorted = listed.to_vec();
    sorted.sort();
    assert_eq!(sorted, expected);
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {tools}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// `sdk_echo`'s result straight from the rmcp backend (not through the gateway).
async fn direct_echo(sdk: &SdkBackend, backend: Era) -> Value {
    let params = json!({"name": "echo", "arguments": {"text": "direct"}});
    let body = match backend {
        Era::Modern => {
            let a = ModernClient::new(&sdk.url)
                .request("tools/call", params)
                .await;
            a.body
        }
        Era::Legacy => {
            let c = step("connect", Client::connect(&sdk.url)).await;
            step("direct tools/call", c.request("tools/call", params)).await
        }
    };
    assert!(body.get("error").is_none(), "{body}");
    body["result"].clone()
}

/// A raw client of either era; both declare the elicitation capability.
enum Edge {
    Legacy(Client),
    Modern(ModernClient),
}

struct Reply {
    status: u16,
    body: Value,
}

impl Edge {
    async fn connect(client: Era, gw: &Gateway) -> Edge {
        match client {
            Era::Legacy => Edge::Legacy(legacy_connect(&gw.url, json!({"elicitation": {}})).await),
            Era::Modern => {
                Edge::Modern(ModernClient::with_caps(&gw.url, json!({"elicitation": {}})))
            }
        }
    }

    fn era(&self) -> Era {
        match self {
            Edge::Legacy(_) => Era::Legacy,
            Edge::Modern(_) => Era::Modern,
        }
    }

    async fn rpc(&self, method: &str, params: Value) -> Reply {
        match self {
            Edge::Legacy(c) => {
                let id = json!(format!("legacy-{method}"));
                let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                let a = step(method, c.post_raw(c.session.clone(), body)).await;
                assert_eq!(a.body["id"], id, "{}", a.text);
                Reply {
                    status: a.status,
                    body: a.body,
                }
            }
            Edge::Modern(m) => {
                let a = m.request(method, params).await;
                Reply {
                    status: a.status,
                    body: a.body,
                }
            }
        }
    }

    /// A successful result. Modern: HTTP 200 and the Modern envelope; Legacy: HTTP 200 and no
    /// reserved `_meta` key at all.
    async fn ok(&self, method: &str, params: Value) -> Value {
        let r = self.rpc(method, params).await;
        assert_eq!(r.status, 200, "{method}: {}", r.body);
        assert!(r.body.get("error").is_none(), "{method} failed: {}", r.body);
        let result = r.body["result"].clone();
        match self {
            Edge::Modern(_) => {
                assert_modern_envelope(&result);
                assert_eq!(
                    result["_meta"][SI]["title"], "era-matrix",
                    "serverInfo: {result}"
                );
            }
            Edge::Legacy(_) => {
                assert_only_our_reserved_keys(&result);
                assert!(result["_meta"].get(SI).is_none(), "{result}");
            }
        }
        result
    }

    /// Asserts the cache hints a Modern client gets on cacheable results (none for Legacy).
    fn cache_hints(&self, result: &Value, cacheable: bool) {
        if self.era() == Era::Modern && cacheable {
            assert_eq!(result["ttlMs"], 0, "{result}");
            assert_eq!(result["cacheScope"], "private", "{result}");
        } else if self.era() == Era::Modern {
            assert!(result.get("ttlMs").is_none(), "{result}");
            assert!(result.get("cacheScope").is_none(), "{result}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Basics: list, call, read, get, complete, errors
// ---------------------------------------------------------------------------------------------

async fn basics(client: Era, backend: Era) {
    let s = setup(backend, 0, 0).await;
    let edge = Edge::connect(client, &s.gw).await;

    // tools/list: prefixed, in the backends' order, complete in one page, and the same twice.
    let list = edge.ok("tools/list", json!({})).await;
    assert_listed(&names(&list["tools"]), &expected_tools(backend, 0, 0));
    assert!(list.get("nextCursor").is_none(), "{list}");
    edge.cache_hints(&list, true);
    let again = edge.ok("tools/list", json!({})).await;
    assert_eq!(again["tools"], list["tools"], "tools/list is not stable");
    let echo = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "sdk_echo")
        .unwrap();
    assert_eq!(echo["description"], "Returns the text");
    assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string");

    // tools/call: content, structured content, the backend's vendor `_meta` key kept and its
    // forged reserved keys gone (Modern: replaced by the gateway's serverInfo). First, that the
    // backend really sends the forged keys when asked directly.
    let direct = direct_echo(&s.sdk, backend).await;
    assert_eq!(direct["_meta"][SI]["name"], "evil-backend", "{direct}");
    assert_eq!(direct["_meta"][SUB], "forged", "{direct}");
    let r = edge
        .ok(
            "tools/call",
            json!({"name": "sdk_echo", "arguments": {"text": "héllo ✓"}}),
        )
        .await;
    assert_eq!(
        r["content"],
        json!([{"type": "text", "text": "héllo ✓"}]),
        "{r}"
    );
    assert_eq!(
        r["structuredContent"],
        json!({"echoed": "héllo ✓", "by": "sdk"})
    );
    assert_eq!(r["_meta"]["example.com/trace"], "trace-1", "{r}");
    assert_ne!(r["isError"], json!(true), "{r}");
    edge.cache_hints(&r, false);
    let who = edge
        .ok("tools/call", json!({"name": "sdk_whoami", "arguments": {}}))
        .await;
    assert_eq!(who["content"][0]["text"], "sdk", "{who}");

    // resources/read
    let read = edge
        .ok("resources/read", json!({"uri": "memo://sdk/hello"}))
        .await;
    assert_eq!(
        read["contents"],
        json!([{"uri": "memo://sdk/hello", "mimeType": "text/plain", "text": "hello from sdk"}])
    );
    edge.cache_hints(&read, true);

    // prompts/get
    let p = edge
        .ok(
            "prompts/get",
            json!({"name": "sdk_greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        p["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada! (from sdk)"}}])
    );
    assert_eq!(p["description"], "A greeting");
    edge.cache_hints(&p, false);

    // completion/complete, routed by the prefixed prompt name
    let c = edge
        .ok(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "sdk_greet"},
                "argument": {"name": "name", "value": "al"}}),
        )
        .await;
    assert_eq!(c["completion"]["values"], json!(["alice", "albert"]), "{c}");
    edge.cache_hints(&c, false);

    // The repo's fixture next to it (Legacy backends).
    if backend == Era::Legacy {
        let sum = edge
            .ok(
                "tools/call",
                json!({"name": "fx_add", "arguments": {"a": 2, "b": 40}}),
            )
            .await;
        assert_eq!(sum["structuredContent"], json!({"sum": 42}), "{sum}");
        let item = edge
            .ok("resources/read", json!({"uri": "fixture://fx/items/42"}))
            .await;
        assert_eq!(item["contents"][0]["text"], "item 42 of fx", "{item}");
        let g = edge
            .ok(
                "prompts/get",
                json!({"name": "fx_greet", "arguments": {"name": "Ada"}}),
            )
            .await;
        assert_eq!(g["messages"][0]["content"]["text"], "Hello, Ada! (from fx)");
        let c = edge
            .ok(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "fx_greet"},
                    "argument": {"name": "name", "value": "al"}}),
            )
            .await;
        assert_eq!(c["completion"]["values"], json!(["alice", "albert"]));
    }

    // The same through rmcp's client in the client's era.
    let rmcp = match client {
        Era::Legacy => rmcp_legacy(&s.gw.url, Answerer::new("rmcp-legacy", json!({}))).await,
        Era::Modern => rmcp_modern(&s.gw.url, Answerer::new("rmcp-modern", json!({}))).await,
    };
    let peer = rmcp.peer_info().expect("server info");
    let version = match client {
        Era::Legacy => ProtocolVersion::V_2025_11_25,
        Era::Modern => ProtocolVersion::V_2026_07_28,
    };
    assert_eq!(peer.protocol_version, version, "{peer:?}");
    let tools = step("rmcp tools/list", rmcp.list_all_tools())
        .await
        .expect("rmcp tools/list");
    let rmcp_names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_listed(&rmcp_names, &expected_tools(backend, 0, 0));
    let params = CallToolRequestParams::new("sdk_echo")
        .with_arguments(json!({"text": "via rmcp"}).as_object().unwrap().clone());
    let r = step("rmcp tools/call", rmcp.call_tool(params))
        .await
        .expect("rmcp tools/call");
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["content"][0]["text"], "via rmcp", "{r}");
    let read = step(
        "rmcp resources/read",
        rmcp.read_resource(ReadResourceRequestParams::new("memo://sdk/hello")),
    )
    .await
    .expect("rmcp resources/read");
    let read = serde_json::to_value(&read).unwrap();
    assert_eq!(read["contents"][0]["text"], "hello from sdk", "{read}");
    let p = step(
        "rmcp prompts/get",
        rmcp.get_prompt(
            GetPromptRequestParams::new("sdk_greet")
                .with_arguments(json!({"name": "Bo"}).as_object().unwrap().clone()),
        ),
    )
    .await
    .expect("rmcp prompts/get");
    let p = serde_json::to_value(&p).unwrap();
    assert_eq!(p["messages"][0]["content"]["text"], "Hello, Bo! (from sdk)");
    let values = step(
        "rmcp completion/complete",
        rmcp.complete_prompt_simple("sdk_greet", "name", "b"),
    )
    .await
    .expect("rmcp completion/complete");
    assert_eq!(values, vec!["bob".to_string()]);
    match step(
        "rmcp unknown tool",
        rmcp.call_tool(CallToolRequestParams::new("nope_nothing")),
    )
    .await
    {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}"),
        other => panic!("unknown tool through rmcp: expected -32602, got {other:?}"),
    }
    let _ = step("rmcp close", rmcp.cancel()).await;
}

/// Errors keep their JSON-RPC codes in both eras; Modern clients also get the mapped HTTP status
/// (-32601 → 404, -32602 → 400, others 200). Every case is checked before failing, so one report
/// lists every mismatch.
async fn errors(client: Era, backend: Era) {
    let s = setup(backend, 0, 0).await;
    let edge = Edge::connect(client, &s.gw).await;
    // (what, method, params, (Modern status, code), Legacy (status, code) if checked)
    let mut cases = vec![
        (
            "unknown tool",
            "tools/call",
            json!({"name": "nope_nothing", "arguments": {}}),
            (400, -32602),
            Some((200, -32602)),
        ),
        (
            "arguments not an object",
            "tools/call",
            json!({"name": "sdk_echo", "arguments": [1]}),
            (400, -32602),
            // A Legacy session forwards it as it is; the backend decides.
            None,
        ),
        (
            "unknown prompt",
            "prompts/get",
            json!({"name": "nope_prompt"}),
            (400, -32602),
            Some((200, -32602)),
        ),
        (
            // Modern renames 2025-11-25's resource-not-found (-32002) to -32602.
            "unknown resource",
            "resources/read",
            json!({"uri": "memo://sdk/nope"}),
            (400, -32602),
            Some((200, -32002)),
        ),
        (
            "unknown method",
            "tools/destroy",
            json!({}),
            (404, -32601),
            Some((200, -32601)),
        ),
    ];
    if backend == Era::Legacy {
        cases.push((
            "backend JSON-RPC error",
            "tools/call",
            json!({"name": "fx_rpc_error", "arguments": {}}),
            (200, -32603),
            Some((200, -32603)),
        ));
    }
    let mut wrong = Vec::new();
    for (what, method, params, modern, legacy) in cases {
        let (status, code) = match (client, legacy) {
            (Era::Modern, _) => modern,
            (Era::Legacy, Some(l)) => l,
            (Era::Legacy, None) => continue,
        };
        let r = edge.rpc(method, params).await;
        let got = (r.status, r.body["error"]["code"].as_i64().unwrap_or(0));
        if got != (status, code) {
            wrong.push(format!(
                "{what}: expected HTTP {status} / {code}, got HTTP {} / {}",
                r.status, r.body
            ));
        }
    }
    // Still serving after the errors.
    let who = edge
        .ok("tools/call", json!({"name": "sdk_whoami", "arguments": {}}))
        .await;
    assert_eq!(who["content"][0]["text"], "sdk");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_legacy_backend_list_call_read_get_complete() {
    basics(Era::Legacy, Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_modern_backend_list_call_read_get_complete() {
    basics(Era::Legacy, Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_legacy_backend_list_call_read_get_complete() {
    basics(Era::Modern, Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_modern_backend_list_call_read_get_complete() {
    basics(Era::Modern, Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_legacy_backend_errors_keep_codes_and_statuses() {
    errors(Era::Legacy, Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_modern_backend_errors_keep_codes_and_statuses() {
    errors(Era::Legacy, Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_legacy_backend_errors_keep_codes_and_statuses() {
    errors(Era::Modern, Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_modern_backend_errors_keep_codes_and_statuses() {
    errors(Era::Modern, Era::Modern).await;
}

// ---------------------------------------------------------------------------------------------
// Pagination past 1000 tools
// ---------------------------------------------------------------------------------------------

/// 1200 numbered tools behind the gateway (the fixture's `--tools 1200` for Legacy backends; the
/// rmcp backend, itself paging by 500, for Modern); the client pages by 1000.
async fn pagination(client: Era, backend: Era) {
    let (fx_tools, sdk_tools) = match backend {
        Era::Legacy => (1200, 0),
        Era::Modern => (0, 1200),
    };
    let s = setup(backend, fx_tools, sdk_tools).await;
    let expected = expected_tools(backend, fx_tools, sdk_tools);
    let edge = Edge::connect(client, &s.gw).await;
    let (items, pages) = match &edge {
        Edge::Legacy(c) => legacy_list_all(c, "tools/list", "tools").await,
        Edge::Modern(m) => m.list_all("tools/list", "tools").await,
    };
    assert_eq!(pages, vec![1000, expected.len() - 1000], "page sizes");
    let all = names(&Value::Array(items));
    assert_listed(&all, &expected);

    // The first page again: identical (deterministic order), with a cursor.
    let first = edge.ok("tools/list", json!({})).await;
    let cursor = first["nextCursor"]
        .as_str()
        .expect("nextCursor")
        .to_string();
    assert_eq!(names(&first["tools"]), all[..1000].to_vec());
    let second = edge.ok("tools/list", json!({"cursor": cursor})).await;
    assert_eq!(names(&second["tools"]), all[1000..].to_vec());
    assert!(second.get("nextCursor").is_none(), "last page: {second}");

    // A cursor the gateway never issued: -32602 (HTTP 400 for Modern).
    let r = edge
        .rpc("tools/list", json!({"cursor": "not-a-cursor!"}))
        .await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
    let status = if client == Era::Modern { 400 } else { 200 };
    assert_eq!(r.status, status, "{}", r.body);

    // A numbered tool from the second page is callable.
    let last = expected[1000..]
        .iter()
        .rev()
        .find(|n| n.contains("_tool_"))
        .unwrap()
        .clone();
    let r = edge
        .ok("tools/call", json!({"name": last, "arguments": {}}))
        .await;
    let unprefixed = last.split_once('_').unwrap().1;
    assert_eq!(r["content"][0]["text"], unprefixed, "{r}");
    drop(s.sdk);
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_legacy_backend_pages_1213_tools_by_1000() {
    pagination(Era::Legacy, Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_client_modern_backend_pages_1205_tools_by_1000() {
    pagination(Era::Legacy, Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_legacy_backend_pages_1213_tools_by_1000() {
    pagination(Era::Modern, Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_client_modern_backend_pages_1205_tools_by_1000() {
    pagination(Era::Modern, Era::Modern).await;
}
