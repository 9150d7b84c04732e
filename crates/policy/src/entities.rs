//! ToolHive's Cedar entity model, built per decision: the principal `Client::"<sub>"` with its
//! claims as `claim_*` attributes and its groups and roles as parents, the resource (`Tool::`,
//! `Prompt::`, `Resource::`) with its attributes and the parents `MCP::"<config name>"` and (ours)
//! `Backend::"<backend>"`, the action, and the context (claims and arguments).
//!
//! Values map as ToolHive maps them: strings, booleans, arrays (sets) and objects (records) as
//! they are; JSON numbers become Cedar decimals (four fractional digits; numbers a decimal cannot
//! hold are left out); nesting deeper than ten levels is left out.

use std::collections::{HashMap, HashSet};

use cedar_policy::{Entity, EntityId, EntityTypeName, EntityUid, RestrictedExpression};
use serde_json::{Map, Value};
use vmcp_core::{Identity, Kind, Target};

/// Deepest nesting of a claim or argument value that is kept.
const MAX_DEPTH: usize = 10;

/// How groups and roles are found in claims.
#[derive(Debug, Clone)]
pub struct GroupRules {
    /// `groupClaimName`: the claim holding groups (dot-paths allowed).
    pub group_claim: Option<String>,
    /// `roleClaimName`: a claim whose values are added to the groups.
    pub role_claim: Option<String>,
    /// `groupEntityType`: the entity type of group parents (default `THVGroup`).
    pub group_type: String,
}

/// The entity types of the model, parsed once (parsing a type name showed in every decision).
fn known_type(kind: &str) -> Option<EntityTypeName> {
    use std::sync::OnceLock;
    const KNOWN: [&str; 7] = [
        "Client", "Action", "Tool", "Prompt", "Resource", "MCP", "Backend",
    ];
    static PARSED: OnceLock<Vec<EntityTypeName>> = OnceLock::new();
    let i = KNOWN.iter().position(|k| *k == kind)?;
    let parsed = PARSED.get_or_init(|| KNOWN.iter().filter_map(|k| k.parse().ok()).collect());
    parsed.get(i).cloned()
}

pub(crate) fn uid(kind: &str, id: &str) -> Option<EntityUid> {
    let name: EntityTypeName = match known_type(kind) {
        Some(n) => n,
        None => kind.parse().ok()?,
    };
    Some(EntityUid::from_type_name_and_id(name, EntityId::new(id)))
}

/// A JSON value as a Cedar value; None when Cedar cannot hold it (null, a number out of the
/// decimal range, too deep).
pub(crate) fn value(v: &Value, depth: usize) -> Option<RestrictedExpression> {
    if depth > MAX_DEPTH {
        return None;
    }
    Some(match v {
        Value::String(s) => RestrictedExpression::new_string(s.clone()),
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::Number(n) => RestrictedExpression::new_decimal(decimal(n.as_f64()?)?),
        Value::Array(items) => {
            RestrictedExpression::new_set(items.iter().filter_map(|i| value(i, depth + 1)))
        }
        Value::Object(fields) => RestrictedExpression::new_record(
            fields
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), value(v, depth + 1)?))),
        )
        .ok()?,
        Value::Null => return None,
    })
}

/// A number as a Cedar decimal literal (four fractional digits), if it fits.
fn decimal(n: f64) -> Option<String> {
    // Cedar decimals are i64 ten-thousandths.
    (n.is_finite() && n.abs() < 922_337_203_685_477.0).then(|| format!("{n:.4}"))
}

/// `claim_<name>` for every claim Cedar can hold.
pub(crate) fn claims(identity: &Identity) -> Vec<(String, RestrictedExpression)> {
    identity
        .claims
        .iter()
        .filter_map(|(k, v)| Some((format!("claim_{k}"), value(v, 1)?)))
        .collect()
}

/// `arg_<name>` for every scalar argument; `arg_<name>_present = true` for the others.
pub(crate) fn args(arguments: Option<&Value>) -> Vec<(String, RestrictedExpression)> {
    let Some(Value::Object(args)) = arguments else {
        return Vec::new();
    };
    args.iter()
        .filter_map(|(k, v)| match v {
            Value::String(_) | Value::Bool(_) | Value::Number(_) => {
                Some((format!("arg_{k}"), value(v, 1)?))
            }
            _ => Some((
                format!("arg_{k}_present"),
                RestrictedExpression::new_bool(true),
            )),
        })
        .collect()
}

/// A claim by exact name, else by dot-path (`realm_access.roles`).
fn claim<'v>(claims: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    claims.get(name).or_else(|| {
        let mut parts = name.split('.');
        let mut v = claims.get(parts.next()?)?;
        for p in parts {
            v = v.get(p)?;
        }
        Some(v)
    })
}

/// The principal's groups: `groupClaimName` (else the first of `groups`, `roles`,
/// `cognito:groups`), then `roleClaimName`'s values; arrays of strings only, de-duplicated.
pub(crate) fn groups(identity: &Identity, rules: &GroupRules) -> Vec<String> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        match v {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    let c = &identity.claims;
    let primary = rules
        .group_claim
        .as_deref()
        .and_then(|name| claim(c, name))
        .or_else(|| {
            ["groups", "roles", "cognito:groups"]
                .iter()
                .find_map(|n| c.get(*n))
        });
    let mut out = strings(primary);
    if let Some(name) = &rules.role_claim {
        out.extend(strings(claim(c, name)));
    }
    let mut seen = HashSet::new();
    out.retain(|g| seen.insert(g.clone()));
    out
}

/// The principal id: the subject, or `anonymous`.
pub(crate) fn principal_id(identity: &Identity) -> &str {
    identity.subject.as_deref().unwrap_or("anonymous")
}

