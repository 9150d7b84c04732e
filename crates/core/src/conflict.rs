//! Tool naming: overrides first, then the conflict strategy (prefix, priority or manual), so every
//! advertised tool name is unique and maps back to exactly one (backend, original name).
//!
//! Backends are processed in sorted order, so the outcome never depends on hash-map order.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use crate::{
    discover::BackendCapabilities,
    policy::{AggregationPolicy, Strategy},
};

/// A tool after naming.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResolvedTool {
    /// The name clients use.
    pub(crate) name: String,
    /// The backend that serves it.
    pub(crate) backend: String,
    /// The backend's own name for it.
    pub(crate) original: String,
    /// The tool as advertised (name rewritten, overrides applied).
    pub(crate) tool: Value,
    /// Whether it appears in tools/list (hidden tools stay routable).
    pub(crate) advertised: bool,
}

/// A tool after overrides, before conflict resolution.
struct Candidate {
    backend: String,
    original: String,
    name: String,
    tool: Value,
}

/// Names every backend tool. `caps` must be sorted by backend.
///
/// # Errors
/// Under the manual strategy, a description of every name still claimed by several backends.
pub(crate) fn resolve_tools(
    policy: &AggregationPolicy,
    caps: &[BackendCapabilities],
) -> Result<Vec<ResolvedTool>, String> {
    let candidates = apply_overrides(policy, caps);
    let named: Vec<(String, Candidate)> = match policy.strategy {
        Strategy::Prefix => candidates
            .into_iter()
            .map(|c| (policy.prefixed(&c.backend, &c.name), c))
            .collect(),
        Strategy::Priority => priority(policy, candidates),
        Strategy::Manual => manual(candidates)?,
    };
    let mut taken = HashSet::new();
    let mut out = Vec::with_capacity(named.len());
    for (name, mut c) in named {
        if !taken.insert(name.clone()) {
            tracing::warn!(tool = %name, backend = %c.backend, "tool name collides after conflict resolution; dropping the later one");
            continue;
        }
        if let Some(obj) = c.tool.as_object_mut() {
            obj.insert("name".into(), Value::String(name.clone()));
        }
        out.push(ResolvedTool {
            advertised: policy.advertises_tool(&c.backend, &c.original),
            name,
            backend: c.backend,
            original: c.original,
            tool: c.tool,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn apply_overrides(policy: &AggregationPolicy, caps: &[BackendCapabilities]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for cap in caps {
        let overrides = policy.workloads.get(&cap.backend).map(|w| &w.overrides);
        let mut seen = HashSet::new();
        for tool in &cap.tools {
            let Some(original) = tool.get("name").and_then(Value::as_str) else {
                tracing::warn!(backend = %cap.backend, "backend advertised a tool without a name; skipping it");
                continue;
            };
            if !seen.insert(original.to_string()) {
                tracing::warn!(backend = %cap.backend, tool = original, "backend advertised a tool twice; keeping the first");
                continue;
            }
            let mut tool = tool.clone();
            let mut name = original.to_string();
            if let Some(o) = overrides.and_then(|o| o.get(original)) {
                if let Some(n) = o.name.as_ref().filter(|n| !n.is_empty()) {
                    name = n.clone();
                }
                if let Some(obj) = tool.as_object_mut() {
                    if let Some(d) = o.description.as_ref().filter(|d| !d.is_empty()) {
                        obj.insert("description".into(), Value::String(d.clone()));
                    }
                    if !o.annotations.is_empty() {
                        let ann = obj.entry("annotations").or_insert_with(|| json!({}));
                        if !ann.is_object() {
                            *ann = json!({});
                        }
                        if let Some(ann) = ann.as_object_mut() {
                            for (k, v) in &o.annotations {
                                ann.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
            }
            out.push(Candidate {
                backend: cap.backend.clone(),
                original: original.to_string(),
                name,
                tool,
            });
        }
    }
    out
}

fn by_name(candidates: Vec<Candidate>) -> BTreeMap<String, Vec<Candidate>> {
    let mut map: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for c in candidates {
        map.entry(c.name.clone()).or_default().push(c);
    }
    map
}

/// Priority: a unique name stays bare; a shared name goes to the best-ranked listed backend and the
/// others are dropped; a name shared only by unlisted backends is prefixed for each.
fn priority(policy: &AggregationPolicy, candidates: Vec<Candidate>) -> Vec<(String, Candidate)> {
    let mut out = Vec::new();
    for (name, mut group) in by_name(candidates) {
        if group.len() == 1 {
            out.extend(group.pop().map(|c| (name, c)));
            continue;
        }
        let winner = group
            .iter()
            .enumerate()
            .filter_map(|(i, c)| policy.rank(&c.backend).map(|r| (r, i)))
            .min()
            .map(|(_, i)| i);
        match winner {
            Some(w) => {
                let c = group.swap_remove(w);
                for loser in &group {
                    tracing::warn!(tool = %name, backend = %loser.backend, winner = %c.backend, "tool dropped: a higher-priority backend has the same name");
                }
                out.push((name, c));
            }
            None => {
                for c in group {
                    out.push((policy.prefixed(&c.backend, &c.name), c));
                }
            }
        }
    }
    out
}

/// Manual: names stay as the overrides left them; any name still shared is a configuration error.
fn manual(candidates: Vec<Candidate>) -> Result<Vec<(String, Candidate)>, String> {
    let mut out = Vec::new();
    let mut conflicts = Vec::new();
    for (name, group) in by_name(candidates) {
        if group.len() > 1 {
            let backends: Vec<&str> = group.iter().map(|c| c.backend.as_str()).collect();
            conflicts.push(format!("{name} [{}]", backends.join(", ")));
            continue;
        }
        out.extend(group.into_iter().map(|c| (name.clone(), c)));
    }
    if conflicts.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "unresolved tool name conflicts under conflictResolution: manual: {}; add aggregation.tools[].overrides to rename them",
            conflicts.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests;
