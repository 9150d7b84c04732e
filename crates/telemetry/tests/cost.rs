//! What recording one request costs in-process (run with `--ignored --nocapture` in release); the
//! load benchmark (scenario 7 of `vmcp-bench`) gives the figures that count.

#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Instant;

use serde_json::json;

#[test]
#[ignore = "a measurement, not a check"]
fn cost_of_one_request_with_metrics() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cfg = vmcp_config::TelemetryConfig {
        enable_prometheus_metrics_path: true,
        ..Default::default()
    };
    let _t = vmcp_telemetry::install(&cfg, "bench", rt.handle().clone()).unwrap();
    let params = json!({"name": "fx_echo", "arguments": {"text": "hi"}});
    let backend_params = json!({"name": "echo", "arguments": {"text": "hi"}});
    let id = json!(7);
    let n = 200_000;
    rt.block_on(async {
        for round in 0..2 {
            let started = Instant::now();
            for _ in 0..n {
                let r = vmcp_telemetry::ServerRequest::start(
                    "tools/call",
                    Some(&params),
                    Some(&id),
                    Some("session"),
                    Some("2025-11-25"),
                );
                r.run(async {}, |()| vmcp_telemetry::Outcome {
                    status: 200,
                    error: None,
                })
                .await;
            }
            let server = started.elapsed() / n;
            let started = Instant::now();
            for _ in 0..n {
                let c = vmcp_telemetry::BackendCall::start(
                    "fx",
                    "streamable-http",
                    "tools/call",
                    Some(&backend_params),
                );
                c.finish(None);
            }
            let client = started.elapsed() / n;
            println!("round {round}: server request {server:?}, backend call {client:?}");
        }
    });
}
