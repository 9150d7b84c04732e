//! ToolHive's example policies (shared/reference/toolhive-vmcp.md section 2.6) with the decisions
//! ToolHive documents for them, then what vmcp adds: backend-scoped policies, lists that agree
//! with calls, positions of parse errors, and the lint that finds policies that never match.

use std::sync::Arc;

use serde_json::{Value, json};
use vmcp_auth::Identity;
use vmcp_core::{Action, Authorizer, Kind, Target};

use super::*;

const SERVER: &str = "my-production-vmcp";

fn authorizer(policies: &[&str], entities: Option<Value>) -> CedarAuthorizer {
    try_authorizer(policies, entities, Some("groups")).unwrap()
}

fn try_authorizer(
    policies: &[&str],
    entities: Option<Value>,
    group_claim: Option<&str>,
) -> Result<CedarAuthorizer, Vec<LoadError>> {
    CedarAuthorizer::new(PolicySettings {
        policies: policies.iter().map(|p| p.to_string()).collect(),
        entities_json: entities.map(|e| e.to_string()),
        groups: GroupRules {
            group_claim: group_claim.map(str::to_string),
            role_claim: None,
            group_type: "THVGroup".into(),
        },
        server_name: SERVER.into(),
    })
}

fn user(sub: &str, claims: Value) -> Identity {
    let mut c = claims.as_object().cloned().unwrap_or_default();
    c.insert("sub".into(), json!(sub));
    Identity {
        subject: Some(sub.into()),
        issuer: Some("https://idp".into()),
        claims: Arc::new(c),
        token: None,
    }
}

fn tool<'a>(name: &'a str, def: Option<&'a Value>) -> Target<'a> {
    Target {
        kind: Kind::Tool,
        name,
        backend: Some("github"),
        definition: def,
    }
}

fn call(a: &CedarAuthorizer, who: &Identity, name: &str, args: Value) -> bool {
    a.admit(who, Action::CallTool(tool(name, None), Some(&args)))
}

fn listed(a: &CedarAuthorizer, who: &Identity, name: &str) -> bool {
    a.admit(who, Action::List(tool(name, None)))
}

#[test]
fn example_1_one_tool_is_listed_and_callable() {
    let a = authorizer(
        &[r#"permit(principal, action == Action::"call_tool", resource == Tool::"weather");"#],
        None,
    );
    let anyone = user("u", json!({}));
    assert!(listed(&a, &anyone, "weather") && call(&a, &anyone, "weather", json!({})));
    assert!(!listed(&a, &anyone, "echo") && !call(&a, &anyone, "echo", json!({})));
}

#[test]
fn example_2_one_principal() {
    let a = authorizer(
        &[
            r#"permit(principal == Client::"alice", action == Action::"call_tool", resource == Tool::"echo");"#,
        ],
        None,
    );
    assert!(call(&a, &user("alice", json!({})), "echo", json!({})));
    assert!(!call(&a, &user("bob", json!({})), "echo", json!({})));
}

#[test]
fn example_3_a_claim_without_a_guard_errors_and_denies() {
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"call_tool", resource) when { principal.claim_roles.contains("admin") };"#,
        ],
        None,
    );
    assert!(call(
        &a,
        &user("a", json!({"roles": ["admin"]})),
        "x",
        json!({})
    ));
    assert!(!call(
        &a,
        &user("b", json!({"roles": ["dev"]})),
        "x",
        json!({})
    ));
    let d = a.decide(
        &user("c", json!({})),
        Action::CallTool(tool("x", None), None),
    );
    assert!(
        !d.allowed && !d.errors.is_empty(),
        "no roles claim: an error, denied: {d:?}"
    );
}

#[test]
fn example_4_permit_with_an_argument_gated_forbid() {
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"call_tool", resource == Tool::"echo");"#,
            r#"forbid(principal, action == Action::"call_tool", resource == Tool::"echo") when { context has arg_input && context.arg_input == "blocked" };"#,
        ],
        None,
    );
    let u = user("u", json!({}));
    assert!(listed(&a, &u, "echo"));
    assert!(call(&a, &u, "echo", json!({"input": "hello"})));
    assert!(!call(&a, &u, "echo", json!({"input": "blocked"})));
}

#[test]
fn example_5_an_argument_gated_permit_is_listed_unlike_toolhive() {
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"call_tool", resource == Tool::"deploy") when { context.arg_mode == "safe" };"#,
        ],
        None,
    );
    let u = user("u", json!({}));
    assert!(call(&a, &u, "deploy", json!({"mode": "safe"})));
    assert!(!call(&a, &u, "deploy", json!({"mode": "dangerous"})));
    // ToolHive hides it (decided without arguments, an error); some call is admitted, so vmcp
    // lists it.
    assert!(listed(&a, &u, "deploy"));
}

