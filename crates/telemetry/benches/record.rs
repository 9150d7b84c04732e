//! What recording one tools/call's server-side metrics costs in two storages: the OpenTelemetry
//! SDK's instruments (what vmcp records into, read by both `/metrics` and OTLP) and
//! prometheus-client's `Family` of counters and histograms (a label-set hash lookup per
//! observation). Each iteration records what `ServerRequest` records when a call finishes: the
//! semconv duration (4 labels), ToolHive's request counter and duration (7 labels) and tool-call
//! counter (2 labels). The `x2` variants record from two threads at once into the same series.
//!
//! Run with `cargo bench -p vmcp-telemetry --bench record`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::{KeyValue, StringValue};
use opentelemetry_sdk::metrics::{ManualReader, SdkMeterProvider};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::histogram::Histogram;

const SECONDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Runs `one` `iters` times split over `threads` threads; the wall time per iteration.
fn timed(iters: u64, threads: u64, one: &(dyn Fn() + Sync)) -> Duration {
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..iters / threads {
                    one();
                }
            });
        }
    });
    started.elapsed()
}

struct Otel {
    _provider: SdkMeterProvider,
    server: opentelemetry::metrics::Histogram<f64>,
    requests: opentelemetry::metrics::Counter<u64>,
    request_duration: opentelemetry::metrics::Histogram<f64>,
    tool_calls: opentelemetry::metrics::Counter<u64>,
    method: StringValue,
    tool: StringValue,
    server_name: StringValue,
}

impl Otel {
    fn new() -> Self {
        let provider = SdkMeterProvider::builder()
            .with_reader(ManualReader::builder().build())
            .build();
        let m = provider.meter("bench");
        let hist = |name: &'static str| {
            m.f64_histogram(name)
                .with_unit("s")
                .with_boundaries(SECONDS.to_vec())
                .build()
        };
        Self {
            server: hist("mcp.server.operation.duration"),
            requests: m.u64_counter("toolhive_mcp_requests").build(),
            request_duration: hist("toolhive_mcp_request_duration"),
            tool_calls: m.u64_counter("toolhive_mcp_tool_calls").build(),
            _provider: provider,
            method: StringValue::from("tools/call"),
            tool: StringValue::from(Arc::<str>::from("backend7_echo")),
            server_name: StringValue::from(Arc::<str>::from("bench")),
        }
    }

    fn record(&self) {
        let semconv = [
            KeyValue::new("mcp.method.name", self.method.clone()),
            KeyValue::new("network.transport", "tcp"),
            KeyValue::new("mcp.protocol.version", "2025-11-25"),
            KeyValue::new("gen_ai.tool.name", self.tool.clone()),
        ];
        self.server.record(black_box(0.0012), &semconv);
        let toolhive = [
            KeyValue::new("method", "POST"),
            KeyValue::new("status_code", "200"),
            KeyValue::new("status", "success"),
            KeyValue::new("mcp_method", self.method.clone()),
            KeyValue::new("mcp_resource_id", self.tool.clone()),
            KeyValue::new("server", self.server_name.clone()),
            KeyValue::new("transport", "streamable-http"),
        ];
        self.requests.add(1, &toolhive);
        self.request_duration.record(black_box(0.0012), &toolhive);
        self.tool_calls.add(
            1,
            &[
                KeyValue::new("server", self.server_name.clone()),
                KeyValue::new("tool", self.tool.clone()),
            ],
        );
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Semconv {
    mcp_method_name: &'static str,
    network_transport: &'static str,
    mcp_protocol_version: Arc<str>,
    gen_ai_tool_name: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Request {
    method: &'static str,
    status_code: &'static str,
    status: &'static str,
    mcp_method: &'static str,
    mcp_resource_id: Arc<str>,
    server: Arc<str>,
    transport: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tool {
    server: Arc<str>,
    tool: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Trace {
    trace_id: Arc<str>,
}

#[derive(Clone)]
struct Buckets;

impl MetricConstructor<Histogram> for Buckets {
    fn new_metric(&self) -> Histogram {
        Histogram::new(SECONDS)
    }
}

impl MetricConstructor<HistogramWithExemplars<Trace>> for Buckets {
    fn new_metric(&self) -> HistogramWithExemplars<Trace> {
        HistogramWithExemplars::new(SECONDS.into_iter())
    }
}

struct Prom {
    server: Family<Semconv, Histogram, Buckets>,
    server_exemplars: Family<Semconv, HistogramWithExemplars<Trace>, Buckets>,
    requests: Family<Request, Counter>,
    request_duration: Family<Request, Histogram, Buckets>,
    tool_calls: Family<Tool, Counter>,
    tool: Arc<str>,
    version: Arc<str>,
    server_name: Arc<str>,
    trace: Arc<str>,
}

impl Prom {
    fn new() -> Self {
        Self {
            server: Family::new_with_constructor(Buckets),
            server_exemplars: Family::new_with_constructor(Buckets),
            requests: Family::default(),
            request_duration: Family::new_with_constructor(Buckets),
            tool_calls: Family::default(),
            tool: Arc::from("backend7_echo"),
            version: Arc::from("2025-11-25"),
            server_name: Arc::from("bench"),
            trace: Arc::from("4bf92f3577b34da6a3ce929d0e0e4736"),
        }
    }

    fn record(&self, exemplar: bool) {
        let semconv = Semconv {
            mcp_method_name: "tools/call",
            network_transport: "tcp",
            mcp_protocol_version: self.version.clone(),
            gen_ai_tool_name: self.tool.clone(),
        };
        if exemplar {
            let trace = Trace {
                trace_id: self.trace.clone(),
            };
            self.server_exemplars.get_or_create(&semconv).observe(
                black_box(0.0012),
                Some(trace),
                None,
            );
        } else {
            self.server
                .get_or_create(&semconv)
                .observe(black_box(0.0012));
        }
        let request = Request {
            method: "POST",
            status_code: "200",
            status: "success",
            mcp_method: "tools/call",
            mcp_resource_id: self.tool.clone(),
            server: self.server_name.clone(),
            transport: "streamable-http",
        };
        self.requests.get_or_create(&request).inc();
        self.request_duration
            .get_or_create(&request)
            .observe(black_box(0.0012));
        self.tool_calls
            .get_or_create(&Tool {
                server: self.server_name.clone(),
                tool: self.tool.clone(),
            })
            .inc();
    }
}

fn record(c: &mut Criterion) {
    let otel = Otel::new();
    let prom = Prom::new();
    for threads in [1, 2] {
        let suffix = if threads == 1 { "" } else { "_x2" };
        c.bench_function(&format!("record/otel_sdk{suffix}"), |b| {
            b.iter_custom(|n| timed(n, threads, &|| otel.record()));
        });
        c.bench_function(&format!("record/prometheus_client{suffix}"), |b| {
            b.iter_custom(|n| timed(n, threads, &|| prom.record(false)));
        });
        c.bench_function(&format!("record/prometheus_client_exemplar{suffix}"), |b| {
            b.iter_custom(|n| timed(n, threads, &|| prom.record(true)));
        });
    }
}

criterion_group!(benches, record);
criterion_main!(benches);
