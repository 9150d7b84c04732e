//! Authorization end to end through the binary, with tokens from the real OpenID provider
//! (tests/oidc) and Cedar policies over groups, roles, backends and arguments:
//!
//! * users with different claims see different tools, prompts and resources, on both revisions;
//! * a denied name, an argument-denied call and a name that does not exist get byte-identical
//!   403 answers (no enumeration oracle), on both revisions;
//! * a tool whose permit depends on an argument is listed (some call to it is admitted);
//! * `vmcp validate` reports policies that never match and parse errors with their position, and
//!   `vmcp authz check` prints a decision and the policies that made it.
//!
//! Skipped with a note when the provider's npm packages are not installed (outside CI).

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use common::eras::{BackendEra, ModernClient, SdkBackend, spawn_sdk};
use common::oidc::OidcProvider;
use common::{Client, Gateway, run_cli, temp_path};
use serde_json::{Value, json};

const POLICIES: [&str; 6] = [
    // Engineering may do everything on alpha.
    r#"permit(principal in THVGroup::"engineering", action, resource in Backend::"alpha");"#,
    // Everyone may echo on beta ...
    r#"permit(principal, action == Action::"call_tool", resource == Tool::"beta_echo");"#,
    // ... except this text.
    r#"forbid(principal, action == Action::"call_tool", resource == Tool::"beta_echo") when { context has arg_text && context.arg_text == "forbidden" };"#,
    // Sales may get every prompt.
    r#"permit(principal in THVGroup::"sales", action == Action::"get_prompt", resource);"#,
    // Viewers may read every resource.
    r#"permit(principal, action == Action::"read_resource", resource) when { principal has claim_roles && principal.claim_roles.contains("viewer") };"#,
    // whoami on beta only in safe mode (an argument-gated permit: ToolHive would hide it).
    r#"permit(principal, action == Action::"call_tool", resource == Tool::"beta_whoami") when { context has arg_mode && context.arg_mode == "safe" };"#,
];

struct World {
    idp: OidcProvider,
    _alpha: SdkBackend,
    _beta: SdkBackend,
    gw: Gateway,
}

fn config(issuer: &str, alpha: &str, beta: &str) -> String {
    let policies: Vec<String> = POLICIES
        .iter()
        .map(|p| format!("      - {}", serde_json::to_string(p).unwrap()))
        .collect();
    format!(
        "name: authz\nbackends:\n  - name: alpha\n    transport: streamable-http\n    url: {alpha}\n  - name: beta\n    transport: streamable-http\n    url: {beta}\nincomingAuth:\n  type: oidc\n  oidc:\n    issuer: {issuer}\n    audience: https://vmcp.test/mcp\n    insecureAllowHttp: true\n    jwksAllowPrivateIp: true\n  authz:\n    type: cedar\n    policies:\n{}\n",
        policies.join("\n")
    )
}

async fn world() -> Option<World> {
    let idp = OidcProvider::start()?;
    let alpha = spawn_sdk("alpha", BackendEra::Both, 0).await;
    let beta = spawn_sdk("beta", BackendEra::Modern, 0).await;
    let gw = Gateway::start(&config(&idp.issuer, &alpha.url, &beta.url));
    Some(World {
        idp,
        _alpha: alpha,
        _beta: beta,
        gw,
    })
}

fn names(v: &Value, field: &str, key: &str) -> Vec<String> {
    let mut n: Vec<String> = v[field]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|t| t[key].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}

