//! A backend URL may carry a secret in its userinfo, its path or its query (SaaS MCP servers hand
//! out URLs like `https://api.example/mcp/<token>?api_key=<key>`). Whatever fails, no such secret
//! reaches a surface: the client's error, `/status` (JSON and HTML), the log at debug level,
//! `/metrics`, the audit trail. Each surface still says where the failure was, redacted.
//!
//! Four failing backends carry the same secrets: one unreachable over HTTPS (reqwest's error names
//! the URL), one that accepts and hangs up (the same, over plain HTTP), one whose error page echoes
//! the request path and query (as a web framework's 404 page does), and an HTTP+SSE one whose GET
//! is refused.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::time::Duration;

use axum::http::{Method, StatusCode, Uri};
use common::{Client, Gateway, eventually, http, temp_path};
use serde_json::json;

const PASSWORD: &str = "PASSWORDSECRET42";
const PATH: &str = "PATHSECRET1234567890";
const QUERY: &str = "QUERYSECRET";

/// The secret-bearing tail of every backend URL.
fn tail(prefix: &str) -> String {
    format!("/{prefix}/{PATH}?api_key={QUERY}")
}

/// A server whose every answer is a 404 page echoing the request line.
async fn echoing_404() -> std::net::SocketAddr {
    async fn echo(method: Method, uri: Uri) -> (StatusCode, String) {
        (
            StatusCode::NOT_FOUND,
            format!("<pre>Cannot {method} {uri}</pre>"),
        )
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(echo);
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// A server that reads each request and closes the connection without an answer.
async fn hanging_up() -> std::net::SocketAddr {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = tcp.read(&mut buf).await;
            });
        }
    });
    addr
}

/// Each secret that appears in `text`.
fn leaked(text: &str) -> Vec<&'static str> {
    [PASSWORD, PATH, QUERY]
        .into_iter()
        .filter(|s| text.contains(s))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_in_a_backend_url_reaches_no_surface() {
    let echo = echoing_404().await;
    let hangup = hanging_up().await;
    let audit = temp_path("audit.jsonl");
    let yaml = format!(
        r#"name: secrets
backends:
  - name: unreachable
    transport: streamable-http
    url: https://user:{PASSWORD}@127.0.0.1:1{unreachable}
  - name: hangup
    transport: streamable-http
    url: http://user:{PASSWORD}@{hangup}{hangup_tail}
  - name: echoing
    transport: streamable-http
    url: http://{echo}{echo_tail}
  - name: legacysse
    transport: sse
    url: http://user:{PASSWORD}@{echo}{sse_tail}
telemetry:
  enablePrometheusMetricsPath: true
audit:
  component: url-secrets
  logFile: {audit}
  includeRequestData: true
  includeResponseData: true
"#,
        unreachable = tail("mcp"),
        hangup_tail = tail("mcp"),
        echo_tail = tail("mcp"),
        sse_tail = tail("sse"),
        audit = audit.display(),
    );
    let gw = Gateway::start_with(&yaml, &["--debug"]);
    let backends = ["unreachable", "hangup", "echoing", "legacysse"];

    // The client's view: discovery failed, so initialize fails naming each backend's failure.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let answer = Client::new(&gw.url).post_raw(None, init).await;
    let client_view = answer.text;
    for name in backends {
        assert!(
            client_view.contains(&format!("backend {name}: ")),
            "{client_view}"
        );
    }

    // Every backend's last error is recorded.
    let recorded = eventually(Duration::from_secs(15), || async {
        let status = gw.status().await;
        backends.iter().all(|name| {
            status["backends"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|b| b["name"] == *name && b["lastError"].is_string())
        })
    })
    .await;
    let status = gw.status().await;
    assert!(recorded, "not every backend recorded an error: {status}");
    let html = http()
        .get(format!("{}/status", gw.base))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("<html"), "{html}");
    let metrics = http()
        .get(format!("{}/metrics", gw.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("vmcp_"), "{metrics}");
    let audited = eventually(Duration::from_secs(10), || async {
        std::fs::read_to_string(&audit).is_ok_and(|a| a.contains("capability discovery failed"))
    })
    .await;
    assert!(audited, "the failed initialize was not audited");
    let audit_trail = std::fs::read_to_string(&audit).unwrap();

    // No surface shows a secret; each error still says where it happened, redacted.
    for (surface, text) in [
        ("the client's answers", client_view),
        ("/status", status.to_string()),
        ("/status as HTML", html),
        ("/metrics", metrics),
        ("the audit trail", audit_trail),
        ("the log", gw.logs()),
    ] {
        assert!(
            leaked(&text).is_empty(),
            "{surface} shows {:?}:\n{text}",
            leaked(&text)
        );
    }
    for b in status["backends"].as_array().unwrap() {
        let e = b["lastError"].as_str().unwrap_or_default();
        assert!(e.contains("REDACTED"), "{}: names no URL: {e}", b["name"]);
    }
    let logs = gw.logs();
    assert!(logs.contains("DEBUG"), "the gateway ran at debug level");
    assert!(
        logs.contains("REDACTED"),
        "the log names the failures: {logs}"
    );
    let _ = std::fs::remove_file(audit);
}
