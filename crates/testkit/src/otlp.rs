//! A small OTLP/HTTP receiver for tests: accepts `POST /v1/traces` and `POST /v1/metrics` in
//! protobuf (what vmcp's exporter sends), decodes them with the same generated types the exporter
//! encodes with (`opentelemetry-proto`), and keeps every span and metric name it received.
//! The OpenTelemetry collector would do, but is not installable from the package registries the
//! tests may use; this is enough to assert what a collector would see.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use http::StatusCode;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use tokio::task::JoinHandle;

/// One received span, flattened to what tests check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedSpan {
    /// Its name (`tools/call echo`).
    pub name: String,
    /// Trace id, lowercase hex.
    pub trace_id: String,
    /// Span id, lowercase hex.
    pub span_id: String,
    /// Parent span id, lowercase hex (empty for a root).
    pub parent_span_id: String,
    /// `server`, `client`, `internal`, `producer`, `consumer` or `unspecified`.
    pub kind: &'static str,
    /// String-valued attributes (other values as their debug text).
    pub attributes: Vec<(String, String)>,
    /// `service.name` of the resource that sent it.
    pub service: String,
}

impl ReceivedSpan {
    /// The attribute `key`, if present.
    #[must_use]
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    metrics: Vec<String>,
    trace_requests: usize,
}

/// A running receiver; stops on drop.
pub struct OtlpReceiver {
    /// `127.0.0.1:PORT`, the form ToolHive's `telemetry.endpoint` takes (with `insecure: true`).
    pub endpoint: String,
    received: Arc<Mutex<Received>>,
    task: JoinHandle<()>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn kind(k: i32) -> &'static str {
    match k {
        1 => "internal",
        2 => "server",
        3 => "client",
        4 => "producer",
        5 => "consumer",
        _ => "unspecified",
    }
}

fn any_text(v: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    match v.and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => s.clone(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

async fn traces(State(r): State<Arc<Mutex<Received>>>, body: Bytes) -> StatusCode {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut r = r.lock().unwrap_or_else(|p| p.into_inner());
    r.trace_requests += 1;
    for rs in req.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|res| res.attributes.iter().find(|kv| kv.key == "service.name"))
            .map(|kv| any_text(kv.value.as_ref()))
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                r.spans.push(ReceivedSpan {
                    name: s.name,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    kind: kind(s.kind),
                    attributes: s
                        .attributes
                        .iter()
                        .map(|kv| (kv.key.clone(), any_text(kv.value.as_ref())))
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
    StatusCode::OK
}

async fn metrics(State(r): State<Arc<Mutex<Received>>>, body: Bytes) -> StatusCode {
    let Ok(req) = ExportMetricsServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut r = r.lock().unwrap_or_else(|p| p.into_inner());
    for rm in req.resource_metrics {
        for sm in rm.scope_metrics {
            for m in sm.metrics {
                if !r.metrics.contains(&m.name) {
                    r.metrics.push(m.name);
                }
            }
        }
    }
    StatusCode::OK
}

impl OtlpReceiver {
    /// Starts a receiver on `127.0.0.1:0`.
    ///
    /// # Panics
    /// If no local port can be bound.
    pub async fn start() -> OtlpReceiver {
        let received = Arc::new(Mutex::new(Received::default()));
        let router = Router::new()
            .route("/v1/traces", post(traces))
            .route("/v1/metrics", post(metrics))
            .with_state(received.clone());
        let (url, task) = crate::http::serve_in_process(router, "").await;
        OtlpReceiver {
            endpoint: url.trim_start_matches("http://").to_owned(),
            received,
            task,
        }
    }

    /// Every span received so far.
    #[must_use]
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.lock().spans.clone()
    }

    /// How many trace export requests arrived (spans or not).
    #[must_use]
    pub fn trace_requests(&self) -> usize {
        self.lock().trace_requests
    }

    /// The names of every metric received so far.
    #[must_use]
    pub fn metric_names(&self) -> Vec<String> {
        self.lock().metrics.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