/// What a caller sees, over the session-based edge.
async fn view(c: &Client) -> (Vec<String>, Vec<String>, Vec<String>) {
    (
        names(&c.ok("tools/list", json!({})).await, "tools", "name"),
        names(&c.ok("prompts/list", json!({})).await, "prompts", "name"),
        names(&c.ok("resources/list", json!({})).await, "resources", "uri"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn users_see_what_their_claims_admit_on_both_revisions() {
    let Some(w) = world().await else { return };
    let alice = w.idp.token("alice", &[]).await; // groups engineering, admins; roles developer
    let bob = w.idp.token("bob", &[]).await; // groups sales; roles viewer
    let carol = w.idp.token("carol", &[]).await; // nothing

    let (tools, prompts, resources) = view(&Client::connect_as(&w.gw.url, &alice).await).await;
    assert!(tools.contains(&"alpha_echo".to_string()) && tools.contains(&"alpha_ask".to_string()));
    assert!(tools.contains(&"beta_echo".to_string()));
    assert!(
        tools.contains(&"beta_whoami".to_string()),
        "argument-gated: listed"
    );
    assert!(!tools.contains(&"beta_spy".to_string()));
    assert_eq!(prompts, ["alpha_greet"]);
    assert_eq!(resources, ["memo://alpha/hello"]);

    let (tools, prompts, resources) = view(&Client::connect_as(&w.gw.url, &bob).await).await;
    assert_eq!(tools, ["beta_echo", "beta_whoami"]);
    assert_eq!(prompts, ["alpha_greet", "beta_greet"]);
    assert_eq!(resources, ["memo://alpha/hello", "memo://beta/hello"]);

    let (tools, prompts, resources) = view(&Client::connect_as(&w.gw.url, &carol).await).await;
    assert_eq!(tools, ["beta_echo", "beta_whoami"]);
    assert!(prompts.is_empty() && resources.is_empty());

    // The same views over the stateless edge, and server/discover's flags follow them.
    let m = ModernClient::new(&w.gw.url);
    let modern = |method: &str, token: &str| {
        let body = m.body(method, json!({}));
        let mut headers = ModernClient::headers(&body);
        headers.push(("authorization".into(), format!("Bearer {token}")));
        (body, headers)
    };
    let (b, h) = modern("tools/list", &bob);
    let a = m.send(&b, &h).await;
    assert_eq!(
        names(&a.body["result"], "tools", "name"),
        ["beta_echo", "beta_whoami"]
    );
    let (b, h) = modern("server/discover", &carol);
    let caps = m.send(&b, &h).await.body["result"]["capabilities"].clone();
    assert!(caps.get("tools").is_some(), "{caps}");
    assert!(
        caps.get("prompts").is_none() && caps.get("resources").is_none(),
        "{caps}"
    );

    // Calls agree with lists: the argument-gated tool answers in safe mode only.
    let c = Client::connect_as(&w.gw.url, &carol).await;
    let ok = c.call("beta_whoami", json!({"mode": "safe"})).await;
    assert_eq!(ok["result"]["content"][0]["text"], "beta", "{ok}");
    let no = c.call("beta_whoami", json!({"mode": "yolo"})).await;
    assert_eq!(no["error"]["code"], 403, "{no}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_denial_is_the_same_403_whether_the_name_exists_or_not() {
    let Some(w) = world().await else { return };
    let bob = w.idp.token("bob", &[]).await;
    let c = Client::connect_as(&w.gw.url, &bob).await;
    let legacy = |name: &str, args: Value| {
        let c = c.clone();
        let body = json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
            "params": {"name": name, "arguments": args}});
        async move { c.post_raw(c.session.clone(), body).await }
    };
    let denied_name = legacy("alpha_whoami", json!({})).await;
    let denied_args = legacy("beta_echo", json!({"text": "forbidden"})).await;
    let unknown = legacy("no_such_tool", json!({})).await;
    for a in [&denied_name, &denied_args, &unknown] {
        assert_eq!(a.status, 403, "{}", a.text);
    }
    assert_eq!(
        denied_name.body,
        json!({"jsonrpc": "2.0", "id": 42, "error": {"code": 403, "message": "call denied by authorization policy"}})
    );
    assert_eq!(denied_name.text, denied_args.text);
    assert_eq!(denied_name.text, unknown.text);
    // The allowed call goes through.
    let ok = legacy("beta_echo", json!({"text": "fine"})).await;
    assert_eq!(
        ok.body["result"]["content"][0]["text"], "fine",
        "{}",
        ok.text
    );

    // Prompts and resources likewise (bob may get prompts and read resources; carol may not).
    let carol = Client::connect_as(&w.gw.url, &w.idp.token("carol", &[]).await).await;
    let get = |name: &str| {
        let body =
            json!({"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": name}});
        let carol = carol.clone();
        async move { carol.post_raw(carol.session.clone(), body).await }
    };
    let (a, b) = (get("alpha_greet").await, get("nope").await);
    assert_eq!((a.status, &a.text), (403, &b.text));
    let read = |uri: &str| {
        let body =
            json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": uri}});
        let carol = carol.clone();
        async move { carol.post_raw(carol.session.clone(), body).await }
    };
    let (a, b) = (
        read("memo://alpha/hello").await,
        read("memo://nowhere").await,
    );
    assert_eq!((a.status, &a.text), (403, &b.text));

    // The stateless edge: the same three cases, one body.
    let m = ModernClient::new(&w.gw.url);
    let mut texts = Vec::new();
    for (name, args) in [
        ("alpha_whoami", json!({})),
        ("beta_echo", json!({"text": "forbidden"})),
        ("no_such_tool", json!({})),
    ] {
        let mut body = m.body("tools/call", json!({"name": name, "arguments": args}));
        body["id"] = json!(9);
        let mut headers = ModernClient::headers(&body);
        headers.push(("authorization".into(), format!("Bearer {bob}")));
        let a = m.send(&body, &headers).await;
        assert_eq!(a.status, 403, "{name}: {}", a.text);
        texts.push(a.text);
    }
    assert_eq!(texts[0], texts[1]);
    assert_eq!(texts[0], texts[2]);
}

#[test]
fn validate_reports_policies_that_never_match_and_parse_errors() {
    let path = temp_path("yaml");
    std::fs::write(
        &path,
        "name: x\nbackends:\n  - name: a\n    url: http://127.0.0.1:1/mcp\nincomingAuth:\n  type: anonymous\n  authz:\n    type: cedar\n    policies:\n      - 'permit(principal, action == Action::\"tools/call\", resource);'\n      - \"permit(principal,\\n  action ==, resource);\"\n",
    )
    .unwrap();
    let (status, out, err) = run_cli(&["validate", "--config", path.to_str().unwrap()]);
    assert!(!status.success(), "{out}{err}");
    assert!(
        err.contains(
            "incomingAuth.authz.policies[0]: Action::\"tools/call\" is not an action vmcp evaluates"
        ),
        "{err}"
    );
    assert!(
        err.contains("incomingAuth.authz.policies[1], line 2 column"),
        "{err}"
    );
    // serve refuses policies that do not parse, naming where.
    let (status, _, err) = run_cli(&["serve", "--config", path.to_str().unwrap(), "--port", "0"]);
    assert!(!status.success());
    assert!(err.contains("policies[1], line 2"), "{err}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn authz_check_decides_without_a_gateway() {
    let config = temp_path("yaml");
    std::fs::write(&config, config_for_check()).unwrap();
    let claims = temp_path("json");
    std::fs::write(&claims, r#"{"sub": "bob", "groups": ["sales"]}"#).unwrap();
    let args = temp_path("json");
    std::fs::write(&args, r#"{"text": "forbidden"}"#).unwrap();
    let base = [
        "authz",
        "check",
        "--config",
        config.to_str().unwrap(),
        "--claims",
        claims.to_str().unwrap(),
    ];
    let run = |extra: &[&str]| {
        let all: Vec<&str> = base.iter().chain(extra).copied().collect();
        run_cli(&all)
    };
    let (status, out, _) = run(&["--tool", "beta_echo"]);
    assert!(status.success(), "{out}");
    assert!(out.contains("decision: allow"), "{out}");
    assert!(out.contains("incomingAuth.authz.policies[1]"), "{out}");
    let (status, out, _) = run(&["--tool", "beta_echo", "--args", args.to_str().unwrap()]);
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(
        out.contains("decision: deny") && out.contains("policies[2]"),
        "{out}"
    );
    assert!(out.contains("listed: yes"), "{out}");
    let (status, out, _) = run(&["--tool", "alpha_echo", "--backend", "alpha"]);
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(out.contains("no permit applies"), "{out}");
    let (status, out, _) = run(&["--prompt", "anything"]);
    assert!(status.success() && out.contains("policies[3]"), "{out}");
    for p in [config, claims, args] {
        let _ = std::fs::remove_file(p);
    }
}

fn config_for_check() -> String {
    let policies: Vec<String> = POLICIES
        .iter()
        .map(|p| format!("      - {}", serde_json::to_string(p).unwrap()))
        .collect();
    format!(
        "name: authz\nbackends:\n  - name: a\n    url: http://127.0.0.1:1/mcp\nincomingAuth:\n  type: anonymous\n  authz:\n    type: cedar\n    policies:\n{}\n",
        policies.join("\n")
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_told_only_about_changes_they_can_see() {
    let Some(w) = world().await else { return };
    let alice = Client::connect_as(&w.gw.url, &w.idp.token("alice", &[]).await).await;
    let bob = Client::connect_as(&w.gw.url, &w.idp.token("bob", &[]).await).await;
    let (mut alice_events, mut bob_events) = (
        common::eras::legacy_stream(&alice).await,
        common::eras::legacy_stream(&bob).await,
    );
    // alpha adds a tool: only engineering (alice) may see alpha.
    let r = alice.call("alpha_grow", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "grown", "{r}");
    let change = alice_events
        .next(std::time::Duration::from_secs(10))
        .await
        .expect("alice is told");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert!(
        alice
            .tool_names()
            .await
            .contains(&"alpha_extra".to_string())
    );
    let nothing = bob_events
        .try_next(std::time::Duration::from_millis(800))
        .await;
    assert!(nothing.is_none(), "bob cannot see alpha: {nothing:?}");
}
