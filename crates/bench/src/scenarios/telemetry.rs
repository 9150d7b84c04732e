//! Scenario 7: what metrics and traces cost on the hot path. The same `tools/call` of the HTTP
//! fixture's `echo` through gateways that differ only in their `telemetry` section: off, metrics
//! on (`/metrics`), traces sampled at 10% (to an OTLP sink), and both. Runs are interleaved
//! (`--repeat`), figures are medians, and each mode is shown as a ratio against off.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::cli::Settings;
use crate::http::Edge;
use crate::load::{self, Conn, Outcome, Plan, Template, Watched};
use crate::procs::{Env, Proc};
use crate::report::{Section, ratio};
use crate::services::OtlpSink;
use crate::setup::{Backend, gateway_config, wait_ready};
use crate::stats::fmt;

const HEADER: &[&str] = &[
    "telemetry",
    "c",
    "p50",
    "p99",
    "req/s",
    "CPU/req gateway",
    "CPU ratio to off",
    "p50 ratio to off",
    "errors",
];

/// The modes, by label and the `telemetry` YAML they add (`{otlp}` is the sink's address).
const MODES: &[(&str, &str)] = &[
    ("off", ""),
    (
        "metrics",
        "telemetry:\n  enablePrometheusMetricsPath: true\n",
    ),
    (
        "traces 10%",
        "telemetry:\n  endpoint: {otlp}\n  insecure: true\n  tracingEnabled: true\n  samplingRate: 0.1\n",
    ),
    (
        "metrics + traces 10%",
        "telemetry:\n  endpoint: {otlp}\n  insecure: true\n  tracingEnabled: true\n  samplingRate: 0.1\n  enablePrometheusMetricsPath: true\n",
    ),
];

/// Scenario 7.
pub(crate) async fn run(env: &Env, s: &Settings) -> anyhow::Result<Section> {
    let fixture = env.fixture_http("fx", 0, &[]).await?;
    let sink = OtlpSink::start().await?;
    let mut gateways: Vec<(&str, Proc)> = Vec::new();
    for (label, extra) in MODES {
        let config = format!(
            "{}{}",
            gateway_config(&[Backend::Http {
                name: "fx",
                url: &fixture.url,
            }]),
            extra.replace("{otlp}", &sink.address)
        );
        let gw = env
            .gateway(
                &format!("telemetry-{}", label.replace([' ', '%', '+'], "")),
                &config,
            )
            .await?;
        wait_ready(&gw).await?;
        gateways.push((label, gw));
    }
    let plan = Plan {
        warmup: s.warmup,
        duration: s.duration,
    };
    let mut section = Section::new(
        "telemetry",
        "7. tools/call with telemetry off, metrics, traces at 10%",
        HEADER,
    );
    let mut json_runs = Vec::new();
    for &c in &s.concurrency {
        let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); gateways.len()];
        for _ in 0..s.repeat {
            for ((_, gw), out) in gateways.iter().zip(&mut runs) {
                out.push(call_run(gw, fixture.pid, c, plan).await?);
            }
        }
        let medians: Vec<Outcome> = runs.iter().map(|r| Outcome::median(r)).collect();
        let off = &medians[0];
        let off_cpu = off.cpu("gateway");
        let mut modes = serde_json::Map::new();
        for ((label, _), o) in gateways.iter().zip(&medians) {
            let cpu = o.cpu("gateway");
            let cpu_ratio = match (cpu, off_cpu) {
                (Some(a), Some(b)) => ratio(a.as_secs_f64(), b.as_secs_f64()),
                _ => None,
            };
            let p50_ratio = ratio(o.latency.p50.as_secs_f64(), off.latency.p50.as_secs_f64());
            let show = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{r:.2}x"));
            section.rows.push(vec![
                (*label).to_owned(),
                c.to_string(),
                fmt(o.latency.p50),
                fmt(o.latency.p99),
                format!("{:.0}", o.rps),
                cpu.map_or("-".to_owned(), fmt),
                show(cpu_ratio),
                show(p50_ratio),
                o.errors.to_string(),
            ]);
            modes.insert(
                (*label).to_owned(),
                json!({"run": o.to_json(), "cpu_ratio": cpu_ratio, "p50_ratio": p50_ratio}),
            );
        }
        json_runs.push(json!({"concurrency": c, "modes": modes}));
    }
    section.json = Value::Array(json_runs);
    section.notes.push(
        "Legacy edge, HTTP fixture backend; each gateway differs only in its telemetry section. \
         Ratios are against the off row at the same concurrency (medians of --repeat runs)."
            .to_owned(),
    );
    for (_, gw) in gateways {
        gw.stop().await;
    }
    fixture.stop().await;
    drop(sink);
    Ok(section)
}

async fn call_run(gw: &Proc, backend_pid: u32, c: usize, plan: Plan) -> anyhow::Result<Outcome> {
    let mut conns = Vec::with_capacity(c);
    for _ in 0..c {
        conns.push(Conn::Http(Edge::Legacy.open(&gw.url).await?));
    }
    let watch = [
        Watched::new("client", 0),
        Watched::new("gateway", gw.pid),
        Watched::new("backend", backend_pid),
    ];
    let template = Template::tools_call("fx_echo", Edge::Legacy)?;
    let (out, conns) = load::run(conns, Arc::new(template), plan, &watch).await;
    for conn in conns {
        conn.close().await;
    }
    Ok(out)
}
