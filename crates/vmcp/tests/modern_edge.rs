//! The Modern (2026-07-28) client edge through the real gateway binary: header/`_meta`
//! validation, reserved `_meta` spoofing, `server/discover`, `subscriptions/listen`, and
//! `--disable-modern`. (The client-era x backend-era matrix is in `era_matrix.rs`.)

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use std::time::Duration;

use common::eras::*;
use common::{Gateway, http_backend, stdio_backend};
use rmcp::ClientLifecycleMode;
use rmcp::ClientServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::ClientInitializeError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// Replaces (or, with None, removes) header `name` in `headers`.
fn with(
    mut headers: Vec<(String, String)>,
    name: &str,
    value: Option<&str>,
) -> Vec<(String, String)> {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        headers.push((name.to_string(), v.to_string()));
    }
    headers
}

/// Asserts a classifier rejection: `status`, `code`, the request's id echoed, `Content-Type` JSON.
fn rejected(a: &common::Answer, status: u16, code: i64, id: &Value) {
    assert_eq!(a.status, status, "{}", a.text);
    assert_eq!(a.body["error"]["code"], code, "{}", a.text);
    assert_eq!(&a.body["id"], id, "{}", a.text);
    let ctype = a.headers["content-type"].to_str().unwrap();
    assert!(ctype.starts_with("application/json"), "{ctype}");
}

