//! A backend that refuses the gateway's credential (HTTP 401/403) is reported to the client as a
//! JSON-RPC error naming the backend, on an HTTP 200: never as an HTTP 401 of the gateway's own,
//! which would send an MCP client into an OAuth flow against the gateway. The backend is a
//! minimal session-based server that lists a tool and answers every call with 401.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use common::{Client, Gateway};
use serde_json::{Value, json};

async fn backend(body: String) -> axum::response::Response {
    let msg: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let id = msg.get("id").cloned();
    let method = msg["method"].as_str().unwrap_or_default();
    let answer = |result: Value| {
        (
            [
                ("content-type", "application/json"),
                ("mcp-session-id", "s1"),
            ],
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
        )
            .into_response()
    };
    match method {
        "initialize" => answer(json!({"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "guarded", "version": "1"}})),
        "tools/list" => answer(json!({"tools": [{"name": "secret",
            "inputSchema": {"type": "object"}}]})),
        "tools/call" => (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer error=\"invalid_token\"")],
            "",
        )
            .into_response(),
        _ if id.is_none() => StatusCode::ACCEPTED.into_response(),
        // Not a 2026-07-28 server: the probe gets a plain 404.
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_credential_is_a_json_rpc_error_naming_the_backend() {
    let app = axum::Router::new().route("/mcp", axum::routing::post(backend));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let gw = Gateway::start(&format!(
        "name: refused\nbackends:\n  - name: guarded\n    transport: streamable-http\n    url: http://{addr}/mcp\noutgoingAuth:\n  backends:\n    guarded:\n      type: header_injection\n      headerInjection: {{headerName: Authorization, headerValue: \"Bearer stale\"}}\n"
    ));
    let c = Client::connect(&gw.url).await;
    let a = c
        .post_raw(
            c.session.clone(),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "guarded_secret", "arguments": {}}}),
        )
        .await;
    assert_eq!(
        a.status, 200,
        "never a 401 of the gateway's own: {}",
        a.text
    );
    assert!(a.headers.get("www-authenticate").is_none());
    let e = &a.body["error"];
    assert_eq!(e["data"]["backend"], "guarded", "{}", a.text);
    assert_eq!(e["data"]["kind"], "unauthorized", "{}", a.text);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("refused the gateway's credential"),
        "{}",
        a.text
    );
    // And the credential is the gateway's problem, not the backend's health.
    let status = gw.status().await;
    assert_eq!(status["backends"][0]["health"], "healthy", "{status}");
}
