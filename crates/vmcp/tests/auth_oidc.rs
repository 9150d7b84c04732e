//! Identity at both boundaries, end to end through the binary with a real OpenID provider
//! (oidc-provider, tests/oidc) and rmcp backends that record the credentials they receive:
//!
//! * every request of both revisions is authenticated; 401 carries ToolHive's challenge and the
//!   RFC 9728 metadata is served; bad tokens of every kind are 401 `invalid_token`, never a 500;
//! * a Legacy session is bound to its caller: another identity gets "session not found" and the
//!   session lives on; a refreshed token for the same subject works;
//! * backends get their own credential, never the client's token: a static header, or a token
//!   exchanged for the caller's (cached: concurrent calls cost one exchange), and each caller
//!   discovers what its own credential surfaces;
//! * no secret appears in the gateway's logs, even at debug level.
//!
//! Skipped with a note when the provider's npm packages are not installed (outside CI).

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use common::eras::{
    Answerer, BackendEra, ModernClient, SdkBackend, rmcp_legacy_as, rmcp_modern_as, spawn_sdk,
};
use common::oidc::OidcProvider;
use common::{Client, Gateway, http};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

const AUDIENCE: &str = "https://vmcp.test/mcp";
const GATEWAY_SECRET: &str = "gateway-secret";
const API_KEY: &str = "static-api-key-5e5e";

struct World {
    idp: OidcProvider,
    exchanged: SdkBackend,
    keyed: SdkBackend,
    gw: Gateway,
}

async fn world() -> Option<World> {
    world_for(AUDIENCE).await
}

/// The gateway accepting tokens for `audience` (a JWT resource, or the opaque one).
async fn world_for(audience: &str) -> Option<World> {
    let idp = OidcProvider::start()?;
    let exchanged = spawn_sdk("exchanged", BackendEra::Both, 0).await;
    let keyed = spawn_sdk("keyed", BackendEra::Modern, 0).await;
    let yaml = format!(
        r#"name: auth
backends:
  - name: exchanged
    transport: streamable-http
    url: {exchanged}
  - name: keyed
    transport: streamable-http
    url: {keyed}
incomingAuth:
  type: oidc
  oidc:
    issuer: {issuer}
    audience: {audience}
    clientId: vmcp-gateway
    clientSecretEnv: TEST_GATEWAY_SECRET
    introspectionUrl: {issuer}/token/introspection
    scopes: [mcp:read]
    insecureAllowHttp: true
    jwksAllowPrivateIp: true
outgoingAuth:
  source: inline
  backends:
    exchanged:
      type: token_exchange
      tokenExchange:
        tokenUrl: {issuer}/token
        clientId: vmcp-gateway
        clientSecretEnv: TEST_GATEWAY_SECRET
        audience: https://backend.vmcp.test
    keyed:
      type: header_injection
      headerInjection:
        headerName: X-Api-Key
        headerValueEnv: TEST_API_KEY
"#,
        exchanged = exchanged.url,
        keyed = keyed.url,
        issuer = idp.issuer,
    );
    let gw = Gateway::start_env(
        &yaml,
        &["--debug"],
        &[
            ("TEST_GATEWAY_SECRET", GATEWAY_SECRET),
            ("TEST_API_KEY", API_KEY),
        ],
    );
    Some(World {
        idp,
        exchanged,
        keyed,
        gw,
    })
}

