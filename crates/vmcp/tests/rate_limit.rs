//! Rate limiting end to end through the binary, over the fixture backend:
//!
//! * a 2025-11-25 client gets ToolHive's `isError` tool result with the error as
//!   `structuredContent`; a 2026-07-28 client gets the JSON-RPC error 429 with
//!   `data.retryAfterSeconds` (and the rmcp client, an independent peer, reads the Legacy shape);
//! * tool buckets, per-user buckets (two OIDC users; anonymous callers share one bucket), and a
//!   rejection taking no token from the buckets that still had one;
//! * lists and `server/discover` draw from the shared bucket on both revisions;
//! * concurrent clients on both revisions against one bucket get exactly its size in successes;
//! * with the buckets in Redis, two replicas together: exactly a slow bucket's size, and never
//!   more than a busy bucket allows although each replica leases tokens ahead of need.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::sync::Arc;

use common::eras::ModernClient;
use common::oidc::OidcProvider;
use common::{Client, Gateway, stdio_backend};
use serde_json::{Value, json};

fn config(rate_limiting: &str) -> String {
    format!(
        "name: limited\nbackends:\n{}rateLimiting:\n{rate_limiting}",
        stdio_backend("notes", "")
    )
}

/// ToolHive's 2025-11-25 shape for a rejected tools/call.
fn legacy_rejection(retry_after: u64) -> Value {
    json!({
        "isError": true,
        "content": [{"type": "text", "text": "Rate limit exceeded"}],
        "structuredContent": {
            "code": 429,
            "message": "Rate limit exceeded",
            "data": {"retryAfterSeconds": retry_after},
        },
    })
}

/// The JSON-RPC error both revisions get for a rejected list, and Modern for a rejected call.
fn rpc_rejection(retry_after: u64) -> Value {
    json!({"code": 429, "message": "Rate limit exceeded", "data": {"retryAfterSeconds": retry_after}})
}

