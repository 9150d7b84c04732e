//! Lists and calls agree: an item is listed exactly when some call to it can be admitted.
//! ToolHive decides a list item without arguments, so a permit that depends on an argument hides
//! the tool and its call then fails as "not found". Here a list decision tries a set of argument
//! witnesses and admits the item when any of them is admitted.
//!
//! The witnesses come from the policies themselves: every `arg_*` attribute they read, and every
//! literal they compare it with. For each such argument the candidates are: absent, each literal,
//! and one value equal to none of them (plus literal +/- 1 for numbers compared by order). For
//! policies that test arguments by presence, equality, membership and order, the outcome of a
//! request depends only on which candidate class each argument falls in, so trying one value per
//! class is exact: some witness is admitted iff some call is. (Patterns with `like` are tried with
//! their literal text; a policy matching a pattern only by a wildcard-dependent string could be
//! missed.) The combinations are capped at [`MAX_WITNESSES`]; past that, listing errs on showing
//! the item (the call is still decided exactly).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// Most argument combinations tried for one list decision.
pub(crate) const MAX_WITNESSES: usize = 256;

/// A value no policy compares an argument with (one representative of "anything else").
const OTHER: &str = "\u{1}vmcp-witness-other";

/// Which parts of the request a policy reads, so a request carries only what some policy can
/// read (turning claims and arguments into Cedar values costs more than a decision).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Reads {
    /// `context.claim_*` (or the whole context).
    pub(crate) context_claims: bool,
    /// `context.arg_*` or `resource.arg_*` (or the whole context).
    pub(crate) args: bool,
}

impl Reads {
    /// What the policy (its JSON form) reads.
    pub(crate) fn of(policy: &Value) -> Self {
        let mut r = Reads::default();
        walk(policy, &mut |node| {
            for op in [".", "has"] {
                if let Some(access) = node.get(op) {
                    let var = access.pointer("/left/Var").and_then(Value::as_str);
                    let attr = access.get("attr").and_then(Value::as_str).unwrap_or("");
                    match var {
                        Some("context") if attr.starts_with("claim_") => r.context_claims = true,
                        Some("context" | "resource") if attr.starts_with("arg_") => r.args = true,
                        _ => {}
                    }
                }
            }
            // `context` used whole (compared, `in`, ...): it may read anything in it.
            if let Value::Object(m) = node {
                for (k, v) in m {
                    if k != "." && k != "has" && v.pointer("/left/Var") == Some(&json!("context"))
                        || v.pointer("/right/Var") == Some(&json!("context"))
                    {
                        r.context_claims = true;
                        r.args = true;
                    }
                }
            }
        });
        r
    }

    pub(crate) fn or(self, other: Reads) -> Reads {
        Reads {
            context_claims: self.context_claims || other.context_claims,
            args: self.args || other.args,
        }
    }
}

/// What the policies read of the arguments.
#[derive(Debug, Default, Clone)]
pub(crate) struct ArgUse {
    /// Argument name (without `arg_`) -> candidate values it may take.
    candidates: BTreeMap<String, BTreeSet<String>>,
}

impl ArgUse {
    /// Whether any policy reads an argument.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }

    /// Collects what one policy (its JSON form) reads.
    pub(crate) fn learn(&mut self, policy: &Value) {
        walk(policy, &mut |node| self.visit(node));
    }

    fn arg_of(node: &Value) -> Option<String> {
        let access = node.get(".").or_else(|| node.get("has"))?;
        let var = access.get("left")?.get("Var")?.as_str()?;
        if var != "context" && var != "resource" {
            return None;
        }
        let attr = access.get("attr")?.as_str()?.strip_prefix("arg_")?;
        Some(attr.to_string())
    }