async fn post(url: &str, headers: &[(&str, String)], body: Value) -> common::Answer {
    let mut req = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", common::JSON_AND_SSE)
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    common::decode(req.send().await.unwrap()).await
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

fn challenge(a: &common::Answer) -> String {
    a.headers
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn unauthenticated_requests_get_the_challenge_and_metadata_is_served() {
    let Some(w) = world().await else { return };
    let a = post(&w.gw.url, &[], initialize()).await;
    assert_eq!(a.status, 401, "{}", a.text);
    assert_eq!(
        challenge(&a),
        format!(
            "Bearer realm=\"{}\", resource_metadata=\"https://vmcp.test/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read\", error=\"invalid_request\", error_description=\"authorization header required\"",
            w.idp.issuer
        )
    );
    assert_eq!(a.body["error"], "invalid_request", "{}", a.text);

    // RFC 9728 metadata, at the path and any sub-path, with CORS; OPTIONS for preflight.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = http()
            .get(format!("{}{path}", w.gw.base))
            .header("origin", "https://app.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(
            r.headers()["access-control-allow-origin"],
            "https://app.example"
        );
        let doc: Value = r.json().await.unwrap();
        assert_eq!(
            doc,
            json!({"resource": AUDIENCE, "authorization_servers": [w.idp.issuer],
                "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:read"]})
        );
    }
    let r = http()
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/.well-known/oauth-protected-resource/mcp", w.gw.base),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let r = http()
        .get(format!("{}/.well-known/openid-configuration", w.gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    // Operational endpoints stay open; /status needs a token when auth is OIDC.
    assert_eq!(
        http()
            .get(format!("{}/health", w.gw.base))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let status = |token: Option<String>| {
        let mut req = http().get(format!("{}/status", w.gw.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    assert_eq!(status(None).await.unwrap().status(), 401);
    let alice = w.idp.token("alice", &[]).await;
    assert_eq!(status(Some(alice)).await.unwrap().status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_kind_of_bad_token_is_401_invalid_token() {
    let Some(w) = world().await else { return };
    let expired = w.idp.token("alice", &[("ttl", "1")]).await;
    // A JWT the IdP issued for another audience (a backend service's).
    let wrong_audience = w
        .idp
        .client_token(
            "backend-service",
            "backend-secret",
            "https://backend.vmcp.test",
        )
        .await;
    let good = w.idp.token("alice", &[]).await;
    let mut parts: Vec<String> = good.split('.').map(str::to_string).collect();
    // Same signature, another subject.
    let forged_payload = {
        use base64::Engine;
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut claims: Value = serde_json::from_slice(&e.decode(&parts[1]).unwrap()).unwrap();
        claims["sub"] = json!("admin");
        e.encode(serde_json::to_vec(&claims).unwrap())
    };
    parts[1] = forged_payload;
    let forged = parts.join(".");
    let header_b64 = |h: Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(h.to_string())
    };
    let payload = good.split('.').nth(1).unwrap().to_string();
    let alg_none = format!("{}.{payload}.", header_b64(json!({"alg": "none"})));
    let hmac = format!(
        "{}.{payload}.c2ln",
        header_b64(json!({"alg": "HS256", "kid": "test-rs256"}))
    );
    let unknown_kid = format!(
        "{}.{payload}.{}",
        header_b64(json!({"alg": "RS256", "kid": "no-such-key"})),
        good.split('.').nth(2).unwrap()
    );
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("expired", expired, "invalid_token", "expired"),
        (
            "wrong audience",
            wrong_audience,
            "invalid_token",
            "audience",
        ),
        ("forged payload", forged, "invalid_token", "signature"),
        ("alg none", alg_none, "invalid_token", "\"none\""),
        ("HMAC with the public key", hmac, "invalid_token", "HS256"),
        ("unknown kid", unknown_kid, "invalid_token", "no-such-key"),
        (
            "opaque garbage",
            "not-a-real-token".into(),
            "invalid_token",
            "not active",
        ),
        (
            "a JWT with a broken signature",
            format!("{good}x"),
            "invalid_token",
            "introspection",
        ),
        ("oversized", "a".repeat(20_000), "invalid_token", "larger"),
    ];
    for (what, token, code, reason) in cases {
        let a = post(
            &w.gw.url,
            &[("authorization", format!("Bearer {token}"))],
            initialize(),
        )
        .await;
        assert_eq!(a.status, 401, "{what}: {}", a.text);
        let c = challenge(&a);
        assert!(c.contains(&format!("error=\"{code}\"")), "{what}: {c}");
        assert!(
            a.body["error_description"]
                .as_str()
                .unwrap_or("")
                .contains(reason),
            "{what}: {}",
            a.text
        );
    }
    for (what, header) in [
        ("basic scheme", "Basic YWxpY2U6cHc="),
        ("no token", "Bearer "),
    ] {
        let a = post(
            &w.gw.url,
            &[("authorization", header.to_string())],
            initialize(),
        )
        .await;
        assert_eq!(a.status, 401, "{what}");
        assert!(
            challenge(&a).contains("error=\"invalid_request\""),
            "{what}"
        );
    }
    // The random kid above refreshed the key set at most once.
    assert!(w.idp.count("jwks").await <= 2, "{}", w.idp.stats().await);
}

#[tokio::test(flavor = "multi_thread")]
async fn both_revisions_and_every_key_type_authenticate() {
    let Some(w) = world().await else { return };
    for alg in ["RS256", "ES256", "EdDSA"] {
        let token = w.idp.token("alice", &[("alg", alg)]).await;
        let c = Client::connect_as(&w.gw.url, &token).await;
        assert!(
            c.tool_names()
                .await
                .contains(&"exchanged_for_alice".to_string()),
            "{alg}"
        );
        let m = ModernClient::new(&w.gw.url);
        let body = m.body("tools/list", json!({}));
        let mut headers = ModernClient::headers(&body);
        headers.push(("authorization".into(), format!("Bearer {token}")));
        let a = m.send(&body, &headers).await;
        assert_eq!(a.status, 200, "{alg}: {}", a.text);
        // A Modern request without a token is refused like a Legacy one.
        let a = m.send(&body, &ModernClient::headers(&body)).await;
        assert_eq!(a.status, 401, "{}", a.text);
    }
}

/// A provider that rotated its keys (restarted on the same issuer with new ones): a token signed
/// with the new key is never told 401 while the gateway's cached key set is too young to refetch
/// (503, retry), is accepted once it is refetched, and a token of the removed key stops working
/// at that refetch, even though the gateway had remembered it as valid.
#[tokio::test(flavor = "multi_thread")]
async fn a_rotated_key_is_retried_not_refused_and_a_removed_key_stops_at_the_next_fetch() {
    let Some(mut w) = world().await else { return };
    let bearer = |t: &str| [("authorization", format!("Bearer {t}"))];
    let old = w.idp.token("alice", &[]).await;
    let a = post(&w.gw.url, &bearer(&old), initialize()).await;
    assert_eq!(a.status, 200, "{}", a.text);

    w.idp.restart_with_new_keys();
    let new = w.idp.token("alice", &[]).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut retried = 0;
    loop {
        let a = post(&w.gw.url, &bearer(&new), initialize()).await;
        if a.status == 200 {
            break;
        }
        assert_eq!(a.status, 503, "a rotated-in key is never 401: {}", a.text);
        assert!(a.text.contains("retry"), "{}", a.text);
        assert!(
            std::time::Instant::now() < deadline,
            "never accepted: {}",
            a.text
        );
        retried += 1;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    // Refetches are at least 10 s apart and the old set was fetched moments before.
    assert!(
        retried > 0,
        "the new key was accepted without waiting for a refetch"
    );
    let a = post(&w.gw.url, &bearer(&old), initialize()).await;
    assert_eq!(a.status, 401, "the removed key still works: {}", a.text);
    assert!(challenge(&a).contains("invalid_token"), "{}", challenge(&a));
}

#[tokio::test(flavor = "multi_thread")]
async fn opaque_tokens_are_introspected_and_the_answer_reused() {
    let Some(w) = world_for("https://opaque.vmcp.test").await else {
        return;
    };
    let opaque = w
        .idp
        .token("bob", &[("resource", "https://opaque.vmcp.test")])
        .await;
    let before = w.idp.count("introspection").await;
    let c = Client::connect_as(&w.gw.url, &opaque).await;
    let names = c.tool_names().await;
    assert!(
        names.contains(&"exchanged_for_bob".to_string()),
        "{names:?}"
    );
    assert_eq!(w.idp.count("introspection").await - before, 1, "cached");
    // A JWT is not this gateway's audience here: introspection says so, 401.
    let jwt = w.idp.token("bob", &[]).await;
    let a = post(
        &w.gw.url,
        &[("authorization", format!("Bearer {jwt}"))],
        initialize(),
    )
    .await;
    assert_eq!(a.status, 401, "{}", a.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_bound_to_their_caller() {
    let Some(w) = world().await else { return };
    let alice = w.idp.token("alice", &[]).await;
    let bob = w.idp.token("bob", &[]).await;
    let mut c = Client::connect_as(&w.gw.url, &alice).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}});
    // Bob on Alice's session: the unknown-session answer, and he cannot end it.
    let mut mallory = c.clone();
    mallory.bearer = Some(bob.clone());
    let a = mallory.post_raw(c.session.clone(), call.clone()).await;
    assert_eq!(a.status, 404, "{}", a.text);
    assert_eq!(a.body["error"]["message"], "Session not found");
    let unknown = mallory
        .post_raw(Some("no-such-session".into()), call.clone())
        .await;
    assert_eq!(
        a.text, unknown.text,
        "no oracle: same body as an unknown session"
    );
    assert_eq!(mallory.delete().await, 404);
    // Alice's session lives on, and a refreshed token for her still works.
    assert!(
        c.tool_names()
            .await
            .contains(&"exchanged_for_alice".to_string())
    );
    c.bearer = Some(w.idp.token("alice", &[("alg", "ES256")]).await);
    let r = c.ok("tools/list", json!({})).await;
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "exchanged_for_alice")
    );
    assert_eq!(c.delete().await, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn backends_get_their_own_credential_never_the_clients_token() {
    let Some(w) = world().await else { return };
    let alice = w.idp.token("alice", &[]).await;
    let bob = w.idp.token("bob", &[]).await;
    let a = Client::connect_as(&w.gw.url, &alice).await;
    let b = Client::connect_as(&w.gw.url, &bob).await;

    // Each caller discovers what its own credential surfaces.
    let (an, bn) = (a.tool_names().await, b.tool_names().await);
    assert!(an.contains(&"exchanged_for_alice".to_string()), "{an:?}");
    assert!(!an.contains(&"exchanged_for_bob".to_string()), "{an:?}");
    assert!(bn.contains(&"exchanged_for_bob".to_string()), "{bn:?}");

    let r = a.call("exchanged_whoami", json!({})).await;
    assert!(r.get("error").is_none(), "{r}");
    let r = a.call("keyed_whoami", json!({})).await;
    assert!(r.get("error").is_none(), "{r}");

    // The exchanged backend got a token the IdP issued for it, for Alice, acting as the gateway.
    let creds = w.exchanged.seen().credentials.lock().unwrap().clone();
    let call = creds
        .iter()
        .find(|c| c.what == "whoami")
        .expect("whoami call");
    let claims = call.claims().expect("a JWT");
    assert_eq!(claims["sub"], "alice");
    assert_eq!(claims["aud"], "https://backend.vmcp.test");
    assert_eq!(claims["act"]["sub"], "vmcp-gateway");
    for c in &creds {
        let auth = c.authorization.as_deref().unwrap_or("");
        assert!(
            !auth.contains(&alice) && !auth.contains(&bob),
            "client token forwarded: {c:?}"
        );
        assert!(c.api_key.is_none());
    }
    // The keyed backend got the static header and no Authorization at all.
    let creds = w.keyed.seen().credentials.lock().unwrap().clone();
    assert!(!creds.is_empty());
    for c in &creds {
        assert_eq!(c.api_key.as_deref(), Some(API_KEY), "{c:?}");
        assert_eq!(c.authorization, None, "{c:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn exchanged_tokens_are_cached_one_exchange_for_concurrent_calls() {
    let Some(w) = world().await else { return };
    let carol = w.idp.token("carol", &[]).await;
    let m = std::sync::Arc::new(ModernClient::new(&w.gw.url));
    let before = w.idp.count("token_exchange").await;
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let (m, carol) = (m.clone(), carol.clone());
            tokio::spawn(async move {
                let body = m.body(
                    "tools/call",
                    json!({"name": "exchanged_whoami", "arguments": {}}),
                );
                let mut headers = ModernClient::headers(&body);
                headers.push(("authorization".into(), format!("Bearer {carol}")));
                m.send(&body, &headers).await
            })
        })
        .collect();
    for call in calls {
        let a = call.await.unwrap();
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.body.get("error").is_none(), "{}", a.text);
    }
    let exchanges = w.idp.count("token_exchange").await - before;
    assert_eq!(
        exchanges, 1,
        "20 concurrent cold calls by one caller: one exchange"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn no_secret_reaches_the_logs() {
    let Some(w) = world().await else { return };
    let alice = w.idp.token("alice", &[]).await;
    let c = Client::connect_as(&w.gw.url, &alice).await;
    for tool in ["exchanged_whoami", "keyed_whoami"] {
        let r = c.call(tool, json!({})).await;
        assert!(r.get("error").is_none(), "{r}");
    }
    let bad = post(
        &w.gw.url,
        &[("authorization", format!("Bearer {alice}x"))],
        initialize(),
    )
    .await;
    assert_eq!(bad.status, 401, "{}", bad.text);
    let exchanged_token = w
        .exchanged
        .seen()
        .credentials
        .lock()
        .unwrap()
        .iter()
        .find_map(|c| c.authorization.clone())
        .unwrap();
    let logs = w.gw.logs();
    assert!(logs.contains("DEBUG"), "the gateway ran at debug level");
    for (what, secret) in [
        ("the client's token", alice.as_str()),
        (
            "the exchanged token",
            exchanged_token.trim_start_matches("Bearer "),
        ),
        ("the client secret", GATEWAY_SECRET),
        ("the injected header value", API_KEY),
    ] {
        // A JWT's payload alone would reveal the token too.
        let probe = secret.split('.').nth(1).unwrap_or(secret);
        assert!(!logs.contains(probe), "{what} appears in the logs");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_clients_of_both_revisions_authenticate_with_a_bearer_token() {
    let Some(w) = world().await else { return };
    let alice = w.idp.token("alice", &[]).await;
    for modern in [false, true] {
        let handler = Answerer::new("rmcp", json!({}));
        let client = if modern {
            rmcp_modern_as(&w.gw.url, Some(&alice), handler).await
        } else {
            rmcp_legacy_as(&w.gw.url, Some(&alice), handler).await
        };
        let tools = client.list_all_tools().await.unwrap();
        assert!(
            tools.iter().any(|t| t.name == "exchanged_for_alice"),
            "modern={modern}: {:?}",
            tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
        );
        let r = client
            .call_tool(CallToolRequestParams::new("exchanged_whoami"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap()["content"][0]["text"],
            "exchanged",
            "modern={modern}"
        );
        let _ = client.cancel().await;
    }
}

/// The Python SDK's client (PyPI `mcp`, installed by .ci/venv.sh) with a bearer token, on both
/// revisions: it sees and calls what its own credential surfaces, and is refused without it.
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_client_authenticates_on_both_revisions() {
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/.venv/bin/python");
    if !std::path::Path::new(python).exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the Python SDK is not installed: run .ci/venv.sh"
        );
        eprintln!("note: skipping: the Python SDK is not installed (run .ci/venv.sh)");
        return;
    }
    let Some(w) = world().await else { return };
    let bob = w.idp.token("bob", &[]).await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/interop/python_auth_client.py"
    );
    for mode in ["legacy", "auto"] {
        let out = tokio::process::Command::new(python)
            .args([
                script,
                &w.gw.url,
                mode,
                &bob,
                "exchanged_for_bob",
                "exchanged_whoami",
                "exchanged",
            ])
            .output()
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "mode {mode}:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(text.matches("ok  ").count(), 5, "mode {mode}:\n{text}");
    }
}

/// A stdio process shared by every session cannot say whose a message outside a request is: a
/// tool may talk after its call ended, while another caller's call is the only one in flight.
/// One caller's calls keep getting such messages; once a second caller has used the process,
/// nobody does (the gateway says so once, naming `isolation: perSession`).
#[tokio::test(flavor = "multi_thread")]
async fn a_shared_process_never_gives_one_callers_late_message_to_another() {
    let Some(idp) = OidcProvider::start() else {
        return;
    };
    let bin = vmcp_testkit::fixture_bin();
    let yaml = format!(
        "name: late\nbackends:\n  - name: sto\n    transport: stdio\n    command: {bin:?}\n    args: [\"--transport\", \"stdio\", \"--name\", \"sto\", \"--late-talk\"]\nincomingAuth:\n  type: oidc\n  oidc:\n    issuer: {issuer}\n    audience: {AUDIENCE}\n    insecureAllowHttp: true\n    jwksAllowPrivateIp: true\n",
        bin = bin.display().to_string(),
        issuer = idp.issuer,
    );
    let gw = Gateway::start(&yaml);
    let alice = Client::connect_as(&gw.url, &idp.token("alice", &[]).await).await;
    let bob = Client::connect_as(&gw.url, &idp.token("bob", &[]).await).await;
    for c in [&alice, &bob] {
        c.ok("logging/setLevel", json!({"level": "debug"})).await;
    }
    // The whole answer to a call, its stream's events included.
    let call_text = |c: &Client, tool: &str, args: Value| {
        let (c, body) = (
            c.clone(),
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}),
        );
        async move { c.post_raw(c.session.clone(), body).await.text }
    };
    // One caller so far: her own tool's late log reaches her next call.
    let t = call_text(
        &alice,
        "sto_talk_later",
        json!({"tag": "alice-own", "ms": 300}),
    )
    .await;
    assert!(t.contains("will talk later"), "{t}");
    let t = call_text(&alice, "sto_sleep", json!({"ms": 1200})).await;
    assert!(
        t.contains("alice-own"),
        "one caller's late log is hers: {t}"
    );
    // Her tool talks late while bob's call is the only one in flight: bob must not get it.
    let t = call_text(
        &alice,
        "sto_talk_later",
        json!({"tag": "alice-secret", "ms": 300}),
    )
    .await;
    assert!(t.contains("will talk later"), "{t}");
    let t = call_text(&bob, "sto_sleep", json!({"ms": 1200})).await;
    assert!(t.contains("slept 1200"), "{t}");
    assert!(
        !t.contains("alice-secret"),
        "bob received alice's tool's log: {t}"
    );
    assert!(
        gw.logs()
            .contains("a second caller uses this shared backend connection"),
        "the gateway says why it stopped attributing"
    );
}
