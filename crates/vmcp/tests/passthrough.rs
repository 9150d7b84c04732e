//! `passthroughHeaders`: the listed client headers reach backends on calls of both revisions;
//! anything else the client sent (its `Authorization` above all) does not.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use common::eras::{BackendEra, ModernClient, spawn_sdk};
use common::{Client, Gateway};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn listed_client_headers_reach_backends_and_nothing_else_does() {
    let backend = spawn_sdk("tenant", BackendEra::Both, 0).await;
    let gw = Gateway::start(&format!(
        "name: pass\nbackends:\n  - name: tenant\n    transport: streamable-http\n    url: {}\npassthroughHeaders: [X-Tenant]\n",
        backend.url
    ));
    // A session-based call (JSON and SSE answers) and a stateless one.
    let c = Client::connect(&gw.url).await;
    for accept_sse in [true, false] {
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "tenant_whoami", "arguments": {}}});
        let mut req = common::http()
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("mcp-session-id", c.session.clone().unwrap())
            .header("mcp-protocol-version", "2025-11-25")
            .header("x-tenant", "acme")
            .header("authorization", "Bearer client-secret-token")
            .header("x-other", "not-listed")
            .body(body.to_string());
        req = req.header(
            "accept",
            if accept_sse {
                common::JSON_AND_SSE
            } else {
                "application/json"
            },
        );
        let a = common::decode(req.send().await.unwrap()).await;
        assert_eq!(
            a.body["result"]["content"][0]["text"], "tenant",
            "{}",
            a.text
        );
    }
    let m = ModernClient::new(&gw.url);
    let body = m.body(
        "tools/call",
        json!({"name": "tenant_whoami", "arguments": {}}),
    );
    let mut headers = ModernClient::headers(&body);
    headers.push(("x-tenant".into(), "globex".into()));
    headers.push(("authorization".into(), "Bearer client-secret-token".into()));
    let a = m.send(&body, &headers).await;
    assert_eq!(a.status, 200, "{}", a.text);

    let calls: Vec<_> = backend
        .seen()
        .credentials
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.what == "whoami")
        .cloned()
        .collect();
    let tenants: Vec<_> = calls.iter().map(|c| c.tenant.clone()).collect();
    assert_eq!(
        tenants,
        [
            Some("acme".into()),
            Some("acme".into()),
            Some("globex".into())
        ],
        "{calls:?}"
    );
    assert!(calls.iter().all(|c| c.authorization.is_none()), "{calls:?}");
    // Discovery is the gateway's own: no client header there.
    let lists: Vec<_> = backend
        .seen()
        .credentials
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.what == "tools/list")
        .cloned()
        .collect();
    assert!(
        !lists.is_empty() && lists.iter().all(|c| c.tenant.is_none()),
        "{lists:?}"
    );
}
