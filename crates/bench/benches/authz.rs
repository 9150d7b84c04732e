//! What Cedar authorization costs: 50 policies (group and claim permits, per-tool and per-backend
//! scopes, argument-gated forbids) over a catalog of 1,000 tools from 10 backends. Measures one
//! call decision, a caller's first `tools/list` (1,000 list decisions) and its next ones.
//!
//! Run with `cargo bench -p vmcp-bench --bench authz`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use vmcp_core::{
    Action, AggregationPolicy, Authorizer, BackendCapabilities, Catalog, Gateway, GatewayOptions,
    Identity, Kind, Target,
};
use vmcp_policy::{CedarAuthorizer, GroupRules, PolicySettings};

fn policies() -> Vec<String> {
    let mut p = Vec::new();
    for b in 0..10 {
        p.push(format!(
            r#"permit(principal in THVGroup::"team{b}", action == Action::"call_tool", resource in Backend::"b{b}");"#
        ));
        p.push(format!(
            r#"forbid(principal, action == Action::"call_tool", resource == Tool::"b{b}_tool_{b}") when {{ context has arg_mode && context.arg_mode == "unsafe" }};"#
        ));
    }
    for i in 0..20 {
        p.push(format!(
            r#"permit(principal, action == Action::"call_tool", resource == Tool::"b0_tool_{i}") when {{ principal has claim_level && principal.claim_level == "l{i}" }};"#
        ));
    }
    for i in 0..10 {
        p.push(format!(
            r#"permit(principal in THVGroup::"readers{i}", action == Action::"call_tool", resource) when {{ resource has readOnlyHint && resource.readOnlyHint }};"#
        ));
    }
    assert_eq!(p.len(), 50);
    p
}

fn catalog() -> Catalog {
    let caps: Vec<BackendCapabilities> = (0..10)
        .map(|b| BackendCapabilities {
            backend: format!("b{b}"),
            tools: (0..100)
                .map(|t| {
                    json!({"name": format!("tool_{t}"), "inputSchema": {"type": "object"},
                        "annotations": {"readOnlyHint": t % 2 == 0}})
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    Catalog::build(&AggregationPolicy::default(), caps, Vec::new()).unwrap()
}

fn authz(c: &mut Criterion) {
    let authorizer = Arc::new(
        CedarAuthorizer::new(PolicySettings {
            policies: policies(),
            entities_json: None,
            groups: GroupRules {
                group_claim: None,
                role_claim: None,
                group_type: "THVGroup".into(),
            },
            server_name: "bench".into(),
        })
        .unwrap(),
    );
    let claims = json!({"sub": "alice", "groups": ["team3", "readers1"], "level": "l5",
        "email": "alice@example.com", "exp": 1_900_000_000});
    let alice = Identity {
        subject: Some("alice".into()),
        issuer: Some("https://idp".into()),
        claims: Arc::new(claims.as_object().unwrap().clone()),
        token: None,
    };
    let args = json!({"mode": "safe", "path": "/tmp/x"});
    let target = Target {
        kind: Kind::Tool,
        name: "b3_tool_3",
        backend: Some("b3"),
        definition: None,
    };
    c.bench_function("authz/decide_call_50_policies", |b| {
        b.iter(|| authorizer.admit(black_box(&alice), Action::CallTool(target, Some(&args))));
    });
    let catalog = catalog();
    let gateway = Gateway::new(
        Vec::new(),
        GatewayOptions {
            authorizer: authorizer.clone(),
            ..GatewayOptions::default()
        },
    );
    let visible = gateway.list_tools(&alice, &catalog).len();
    assert!(visible > 100 && visible < 1000, "{visible}");
    // A caller's first list of this catalog: 1,000 decisions.
    c.bench_function("authz/tools_list_1000_tools_50_policies_first", |b| {
        b.iter_batched(
            || Identity {
                claims: Arc::new(alice.claims.as_ref().clone()),
                ..alice.clone()
            },
            |caller| gateway.list_tools(black_box(&caller), &catalog).len(),
            criterion::BatchSize::SmallInput,
        );
    });
    // Its next lists, from the cache of what it may see.
    c.bench_function("authz/tools_list_1000_tools_50_policies_again", |b| {
        b.iter(|| gateway.list_tools(black_box(&alice), &catalog).len());
    });
}

criterion_group!(benches, authz);
criterion_main!(benches);
