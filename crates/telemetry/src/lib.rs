//! vmcp's metrics and traces, on the OpenTelemetry Rust SDK.
//!
//! [`install`] builds a meter provider and a tracer provider from the config's `telemetry`
//! section and makes them the process's; until then (and when the section is absent) every
//! recording function here returns at once, so call sites need no `if`. What it owns:
//!
//! - the instruments (names in `docs/metrics.md`: the OpenTelemetry MCP semantic conventions,
//!   ToolHive's `toolhive_*` names, vmcp's `vmcp_*`), recorded through the functions below;
//! - the `/metrics` page ([`metrics_page`]): the SDK's collected data encoded by
//!   `prometheus-client` as Prometheus text 0.0.4 or, when the scrape asks for it
//!   ([`Format::negotiate`]), OpenMetrics 1.0 text, with the trace of a sampled call as an
//!   exemplar on its `mcp.server.operation.duration` bucket when traces are exported too;
//! - OTLP/HTTP export of spans and metrics to `telemetry.endpoint`, over the workspace's reqwest;
//! - spans: a server span per client request ([`ServerRequest`]), a client span per backend request
//!   ([`BackendCall`]), W3C trace context read from HTTP headers ([`remote_parent`]) and from
//!   `params._meta`, and written to backends.
//!
//! It does not own where those calls are made (the edges in `vmcp-server`, `Backend::request_on`
//! in `vmcp-backend`), nor logging (`tracing`, set up by the binary).
//!
//! # For other crates
//!
//! Each of these is a no-op until [`install`], and cheap after it (an attribute set and an
//! atomic add):
//!
//! - [`health_transition`]`(backend, from, to)`: a backend's health state changed
//!   (`vmcp_backend_health_transitions_total{backend,from,to}`);
//! - [`rate_limit_decision`]`(allowed, bucket)`: one rate-limit check
//!   (`toolhive_rate_limit_decisions_total{decision="allowed"|"rejected",bucket}`; `bucket` is the
//!   bucket kind that decided: `shared`, `per_user`, `tool_shared`, `tool_per_user`);
//! - [`rate_limit_store_error`]`(let_through)`: Redis could not answer a check
//!   (`toolhive_rate_limit_redis_errors_total`, and `toolhive_rate_limit_fail_open_total` when let through);
//! - [`cache_lookup`]`(cache, hit)`, [`catalog_size`]`(kind, n)`, [`backends_discovered`]`(n)`,
//!   [`session_opened`] / [`session_closed`], [`workflow_finished`], [`find_tool_finished`],
//!   [`optimizer_call_tool_finished`], [`pin_finding`], [`pins_pending`].
//!
//! ```
//! // Before install (or without a telemetry section) these do nothing.
//! vmcp_telemetry::health_transition("github", "healthy", "unhealthy");
//! vmcp_telemetry::rate_limit_decision(false, "per_user");
//! assert!(vmcp_telemetry::metrics_page(vmcp_telemetry::Format::OpenMetrics).is_none());
//! ```

mod events;
mod exemplars;
mod exposition;
mod format;
mod instruments;
mod otlp;
mod trace;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{KeyValue, StringValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{ManualReader, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};
use prometheus_client::registry::Registry;
use tokio::runtime::Handle;
use vmcp_config::TelemetryConfig;

pub use events::{
    backends_discovered, cache_lookup, catalog_size, find_tool_finished, health_transition,
    optimizer_call_tool_finished, pin_finding, pins_pending, rate_limit_decision,
    rate_limit_store_error, session_closed, session_opened, workflow_finished,
};
pub use format::Format;
pub use trace::{BackendCall, Outcome, ServerRequest, remote_parent, with_trace_meta, within};

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TelemetryError(String);

/// The process's telemetry, once installed.
pub(crate) struct Global {
    pub(crate) metrics: Option<instruments::Instruments>,
    pub(crate) tracer: Option<SdkTracer>,
    /// What `/metrics` encodes, when it is served.
    pub(crate) scrape: Option<Registry>,
    /// The server durations with exemplars, when `/metrics` is served and traces exported.
    pub(crate) server_durations: Option<Arc<exemplars::ServerDurations>>,
    /// Whether the SDK records the server durations too: someone reads its copy (OTLP, or
    /// `/metrics` when they are not kept with exemplars).
    pub(crate) sdk_server_durations: bool,
    /// `server` label of ToolHive's metrics: the config's `name`.
    pub(crate) server_name: StringValue,
    pub(crate) legacy_attributes: bool,
    /// `environment.<NAME>` span attributes (`environmentVariables`), read once.
    pub(crate) env_attributes: Vec<KeyValue>,
}

static GLOBAL: OnceLock<Global> = OnceLock::new();

pub(crate) fn global() -> Option<&'static Global> {
    GLOBAL.get()
}

/// The providers, kept to flush and stop them.
pub struct Telemetry {
    meters: Option<SdkMeterProvider>,
    tracers: Option<SdkTracerProvider>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("metrics", &self.meters.is_some())
            .field("traces", &self.tracers.is_some())
            .finish()
    }
}