#[test]
fn examples_6_and_7_annotations() {
    let ro = json!({"name": "r", "annotations": {"readOnlyHint": true}});
    let rw = json!({"name": "w", "annotations": {"destructiveHint": true}});
    let u = user("u", json!({}));
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"call_tool", resource) when { resource.readOnlyHint == true };"#,
        ],
        None,
    );
    assert!(a.admit(&u, Action::CallTool(tool("r", Some(&ro)), None)));
    assert!(
        !a.admit(&u, Action::CallTool(tool("w", Some(&rw)), None)),
        "no readOnlyHint: error, denied"
    );
    let a = authorizer(
        &[
            r#"permit(principal, action, resource);"#,
            r#"forbid(principal, action == Action::"call_tool", resource == Tool::"dangerous_tool") when { resource.destructiveHint == true };"#,
        ],
        None,
    );
    let d = json!({"name": "dangerous_tool", "annotations": {"destructiveHint": true}});
    assert!(!a.admit(&u, Action::CallTool(tool("dangerous_tool", Some(&d)), None)));
    assert!(a.admit(&u, Action::CallTool(tool("r", Some(&ro)), None)));
}

#[test]
fn examples_8_and_9_groups_and_transitive_roles() {
    let a = authorizer(
        &[
            r#"permit(principal in THVGroup::"engineering", action == Action::"call_tool", resource == Tool::"deploy");"#,
        ],
        None,
    );
    assert!(call(
        &a,
        &user("a", json!({"groups": ["engineering", "platform"]})),
        "deploy",
        json!({})
    ));
    assert!(!call(
        &a,
        &user("b", json!({"groups": ["marketing"]})),
        "deploy",
        json!({})
    ));
    assert!(!call(&a, &user("c", json!({})), "deploy", json!({})));
    let a = authorizer(
        &[
            r#"permit(principal in THVRole::"developer", action == Action::"call_tool", resource == Tool::"deploy");"#,
        ],
        Some(
            json!([{"uid": {"type": "THVGroup", "id": "engineering"}, "attrs": {},
            "parents": [{"type": "THVRole", "id": "developer"}]}]),
        ),
    );
    assert!(call(
        &a,
        &user("a", json!({"groups": ["engineering"]})),
        "deploy",
        json!({})
    ));
    assert!(!call(
        &a,
        &user("b", json!({"groups": ["sales"]})),
        "deploy",
        json!({})
    ));
}

#[test]
fn example_10_the_whole_server() {
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"call_tool", resource in MCP::"my-production-vmcp");"#,
        ],
        Some(
            json!([{"uid": {"type": "MCP", "id": "my-production-vmcp"}, "parents": [], "attrs": {}}]),
        ),
    );
    assert!(call(&a, &user("u", json!({})), "anything", json!({})));
    let other = authorizer(
        &[r#"permit(principal, action == Action::"call_tool", resource in MCP::"staging");"#],
        None,
    );
    assert!(!call(&other, &user("u", json!({})), "anything", json!({})));
}

#[test]
fn example_11_exact_uri_and_prompt_name() {
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"read_resource", resource == Resource::"file:///ok");"#,
            r#"permit(principal, action == Action::"get_prompt", resource == Prompt::"p-a");"#,
        ],
        None,
    );
    let u = user("u", json!({}));
    let res = |uri| Target::named(Kind::Resource, uri);
    assert!(a.admit(&u, Action::ReadResource(res("file:///ok"))));
    assert!(!a.admit(&u, Action::ReadResource(res("file:///ok2"))));
    assert!(a.admit(
        &u,
        Action::GetPrompt(Target::named(Kind::Prompt, "p-a"), None)
    ));
    assert!(!a.admit(
        &u,
        Action::GetPrompt(Target::named(Kind::Prompt, "p-b"), None)
    ));
    assert!(!a.admit(&u, Action::CallTool(Target::named(Kind::Tool, "p-a"), None)));
}

#[test]
fn example_12_a_claim_in_the_context() {
    let a = authorizer(
        &[
            r#"permit(principal, action == Action::"call_tool", resource == Tool::"weather") when { context.claim_name == "John Doe" };"#,
        ],
        None,
    );
    assert!(call(
        &a,
        &user("j", json!({"name": "John Doe"})),
        "weather",
        json!({})
    ));
    assert!(!call(
        &a,
        &user("k", json!({"name": "Kim"})),
        "weather",
        json!({})
    ));
}

