//! `telemetry`: ToolHive's keys for metrics and traces. The block's presence turns the providers on
//! (as in ToolHive); `tracingEnabled` / `metricsEnabled` choose what goes to the OTLP `endpoint`,
//! `enablePrometheusMetricsPath` serves `/metrics` on the main listener.
//!
//! `prometheusPort` and `metricsOnTransportPort` are accepted and ignored: ToolHive's vMCP ignores
//! them too (they configure its proxy runner).

use std::collections::BTreeMap;
use std::fmt;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Fields, kind};
use crate::schema::RawSection;

/// The sampling rate when the file gives none (ToolHive's default).
pub const DEFAULT_SAMPLING_RATE: f64 = 0.05;

/// `telemetry`.
///
/// `Debug` prints header names only: `headers` usually carry an OTLP backend's API key.
#[derive(Clone, PartialEq)]
pub struct TelemetryConfig {
    /// `endpoint`: where OTLP/HTTP goes, `host:port` (ToolHive's form) or a full URL.
    pub endpoint: Option<String>,
    /// `serviceName` (`service.name` of the resource; default `vmcp`).
    pub service_name: Option<String>,
    /// `serviceVersion` (default vmcp's version).
    pub service_version: Option<String>,
    /// `tracingEnabled`: export spans to `endpoint`.
    pub tracing_enabled: bool,
    /// `metricsEnabled`: export metrics to `endpoint`.
    pub metrics_enabled: bool,
    /// `samplingRate` in `[0, 1]`, written as a number or, as ToolHive has it, a string
    /// (default [`DEFAULT_SAMPLING_RATE`]). A parent's sampling decision wins.
    pub sampling_rate: f64,
    /// `headers` sent with every OTLP request (values are secrets: never logged).
    pub headers: BTreeMap<String, String>,
    /// `insecure`: plain `http://` to `endpoint` (else `https://`).
    pub insecure: bool,
    /// `enablePrometheusMetricsPath`: serve Prometheus text at `/metrics` (unauthenticated).
    pub enable_prometheus_metrics_path: bool,
    /// `prometheusPort` (accepted, ignored: vmcp serves `/metrics` on its main listener).
    pub prometheus_port: Option<u16>,
    /// `metricsOnTransportPort` (accepted, ignored, as in ToolHive's vMCP).
    pub metrics_on_transport_port: Option<bool>,
    /// `environmentVariables`: names of environment variables copied to server span attributes
    /// (`environment.<NAME>`).
    pub environment_variables: Vec<String>,
    /// `customAttributes`: resource attributes added to every span and metric.
    pub custom_attributes: BTreeMap<String, String>,
    /// `useLegacyAttributes`: also write ToolHive's older span attributes (`mcp.method`,
    /// `mcp.tool.name`).
    pub use_legacy_attributes: bool,
    /// `caCertPath`: a PEM bundle trusted for `https` OTLP endpoints.
    pub ca_cert_path: Option<String>,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self {
            endpoint: None,
            service_name: None,
            service_version: None,
            tracing_enabled: false,
            metrics_enabled: false,
            sampling_rate: DEFAULT_SAMPLING_RATE,
            headers: BTreeMap::new(),
            insecure: false,
            enable_prometheus_metrics_path: false,
            prometheus_port: None,
            metrics_on_transport_port: None,
            environment_variables: Vec::new(),
            custom_attributes: BTreeMap::new(),
            use_legacy_attributes: false,
            ca_cert_path: None,
            raw: RawSection(serde_json::Value::Object(serde_json::Map::new())),
        }
    }
}

impl fmt::Debug for TelemetryConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetryConfig")
            .field("endpoint", &self.endpoint)
            .field("service_name", &self.service_name)
            .field("tracing_enabled", &self.tracing_enabled)
            .field("metrics_enabled", &self.metrics_enabled)
            .field("sampling_rate", &self.sampling_rate)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("insecure", &self.insecure)
            .field(
                "enable_prometheus_metrics_path",
                &self.enable_prometheus_metrics_path,
            )
            .field("ca_cert_path", &self.ca_cert_path)
            .finish_non_exhaustive()
    }
}

impl TelemetryConfig {
    /// Whether spans are exported.
    #[must_use]
    pub fn exports_traces(&self) -> bool {
        self.tracing_enabled && self.endpoint.is_some()
    }

    /// Whether metrics are exported over OTLP.
    #[must_use]
    pub fn exports_metrics(&self) -> bool {
        self.metrics_enabled && self.endpoint.is_some()
    }
}

/// `samplingRate`: a number, or a string holding one. Unlike ToolHive (which reads an unparsable
/// string as 0, silently turning tracing off), anything else is an error.
fn rate(f: &mut Fields<'_>, issues: &Issues) -> Option<f64> {
    let (v, p) = f.value("samplingRate")?;
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n.is_finite() => Some(n),
        _ => {
            let found = match v {
                Value::String(s) => format!("{s:?}"),
                other => kind(other).to_owned(),
            };
            issues.push_new(
                &p,
                format!("expected a number between 0 and 1 (e.g. \"0.1\"), found {found}"),
            );
            None
        }
    }
}

pub(crate) fn decode_telemetry(v: &Value, path: &KeyPath, issues: &Issues) -> TelemetryConfig {
    let mut f = Fields::open(v, path, issues);
    let d = TelemetryConfig::default();
    let cfg = TelemetryConfig {
        endpoint: f.string("endpoint").filter(|s| !s.trim().is_empty()),
        service_name: f.string("serviceName").filter(|s| !s.is_empty()),
        service_version: f.string("serviceVersion").filter(|s| !s.is_empty()),
        tracing_enabled: f.bool("tracingEnabled").unwrap_or(false),
        metrics_enabled: f.bool("metricsEnabled").unwrap_or(false),
        sampling_rate: rate(&mut f, issues).unwrap_or(d.sampling_rate),
        headers: f.string_map("headers"),
        insecure: f.bool("insecure").unwrap_or(false),
        enable_prometheus_metrics_path: f.bool("enablePrometheusMetricsPath").unwrap_or(false),
        prometheus_port: f.uint("prometheusPort"),
        metrics_on_transport_port: f.bool("metricsOnTransportPort"),
        environment_variables: f.strings("environmentVariables"),
        custom_attributes: f.string_map("customAttributes"),
        use_legacy_attributes: f.bool("useLegacyAttributes").unwrap_or(false),
        ca_cert_path: f.string("caCertPath").filter(|s| !s.is_empty()),
        raw: f.raw_self().unwrap_or(d.raw),
    };
    f.finish();
    cfg
}
