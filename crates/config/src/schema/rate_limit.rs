//! `rateLimiting`: ToolHive's keys (`shared`, `perUser`, `tools[]`), each a token bucket of
//! `maxTokens` refilled over `refillPeriod`.
//!
//! `refillPeriod` is a Kubernetes `metav1.Duration` in ToolHive: its YAML loader only takes the
//! nested `{duration: 1m0s}` form, while people write `1m`. Both are read here.

use std::time::Duration;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Fields, as_duration, seq};

/// One token bucket: `maxTokens` (the burst) refilled from empty over `refillPeriod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketConfig {
    /// `maxTokens` (required, at least 1).
    pub max_tokens: u32,
    /// `refillPeriod` (required, positive): the time to refill from 0 to `maxTokens`.
    pub refill_period: Duration,
}

/// One `rateLimiting.tools[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRateLimit {
    /// `name`: the advertised tool name (after prefixing and overrides), or a composite's name.
    pub name: String,
    /// `shared`: one bucket for every caller of this tool.
    pub shared: Option<BucketConfig>,
    /// `perUser`: one bucket per caller of this tool.
    pub per_user: Option<BucketConfig>,
}

/// `rateLimiting`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimitConfig {
    /// `shared`: one bucket for the whole gateway.
    pub shared: Option<BucketConfig>,
    /// `perUser`: one bucket per caller (anonymous callers share one).
    pub per_user: Option<BucketConfig>,
    /// `tools[]`: buckets for single tools, on top of the global ones.
    pub tools: Vec<ToolRateLimit>,
    /// `failClosed` (vmcp's own key, default false): when the shared bucket store (Redis) cannot
    /// answer, reject the request instead of letting it through as ToolHive does.
    pub fail_closed: bool,
}

pub(crate) fn decode_rate_limiting(v: &Value, path: &KeyPath, issues: &Issues) -> RateLimitConfig {
    let mut f = Fields::open(v, path, issues);
    let cfg = RateLimitConfig {
        shared: bucket(&mut f, "shared", issues),
        per_user: bucket(&mut f, "perUser", issues),
        tools: f
            .value("tools")
            .map(|(v, p)| {
                seq(v, &p, issues)
                    .map(|(item, ip)| {
                        let mut t = Fields::open(item, &ip, issues);
                        let name = t.string("name").unwrap_or_else(|| {
                            issues.push_new(&ip.key("name"), "is required");
                            String::new()
                        });
                        let tool = ToolRateLimit {
                            name,
                            shared: bucket(&mut t, "shared", issues),
                            per_user: bucket(&mut t, "perUser", issues),
                        };
                        t.finish();
                        tool
                    })
                    .collect()
            })
            .unwrap_or_default(),
        fail_closed: f.bool("failClosed").unwrap_or(false),
    };
    f.finish();
    cfg
}

fn bucket(f: &mut Fields<'_>, key: &'static str, issues: &Issues) -> Option<BucketConfig> {
    let (v, p) = f.value(key)?;
    let mut b = Fields::open(v, &p, issues);
    // A missing value is reported here; the 0 left in its place is then not reported again
    // (one problem per key path).
    let max_tokens = b.uint::<u32>("maxTokens").unwrap_or_else(|| {
        issues.push_new(
            &p.key("maxTokens"),
            "is required (the bucket size, at least 1)",
        );
        0
    });
    let refill_period = refill_period(&mut b, issues).unwrap_or_else(|| {
        issues.push_new(
            &p.key("refillPeriod"),
            "is required (e.g. 1m, or {duration: 1m0s})",
        );
        Duration::ZERO
    });
    b.finish();
    Some(BucketConfig {
        max_tokens,
        refill_period,
    })
}

/// `refillPeriod: 1m` or `refillPeriod: {duration: 1m0s}`; `None` only when absent (a bad
/// value is reported here and read as zero, which validation then leaves alone).
fn refill_period(b: &mut Fields<'_>, issues: &Issues) -> Option<Duration> {
    let (v, p) = b.value("refillPeriod")?;
    if matches!(v, Value::Mapping(_)) {
        let mut nested = Fields::open(v, &p, issues);
        let d = nested.duration("duration");
        if d.is_none() && !issues.has_at(&p) {
            issues.push_new(&p.key("duration"), "is required (e.g. 1m0s)");
        }
        nested.finish();
        return Some(d.unwrap_or(Duration::ZERO));
    }
    as_duration(v, &p, issues).or(Some(Duration::ZERO))
}