/// The principal entity and its direct parents (groups and roles).
pub(crate) fn principal(
    identity: &Identity,
    rules: &GroupRules,
) -> Option<(Entity, Vec<EntityUid>)> {
    let me = uid("Client", principal_id(identity))?;
    let parents: Vec<EntityUid> = groups(identity, rules)
        .iter()
        .filter_map(|g| uid(&rules.group_type, g))
        .collect();
    let entity = Entity::new(
        me,
        claims(identity).into_iter().collect(),
        parents.iter().cloned().collect(),
    )
    .ok()?;
    Some((entity, parents))
}

/// The action of a call, read or get.
pub(crate) fn action_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => "call_tool",
        Kind::Prompt => "get_prompt",
        Kind::Resource => "read_resource",
    }
}

pub(crate) fn action(kind: Kind) -> Option<Entity> {
    let name = action_name(kind);
    let attrs = HashMap::from([(
        "operation".to_string(),
        RestrictedExpression::new_string(name.to_string()),
    )]);
    Entity::new(uid("Action", name)?, attrs, HashSet::new()).ok()
}

fn resource_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => "Tool",
        Kind::Prompt => "Prompt",
        Kind::Resource => "Resource",
    }
}

pub(crate) fn resource_uid(target: &Target<'_>) -> Option<EntityUid> {
    uid(resource_type(target.kind), target.name)
}

/// The resource's direct parents: `MCP::"<server>"` and `Backend::"<backend>"`.
pub(crate) fn resource_parents(target: &Target<'_>, server: &str) -> Vec<EntityUid> {
    let mut parents: Vec<EntityUid> = uid("MCP", server).into_iter().collect();
    if let Some(b) = target.backend.and_then(|b| uid("Backend", b)) {
        parents.push(b);
    }
    parents
}

/// The tool annotations a resource entity carries.
const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// The values of [`HINTS`] the target's advertised definition declares (as booleans).
pub(crate) fn hints(target: &Target<'_>) -> [Option<bool>; 4] {
    let annotations = target
        .definition
        .and_then(|d| d.get("annotations"))
        .and_then(Value::as_object);
    HINTS.map(|hint| {
        annotations
            .and_then(|a| a.get(hint))
            .and_then(Value::as_bool)
    })
}

/// The resource entity, with its arguments (tools and prompts) as attributes too.
pub(crate) fn resource(
    target: &Target<'_>,
    server: &str,
    arguments: &[(String, RestrictedExpression)],
) -> Option<Entity> {
    let s = |v: &str| RestrictedExpression::new_string(v.to_string());
    let (operation, feature) = match target.kind {
        Kind::Tool => ("call", "tool"),
        Kind::Prompt => ("get", "prompt"),
        Kind::Resource => ("read", "resource"),
    };
    let mut attrs: HashMap<String, RestrictedExpression> = HashMap::from([
        ("name".into(), s(target.name)),
        ("operation".into(), s(operation)),
        ("feature".into(), s(feature)),
    ]);
    if target.kind == Kind::Resource {
        attrs.insert("uri".into(), s(target.name));
    }
    // Tool annotations, only those the advertised tool declares (as booleans).
    for (name, value) in HINTS.iter().zip(hints(target)) {
        if let Some(b) = value {
            attrs.insert((*name).into(), RestrictedExpression::new_bool(b));
        }
    }
    for (k, v) in arguments {
        attrs.insert(k.clone(), v.clone());
    }
    let parents = resource_parents(target, server).into_iter().collect();
    Entity::new(resource_uid(target)?, attrs, parents).ok()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn who(claims: Value) -> Identity {
        Identity {
            subject: Some("alice".into()),
            claims: Arc::new(claims.as_object().unwrap().clone()),
            ..Identity::default()
        }
    }

    fn rules(group: Option<&str>, role: Option<&str>) -> GroupRules {
        GroupRules {
            group_claim: group.map(str::to_string),
            role_claim: role.map(str::to_string),
            group_type: "THVGroup".into(),
        }
    }

    #[test]
    fn groups_follow_toolhive_precedence_and_dot_paths() {
        let w = who(json!({"groups": ["eng", "eng"], "roles": ["dev"],
            "realm_access": {"roles": ["admin", 7]}, "team": "solo"}));
        assert_eq!(groups(&w, &rules(None, None)), ["eng"]);
        assert_eq!(
            groups(&w, &rules(Some("realm_access.roles"), None)),
            ["admin"]
        );
        assert_eq!(groups(&w, &rules(None, Some("roles"))), ["eng", "dev"]);
        // A string where an array is expected is not a group list.
        assert!(groups(&w, &rules(Some("team"), None)).is_empty());
        let only_roles = who(json!({"roles": ["viewer"]}));
        assert_eq!(groups(&only_roles, &rules(None, None)), ["viewer"]);
    }

    #[test]
    fn numbers_become_decimals_and_what_cedar_cannot_hold_is_left_out() {
        assert_eq!(decimal(5.0).as_deref(), Some("5.0000"));
        assert_eq!(decimal(1_764_000_000.0).as_deref(), Some("1764000000.0000"));
        assert_eq!(decimal(1e300), None);
        assert!(value(&json!(null), 1).is_none());
        let deep = (0..20).fold(json!("x"), |v, _| json!([v]));
        assert!(
            value(&deep, 1).is_some(),
            "cut, not dropped, past the depth"
        );
        let a = args(Some(
            &json!({"mode": "safe", "n": 3, "opts": {"a": 1}, "list": [1]}),
        ));
        let names: HashSet<_> = a.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            HashSet::from(["arg_mode", "arg_n", "arg_opts_present", "arg_list_present"])
        );
    }
}
