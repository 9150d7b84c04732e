//! Rules for `rateLimiting`, after ToolHive's limiter factory: `maxTokens` at least 1 (and an
//! int32, as theirs is), a positive `refillPeriod`, a name on every `tools[]` entry. Ours: a tool
//! listed twice is an error (which of the two would apply?), and so is an entry with no bucket.
//!
//! Tool names are not checked against backends: advertised names exist only once backends are
//! discovered at run time (prefixes, overrides, composites), so an unknown name here cannot be
//! told from a tool that a backend will bring.

use std::collections::BTreeMap;

use crate::error::{Issues, KeyPath};
use crate::schema::{BucketConfig, RateLimitConfig};

pub(super) fn check(r: &RateLimitConfig, path: &KeyPath, issues: &Issues) {
    bucket(r.shared.as_ref(), &path.key("shared"), issues);
    bucket(r.per_user.as_ref(), &path.key("perUser"), issues);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in r.tools.iter().enumerate() {
        let tpath = path.key("tools").index(i);
        if t.name.trim().is_empty() {
            issues.push_new(&tpath.key("name"), "must not be empty");
        } else if let Some(first) = seen.insert(t.name.as_str(), i) {
            issues.push_new(
                &tpath.key("name"),
                format!(
                    "{:?} is already limited by rateLimiting.tools[{first}]; merge the two entries",
                    t.name
                ),
            );
        }
        if t.shared.is_none() && t.per_user.is_none() {
            issues.push_new(&tpath, "needs shared or perUser (or both)");
        }
        bucket(t.shared.as_ref(), &tpath.key("shared"), issues);
        bucket(t.per_user.as_ref(), &tpath.key("perUser"), issues);
    }
}

fn bucket(b: Option<&BucketConfig>, path: &KeyPath, issues: &Issues) {
    let Some(b) = b else { return };
    if b.max_tokens == 0 {
        issues.push_new(
            &path.key("maxTokens"),
            "must be at least 1 (the bucket size: how many calls may burst)",
        );
    } else if i32::try_from(b.max_tokens).is_err() {
        issues.push_new(
            &path.key("maxTokens"),
            format!("must be at most {} (an int32, as in ToolHive)", i32::MAX),
        );
    }
    if b.refill_period.is_zero() {
        issues.push_new(
            &path.key("refillPeriod"),
            "must be positive (the time to refill the bucket from empty)",
        );
    }
}
