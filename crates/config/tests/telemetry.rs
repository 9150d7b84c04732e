//! `telemetry`: ToolHive's keys load (samplingRate as a string or a number), its rule about an
//! endpoint with nothing to export, our stricter samplingRate, and the section is supported.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{ONE_STDIO, error_at, errors, ok};
use vmcp_config::{load_str, to_yaml};

#[test]
fn toolhive_keys_load() {
    let c = ok(&format!(
        "{ONE_STDIO}telemetry:
  endpoint: localhost:4318
  serviceName: team-vmcp
  serviceVersion: 1.2.3
  tracingEnabled: true
  metricsEnabled: true
  samplingRate: \"0.25\"
  headers: {{x-api-key: k3y}}
  insecure: true
  enablePrometheusMetricsPath: true
  prometheusPort: 9090
  metricsOnTransportPort: true
  environmentVariables: [HOME]
  customAttributes: {{deployment.environment: prod}}
  useLegacyAttributes: true
  caCertPath: /etc/ssl/otlp.pem
"
    ));
    let t = c.telemetry.as_ref().unwrap();
    assert_eq!(t.endpoint.as_deref(), Some("localhost:4318"));
    assert_eq!(t.service_name.as_deref(), Some("team-vmcp"));
    assert!(t.tracing_enabled && t.metrics_enabled && t.insecure);
    assert!(t.enable_prometheus_metrics_path && t.use_legacy_attributes);
    assert!((t.sampling_rate - 0.25).abs() < f64::EPSILON);
    assert_eq!(t.headers["x-api-key"], "k3y");
    assert_eq!(t.prometheus_port, Some(9090));
    assert_eq!(t.environment_variables, ["HOME"]);
    assert_eq!(t.custom_attributes["deployment.environment"], "prod");
    assert!(c.unsupported().is_empty(), "{:?}", c.unsupported());
    // Header values are secrets: Debug shows names only.
    let debug = format!("{t:?}");
    assert!(
        debug.contains("x-api-key") && !debug.contains("k3y"),
        "{debug}"
    );
}

#[test]
fn sampling_rate_as_a_number_and_its_default() {
    let c = ok(&format!(
        "{ONE_STDIO}telemetry: {{endpoint: c:4318, tracingEnabled: true, samplingRate: 1}}"
    ));
    assert!((c.telemetry.unwrap().sampling_rate - 1.0).abs() < f64::EPSILON);
    let c = ok(&format!(
        "{ONE_STDIO}telemetry: {{enablePrometheusMetricsPath: true}}"
    ));
    let t = c.telemetry.unwrap();
    assert!((t.sampling_rate - vmcp_config::DEFAULT_SAMPLING_RATE).abs() < f64::EPSILON);
    assert!(!t.exports_traces() && !t.exports_metrics());
}

#[test]
fn unparsable_sampling_rate_is_an_error_not_zero() {
    error_at(
        &format!(
            "{ONE_STDIO}telemetry: {{endpoint: c:4318, tracingEnabled: true, samplingRate: \"ten percent\"}}"
        ),
        "telemetry.samplingRate",
        "expected a number between 0 and 1",
    );
    error_at(
        &format!(
            "{ONE_STDIO}telemetry: {{endpoint: c:4318, tracingEnabled: true, samplingRate: \"1.5\"}}"
        ),
        "telemetry.samplingRate",
        "between 0 and 1",
    );
}

#[test]
fn endpoint_with_nothing_enabled_is_an_error() {
    error_at(
        &format!("{ONE_STDIO}telemetry: {{endpoint: c:4318}}"),
        "telemetry.endpoint",
        "tracingEnabled and metricsEnabled are both false",
    );
    error_at(
        &format!("{ONE_STDIO}telemetry: {{tracingEnabled: true}}"),
        "telemetry.tracingEnabled",
        "no endpoint",
    );
}

#[test]
fn bad_header_name_is_reported_without_values() {
    let all = errors(&format!(
        "{ONE_STDIO}telemetry: {{endpoint: c:4318, metricsEnabled: true, headers: {{\"bad name\": t0ps3cret}}}}"
    ));
    let text = format!("{all:?}");
    assert!(text.contains("invalid header name"), "{text}");
    assert!(!text.contains("t0ps3cret"), "{text}");
}

#[test]
fn round_trips() {
    let c = ok(&format!(
        "{ONE_STDIO}telemetry: {{endpoint: c:4318, metricsEnabled: true, samplingRate: \"0.5\", prometheusPort: 9090}}"
    ));
    let text = to_yaml(&c);
    let back = load_str(&text, &|_| None).unwrap();
    assert_eq!(back, c, "{text}");
}
