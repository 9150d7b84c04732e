//! The Legacy client edge against bad input: every malformed request gets the spec's JSON-RPC
//! code and HTTP status, over raw HTTP.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::Duration;

use common::{Client, Gateway, stdio_backend};
use serde_json::{Value, json};

fn one_backend() -> String {
    format!("name: edge\nbackends:\n{}", stdio_backend("notes", ""))
}

async fn connected() -> (Gateway, Client) {
    let gw = Gateway::start(&one_backend());
    let c = Client::connect(&gw.url).await;
    (gw, c)
}

#[tokio::test(flavor = "multi_thread")]
async fn initialize_names_the_gateway_and_negotiates_versions() {
    let gw = Gateway::start(&one_backend());
    for (asked, got) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let c = Client::connect_version(&gw.url, asked).await;
        assert_eq!(c.version, got);
    }
    let c = Client::new(&gw.url);
    let a = c
        .post_raw(None, json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}))
        .await;
    assert_eq!(a.body["result"]["serverInfo"]["name"], "vmcp");
    assert_eq!(a.body["result"]["serverInfo"]["title"], "edge");
    let sid = a.headers["mcp-session-id"].to_str().unwrap();
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_is_parse_error_400() {
    let (_gw, c) = connected().await;
    let a = c
        .post_bytes(
            c.session.clone(),
            b"{\"jsonrpc\": \"2.0\", \"id\": 1,".to_vec(),
            &[],
        )
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["code"], -32700);
    assert_eq!(a.body["id"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn not_a_request_is_invalid_request() {
    let (_gw, c) = connected().await;
    for body in [
        json!({"id": 3, "method": "ping"}),
        json!({"jsonrpc":"2.0","id":3,"method":7}),
        json!("ping"),
        json!({"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}),
    ] {
        let a = c.post_raw(c.session.clone(), body.clone()).await;
        assert_eq!(a.status, 400, "{body}");
        assert_eq!(a.body["error"]["code"], -32600, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_method_is_method_not_found() {
    let (_gw, c) = connected().await;
    let v = c.request("tools/frobnicate", json!({})).await;
    assert_eq!(v["error"]["code"], -32601);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tool_prompt_and_bad_params_are_invalid_params() {
    let (_gw, c) = connected().await;
    assert_eq!(c.call("nope", json!({})).await["error"]["code"], -32602);
    assert_eq!(
        c.request("tools/call", json!({"arguments": {}})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.request("tools/call", json!({"name": 5})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.request("prompts/get", json!({"name": "nope"})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.request("logging/setLevel", json!({"level": "loud"}))
            .await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.request("tools/list", json!({"cursor": "forged"})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.request("completion/complete", json!({"ref": {"type": "ref/what"}}))
            .await["error"]["code"],
        -32602
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_resource_is_resource_not_found() {
    let (_gw, c) = connected().await;
    let v = c
        .request("resources/read", json!({"uri": "nowhere://x"}))
        .await;
    assert_eq!(v["error"]["code"], -32002);
    assert_eq!(v["error"]["data"]["uri"], "nowhere://x");
}

#[tokio::test(flavor = "multi_thread")]
async fn session_header_missing_unknown_and_deleted() {
    let (_gw, c) = connected().await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let missing = c.post_raw(None, ping.clone()).await;
    assert_eq!(missing.status, 400);
    let unknown = c
        .post_raw(Some("no-such-session".into()), ping.clone())
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        c.post_raw(c.session.clone(), ping.clone()).await.status,
        200
    );
    assert_eq!(c.delete().await, 200);
    assert_eq!(
        c.post_raw(c.session.clone(), ping.clone()).await.status,
        404
    );
    assert_eq!(c.delete().await, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_expire_after_the_ttl() {
    let gw = Gateway::start_with(&one_backend(), &["--session-ttl", "3s"]);
    let c = Client::connect(&gw.url).await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    // Use slides the TTL: four uses 1 s apart outlive the 3 s TTL, with room for a stalled
    // test thread.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(
            c.post_raw(c.session.clone(), ping.clone()).await.status,
            200
        );
    }
    tokio::time::sleep(Duration::from_millis(3600)).await;
    assert_eq!(c.post_raw(c.session.clone(), ping).await.status, 404);
}

/// One identity (here every anonymous caller) past `maxSessionsPerIdentity` is refused with 429
/// and a retry hint; its sessions and anyone else's stay.
#[tokio::test(flavor = "multi_thread")]
async fn an_identity_past_its_session_cap_is_refused_with_429() {
    let yaml = format!("{}server:\n  maxSessionsPerIdentity: 2\n", one_backend());
    let gw = Gateway::start(&yaml);
    let a = Client::connect(&gw.url).await;
    let b = Client::connect(&gw.url).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "third", "version": "1"}}});
    let third = a.post_raw(None, init).await;
    assert_eq!(third.status, 429, "{}", third.text);
    assert_eq!(third.headers["retry-after"], "10");
    assert!(third.headers.get("mcp-session-id").is_none());
    assert!(
        third.text.contains("maxSessionsPerIdentity"),
        "{}",
        third.text
    );
    assert_eq!(third.body["error"]["data"]["retryAfterSeconds"], 10);
    let ping = json!({"jsonrpc":"2.0","id":2,"method":"ping"});
    for c in [&a, &b] {
        assert_eq!(
            c.post_raw(c.session.clone(), ping.clone()).await.status,
            200
        );
    }
    assert_eq!(b.delete().await, 200);
    let _again = Client::connect(&gw.url).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn session_cap_evicts_least_recently_used() {
    let yaml = format!("{}server:\n  maxSessions: 2\n", one_backend());
    let gw = Gateway::start(&yaml);
    let a = Client::connect(&gw.url).await;
    let b = Client::connect(&gw.url).await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    assert_eq!(
        a.post_raw(a.session.clone(), ping.clone()).await.status,
        200
    );
    let _c = Client::connect(&gw.url).await;
    assert_eq!(
        b.post_raw(b.session.clone(), ping.clone()).await.status,
        404,
        "b was least recently used"
    );
    assert_eq!(a.post_raw(a.session.clone(), ping).await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_origin_and_rebinding_host_are_forbidden() {
    let (_gw, c) = connected().await;
    let ping = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
    let evil = c
        .post_bytes(
            c.session.clone(),
            ping.clone(),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(evil.status, 403);
    let host = c
        .post_bytes(c.session.clone(), ping.clone(), &[("host", "evil.example")])
        .await;
    assert_eq!(host.status, 403);
    let local = c
        .post_bytes(
            c.session.clone(),
            ping,
            &[("origin", "http://localhost:6274")],
        )
        .await;
    assert_eq!(local.status, 200);
}

/// The operational routes are guarded like `/mcp`: a DNS-rebinding page (a DNS name in Host) or a
/// foreign Origin cannot read the status page, metrics or probes of a loopback gateway, while a
/// scraper or probe naming an IP address still can.
#[tokio::test(flavor = "multi_thread")]
async fn operational_routes_refuse_rebinding_hosts_and_foreign_origins() {
    let yaml = format!(
        "{}telemetry:\n  enablePrometheusMetricsPath: true\n",
        one_backend()
    );
    let gw = Gateway::start(&yaml);
    let http = common::http();
    let get = |path: &str, headers: &[(&'static str, &'static str)]| {
        let mut r = http.get(format!("{}{path}", gw.base));
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.send()
    };
    for path in ["/status", "/metrics", "/health", "/readyz", "/ping"] {
        let rebinding = get(path, &[("host", "evil.example:4483")]).await.unwrap();
        assert_eq!(rebinding.status(), 403, "{path} with a rebinding Host");
        let body = rebinding.text().await.unwrap();
        assert!(body.contains("evil.example"), "{path}: {body}");
        assert!(
            !body.contains("notes"),
            "{path} leaked a backend name: {body}"
        );
        let html = get(path, &[("host", "evil.example"), ("accept", "text/html")])
            .await
            .unwrap();
        assert_eq!(html.status(), 403, "{path} as HTML with a rebinding Host");
        let origin = get(path, &[("origin", "https://evil.example")])
            .await
            .unwrap();
        assert_eq!(origin.status(), 403, "{path} with a foreign Origin");
        let local = get(path, &[("origin", "http://localhost:6274")])
            .await
            .unwrap();
        // `/readyz` may still say 503 (not ready); what matters is that the guard let it through.
        assert_ne!(local.status(), 403, "{path} from a loopback Origin");
        let by_ip = get(path, &[("host", "10.0.0.5:4483")]).await.unwrap();
        assert_ne!(by_ip.status(), 403, "{path} by IP");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_origin_is_allowed() {
    let yaml = format!(
        "{}server:\n  allowedOrigins: [\"https://app.example.com\"]\n",
        one_backend()
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    let ping = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
    assert_eq!(
        c.post_bytes(
            c.session.clone(),
            ping.clone(),
            &[("origin", "https://app.example.com")]
        )
        .await
        .status,
        200
    );
    assert_eq!(
        c.post_bytes(
            c.session.clone(),
            ping,
            &[("origin", "https://other.example.com")]
        )
        .await
        .status,
        403
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_body_is_413() {
    let yaml = format!("{}server:\n  maxBodyBytes: 1024\n", one_backend());
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    let big = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_echo","arguments":{"text":"x".repeat(4096)}}});
    let a = c.post_raw(c.session.clone(), big).await;
    assert_eq!(a.status, 413);
    assert_eq!(a.body["error"]["code"], -32600);
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_protocol_version_header_is_400() {
    let (_gw, c) = connected().await;
    let ping = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
    let mut http = reqwest::header::HeaderMap::new();
    http.insert("mcp-protocol-version", "1999-01-01".parse().unwrap());
    let resp = c
        .http
        .post(&c.url)
        .header("content-type", "application/json")
        .header("accept", common::JSON_AND_SSE)
        .header("mcp-session-id", c.session.clone().unwrap())
        .headers(http)
        .body(ping)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_content_type_is_415() {
    let (_gw, c) = connected().await;
    let resp = c
        .http
        .post(&c.url)
        .header("content-type", "text/plain")
        .header("mcp-session-id", c.session.clone().unwrap())
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 415);
}

#[tokio::test(flavor = "multi_thread")]
async fn batches_rejected_on_current_revisions_and_served_on_2025_03_26() {
    let gw = Gateway::start(&one_backend());
    let batch = json!([{"jsonrpc":"2.0","id":1,"method":"ping"}, {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_echo","arguments":{"text":"b"}}}, {"jsonrpc":"2.0","method":"notifications/initialized"}]);
    let modern = Client::connect(&gw.url).await;
    let a = modern.post_raw(modern.session.clone(), batch.clone()).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["code"], -32600);

    let old = Client::connect_version(&gw.url, "2025-03-26").await;
    let a = old.post_raw(old.session.clone(), batch).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let answers = a.body.as_array().expect("batch answer is an array");
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[1]["result"]["content"][0]["text"], "b");
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_and_responses_get_202() {
    let (_gw, c) = connected().await;
    let n = c
        .post_raw(
            c.session.clone(),
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}),
        )
        .await;
    assert_eq!(n.status, 202);
    let r = c
        .post_raw(
            c.session.clone(),
            json!({"jsonrpc":"2.0","id":"x","result":{}}),
        )
        .await;
    assert_eq!(r.status, 202);
}

#[tokio::test(flavor = "multi_thread")]
async fn ping_set_level_and_event_stream_answers() {
    let (_gw, c) = connected().await;
    assert_eq!(c.ok("ping", json!({})).await, json!({}));
    assert_eq!(
        c.ok("logging/setLevel", json!({"level": "warning"})).await,
        json!({})
    );
    // A client that accepts only SSE gets its answer as an event.
    let resp = c
        .http
        .post(&c.url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .body(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let a = common::decode(resp).await;
    assert_eq!(a.body["id"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn get_stream_needs_event_stream_accept_and_a_session() {
    let (_gw, c) = connected().await;
    let no_accept = c
        .http
        .get(&c.url)
        .header("mcp-session-id", c.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(no_accept.status().as_u16(), 406);
    let no_session = c
        .http
        .get(&c.url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(no_session.status().as_u16(), 400);
    let ok = c
        .http
        .get(&c.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    assert_eq!(ok.headers()["content-type"], "text/event-stream");
}

#[tokio::test(flavor = "multi_thread")]
async fn operational_endpoints() {
    let gw = Gateway::start(&one_backend());
    let http = common::http();
    for path in ["/health", "/ping"] {
        let v: Value = http
            .get(format!("{}{path}", gw.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(v, json!({"status": "ok"}));
    }
    let ready = common::eventually(Duration::from_secs(10), || {
        let http = http.clone();
        let url = format!("{}/readyz", gw.base);
        async move {
            http.get(url)
                .send()
                .await
                .map(|r| r.status().as_u16() == 200)
                .unwrap_or(false)
        }
    })
    .await;
    assert!(ready, "readyz never turned ready");
    let status = gw.status().await;
    let b = &status["backends"][0];
    assert_eq!(b["name"], "notes");
    assert_eq!(b["transport"], "stdio");
    assert_eq!(b["health"], "healthy");
    assert_eq!(b["mcpRevision"], "2025-11-25");
    assert_eq!(b["toolCount"], 8);
}
