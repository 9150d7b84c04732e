//! The authorization commands: policy checks for `vmcp validate`, and `vmcp authz check`, which
//! decides one request from a config and a set of claims without a running gateway.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value};
use vmcp_config::Config;
use vmcp_core::{Action, Authorizer, Identity, Kind, Target};
use vmcp_policy::{CedarAuthorizer, GroupRules, PolicySettings};

use crate::cli::CheckArgs;

/// The Cedar settings of `config`, when authz is `cedar`.
pub(crate) fn settings(config: &Config) -> Option<PolicySettings> {
    let authz = config
        .incoming_auth
        .authz
        .as_ref()
        .filter(|a| a.is_cedar())?;
    Some(PolicySettings {
        policies: authz.policies.clone(),
        entities_json: authz.entities_json.clone(),
        groups: GroupRules {
            group_claim: authz.group_claim_name.clone(),
            role_claim: authz.role_claim_name.clone(),
            group_type: authz
                .group_entity_type
                .clone()
                .unwrap_or_else(|| "THVGroup".into()),
        },
        server_name: config.name.clone(),
    })
}

/// The config's authorizer (None: no Cedar policies), or why its policies cannot load.
pub(crate) fn authorizer(config: &Config) -> anyhow::Result<Option<CedarAuthorizer>> {
    let Some(settings) = settings(config) else {
        return Ok(None);
    };
    for finding in vmcp_policy::lint(&settings) {
        tracing::warn!(
            policy = %format!("incomingAuth.authz.policies[{}]", finding.policy),
            "{}",
            finding.message
        );
    }
    CedarAuthorizer::new(settings).map(Some).map_err(|errors| {
        let list: Vec<String> = errors
            .iter()
            .map(|e| format!("  incomingAuth.authz.{e}"))
            .collect();
        anyhow::anyhow!("authorization policies do not load:\n{}", list.join("\n"))
    })
}

/// `vmcp validate`'s policy checks: parse errors with positions and policies that never match.
/// Prints them; true when there are none.
pub(crate) fn validate(config: &Config) -> bool {
    let Some(settings) = settings(config) else {
        return true;
    };
    let mut ok = true;
    if let Err(errors) = CedarAuthorizer::new(settings.clone()) {
        for e in errors {
            eprintln!("  incomingAuth.authz.{e}");
        }
        ok = false;
    }
    for f in vmcp_policy::lint(&settings) {
        eprintln!("  incomingAuth.authz.policies[{}]: {}", f.policy, f.message);
        ok = false;
    }
    ok
}

fn read_json(path: &std::path::Path, what: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{what} {} is not JSON: {e}", path.display()))
}

/// `vmcp authz check`.
pub(crate) fn check(args: &CheckArgs) -> ExitCode {
    match run_check(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_check(args: &CheckArgs) -> Result<bool, String> {
    let config = vmcp_config::load_file(&args.config)
        .map_err(|e| format!("invalid config {}:\n{e}", args.config.display()))?;
    let authorizer = authorizer(&config)
        .map_err(|e| e.to_string())?
        .ok_or("the config has no Cedar policies (incomingAuth.authz.type: cedar)")?;
    let claims = match read_json(&args.claims, "claims")? {
        Value::Object(m) => m,
        _ => return Err("claims must be a JSON object".into()),
    };
    let identity = identity(claims);
    let call_args = args
        .args
        .as_deref()
        .map(|p| read_json(p, "arguments"))
        .transpose()?;
    let annotations = args
        .annotations
        .as_deref()
        .map(|a| serde_json::from_str::<Value>(a).map_err(|e| format!("--annotations: {e}")))
        .transpose()?;
    let definition = annotations.map(|a| serde_json::json!({"annotations": a}));
    let (kind, name) = match (&args.tool, &args.prompt, &args.resource) {
        (Some(t), _, _) => (Kind::Tool, t.as_str()),
        (_, Some(p), _) => (Kind::Prompt, p.as_str()),
        (_, _, Some(r)) => (Kind::Resource, r.as_str()),
        _ => return Err("name what to check: --tool, --prompt or --resource".into()),
    };
    let target = Target {
        kind,
        name,
        backend: args.backend.as_deref(),
        definition: definition.as_ref(),
    };
    let action = match kind {
        Kind::Tool => Action::CallTool(target, call_args.as_ref()),
        Kind::Prompt => Action::GetPrompt(target, call_args.as_ref()),
        Kind::Resource => Action::ReadResource(target),
    };
    let decision = authorizer.decide(&identity, action);
    let listed = authorizer.admit(&identity, Action::List(target));
    println!(
        "decision: {}",
        if decision.allowed { "allow" } else { "deny" }
    );
    if decision.policies.is_empty() {
        println!(
            "determined by: {}",
            if decision.allowed {
                "(nothing)"
            } else {
                "no permit applies (default deny)"
            }
        );
    }
    let policies = settings(&config).map(|s| s.policies).unwrap_or_default();
    for p in &decision.policies {
        let text = p
            .strip_prefix("policies[")
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| policies.get(i))
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        println!("determined by: incomingAuth.authz.{p}: {text}");
    }
    for e in &decision.errors {
        println!("error (denies): {e}");
    }
    println!("listed: {}", if listed { "yes" } else { "no" });
    Ok(decision.allowed)
}

/// The identity a set of claims describes.
fn identity(claims: Map<String, Value>) -> Identity {
    Identity {
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
    }
}