#[test]
fn numbers_are_decimals() {
    let a = authorizer(
        &[
            r#"permit(principal, action, resource) when { context.arg_n.greaterThan(decimal("5.0")) };"#,
        ],
        None,
    );
    let u = user("u", json!({}));
    assert!(call(&a, &u, "t", json!({"n": 6})));
    assert!(!call(&a, &u, "t", json!({"n": 5})));
    assert!(listed(&a, &u, "t"), "some n is admitted");
    // `>` on decimals is a type error: denied (as in ToolHive).
    let a = authorizer(
        &[r#"permit(principal, action, resource) when { context.arg_n > 5 };"#],
        None,
    );
    assert!(!call(&a, &u, "t", json!({"n": 6})));
}

#[test]
fn a_whole_backend_in_one_policy() {
    let a = authorizer(
        &[r#"permit(principal, action, resource in Backend::"github");"#],
        None,
    );
    let u = user("u", json!({}));
    assert!(call(&a, &u, "github_create_issue", json!({})));
    let jira = Target {
        backend: Some("jira"),
        ..tool("jira_search", None)
    };
    assert!(!a.admit(&u, Action::CallTool(jira, None)));
}

#[test]
fn decisions_name_their_policies() {
    let a = authorizer(
        &[
            r#"permit(principal, action, resource);"#,
            r#"forbid(principal, action, resource == Tool::"rm");"#,
        ],
        None,
    );
    let u = user("u", json!({}));
    let d = a.decide(&u, Action::CallTool(tool("rm", None), None));
    assert_eq!(
        (d.allowed, d.policies),
        (false, vec!["policies[1]".to_string()])
    );
    let d = a.decide(&u, Action::CallTool(tool("ls", None), None));
    assert_eq!(
        (d.allowed, d.policies),
        (true, vec!["policies[0]".to_string()])
    );
}

#[test]
fn parse_errors_have_positions() {
    let e = try_authorizer(
        &[
            "permit(principal, action, resource);",
            "permit(principal,\n  action ==, resource);",
        ],
        None,
        None,
    )
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].policy, e[0].line), (Some(1), 2), "{e:?}");
    assert!(
        e[0].to_string().starts_with("policies[1], line 2 column"),
        "{}",
        e[0]
    );
    let e = try_authorizer(
        &["permit(principal, action, resource);"],
        Some(json!({"no": 1})),
        None,
    )
    .unwrap_err();
    assert_eq!(e[0].policy, None);
}

