//! OTLP/HTTP (protobuf) exporters for spans and metrics, sending with our own reqwest client.
//!
//! opentelemetry-otlp's built-in clients would bring a second reqwest feature set (its async
//! client wants `reqwest/rustls` with its default provider; its default is the blocking client,
//! which starts a runtime of its own). Instead [`Sender`] implements its `HttpClient` trait over the
//! workspace's reqwest. The SDK calls exporters from its own threads (the batch span processor and
//! the periodic metric reader block on the export future), where no tokio runtime is current, so
//! each request is spawned onto the runtime captured at startup and awaited through its join
//! handle, which any executor can poll.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use tokio::runtime::Handle;
use vmcp_config::TelemetryConfig;

use crate::TelemetryError;

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// An OTLP `HttpClient` over reqwest, run on a captured tokio runtime.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    client: reqwest::Client,
    runtime: Handle,
}

impl Sender {
    pub(crate) fn new(cfg: &TelemetryConfig, runtime: Handle) -> Result<Self, TelemetryError> {
        // reqwest is built without a default crypto provider; a second install fails harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .connect_timeout(EXPORT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("vmcp/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = &cfg.ca_cert_path {
            let pem = std::fs::read(path).map_err(|e| {
                TelemetryError(format!("telemetry.caCertPath {path}: cannot read: {e}"))
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                TelemetryError(format!(
                    "telemetry.caCertPath {path}: not a PEM bundle: {e}"
                ))
            })?;
            if certs.is_empty() {
                return Err(TelemetryError(format!(
                    "telemetry.caCertPath {path}: holds no PEM certificate"
                )));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let client = builder
            .build()
            .map_err(|e| TelemetryError(format!("cannot build the OTLP HTTP client: {e}")))?;
        Ok(Self { client, runtime })
    }
}

#[async_trait::async_trait]
impl HttpClient for Sender {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let request = reqwest::Request::try_from(request)?;
        let sent = self.runtime.spawn(async move {
            let response = client.execute(request).await?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, headers, body))
        });
        let (status, headers, body) = sent.await??;
        let mut out = Response::builder().status(status);
        if let Some(h) = out.headers_mut() {
            *h = headers;
        }
        Ok(out.body(body)?)
    }
}

/// The base URL of `endpoint`: ToolHive writes `host:port` (then `insecure` picks `http`), a full
/// URL is taken as written.
pub(crate) fn base_url(cfg: &TelemetryConfig) -> Option<String> {
    let endpoint = cfg.endpoint.as_deref()?.trim().trim_end_matches('/');
    if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        return Some(endpoint.to_owned());
    }
    let scheme = if cfg.insecure { "http" } else { "https" };
    Some(format!("{scheme}://{endpoint}"))
}

fn headers(cfg: &TelemetryConfig) -> HashMap<String, String> {
    cfg.headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The span exporter: OTLP/HTTP protobuf to `<base>/v1/traces`.
pub(crate) fn span_exporter(
    cfg: &TelemetryConfig,
    base: &str,
    sender: &Sender,
) -> Result<opentelemetry_otlp::SpanExporter, TelemetryError> {
    opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(sender.clone())
        .with_endpoint(format!("{base}/v1/traces"))
        .with_timeout(EXPORT_TIMEOUT)
        .with_headers(headers(cfg))
        .build()
        .map_err(|e| TelemetryError(format!("cannot build the OTLP span exporter: {e}")))
}

/// The metric exporter: OTLP/HTTP protobuf to `<base>/v1/metrics`, cumulative temporality.
pub(crate) fn metric_exporter(
    cfg: &TelemetryConfig,
    base: &str,
    sender: &Sender,
) -> Result<opentelemetry_otlp::MetricExporter, TelemetryError> {
    opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(sender.clone())
        .with_endpoint(format!("{base}/v1/metrics"))
        .with_timeout(EXPORT_TIMEOUT)
        .with_headers(headers(cfg))
        .build()
        .map_err(|e| TelemetryError(format!("cannot build the OTLP metric exporter: {e}")))
}