/// The text of a tool result's first content item.
fn said(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn echo(text: &str) -> Value {
    json!({"name": "notes_echo", "arguments": {"text": text}})
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_gets_an_is_error_result_and_modern_a_429_error() {
    // 2 tokens an hour: one token refills in 1800 s.
    let gw = Gateway::start(&config(
        "  tools:\n    - name: notes_echo\n      shared: {maxTokens: 2, refillPeriod: {duration: 1h0m0s}}\n",
    ));
    let c = Client::connect(&gw.url).await;
    for text in ["one", "two"] {
        assert_eq!(said(&c.ok("tools/call", echo(text)).await), text);
    }
    let rejected = c.request("tools/call", echo("three")).await;
    assert_eq!(rejected["result"], legacy_rejection(1800), "{rejected}");
    // Other tools are not limited.
    let add = c
        .ok(
            "tools/call",
            json!({"name": "notes_add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_ne!(add["isError"], json!(true), "{add}");

    let m = ModernClient::new(&gw.url);
    let a = m.request("tools/call", echo("four")).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["error"], rpc_rejection(1800), "{}", a.text);
    assert!(a.body.get("result").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_and_discover_draw_from_the_shared_bucket() {
    let gw = Gateway::start(&config("  shared: {maxTokens: 4, refillPeriod: 1h}\n"));
    let c = Client::connect(&gw.url).await;
    c.ok("tools/list", json!({})).await;
    c.ok("prompts/list", json!({})).await;
    // ping is not a fan-out: free.
    for _ in 0..5 {
        c.ok("ping", json!({})).await;
    }
    let m = ModernClient::new(&gw.url);
    m.ok("server/discover", json!({})).await;
    m.ok("resources/templates/list", json!({})).await;

    // The bucket is empty: 3600 s / 4 tokens = 900 s per token.
    let id = 7;
    let a = c
        .post_raw(
            c.session.clone(),
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/list", "params": {}}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["error"], rpc_rejection(900), "{}", a.text);
    assert_eq!(a.headers["retry-after"], "900");
    for method in ["server/discover", "tools/list", "prompts/list"] {
        let a = m.request(method, json!({})).await;
        assert_eq!(a.status, 200, "{method}: {}", a.text);
        assert_eq!(a.body["error"], rpc_rejection(900), "{method}: {}", a.text);
        assert_eq!(a.headers["retry-after"], "900", "{method}");
    }
    // Calls draw from the shared bucket too.
    let rejected = c.request("tools/call", echo("x")).await;
    assert_eq!(rejected["result"], legacy_rejection(900), "{rejected}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_and_user_buckets_are_per_caller_and_a_rejection_takes_nothing() {
    let Some(idp) = OidcProvider::start() else {
        return;
    };
    let yaml = format!(
        "{}incomingAuth:\n  type: oidc\n  oidc:\n    issuer: {}\n    audience: https://vmcp.test/mcp\n    insecureAllowHttp: true\n    jwksAllowPrivateIp: true\n",
        config(
            "  perUser: {maxTokens: 3, refillPeriod: 1h}\n  tools:\n    - name: notes_add\n      perUser: {maxTokens: 1, refillPeriod: 10m}\n",
        ),
        idp.issuer
    );
    let gw = Gateway::start(&yaml);
    let alice_token = idp.token("alice", &[]).await;
    let alice = Client::connect_as(&gw.url, &alice_token).await;
    let bob = Client::connect_as(&gw.url, &idp.token("bob", &[]).await).await;
    let add = json!({"name": "notes_add", "arguments": {"a": 1, "b": 2}});

    assert_ne!(alice.ok("tools/call", add.clone()).await["isError"], true);
    // Alice's bucket for notes_add is empty (600 s per token); her own bucket is not.
    assert_eq!(
        alice.ok("tools/call", add.clone()).await,
        legacy_rejection(600)
    );
    // That rejection took no token from her own bucket: two more calls fit in it.
    for text in ["a", "b"] {
        assert_eq!(said(&alice.ok("tools/call", echo(text)).await), text);
    }
    assert_eq!(
        alice.ok("tools/call", echo("c")).await,
        legacy_rejection(1200)
    );
    // Bob has buckets of his own.
    assert_ne!(bob.ok("tools/call", add.clone()).await["isError"], true);
    assert_eq!(said(&bob.ok("tools/call", echo("b")).await), "b");

    // Alice over the stateless edge is the same caller, with the same empty bucket.
    let m = ModernClient::new(&gw.url);
    let body = m.body("tools/list", json!({}));
    let mut headers = ModernClient::headers(&body);
    headers.push(("authorization".into(), format!("Bearer {alice_token}")));
    let a = m.send(&body, &headers).await;
    assert_eq!(a.body["error"], rpc_rejection(1200), "{}", a.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn anonymous_callers_share_one_per_user_bucket() {
    let gw = Gateway::start(&config("  perUser: {maxTokens: 2, refillPeriod: 1h}\n"));
    let first = Client::connect(&gw.url).await;
    let second = Client::connect(&gw.url).await;
    assert_eq!(said(&first.ok("tools/call", echo("1")).await), "1");
    assert_eq!(said(&second.ok("tools/call", echo("2")).await), "2");
    assert_eq!(
        first.ok("tools/call", echo("3")).await,
        legacy_rejection(1800)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_clients_get_exactly_max_tokens_successes() {
    const MAX: usize = 7;
    const LEGACY: usize = 20;
    const MODERN: usize = 20;
    let gw = Gateway::start(&config(
        "  tools:\n    - name: notes_echo\n      shared: {maxTokens: 7, refillPeriod: 1h}\n",
    ));
    let mut legacy = Vec::new();
    for _ in 0..LEGACY {
        legacy.push(Client::connect(&gw.url).await);
    }
    let modern = Arc::new(ModernClient::new(&gw.url));
    let start = Arc::new(tokio::sync::Barrier::new(LEGACY + MODERN));
    let mut tasks = Vec::new();
    for (i, c) in legacy.into_iter().enumerate() {
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let r = c.ok("tools/call", echo(&format!("legacy {i}"))).await;
            if r["isError"] == true {
                assert_eq!(r, legacy_rejection(515), "legacy {i}");
                false
            } else {
                true
            }
        }));
    }
    for i in 0..MODERN {
        let (m, start) = (modern.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let a = m.request("tools/call", echo(&format!("modern {i}"))).await;
            match a.body.get("error") {
                Some(e) => {
                    assert_eq!(e, &rpc_rejection(515), "modern {i}");
                    false
                }
                None => true,
            }
        }));
    }
    let mut successes = 0;
    for t in tasks {
        successes += usize::from(t.await.unwrap());
    }
    assert_eq!(successes, MAX);
}

/// Two replicas drawing concurrently from one bucket in Redis; how many calls each admitted.
async fn admitted_by_two_replicas(
    redis: &vmcp_testkit::RedisServer,
    limit: &str,
    calls_per_replica: usize,
) -> usize {
    let yaml = format!(
        "{}sessionStorage:\n  provider: redis\n  address: {}\n",
        config(&format!(
            "  tools:\n    - name: notes_echo\n      shared: {limit}\n"
        )),
        redis.address()
    );
    let (a, b) = (Gateway::start(&yaml), Gateway::start(&yaml));
    let clients = [
        Arc::new(ModernClient::new(&a.url)),
        Arc::new(ModernClient::new(&b.url)),
    ];
    let mut tasks = Vec::new();
    for worker in 0..8 {
        let m = clients[worker % 2].clone();
        tasks.push(tokio::spawn(async move {
            let mut admitted = 0;
            for i in 0..calls_per_replica / 4 {
                let a = m
                    .request("tools/call", echo(&format!("{worker}/{i}")))
                    .await;
                admitted += usize::from(a.body.get("error").is_none());
            }
            admitted
        }));
    }
    let mut admitted = 0;
    for t in tasks {
        admitted += t.await.unwrap();
    }
    admitted
}

/// A slow bucket (7 an hour) is drawn token by token: two replicas admit exactly 7.
#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_share_a_slow_bucket_exactly() {
    let Some(redis) = vmcp_testkit::RedisServer::start() else {
        return;
    };
    let admitted = admitted_by_two_replicas(&redis, "{maxTokens: 7, refillPeriod: 1h}", 40).await;
    assert_eq!(admitted, 7);
}

/// A busy bucket is leased: Redis runs the script far fewer times than calls are admitted, and two
/// replicas never admit more than the bucket held plus what it refilled meanwhile.
#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_lease_a_busy_bucket_and_never_overdraw_it() {
    let Some(redis) = vmcp_testkit::RedisServer::start() else {
        return;
    };
    let evals = |redis: &vmcp_testkit::RedisServer| {
        let info = redis.cli(&["INFO", "commandstats"]);
        info.lines()
            .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    };
    // 4000 tokens refilled over 100 s: 40 a second, so one lease holds at most 2, and the
    // bucket barely refills during the test; 600 calls fit.
    let admitted =
        admitted_by_two_replicas(&redis, "{maxTokens: 4000, refillPeriod: 100s}", 300).await;
    assert_eq!(admitted, 600, "a bucket with room refused calls");
    let runs = evals(&redis);
    assert!(
        runs < admitted,
        "{runs} script runs for {admitted} calls: nothing was leased"
    );
    // Now a small busy bucket: 64 tokens, 640 a second. Each replica leases up to 4 at once.
    // Over the run the bucket can give at most 64 plus 640 per second elapsed.
    redis.cli(&["FLUSHALL"]);
    let started = std::time::Instant::now();
    let admitted =
        admitted_by_two_replicas(&redis, "{maxTokens: 64, refillPeriod: 100ms}", 2000).await;
    let elapsed = started.elapsed().as_secs_f64();
    let bound = 64.0 + 640.0 * elapsed;
    assert!(
        (admitted as f64) <= bound,
        "{admitted} admitted, more than the bucket can give ({bound:.0}) in {elapsed:.2} s"
    );
    assert!(admitted > 0);
}

mod rmcp_peer {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use serde_json::Value;

    use super::{Gateway, config, legacy_rejection};

    #[tokio::test(flavor = "multi_thread")]
    async fn rmcp_client_reads_the_legacy_is_error_result() {
        let gw = Gateway::start(&config("  perUser: {maxTokens: 1, refillPeriod: 30s}\n"));
        let http = vmcp_backend::http_client().expect("http client");
        let transport = StreamableHttpClientTransport::with_client(
            http,
            StreamableHttpClientTransportConfig::with_uri(gw.url.clone()),
        );
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("rate-limit-peer", "1.0.0");
        let client =
            tokio::time::timeout(std::time::Duration::from_secs(20), info.serve(transport))
                .await
                .expect("initialize in time")
                .expect("rmcp initialize");
        let call = || {
            let mut args = rmcp::model::JsonObject::new();
            args.insert("text".into(), Value::from("hi"));
            client.call_tool(CallToolRequestParams::new("notes_echo").with_arguments(args))
        };
        let first = call().await.expect("first call");
        assert_ne!(first.is_error, Some(true), "{first:?}");
        // The second is a tool result the SDK parses, not a protocol error.
        let second = call().await.expect("a rate-limited call is still a result");
        assert_eq!(second.is_error, Some(true));
        assert_eq!(serde_json::to_value(&second).unwrap(), legacy_rejection(30));
        let _ = client.cancel().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn call_tool_is_metered_as_the_tool_it_runs_and_a_composite_by_its_own_name() {
    let yaml = format!(
        "{}compositeTools:
  - name: echo_flow
    description: Echo twice
    steps:
      - {{id: one, tool: notes.echo, arguments: {{text: one}}}}
      - {{id: two, tool: notes.echo, dependsOn: [one], arguments: {{text: two}}}}
optimizer: {{}}
",
        config(
            "  tools:
    - name: notes_echo
      shared: {maxTokens: 1, refillPeriod: 1h}
    - name: echo_flow
      shared: {maxTokens: 1, refillPeriod: 1h}
",
        )
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    let run = |tool: &str, parameters: Value| json!({"name": "call_tool", "arguments": {"tool_name": tool, "parameters": parameters}});
    let first = c
        .ok("tools/call", run("notes_echo", json!({"text": "a"})))
        .await;
    assert_eq!(said(&first), "a");
    assert_eq!(
        c.ok("tools/call", run("notes_echo", json!({"text": "b"})))
            .await,
        legacy_rejection(3600)
    );
    // Other tools through call_tool are not limited.
    for _ in 0..3 {
        let r = c
            .ok("tools/call", run("notes_add", json!({"a": 1, "b": 2})))
            .await;
        assert_ne!(r["isError"], true, "{r}");
    }
    // The composite's steps call notes_echo, whose bucket is empty: steps are not metered, the
    // composite is, by its own name.
    let flow = c.ok("tools/call", run("echo_flow", json!({}))).await;
    assert_ne!(flow["isError"], true, "{flow}");
    assert_eq!(
        c.ok("tools/call", run("echo_flow", json!({}))).await,
        legacy_rejection(3600)
    );
}