#[test]
fn lint_finds_policies_that_never_match() {
    let settings = PolicySettings {
        policies: [
            r#"permit(principal, action == Action::"tools/call", resource);"#,
            r#"permit(principal, action in [Action::"call_tool", Action::"resources/read"], resource);"#,
            r#"permit(principal in Team::"x", action, resource == Tool::"t");"#,
            r#"permit(principal, action, resource == Widget::"w");"#,
            r#"permit(principal, action, resource) when { principal.role == "admin" && resource.tool == "x" };"#,
            r#"permit(principal, action == Action::"call_tool", resource == Tool::"fine") when { principal has claim_roles && principal.claim_roles.contains("dev") && resource.readOnlyHint };"#,
        ]
        .map(str::to_string)
        .to_vec(),
        entities_json: None,
        groups: GroupRules {
            group_claim: None,
            role_claim: None,
            group_type: "THVGroup".into(),
        },
        server_name: SERVER.into(),
    };
    let findings = lint(&settings);
    let at = |i: usize| -> Vec<&str> {
        findings
            .iter()
            .filter(|f| f.policy == i)
            .map(|f| f.message.as_str())
            .collect()
    };
    assert!(
        at(0)[0].contains(r#"Action::"tools/call" is not an action"#),
        "{findings:?}"
    );
    assert!(at(1)[0].contains("resources/read"), "{findings:?}");
    assert!(at(2)[0].contains("type Team"), "{findings:?}");
    assert!(at(3)[0].contains("type Widget"), "{findings:?}");
    assert_eq!(at(4).len(), 2, "{findings:?}");
    assert!(at(5).is_empty(), "{findings:?}");
}

/// The property that lists and calls agree, over generated policy sets and identities: a tool is
/// listed exactly when some call to it (over a space of arguments larger than the witnesses:
/// values no policy mentions included) is admitted.
#[test]
fn listed_iff_some_call_is_admitted_over_generated_policies() {
    const PRINCIPALS: [&str; 3] = [
        "principal",
        r#"principal == Client::"alice""#,
        r#"principal in THVGroup::"eng""#,
    ];
    const RESOURCES: [&str; 4] = [
        "resource",
        r#"resource == Tool::"t0""#,
        r#"resource == Tool::"t1""#,
        r#"resource in Backend::"b0""#,
    ];
    const CONDITIONS: [&str; 8] = [
        "",
        r#" when { context has arg_a && context.arg_a == "x" }"#,
        r#" when { context.arg_a == "y" }"#,
        r#" when { context has arg_b && context.arg_b != "z" }"#,
        r#" when { principal has claim_role && principal.claim_role == "admin" }"#,
        r#" when { context has arg_a && ["x", "w"].contains(context.arg_a) }"#,
        r#" unless { context has arg_b }"#,
        r#" when { context has arg_a && context has arg_b && context.arg_a == context.arg_b }"#,
    ];
    // xorshift: deterministic, so a failure reproduces.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let identities = [
        user("alice", json!({"groups": ["eng"], "role": "admin"})),
        user("bob", json!({"groups": []})),
        user("carol", json!({"role": "user", "groups": ["eng"]})),
    ];
    let a_values = [None, Some("x"), Some("y"), Some("w"), Some("q"), Some("zz")];
    let b_values = [None, Some("z"), Some("q"), Some("x")];
    let mut checked = 0;
    for _ in 0..400 {
        let n = 1 + next(4);
        let policies: Vec<String> = (0..n)
            .map(|_| {
                let effect = if next(3) == 0 { "forbid" } else { "permit" };
                format!(
                    "{effect}({}, action == Action::\"call_tool\", {}){};",
                    PRINCIPALS[next(PRINCIPALS.len())],
                    RESOURCES[next(RESOURCES.len())],
                    CONDITIONS[next(CONDITIONS.len())]
                )
            })
            .collect();
        let refs: Vec<&str> = policies.iter().map(String::as_str).collect();
        let a = authorizer(&refs, None);
        for who in &identities {
            for (name, backend) in [("t0", "b0"), ("t1", "b1")] {
                let t = Target {
                    kind: Kind::Tool,
                    name,
                    backend: Some(backend),
                    definition: None,
                };
                let some_call = a_values.iter().any(|av| {
                    b_values.iter().any(|bv| {
                        let mut args = serde_json::Map::new();
                        if let Some(v) = av {
                            args.insert("a".into(), json!(v));
                        }
                        if let Some(v) = bv {
                            args.insert("b".into(), json!(v));
                        }
                        a.admit(who, Action::CallTool(t, Some(&Value::Object(args))))
                    })
                });
                assert_eq!(
                    a.admit(who, Action::List(t)),
                    some_call,
                    "{name} for {:?} under {policies:#?}",
                    who.subject
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 400 * 3 * 2);
}

/// Decisions that read no arguments are remembered per caller: each input the resource entity is
/// built from must still change the answer, and a remembered answer equals a fresh one.
#[test]
fn remembered_decisions_follow_annotations_backends_and_callers() {
    let a = authorizer(
        &[
            r#"permit(principal in THVGroup::"eng", action == Action::"call_tool", resource);"#,
            r#"forbid(principal, action == Action::"call_tool", resource) when { resource has destructiveHint && resource.destructiveHint == true };"#,
            r#"forbid(principal, action == Action::"call_tool", resource in Backend::"prod");"#,
        ],
        None,
    );
    let alice = user("alice", json!({"groups": ["eng"]}));
    let bob = user("bob", json!({"groups": ["sales"]}));
    let safe = json!({"name": "t", "annotations": {"destructiveHint": false}});
    let risky = json!({"name": "t", "annotations": {"destructiveHint": true}});
    let on = |backend, def| Target {
        kind: Kind::Tool,
        name: "t",
        backend: Some(backend),
        definition: Some(def),
    };
    let first = a.decide(&alice, Action::CallTool(on("dev", &safe), None));
    let again = a.decide(&alice, Action::CallTool(on("dev", &safe), None));
    assert!(first.allowed && !first.policies.is_empty());
    assert_eq!(first, again);
    assert!(!a.admit(&alice, Action::CallTool(on("dev", &risky), None)));
    assert!(!a.admit(&alice, Action::CallTool(on("prod", &safe), None)));
    assert!(!a.admit(&bob, Action::CallTool(on("dev", &safe), None)));
    assert!(a.admit(&alice, Action::CallTool(on("dev", &safe), None)));
    let prompt = Target {
        kind: Kind::Prompt,
        ..on("dev", &safe)
    };
    assert!(!a.admit(&alice, Action::GetPrompt(prompt, None)));
}

/// Anonymous callers carry fresh empty claims on every request: they must share one prepared
/// principal (and its remembered decisions) rather than fill the cache with copies.
#[test]
fn anonymous_callers_share_one_prepared_principal() {
    let a = authorizer(
        &[r#"permit(principal, action == Action::"call_tool", resource == Tool::"t");"#],
        None,
    );
    for _ in 0..3 {
        assert!(call(&a, &Identity::anonymous(), "t", json!({})));
    }
    assert_eq!(a.prepared.lock().unwrap().len(), 1);
}
