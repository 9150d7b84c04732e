//! Policy slicing: Cedar evaluates every policy of a set on every request (about 1.6 us each), so
//! a request is evaluated only against the policies whose scope can match it. A policy is left
//! out only when its principal, action or resource scope (`==`, `in`, `is`) provably excludes the
//! request, ancestors included (from the request's own parents and `entitiesJson`); conditions
//! are never looked at, so a policy kept may still not apply. The decision is the same as with
//! the whole set: a policy whose scope excludes the request can neither permit nor forbid it.

use std::collections::HashSet;

use cedar_policy::{EntityId, EntityTypeName, EntityUid};
use serde_json::Value;

/// One scope constraint of a policy.
#[derive(Debug, Clone)]
enum Constraint {
    /// Anything (or a form we do not read: kept).
    Any,
    /// `== E`
    Eq(EntityUid),
    /// `in E` / `in [E, ...]` (any of)
    In(Vec<EntityUid>),
    /// `is T`, optionally `in E`
    Is(String, Option<EntityUid>),
}

/// The three scope constraints of a policy.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    principal: Constraint,
    action: Constraint,
    resource: Constraint,
}

/// A request's entities with their ancestors (itself included).
pub(crate) struct Subject<'a> {
    pub(crate) uid: &'a EntityUid,
    pub(crate) ancestors: &'a HashSet<EntityUid>,
}

fn uid(v: &Value) -> Option<EntityUid> {
    let t: EntityTypeName = v.get("type")?.as_str()?.parse().ok()?;
    Some(EntityUid::from_type_name_and_id(
        t,
        EntityId::new(v.get("id")?.as_str()?),
    ))
}

fn constraint(v: &Value) -> Constraint {
    let op = v.get("op").and_then(Value::as_str).unwrap_or("");
    let parsed = match op {
        "==" => v.get("entity").and_then(uid).map(Constraint::Eq),
        "in" => match (v.get("entity"), v.get("entities")) {
            (Some(e), _) => uid(e).map(|u| Constraint::In(vec![u])),
            (None, Some(Value::Array(list))) => list
                .iter()
                .map(uid)
                .collect::<Option<Vec<_>>>()
                .map(Constraint::In),
            _ => None,
        },
        "is" => v.get("entity_type").and_then(Value::as_str).map(|t| {
            Constraint::Is(
                t.to_string(),
                v.get("in").and_then(|i| i.get("entity")).and_then(uid),
            )
        }),
        _ => None,
    };
    parsed.unwrap_or(Constraint::Any)
}

impl Scope {
    /// The scope of a policy in its JSON form.
    pub(crate) fn of(policy: &Value) -> Self {
        Self {
            principal: constraint(&policy["principal"]),
            action: constraint(&policy["action"]),
            resource: constraint(&policy["resource"]),
        }
    }

    /// Whether the policy can apply to a request on these entities.
    pub(crate) fn admits(
        &self,
        principal: &Subject<'_>,
        action: &Subject<'_>,
        resource: &Subject<'_>,
    ) -> bool {
        fits(&self.principal, principal)
            && fits(&self.action, action)
            && fits(&self.resource, resource)
    }
}

fn fits(c: &Constraint, s: &Subject<'_>) -> bool {
    match c {
        Constraint::Any => true,
        Constraint::Eq(e) => e == s.uid,
        Constraint::In(any) => any.iter().any(|e| s.ancestors.contains(e)),
        Constraint::Is(t, within) => {
            s.uid.type_name().to_string() == *t
                && within.as_ref().is_none_or(|e| s.ancestors.contains(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(policy: &str) -> Scope {
        let p = cedar_policy::Policy::parse(None, policy).unwrap();
        Scope::of(&p.to_json().unwrap())
    }

    fn u(t: &str, id: &str) -> EntityUid {
        EntityUid::from_type_name_and_id(t.parse().unwrap(), EntityId::new(id))
    }

    fn with(uid: &EntityUid, more: &[EntityUid]) -> HashSet<EntityUid> {
        more.iter().cloned().chain([uid.clone()]).collect()
    }

    #[test]
    fn scopes_exclude_only_what_they_provably_exclude() {
        let alice = u("Client", "alice");
        let eng = u("THVGroup", "eng");
        let call = u("Action", "call_tool");
        let tool = u("Tool", "b_t");
        let backend = u("Backend", "b");
        let (pa, aa, ra) = (
            with(&alice, std::slice::from_ref(&eng)),
            with(&call, &[]),
            with(&tool, &[backend]),
        );
        let (p, a, r) = (
            Subject {
                uid: &alice,
                ancestors: &pa,
            },
            Subject {
                uid: &call,
                ancestors: &aa,
            },
            Subject {
                uid: &tool,
                ancestors: &ra,
            },
        );
        for (policy, applies) in [
            ("permit(principal, action, resource);", true),
            (
                r#"permit(principal == Client::"bob", action, resource);"#,
                false,
            ),
            (
                r#"permit(principal in THVGroup::"eng", action, resource);"#,
                true,
            ),
            (
                r#"permit(principal in THVGroup::"ops", action, resource);"#,
                false,
            ),
            (
                r#"permit(principal, action == Action::"get_prompt", resource);"#,
                false,
            ),
            (
                r#"permit(principal, action in [Action::"get_prompt", Action::"call_tool"], resource);"#,
                true,
            ),
            (
                r#"permit(principal, action, resource == Tool::"b_t");"#,
                true,
            ),
            (
                r#"permit(principal, action, resource == Tool::"other");"#,
                false,
            ),
            (
                r#"permit(principal, action, resource in Backend::"b");"#,
                true,
            ),
            (
                r#"permit(principal, action, resource in Backend::"c");"#,
                false,
            ),
            (r#"permit(principal, action, resource is Tool);"#, true),
            (r#"permit(principal, action, resource is Prompt);"#, false),
            (
                r#"permit(principal is Client in THVGroup::"eng", action, resource);"#,
                true,
            ),
            // Conditions are not read: kept.
            (
                r#"permit(principal, action, resource) when { false };"#,
                true,
            ),
        ] {
            assert_eq!(scope(policy).admits(&p, &a, &r), applies, "{policy}");
        }
    }
}
