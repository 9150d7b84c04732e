//! Rules for `telemetry`: ToolHive's (an `endpoint` needs tracing or metrics on), a sampling rate
//! in `[0, 1]`, and valid header and variable names. Messages never quote a header's value.

use crate::error::{Issues, KeyPath};
use crate::schema::TelemetryConfig;

pub(super) fn check(t: &TelemetryConfig, path: &KeyPath, issues: &Issues) {
    if t.endpoint.is_some() && !t.tracing_enabled && !t.metrics_enabled {
        issues.push_new(
            &path.key("endpoint"),
            "is set but tracingEnabled and metricsEnabled are both false: enable one, or remove the endpoint",
        );
    }
    if t.endpoint.is_none() {
        for (key, on) in [
            ("tracingEnabled", t.tracing_enabled),
            (
                "metricsEnabled",
                t.metrics_enabled && !t.enable_prometheus_metrics_path,
            ),
        ] {
            if on {
                issues.push_new(
                    &path.key(key),
                    "is true but no endpoint is set: nothing would be exported (set telemetry.endpoint to an OTLP/HTTP collector)",
                );
            }
        }
    }
    if let Some(e) = &t.endpoint
        && e.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        issues.push_new(&path.key("endpoint"), "must be host:port or a URL");
    }
    if !(0.0..=1.0).contains(&t.sampling_rate) {
        issues.push_new(&path.key("samplingRate"), "must be between 0 and 1");
    }
    for name in t.headers.keys() {
        let is_tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(is_tchar) {
            issues.push_new(
                &path.key("headers"),
                format!("invalid header name {name:?}"),
            );
        }
    }
    for (i, name) in t.environment_variables.iter().enumerate() {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            issues.push_new(
                &path.key("environmentVariables").index(i),
                "must be an environment variable name",
            );
        }
    }
}