/// A gateway in front of the fixture (`fx`, stdio, Legacy).
fn fixture_gateway(extra: &[&str]) -> Gateway {
    Gateway::start_with(
        &format!("name: modern-edge\nbackends:\n{}", stdio_backend("fx", "")),
        extra,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_request_headers_are_validated() {
    let gw = fixture_gateway(&[]);
    let m = ModernClient::new(&gw.url);
    let call = |name: &str| {
        m.body(
            "tools/call",
            json!({"name": name, "arguments": {"text": "x"}}),
        )
    };

    // Missing Mcp-Name on tools/call.
    let b = call("fx_echo");
    let a = m
        .send(&b, &with(ModernClient::headers(&b), "mcp-name", None))
        .await;
    rejected(&a, 400, -32020, &b["id"]);
    assert_eq!(a.body["error"]["data"]["header"], "Mcp-Name", "{}", a.text);

    // Mcp-Name naming another tool.
    let b = call("fx_echo");
    let a = m
        .send(
            &b,
            &with(ModernClient::headers(&b), "mcp-name", Some("fx_whoami")),
        )
        .await;
    rejected(&a, 400, -32020, &b["id"]);
    assert_eq!(
        a.body["error"]["data"],
        json!({"header": "Mcp-Name", "headerValue": "fx_whoami", "bodyValue": "fx_echo"}),
        "{}",
        a.text
    );

    // The base64 sentinel form is decoded before the comparison.
    let b = call("fx_echo");
    let a = m
        .send(
            &b,
            &with(
                ModernClient::headers(&b),
                "mcp-name",
                Some(&sentinel("fx_echo")),
            ),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["result"]["content"][0]["text"], "x", "{}", a.text);
    // ... also for a name that needs it (a URI with a space and non-ASCII).
    let uri = "fixture://fx/items/a b é";
    let b = m.body("resources/read", json!({"uri": uri}));
    let headers = ModernClient::headers(&b);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "mcp-name" && v == &sentinel(uri)),
        "{headers:?}"
    );
    let a = m.send(&b, &headers).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["result"]["contents"][0]["uri"], uri, "{}", a.text);
    // ... and a sentinel that is not base64 is malformed.
    let b = call("fx_echo");
    let a = m
        .send(
            &b,
            &with(
                ModernClient::headers(&b),
                "mcp-name",
                Some("=?base64?*!*?="),
            ),
        )
        .await;
    rejected(&a, 400, -32020, &b["id"]);

    // Mcp-Method missing, or naming another method.
    let b = m.body("tools/list", json!({}));
    let a = m
        .send(&b, &with(ModernClient::headers(&b), "mcp-method", None))
        .await;
    rejected(&a, 400, -32020, &b["id"]);
    let b = m.body("tools/list", json!({}));
    let a = m
        .send(
            &b,
            &with(
                ModernClient::headers(&b),
                "mcp-method",
                Some("prompts/list"),
            ),
        )
        .await;
    rejected(&a, 400, -32020, &b["id"]);
    assert_eq!(
        a.body["error"]["data"],
        json!({"header": "Mcp-Method", "headerValue": "prompts/list", "bodyValue": "tools/list"}),
        "{}",
        a.text
    );

    // MCP-Protocol-Version header disagreeing with _meta, or missing.
    let b = m.body("tools/list", json!({}));
    let a = m
        .send(
            &b,
            &with(
                ModernClient::headers(&b),
                "mcp-protocol-version",
                Some(LEGACY),
            ),
        )
        .await;
    rejected(&a, 400, -32020, &b["id"]);
    assert_eq!(
        a.body["error"]["data"],
        json!({"header": LEGACY, "body": MODERN}),
        "{}",
        a.text
    );
    let b = m.body("tools/list", json!({}));
    let a = m
        .send(
            &b,
            &with(ModernClient::headers(&b), "mcp-protocol-version", None),
        )
        .await;
    rejected(&a, 400, -32020, &b["id"]);

    // An unsupported _meta version the header agrees on: -32022 listing what is supported.
    let mut b = m.body("tools/list", json!({}));
    b["params"]["_meta"][PV] = json!("2099-01-01");
    let headers = with(
        ModernClient::headers(&b),
        "mcp-protocol-version",
        Some("2099-01-01"),
    );
    let a = m.send(&b, &headers).await;
    rejected(&a, 400, -32022, &b["id"]);
    let data = &a.body["error"]["data"];
    assert_eq!(data["requested"], "2099-01-01", "{}", a.text);
    let supported = data["supported"].as_array().expect("data.supported");
    assert!(supported.contains(&json!(MODERN)), "{}", a.text);

    // A reserved key without a protocol version and no header: -32602.
    let b = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list",
        "params": {"_meta": {CI: {"name": "x", "version": "1"}}}});
    let a = m.send(&b, &[]).await;
    rejected(&a, 400, -32602, &json!(9));

    // A batch is refused outright (no id to answer).
    let b = m.body("tools/list", json!({}));
    let a = m
        .send_bytes(
            serde_json::to_vec(&json!([b.clone()])).unwrap(),
            &ModernClient::headers(&b),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32600, "{}", a.text);
    assert!(a.body.get("id").is_none_or(Value::is_null), "{}", a.text);

    // A well-formed Modern notification: 202, no body.
    let mut b = m.body("notifications/cancelled", json!({"requestId": 1}));
    b.as_object_mut().unwrap().remove("id");
    let a = m.send(&b, &ModernClient::headers(&b)).await;
    assert_eq!(a.status, 202, "{}", a.text);
    assert!(a.text.is_empty(), "{}", a.text);

    // A session id on a Modern request is ignored: served statelessly, none issued.
    let b = m.body("tools/list", json!({}));
    let headers = with(
        ModernClient::headers(&b),
        "mcp-session-id",
        Some("no-such-session"),
    );
    let a = m.send(&b, &headers).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(a.headers.get("mcp-session-id").is_none(), "{:?}", a.headers);
    let ctype = a.headers["content-type"].to_str().unwrap();
    assert!(ctype.starts_with("application/json"), "{ctype}");
    assert_modern_envelope(&a.body["result"]);

    // GET and DELETE with the Modern version header: 405, POST only.
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let resp = step(
            "GET/DELETE",
            m.http
                .request(method.clone(), &gw.url)
                .header("accept", "text/event-stream")
                .header("mcp-protocol-version", MODERN)
                .send(),
        )
        .await
        .unwrap();
        assert_eq!(resp.status().as_u16(), 405, "{method}");
        assert_eq!(resp.headers()["allow"], "POST", "{method}");
    }

    // Legacy clients are untouched by all of the above.
    let legacy = step("connect", common::Client::connect(&gw.url)).await;
    let names = step("tools/list", legacy.tool_names()).await;
    assert!(names.contains(&"fx_echo".to_string()), "{names:?}");
}

