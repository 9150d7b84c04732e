//! Cedar entity building from a caller's claims and a call's arguments (`vmcp_policy`'s
//! `entities`: claims as `claim_*` attributes, groups and roles as parents, arguments as `arg_*`
//! attributes and context), through the public authorizer with ToolHive-style policies.
//!
//! Input: a JSON object `{"claims": {...}, "arguments": {...}, "tool": "...", "backend": "..."}`
//! (the claims of a validated token and the arguments of a `tools/call`).
//! Invariants: nothing panics; the `forbid` policies always win (an argument `danger: true`, the
//! subject `mallory`); a call that is admitted is also listed (list and call agree: a tool is
//! listed when some call of it can be admitted).
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use vmcp_core::{Action, Authorizer, Identity, Kind, Target};
use vmcp_policy::{CedarAuthorizer, GroupRules, PolicySettings};

const POLICIES: [&str; 7] = [
    r#"permit(principal, action == Action::"call_tool", resource == Tool::"weather") when { principal has claim_role && principal.claim_role == "user" };"#,
    r#"permit(principal in THVGroup::"admins", action, resource);"#,
    r#"permit(principal, action == Action::"call_tool", resource in Backend::"github") when { context has arg_count && context.arg_count.lessThan(decimal("10.0")) };"#,
    r#"permit(principal, action, resource) when { principal has claim_realm_access && principal.claim_realm_access has roles && principal.claim_realm_access.roles.contains("superuser") };"#,
    r#"permit(principal, action == Action::"call_tool", resource) when { resource has arg_mode && resource.arg_mode == "safe" && context has claim_email_verified && context.claim_email_verified == true };"#,
    r#"forbid(principal, action == Action::"call_tool", resource) when { resource has arg_danger && resource.arg_danger == true };"#,
    r#"forbid(principal == Client::"mallory", action, resource);"#,
];

fn authorizer() -> &'static CedarAuthorizer {
    static AUTHZ: OnceLock<CedarAuthorizer> = OnceLock::new();
    AUTHZ.get_or_init(|| {
        CedarAuthorizer::new(PolicySettings {
            policies: POLICIES.iter().map(|p| p.to_string()).collect(),
            entities_json: Some(
                r#"[{"uid": {"type": "THVGroup", "id": "platform"}, "attrs": {}, "parents": [{"type": "THVGroup", "id": "admins"}]}]"#.into(),
            ),
            groups: GroupRules {
                group_claim: Some("groups".into()),
                role_claim: Some("realm_access.roles".into()),
                group_type: "THVGroup".into(),
            },
            server_name: "fuzz-vmcp".into(),
        })
        .unwrap_or_else(|e| panic!("the fuzz policies load: {e:?}"))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(input)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let claims = match input.get("claims") {
        Some(Value::Object(c)) => c.clone(),
        _ => Default::default(),
    };
    let identity = Identity {
        subject: claims
            .get("sub")
            .and_then(Value::as_str)
            .map(str::to_string),
        issuer: claims
            .get("iss")
            .and_then(Value::as_str)
            .map(str::to_string),
        claims: Arc::new(claims),
        token: None,
    };
    let arguments = input.get("arguments");
    let tool = input
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or("weather");
    let target = Target {
        kind: Kind::Tool,
        name: tool,
        backend: input.get("backend").and_then(Value::as_str),
        definition: input.get("definition"),
    };
    let authz = authorizer();
    let call = authz.decide(&identity, Action::CallTool(target, arguments));
    let listed = authz.decide(&identity, Action::List(target));
    let _ = authz.decide(
        &identity,
        Action::GetPrompt(
            Target {
                kind: Kind::Prompt,
                ..target
            },
            arguments,
        ),
    );
    let _ = authz.decide(
        &identity,
        Action::ReadResource(Target {
            kind: Kind::Resource,
            ..target
        }),
    );
    if call.allowed {
        let danger = arguments.and_then(|a| a.get("danger")) == Some(&Value::Bool(true));
        assert!(!danger, "forbid on arguments.danger did not win: {call:?}");
        assert_ne!(
            identity.subject.as_deref(),
            Some("mallory"),
            "forbid on mallory did not win"
        );
        assert!(
            listed.allowed,
            "called but not listed: call {call:?}, list {listed:?}"
        );
    }
});