    fn visit(&mut self, node: &Value) {
        if let Some(arg) = Self::arg_of(node) {
            self.candidates.entry(arg).or_default();
            return;
        }
        let Value::Object(op) = node else { return };
        for (name, body) in op {
            match name.as_str() {
                "==" | "!=" => {
                    let (l, r) = (body.get("left"), body.get("right"));
                    for (side, other) in [(l, r), (r, l)] {
                        if let (Some(arg), Some(lit)) =
                            (side.and_then(Self::arg_of), other.and_then(literal))
                        {
                            self.add(arg, lit);
                        }
                    }
                }
                // [literals].contains(arg)
                "contains" => {
                    if let (Some(arg), Some(Value::Array(set))) = (
                        body.get("right").and_then(Self::arg_of),
                        body.get("left").and_then(|s| s.get("Set")),
                    ) {
                        for lit in set.iter().filter_map(literal) {
                            self.add(arg.clone(), lit);
                        }
                    }
                }
                "like" => {
                    if let (Some(arg), Some(Value::Array(pattern))) =
                        (body.get("left").and_then(Self::arg_of), body.get("pattern"))
                    {
                        let text: String = pattern
                            .iter()
                            .filter_map(|p| p.get("Literal").and_then(Value::as_str))
                            .collect();
                        self.add(arg, json!(text));
                    }
                }
                // decimal comparisons: greaterThan(arg, decimal("5.0")) and friends
                "lessThan" | "lessThanOrEqual" | "greaterThan" | "greaterThanOrEqual" => {
                    if let Value::Array(operands) = body {
                        let arg = operands.iter().find_map(Self::arg_of);
                        let lit = operands.iter().find_map(|o| {
                            o.get("decimal")?
                                .get(0)?
                                .get("Value")?
                                .as_str()?
                                .parse::<f64>()
                                .ok()
                        });
                        if let (Some(arg), Some(n)) = (arg, lit) {
                            for v in [n - 1.0, n, n + 1.0] {
                                self.add(arg.clone(), json!(v));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn add(&mut self, arg: String, literal: Value) {
        self.candidates
            .entry(arg)
            .or_default()
            .insert(literal.to_string());
    }

    /// The argument objects to try, at most [`MAX_WITNESSES`] (None: all absent first).
    pub(crate) fn witnesses(&self) -> Vec<Value> {
        let mut out = vec![Map::new()];
        for (arg, literals) in &self.candidates {
            // `arg_x_present` is how ToolHive exposes a non-scalar argument `x`.
            let (name, options): (String, Vec<Value>) = match arg.strip_suffix("_present") {
                Some(base) => (base.to_string(), vec![json!({})]),
                None => (
                    arg.clone(),
                    literals
                        .iter()
                        .filter_map(|l| serde_json::from_str(l).ok())
                        .chain([json!(OTHER)])
                        .collect(),
                ),
            };
            let mut next = Vec::new();
            for base in &out {
                next.push(base.clone());
                for option in &options {
                    let mut w = base.clone();
                    w.insert(name.clone(), option.clone());
                    next.push(w);
                    if next.len() >= MAX_WITNESSES {
                        break;
                    }
                }
                if next.len() >= MAX_WITNESSES {
                    break;
                }
            }
            out = next;
        }
        out.into_iter().map(Value::Object).collect()
    }
}

/// A literal operand, as the JSON value an argument would carry.
fn literal(node: &Value) -> Option<Value> {
    match node.get("Value")? {
        v @ (Value::String(_) | Value::Bool(_) | Value::Number(_)) => Some(v.clone()),
        _ => None,
    }
}

fn walk(v: &Value, f: &mut impl FnMut(&Value)) {
    f(v);
    match v {
        Value::Object(m) => m.values().for_each(|c| walk(c, f)),
        Value::Array(a) => a.iter().for_each(|c| walk(c, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(policy: &str) -> ArgUse {
        let p = cedar_policy::Policy::parse(None, policy).unwrap();
        let mut u = ArgUse::default();
        u.learn(&p.to_json().unwrap());
        u
    }

    #[test]
    fn finds_the_arguments_and_literals_policies_read() {
        let u = uses(
            r#"permit(principal, action, resource) when { context has arg_mode && context.arg_mode == "safe" && resource.arg_n != 3 };"#,
        );
        let w = u.witnesses();
        assert!(w.contains(&json!({})));
        assert!(w.contains(&json!({"mode": "safe"})));
        assert!(w.iter().any(|x| x["mode"] == OTHER));
        assert!(w.iter().any(|x| x["n"] == 3));
        assert!(uses("permit(principal, action, resource);").is_empty());
    }

    #[test]
    fn sets_patterns_decimals_and_presence() {
        let u = uses(
            r#"permit(principal, action, resource) when {
                ["a","b"].contains(context.arg_env) && context.arg_path like "/tmp/*" &&
                context.arg_size.greaterThan(decimal("5.0")) && context.arg_opts_present };"#,
        );
        let w = u.witnesses();
        for (k, v) in [
            ("env", json!("b")),
            ("path", json!("/tmp/")),
            ("size", json!(6.0)),
        ] {
            assert!(w.iter().any(|x| x[k] == v), "{k}: {w:?}");
        }
        assert!(w.iter().any(|x| x["opts"] == json!({})));
        assert!(w.len() <= MAX_WITNESSES);
    }
}