impl Telemetry {
    /// Exports what is buffered (spans, the last metrics) and stops the exporters. Blocks: call it
    /// off the async workers (`spawn_blocking`); exports run on the runtime given to [`install`].
    pub fn shutdown(self) {
        if let Some(t) = self.tracers
            && let Err(e) = t.shutdown_with_timeout(Duration::from_secs(5))
        {
            tracing::warn!("telemetry: flushing spans: {e}");
        }
        if let Some(m) = self.meters
            && let Err(e) = m.shutdown_with_timeout(Duration::from_secs(5))
        {
            tracing::warn!("telemetry: flushing metrics: {e}");
        }
    }
}

/// How often metrics are pushed over OTLP: `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds, the
/// OpenTelemetry variable), else 60 s.
fn export_interval() -> Duration {
    std::env::var("OTEL_METRIC_EXPORT_INTERVAL")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(Duration::from_secs(60), Duration::from_millis)
}

/// Starts telemetry as `cfg` says and makes it the process's. `server_name` is the config's `name`
/// (ToolHive's `server` label); OTLP requests run on `runtime`.
///
/// # Errors
/// When it was installed already, `caCertPath` cannot be read, or an exporter cannot be built.
pub fn install(
    cfg: &TelemetryConfig,
    server_name: &str,
    runtime: Handle,
) -> Result<Telemetry, TelemetryError> {
    if GLOBAL.get().is_some() {
        return Err(TelemetryError("telemetry is installed already".into()));
    }
    let resource = resource(cfg);
    let base = otlp::base_url(cfg);
    let sender = match &base {
        Some(_) if cfg.exports_traces() || cfg.exports_metrics() => {
            Some(otlp::Sender::new(cfg, runtime)?)
        }
        _ => None,
    };
    let mut scrape = None;
    // Exemplars link to exported traces: without traces there is nothing to link to.
    let server_durations = (cfg.enable_prometheus_metrics_path && cfg.exports_traces())
        .then(|| Arc::new(exemplars::ServerDurations::new()));
    let meters = if cfg.enable_prometheus_metrics_path || cfg.exports_metrics() {
        let mut builder = SdkMeterProvider::builder().with_resource(resource.clone());
        if cfg.enable_prometheus_metrics_path {
            let reader = exposition::Scrape {
                reader: Arc::new(ManualReader::builder().build()),
                server_durations: server_durations.clone(),
            };
            builder = builder.with_reader(reader.clone());
            scrape = Some(exposition::registry(reader));
        }
        if let (Some(base), Some(sender), true) = (&base, &sender, cfg.exports_metrics()) {
            let exporter = otlp::metric_exporter(cfg, base, sender)?;
            builder = builder.with_reader(
                PeriodicReader::builder(exporter)
                    .with_interval(export_interval())
                    .build(),
            );
        }
        Some(builder.build())
    } else {
        None
    };
    let tracers = match (&base, &sender, cfg.exports_traces()) {
        (Some(base), Some(sender), true) => {
            let exporter = otlp::span_exporter(cfg, base, sender)?;
            Some(
                SdkTracerProvider::builder()
                    .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
                        cfg.sampling_rate,
                    ))))
                    .with_batch_exporter(exporter)
                    .with_resource(resource)
                    .build(),
            )
        }
        _ => None,
    };
    let env_attributes = cfg
        .environment_variables
        .iter()
        .filter_map(|name| {
            let value = std::env::var(name).ok()?;
            Some(KeyValue::new(format!("environment.{name}"), value))
        })
        .collect();
    let global = Global {
        metrics: meters
            .as_ref()
            .map(|m| instruments::Instruments::new(&m.meter("vmcp"))),
        tracer: tracers.as_ref().map(|t| t.tracer("vmcp")),
        scrape,
        sdk_server_durations: server_durations.is_none() || cfg.exports_metrics(),
        server_durations,
        server_name: StringValue::from(Arc::<str>::from(server_name)),
        legacy_attributes: cfg.use_legacy_attributes,
        env_attributes,
    };
    if GLOBAL.set(global).is_err() {
        return Err(TelemetryError("telemetry is installed already".into()));
    }
    Ok(Telemetry { meters, tracers })
}

fn resource(cfg: &TelemetryConfig) -> Resource {
    let name = cfg.service_name.clone().unwrap_or_else(|| "vmcp".into());
    let version = cfg
        .service_version
        .clone()
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").into());
    Resource::builder()
        .with_service_name(name)
        .with_attribute(KeyValue::new("service.version", version))
        .with_attributes(
            cfg.custom_attributes
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        )
        .build()
}

/// Whether `/metrics` is served (`enablePrometheusMetricsPath` on and telemetry installed).
#[must_use]
pub fn serves_prometheus() -> bool {
    global().is_some_and(|g| g.scrape.is_some())
}

/// The current metrics as a `/metrics` page in `format`; `None` when `/metrics` is off.
///
/// # Errors
/// When the encoder fails (a value the format cannot carry); the page would be partial.
#[must_use]
pub fn metrics_page(format: Format) -> Option<Result<String, TelemetryError>> {
    let registry = global()?.scrape.as_ref()?;
    Some(exposition::encode(registry, format))
}
