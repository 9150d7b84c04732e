//! What one `/metrics` scrape costs with 1,000 backends' series (run with `--ignored --nocapture`
//! in release): every backend's tools called once through the server and backend instruments,
//! then the page encoded a few times. A measurement, printed for docs/benchmarks.md, not asserted.

#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use serde_json::json;
use vmcp_telemetry::Format;

const BACKENDS: usize = 1_000;

/// Calls tools `from..to` of every backend once, as a client request and a backend request.
fn call_tools(rt: &tokio::runtime::Runtime, from: usize, to: usize) {
    rt.block_on(async {
        for b in 0..BACKENDS {
            for t in from..to {
                let params = json!({"name": format!("backend{b}_tool{t}"), "arguments": {}});
                let r = vmcp_telemetry::ServerRequest::start(
                    "tools/call",
                    Some(&params),
                    Some(&json!(1)),
                    Some("session"),
                    Some("2025-11-25"),
                );
                r.run(async {}, |()| vmcp_telemetry::Outcome {
                    status: 200,
                    error: None,
                })
                .await;
                let backend_params = json!({"name": format!("tool{t}"), "arguments": {}});
                let c = vmcp_telemetry::BackendCall::start(
                    &format!("backend{b}"),
                    "streamable-http",
                    "tools/call",
                    Some(&backend_params),
                );
                c.finish(None);
            }
        }
    });
}

/// Median time of a few scrapes in `format`, with the page's size, its sample count and how many
/// samples are overflow series (past the SDK's 2,000 series per instrument).
fn measure(format: Format) -> (Duration, usize, usize, usize) {
    let scrape = || vmcp_telemetry::metrics_page(format).unwrap().unwrap();
    let page = scrape();
    let mut times: Vec<Duration> = (0..7)
        .map(|_| {
            let started = Instant::now();
            let page = scrape();
            let took = started.elapsed();
            std::hint::black_box(page);
            took
        })
        .collect();
    times.sort();
    let samples = page.lines().filter(|l| !l.starts_with('#')).count();
    let overflow = page
        .lines()
        .filter(|l| l.contains("otel_metric_overflow=\"true\""))
        .count();
    (times[times.len() / 2], page.len(), samples, overflow)
}

#[test]
#[ignore = "a measurement, not a check"]
fn cost_of_one_scrape_with_1000_backends() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cfg = vmcp_config::TelemetryConfig {
        enable_prometheus_metrics_path: true,
        ..Default::default()
    };
    let _t = vmcp_telemetry::install(&cfg, "bench", rt.handle().clone()).unwrap();
    let mut done = 0;
    for tools in [1, 10] {
        call_tools(&rt, done, tools);
        done = tools;
        for (name, format) in [
            ("text 0.0.4", Format::Prometheus),
            ("OpenMetrics", Format::OpenMetrics),
        ] {
            let (took, bytes, samples, overflow) = measure(format);
            println!(
                "{BACKENDS} backends x {tools} tools, {name}: {took:?} per scrape, \
                 {:.1} MB, {samples} samples ({overflow} in overflow series)",
                bytes as f64 / 1e6
            );
        }
    }
}
