//! Static checks of policies against vmcp's entity model, for `vmcp validate`: policies that can
//! never match, because they name an action vmcp never evaluates (ToolHive's own examples use
//! `Action::"tools/call"`, which never matches), an entity type no request carries, or an
//! attribute no entity has (reading one is an evaluation error, which denies).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::PolicySettings;

/// A problem in one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The policy's index in `policies`.
    pub policy: usize,
    /// What is wrong, and why it matters.
    pub message: String,
}

const ACTIONS: [&str; 3] = ["call_tool", "get_prompt", "read_resource"];
const RESOURCE_ATTRS: [&str; 8] = [
    "name",
    "operation",
    "feature",
    "uri",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// Findings for every parsable policy of `settings` (parse errors are reported by loading).
pub fn lint(settings: &PolicySettings) -> Vec<Finding> {
    let mut declared: BTreeSet<String> = BTreeSet::new();
    if let Some(Value::Array(entities)) = settings
        .entities_json
        .as_deref()
        .and_then(|j| serde_json::from_str(j).ok())
    {
        for e in &entities {
            if let Some(t) = e.pointer("/uid/type").and_then(Value::as_str) {
                declared.insert(t.to_string());
            }
        }
    }
    let group = settings.groups.group_type.as_str();
    let principals: BTreeSet<&str> = ["Client", group]
        .into_iter()
        .chain(declared.iter().map(String::as_str))
        .collect();
    let resources: BTreeSet<&str> = ["Tool", "Prompt", "Resource", "MCP", "Backend"]
        .into_iter()
        .chain(declared.iter().map(String::as_str))
        .collect();
    let mut out = Vec::new();
    for (i, text) in settings.policies.iter().enumerate() {
        let Some(json) = cedar_policy::Policy::parse(None, text)
            .ok()
            .and_then(|p| p.to_json().ok())
        else {
            continue;
        };
        let mut say = |message: String| out.push(Finding { policy: i, message });
        check_scope(&json["action"], &mut |t, id| {
            if t == "Action" && !ACTIONS.contains(&id) {
                Some(format!(
                    "Action::{id:?} is not an action vmcp evaluates ({}): this policy never matches",
                    ACTIONS.map(|a| format!("Action::{a:?}")).join(", ")
                ))
            } else {
                None
            }
        })
        .into_iter()
        .for_each(&mut say);
        check_scope(&json["principal"], &mut |t, _| {
            (!principals.contains(t)).then(|| {
                format!(
                    "principal scope names type {t}, which no request carries (principals are Client, their groups are {group}): this policy never matches"
                )
            })
        })
        .into_iter()
        .for_each(&mut say);
        check_scope(&json["resource"], &mut |t, _| {
            (!resources.contains(t)).then(|| {
                format!(
                    "resource scope names type {t}, which no request carries (Tool, Prompt, Resource, MCP, Backend): this policy never matches"
                )
            })
        })
        .into_iter()
        .for_each(&mut say);
        walk(&json["conditions"], &mut |node| {
            if let Some(access) = node.get(".") {
                let var = access.pointer("/left/Var").and_then(Value::as_str);
                let attr = access.get("attr").and_then(Value::as_str).unwrap_or("");
                match var {
                    Some("principal") if !attr.starts_with("claim_") => say(format!(
                        "principal.{attr} is not an attribute vmcp sets (claims are principal.claim_<name>): reading it is an error, which denies"
                    )),
                    Some("resource")
                        if !attr.starts_with("arg_") && !RESOURCE_ATTRS.contains(&attr) =>
                    {
                        say(format!(
                            "resource.{attr} is not an attribute vmcp sets ({}, arg_*): reading it is an error, which denies",
                            RESOURCE_ATTRS.join(", ")
                        ));
                    }
                    _ => {}
                }
            }
            if let Some(e) = node.pointer("/Value/__entity")
                && e.get("type").and_then(Value::as_str) == Some("Action")
                && let Some(id) = e.get("id").and_then(Value::as_str)
                && !ACTIONS.contains(&id)
            {
                say(format!(
                    "Action::{id:?} is not an action vmcp evaluates: a comparison with it is never true"
                ));
            }
        });
    }
    out
}

/// Applies `check(type, id)` to each entity a scope constraint names.
fn check_scope(scope: &Value, check: &mut dyn FnMut(&str, &str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut one = |e: &Value| {
        if let (Some(t), Some(id)) = (
            e.get("type").and_then(Value::as_str),
            e.get("id").and_then(Value::as_str),
        ) && let Some(m) = check(t, id)
        {
            out.push(m);
        }
    };
    if let Some(e) = scope.get("entity") {
        one(e);
    }
    if let Some(Value::Array(list)) = scope.get("entities") {
        list.iter().for_each(&mut one);
    }
    if let Some(t) = scope.get("entity_type").and_then(Value::as_str)
        && let Some(m) = check(t, "")
    {
        out.push(m);
    }
    out
}

fn walk(v: &Value, f: &mut impl FnMut(&Value)) {
    f(v);
    match v {
        Value::Object(m) => m.values().for_each(|c| walk(c, f)),
        Value::Array(a) => a.iter().for_each(|c| walk(c, f)),
        _ => {}
    }
}
