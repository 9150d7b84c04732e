//! Prompt naming, deliberately stricter than tools: a prompt's advertised name is an authorization
//! identity, so it must never depend on which other backends are present. Every prompt is prefixed,
//! except that under the priority strategy listed backends keep bare names (a bare collision among
//! them goes to the best rank). A composed name that several prompts claim while any claimant is
//! unlisted is ambiguous: all of them are dropped and the collision is logged at ERROR.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{
    discover::BackendCapabilities,
    policy::{AggregationPolicy, Strategy},
};

/// A prompt after naming.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResolvedPrompt {
    pub(crate) name: String,
    pub(crate) backend: String,
    pub(crate) original: String,
    pub(crate) prompt: Value,
}

struct Claim {
    backend: String,
    original: String,
    prompt: Value,
    rank: Option<usize>,
}

/// Names every prompt. `caps` must be sorted by backend; the result is sorted by name.
pub(crate) fn resolve_prompts(
    policy: &AggregationPolicy,
    caps: &[BackendCapabilities],
) -> Vec<ResolvedPrompt> {
    let listed = |b: &str| {
        if policy.strategy == Strategy::Priority {
            policy.rank(b)
        } else {
            None
        }
    };
    let mut by_name: BTreeMap<String, Vec<Claim>> = BTreeMap::new();
    for cap in caps {
        let rank = listed(&cap.backend);
        for prompt in &cap.prompts {
            let Some(original) = prompt.get("name").and_then(Value::as_str) else {
                tracing::warn!(backend = %cap.backend, "backend advertised a prompt without a name; skipping it");
                continue;
            };
            let name = match rank {
                Some(_) => original.to_string(),
                None => policy.prefixed(&cap.backend, original),
            };
            let claims = by_name.entry(name).or_default();
            if claims.iter().any(|c| c.backend == cap.backend) {
                tracing::warn!(backend = %cap.backend, prompt = original, "backend advertised a prompt twice; keeping the first");
                continue;
            }
            claims.push(Claim {
                backend: cap.backend.clone(),
                original: original.to_string(),
                prompt: prompt.clone(),
                rank,
            });
        }
    }
    let mut out = Vec::with_capacity(by_name.len());
    for (name, mut claims) in by_name {
        if claims.len() > 1 && claims.iter().any(|c| c.rank.is_none()) {
            let who: Vec<String> = claims
                .iter()
                .map(|c| format!("{}:{}", c.backend, c.original))
                .collect();
            tracing::error!(prompt = %name, dropped = ?who, "advertised prompt name is ambiguous between backends; dropping every colliding prompt (rename one to make it reachable)");
            continue;
        }
        claims.sort_by_key(|c| c.rank);
        let winner = claims.remove(0);
        for loser in &claims {
            tracing::warn!(prompt = %name, kept = %winner.backend, dropped = %loser.backend, "prompt name advertised by several priority-listed backends; keeping the highest priority");
        }
        let mut prompt = winner.prompt;
        if let Some(obj) = prompt.as_object_mut() {
            obj.insert("name".into(), Value::String(name.clone()));
        }
        out.push(ResolvedPrompt {
            name,
            backend: winner.backend,
            original: winner.original,
            prompt,
        });
    }
    out
}