/// Every Modern validation case the 2026-07-28 spec and the official suite check, as a table of
/// (what is wrong, request, headers) -> (HTTP status, JSON-RPC code), through the binary.
#[tokio::test(flavor = "multi_thread")]
async fn modern_validation_follows_the_spec_table() {
    let gw = fixture_gateway(&[]);
    let m = ModernClient::new(&gw.url);
    let modern_headers = |method: &str| -> Vec<(String, String)> {
        vec![
            ("mcp-protocol-version".into(), MODERN.into()),
            ("mcp-method".into(), method.into()),
        ]
    };
    let full_meta = json!({PV: MODERN, CC: {}, CI: {"name": "t", "version": "1"}});
    let request = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    // (what is wrong, body, headers, HTTP status, JSON-RPC code)
    type Case<'a> = (&'a str, Value, Vec<(String, String)>, u16, i64);
    let mut cases: Vec<Case> = vec![
        (
            "missing _meta",
            request(101, "server/discover", json!({})),
            modern_headers("server/discover"),
            400,
            -32602,
        ),
        (
            "_meta without protocolVersion",
            request(
                102,
                "server/discover",
                json!({"_meta": {CC: {}, CI: {"name": "t", "version": "1"}}}),
            ),
            modern_headers("server/discover"),
            400,
            -32602,
        ),
        (
            "_meta without clientCapabilities",
            request(104, "server/discover", json!({"_meta": {PV: MODERN}})),
            modern_headers("server/discover"),
            400,
            -32602,
        ),
        (
            "clientCapabilities not an object",
            request(
                105,
                "server/discover",
                json!({"_meta": {PV: MODERN, CC: []}}),
            ),
            modern_headers("server/discover"),
            400,
            -32602,
        ),
        (
            "header disagrees with an unknown body version",
            request(
                302,
                "server/discover",
                json!({"_meta": {PV: "v999.0.0", CC: {}}}),
            ),
            modern_headers("server/discover"),
            400,
            -32020,
        ),
        (
            "unknown method",
            request(601, "unknown/method", json!({"_meta": full_meta})),
            modern_headers("unknown/method"),
            404,
            -32601,
        ),
    ];
    for removed in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        cases.push((
            removed,
            request(500, removed, json!({"_meta": full_meta})),
            modern_headers(removed),
            404,
            -32601,
        ));
    }
    for (what, body, headers, status, code) in cases {
        let a = m.send(&body, &headers).await;
        assert_eq!(a.status, status, "{what}: {}", a.text);
        assert_eq!(a.body["error"]["code"], code, "{what}: {}", a.text);
        assert_eq!(
            a.body["id"], body["id"],
            "{what}: the error carries the request id"
        );
    }

    // Optional whitespace around a header value is not part of it (RFC 9110 section 5.5).
    let b = m.body(
        "tools/call",
        json!({"name": "fx_echo", "arguments": {"text": "ows"}}),
    );
    let headers = with(ModernClient::headers(&b), "mcp-name", Some("  fx_echo  "));
    let a = m.send(&b, &headers).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["result"]["content"][0]["text"], "ows", "{}", a.text);

    // A session-based client's initialize is still served, even with a stray Modern header.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let a = m
        .send(&init, &[("mcp-protocol-version".into(), MODERN.into())])
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["result"]["protocolVersion"], LEGACY, "{}", a.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_server_discover_reports_versions_and_capabilities() {
    let gw = fixture_gateway(&[]);
    let m = ModernClient::new(&gw.url);
    let r = m.ok("server/discover", json!({})).await;
    assert_modern_envelope(&r);
    assert_eq!(r["ttlMs"], 0, "{r}");
    assert_eq!(r["cacheScope"], "private", "{r}");
    let versions = r["supportedVersions"].as_array().unwrap();
    assert_eq!(versions[0], MODERN, "{r}");
    assert!(versions.contains(&json!(LEGACY)), "{r}");
    let caps = &r["capabilities"];
    for kind in ["tools", "resources", "prompts", "completions"] {
        assert!(caps.get(kind).is_some(), "{kind} missing: {r}");
    }
    assert!(r.get("instructions").is_none(), "{r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_reserved_meta_from_clients_never_reaches_backends() {
    let msdk = spawn_sdk("msdk", BackendEra::Modern, 0).await;
    let lsdk = spawn_sdk("lsdk", BackendEra::Legacy, 0).await;
    let gw = Gateway::start(&format!(
        "name: spoof\nbackends:\n{}{}",
        http_backend("msdk", &msdk.url),
        http_backend("lsdk", &lsdk.url)
    ));
    assert_eq!(
        backend_revision(&gw.base, "msdk").await.as_deref(),
        Some(MODERN)
    );
    assert_eq!(
        backend_revision(&gw.base, "lsdk").await.as_deref(),
        Some(LEGACY)
    );
    let spoofed = json!({
        SI: {"name": "spoofed-server", "version": "0"},
        SUB: "spoofed-sub",
        "io.modelcontextprotocol/related-task": {"taskId": "t-1"},
        "example.com/k": "v"
    });

    let m = ModernClient::with_caps(&gw.url, json!({"sampling": {}}));
    for (tool, sdk) in [("msdk_spy", &msdk), ("lsdk_spy", &lsdk)] {
        let r = m
            .ok(
                "tools/call",
                json!({"name": tool, "arguments": {}, "_meta": spoofed}),
            )
            .await;
        assert_modern_envelope(&r);
        assert_eq!(r["_meta"][SI]["title"], "spoof", "{r}");
        let seen = sdk.seen().metas_of("spy");
        let meta = seen
            .last()
            .unwrap_or_else(|| panic!("{tool} was not called"));
        assert!(meta.get(SI).is_none(), "{tool} saw {meta}");
        assert!(meta.get(SUB).is_none(), "{tool} saw {meta}");
        assert_eq!(meta["example.com/k"], "v", "{tool} saw {meta}");
        assert_eq!(
            meta["io.modelcontextprotocol/related-task"],
            json!({"taskId": "t-1"}),
            "{tool} saw {meta}"
        );
        if sdk.server.era == BackendEra::Modern {
            // The gateway is the backend's client: its own identity, the client's capabilities.
            assert_eq!(meta[PV], MODERN, "{meta}");
            assert_eq!(meta[CI]["name"], "vmcp", "{meta}");
            assert_eq!(meta[CC], json!({"sampling": {}}), "{meta}");
        } else {
            for k in [PV, CI, CC] {
                assert!(meta.get(k).is_none(), "{tool} saw {meta}");
            }
        }
    }

    // The same from a Legacy session (serverInfo is no Modern signal, so this stays Legacy).
    let c = legacy_connect(&gw.url, json!({})).await;
    let r = step(
        "legacy tools/call",
        c.request(
            "tools/call",
            json!({"name": "msdk_spy", "arguments": {}, "_meta": spoofed}),
        ),
    )
    .await;
    assert!(r.get("error").is_none(), "{r}");
    assert!(r["result"]["_meta"].get(SI).is_none(), "{r}");
    let meta = msdk.seen().metas_of("spy").last().cloned().unwrap();
    assert!(meta.get(SI).is_none(), "{meta}");
    assert!(meta.get(SUB).is_none(), "{meta}");
    assert_eq!(meta[CI]["name"], "vmcp", "{meta}");
    assert_eq!(meta[CC], json!({}), "{meta}");
}

/// Opens `subscriptions/listen` with request id `id`; returns the HTTP status and the stream.
async fn listen(m: &ModernClient, id: Value, notifications: Value) -> (u16, SseReader) {
    let mut b = m.body(
        "subscriptions/listen",
        json!({"notifications": notifications}),
    );
    b["id"] = id;
    let resp = step(
        "listen POST",
        m.http
            .post(&m.url)
            .header("content-type", "application/json")
            .header("accept", common::JSON_AND_SSE)
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "subscriptions/listen")
            .json(&b)
            .send(),
    )
    .await
    .unwrap();
    let status = resp.status().as_u16();
    if status == 200 {
        let ctype = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(ctype.starts_with("text/event-stream"), "{ctype}");
    }
    (status, SseReader::new(resp))
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_listen_acknowledges_and_tags_list_changes() {
    let lsdk = spawn_sdk("lsdk", BackendEra::Legacy, 0).await;
    let msdk = spawn_sdk("msdk", BackendEra::Modern, 0).await;
    let gw = Gateway::start(&format!(
        "name: listen\nbackends:\n{}{}",
        http_backend("lsdk", &lsdk.url),
        http_backend("msdk", &msdk.url)
    ));
    assert_eq!(
        backend_revision(&gw.base, "msdk").await.as_deref(),
        Some(MODERN)
    );
    let m = ModernClient::new(&gw.url);
    // Aggregate once so list changes have something to differ from.
    let before = m.ok("tools/list", json!({})).await;
    assert!(!before.to_string().contains("lsdk_extra"));

    let (status, mut stream) = listen(
        &m,
        json!("listen-1"),
        json!({"toolsListChanged": true, "promptsListChanged": true,
            "resourcesListChanged": false, "resourceSubscriptions": ["memo://lsdk/hello"]}),
    )
    .await;
    assert_eq!(status, 200);
    let ack = stream.next(STEP).await.expect("acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert!(ack.get("id").is_none(), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true}),
        "honored set: {ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB], "listen-1", "{ack}");

    // A numeric id tags with the number.
    let (status, mut numeric) = listen(&m, json!(42), json!({"toolsListChanged": true})).await;
    assert_eq!(status, 200);
    let ack2 = numeric.next(STEP).await.expect("acknowledgement");
    assert_eq!(ack2["params"]["_meta"][SUB], json!(42), "{ack2}");

    // A Legacy backend announces a tools change mid-call: both streams get it, each tagged.
    let r = m
        .ok("tools/call", json!({"name": "lsdk_grow", "arguments": {}}))
        .await;
    assert_eq!(r["content"][0]["text"], "grown");
    let change = stream.next(STEP).await.expect("list change");
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(change["params"]["_meta"][SUB], "listen-1", "{change}");
    let change2 = numeric.next(STEP).await.expect("list change");
    assert_eq!(change2["method"], "notifications/tools/list_changed");
    assert_eq!(change2["params"]["_meta"][SUB], json!(42), "{change2}");
    let after = m.ok("tools/list", json!({})).await;
    assert!(after.to_string().contains("lsdk_extra"), "{after}");
    // Nothing else was announced (prompts did not change).
    let extra = stream.try_next(Duration::from_millis(500)).await;
    assert!(extra.is_none(), "unexpected: {extra:?}");

    // Params without `notifications`: -32602, no stream.
    let b = m.body("subscriptions/listen", json!({}));
    let a = m.send(&b, &ModernClient::headers(&b)).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn modern_listen_gets_a_modern_backend_list_change() {
    let msdk = spawn_sdk("msdk", BackendEra::Modern, 0).await;
    let gw = Gateway::start(&format!(
        "name: listen\nbackends:\n{}",
        http_backend("msdk", &msdk.url)
    ));
    assert_eq!(
        backend_revision(&gw.base, "msdk").await.as_deref(),
        Some(MODERN)
    );
    let m = ModernClient::new(&gw.url);
    m.ok("tools/list", json!({})).await;
    let (status, mut stream) = listen(&m, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(status, 200);
    let ack = stream.next(STEP).await.expect("acknowledgement");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    // The rmcp backend announces the change on the tools/call response stream.
    m.ok("tools/call", json!({"name": "msdk_grow", "arguments": {}}))
        .await;
    let change = stream.next(STEP).await.expect("list change");
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(change["params"]["_meta"][SUB], "l", "{change}");
    let after = m.ok("tools/list", json!({})).await;
    assert!(after.to_string().contains("msdk_extra"), "{after}");
}

#[tokio::test(flavor = "multi_thread")]
async fn disable_modern_refuses_modern_and_discover_lists_legacy_only() {
    let msdk = spawn_sdk("msdk", BackendEra::Modern, 0).await;
    let gw = Gateway::start_with(
        &format!(
            "name: no-modern\nbackends:\n{}{}",
            stdio_backend("fx", ""),
            http_backend("msdk", &msdk.url)
        ),
        &["--disable-modern"],
    );
    let m = ModernClient::new(&gw.url);

    let b = m.body("tools/list", json!({}));
    let a = m.send(&b, &ModernClient::headers(&b)).await;
    rejected(&a, 400, -32022, &b["id"]);
    let data = &a.body["error"]["data"];
    assert_eq!(data["requested"], MODERN, "{}", a.text);
    let supported = data["supported"].as_array().expect("data.supported");
    assert!(!supported.is_empty(), "{}", a.text);
    for v in supported {
        assert!(v.as_str().unwrap().starts_with("2025-"), "{}", a.text);
    }
    assert!(supported.contains(&json!(LEGACY)), "{}", a.text);

    let a = m
        .request("tools/call", json!({"name": "fx_whoami", "arguments": {}}))
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32022, "{}", a.text);

    // discover answers, listing only session-based revisions.
    let a = m.request("server/discover", json!({})).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let versions = a.body["result"]["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", a.text));
    assert!(versions.contains(&json!(LEGACY)), "{}", a.text);
    assert!(!versions.contains(&json!(MODERN)), "{}", a.text);
    for v in versions {
        assert!(v.as_str().unwrap() < MODERN, "{}", a.text);
    }

    // Malformed Modern requests are still rejected by the classifier first.
    let b = m.body("tools/list", json!({}));
    let a = m
        .send(&b, &with(ModernClient::headers(&b), "mcp-method", None))
        .await;
    rejected(&a, 400, -32020, &b["id"]);

    // rmcp: a discover-only (Modern-only) client finds no common version. (Its Auto mode does not
    // fall back either: rmcp 3.11 falls back to `initialize` only on a JSON-RPC error to discover,
    // not on a discover result without 2026-07-28.)
    let transport = StreamableHttpClientTransport::with_client(
        common::http(),
        StreamableHttpClientTransportConfig::with_uri(gw.url.clone()),
    );
    let discover_only = step(
        "rmcp discover",
        Answerer::new("d", json!({})).serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await;
    match discover_only {
        Err(ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        }) => {
            assert!(
                server_supported.contains(&ProtocolVersion::V_2025_11_25),
                "{server_supported:?}"
            );
            assert!(
                !server_supported.contains(&ProtocolVersion::V_2026_07_28),
                "{server_supported:?}"
            );
        }
        Err(other) => panic!("discover-only rmcp client: unexpected error {other}"),
        Ok(_) => panic!("discover-only rmcp client connected to a gateway with Modern disabled"),
    }
    // rmcp's Legacy client is served.
    let rmcp = rmcp_legacy(&gw.url, Answerer::new("l", json!({}))).await;
    let tools = step("rmcp tools/list", rmcp.list_all_tools())
        .await
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "msdk_echo"), "{tools:?}");
    let _ = step("rmcp close", rmcp.cancel()).await;

    // Legacy clients still reach both backends (the Modern one still spoken to in its era).
    let c = step("connect", common::Client::connect(&gw.url)).await;
    let r = step("tools/call", c.call("msdk_whoami", json!({}))).await;
    assert_eq!(common::text_of(&r), "msdk", "{r}");
    let r = step("tools/call", c.call("fx_whoami", json!({}))).await;
    assert_eq!(common::text_of(&r), "fx", "{r}");
    assert_eq!(
        backend_revision(&gw.base, "msdk").await.as_deref(),
        Some(MODERN)
    );
}
