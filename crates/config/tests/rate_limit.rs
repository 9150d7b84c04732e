//! `rateLimiting`: both `refillPeriod` forms load, bad buckets are reported at their key path,
//! and the section round-trips and is supported (no Redis needed).

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::Duration;

use common::{ONE_STDIO, error_at, errors, ok};
use vmcp_config::{BucketConfig, load_str, to_yaml};

#[test]
fn refill_period_loads_in_the_plain_and_the_nested_form() {
    let c = ok(&format!(
        "{ONE_STDIO}rateLimiting:
  shared: {{maxTokens: 100, refillPeriod: 1m}}
  perUser:
    maxTokens: 10
    refillPeriod: {{duration: 1m0s}}
  tools:
    - name: a_echo
      shared: {{maxTokens: 5, refillPeriod: {{duration: 30s}}}}
      perUser: {{maxTokens: 1, refillPeriod: 1.5s}}
    - name: flow
      perUser: {{maxTokens: 2, refillPeriod: 1h}}
"
    ));
    let r = c.rate_limiting.as_ref().unwrap();
    let b = |max_tokens, secs: f64| BucketConfig {
        max_tokens,
        refill_period: Duration::from_secs_f64(secs),
    };
    assert_eq!(r.shared, Some(b(100, 60.0)));
    assert_eq!(r.per_user, Some(b(10, 60.0)));
    assert_eq!(r.tools[0].name, "a_echo");
    assert_eq!(r.tools[0].shared, Some(b(5, 30.0)));
    assert_eq!(r.tools[0].per_user, Some(b(1, 1.5)));
    assert_eq!(r.tools[1].shared, None);
    assert_eq!(r.tools[1].per_user, Some(b(2, 3600.0)));
    assert!(c.unsupported().is_empty(), "{:?}", c.unsupported());
    // Written back in the nested form, and read back equal.
    let text = to_yaml(&c);
    assert!(text.contains("duration: 1m"), "{text}");
    assert_eq!(load_str(&text, &|_| None).unwrap(), c, "{text}");
}

#[test]
fn rate_limiting_needs_no_redis_session_storage() {
    let c = ok(&format!(
        "{ONE_STDIO}rateLimiting: {{perUser: {{maxTokens: 1, refillPeriod: 1s}}}}\n"
    ));
    assert!(c.session_storage.is_none());
    assert!(c.unsupported().is_empty(), "{:?}", c.unsupported());
}

#[test]
fn bad_buckets_are_reported_at_their_key_path() {
    let yaml = format!(
        "{ONE_STDIO}rateLimiting:
  shared: {{maxTokens: 0, refillPeriod: 1m}}
  perUser: {{maxTokens: 3, refillPeriod: 0s}}
  tools:
    - name: a_echo
      shared: {{maxTokens: -1, refillPeriod: -5s}}
      perUser: {{maxTokens: 3000000000, refillPeriod: {{duration: 0s}}}}
    - name: a_echo
      perUser: {{refillPeriod: 30}}
    - shared: {{maxTokens: 1, refillPeriod: {{}}}}
    - name: b
"
    );
    error_at(&yaml, "rateLimiting.shared.maxTokens", "at least 1");
    error_at(
        &yaml,
        "rateLimiting.perUser.refillPeriod",
        "must be positive",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[0].shared.maxTokens",
        "expected a non-negative integer",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[0].shared.refillPeriod",
        "must not be negative",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[0].perUser.maxTokens",
        "at most 2147483647",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[0].perUser.refillPeriod",
        "must be positive",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[1].name",
        "\"a_echo\" is already limited by rateLimiting.tools[0]",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[1].perUser.maxTokens",
        "is required",
    );
    error_at(
        &yaml,
        "rateLimiting.tools[1].perUser.refillPeriod",
        "missing unit",
    );
    error_at(&yaml, "rateLimiting.tools[2].name", "is required");
    error_at(
        &yaml,
        "rateLimiting.tools[2].shared.refillPeriod.duration",
        "is required",
    );
    error_at(&yaml, "rateLimiting.tools[3]", "needs shared or perUser");
    // One problem per key: a missing or malformed value is not also "must be positive".
    let all = errors(&yaml);
    for path in [
        "rateLimiting.tools[1].perUser.maxTokens",
        "rateLimiting.tools[1].perUser.refillPeriod",
        "rateLimiting.tools[0].shared.refillPeriod",
    ] {
        assert_eq!(all.iter().filter(|e| e.path == path).count(), 1, "{all:#?}");
    }
}

#[test]
fn unknown_keys_in_rate_limiting_are_errors_with_suggestions() {
    let yaml = format!(
        "{ONE_STDIO}rateLimiting:
  global: {{requestsPerMinute: 10}}
  perUser: {{maxToken: 3, refillPeriod: {{duration: 1m, extra: 1}}}}
"
    );
    error_at(&yaml, "rateLimiting.global", "unknown key");
    error_at(
        &yaml,
        "rateLimiting.perUser.maxToken",
        "did you mean \"maxTokens\"",
    );
    error_at(
        &yaml,
        "rateLimiting.perUser.refillPeriod.extra",
        "unknown key",
    );
    let e = error_at(&yaml, "rateLimiting.perUser.maxTokens", "is required");
    assert_eq!(e.line, Some(3 + ONE_STDIO.lines().count()));
}
