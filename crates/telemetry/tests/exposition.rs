//! `/metrics` as others read it. Both formats are parsed by a parser we did not write: the
//! Python `prometheus_client` package's text parser (Prometheus 0.0.4) and its OpenMetrics parser,
//! which refuses what the OpenMetrics spec refuses (no `# EOF`, a unit the name does not end in,
//! buckets out of order, a malformed exemplar). Every metric is recorded once, with label values
//! that need escaping, and every parsed family is held against docs/metrics.md (name, kind,
//! labels). With traces exported, a sampled slow call leaves its trace id as an exemplar on its
//! duration bucket. The parser test is skipped with a note when .ci/.venv (`.ci/venv.sh`) is
//! missing, except under `CI=true`.

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::Duration;

use serde_json::{Value, json};
use vmcp_telemetry::{BackendCall, Format, Outcome, ServerRequest};

const PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/.venv/bin/python");

/// Parses the page on stdin with `prometheus_client` and prints its families as JSON.
const PARSE: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families as prometheus
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
parse = openmetrics if sys.argv[1] == "openmetrics" else prometheus
json.dump([{"name": f.name, "type": f.type, "unit": f.unit,
            "samples": [{"name": s.name, "labels": s.labels} for s in f.samples]}
           for f in parse(sys.stdin.read())], sys.stdout)
"#;

/// A tool name that needs every escape the formats have, and more than ASCII.
const AWKWARD: &str = "say \"hi\" \\ now\nplease ☃";

fn parser_available() -> bool {
    let ok = Path::new(PYTHON).exists()
        && Command::new(PYTHON)
            .args(["-c", "import prometheus_client"])
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must have prometheus_client in .ci/.venv (run .ci/venv.sh)"
        );
        eprintln!("note: skipping: Python prometheus_client is not in .ci/.venv (run .ci/venv.sh)");
    }
    ok
}

fn parse(format: &str, page: &str) -> Vec<Value> {
    let mut child = Command::new(PYTHON)
        .args(["-c", PARSE, format])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "prometheus_client refused the {format} page: {}\n{page}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The documented metrics: family name as the parsers give it (counters without `_total`) →
/// (kind, labels).
fn documented() -> BTreeMap<String, (String, BTreeSet<String>)> {
    let page = include_str!("../../../docs/metrics.md");
    let tick = |s: &str| s.trim().trim_matches('`').to_owned();
    page.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let labels = cells[3]
                .split(',')
                .map(tick)
                .filter(|s| !s.is_empty())
                .collect();
            let name = tick(cells[1]);
            let family = match name.strip_suffix("_total") {
                Some(base) if cells[2] == "counter" => base.to_owned(),
                _ => name,
            };
            (family, (cells[2].to_owned(), labels))
        })
        .collect()
}

/// The trace of the sampled slow call, and of one that was not sampled.
const SAMPLED: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const NOT_SAMPLED: &str = "0af7651916cd43dd8448eb211c80319c";

/// Telemetry as a gateway with `/metrics` and traces has it, every instrument recorded once.
fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // Traces go to a port nobody listens on: exporting them is not what is tested here.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let cfg = vmcp_config::TelemetryConfig {
            enable_prometheus_metrics_path: true,
            endpoint: Some(endpoint),
            tracing_enabled: true,
            sampling_rate: 1.0,
            ..Default::default()
        };
        let t = vmcp_telemetry::install(&cfg, "parsers", rt.handle().clone()).unwrap();
        rt.block_on(record_everything());
        // Kept for the process: the page is read by each test.
        std::mem::forget((t, rt));
    });
}

/// Records every instrument at least once.
async fn record_everything() {
    for (trace, flags, took) in [(SAMPLED, "01", 60), (NOT_SAMPLED, "00", 0)] {
        let params = json!({"name": "slow", "arguments": {},
            "_meta": {"traceparent": format!("00-{trace}-00f067aa0ba902b7-{flags}")}});
        let r = ServerRequest::start("tools/call", Some(&params), None, None, None);
        r.run(tokio::time::sleep(Duration::from_millis(took)), |()| {
            Outcome {
                status: 200,
                error: None,
            }
        })
        .await;
    }
    let call = |name: &str| json!({"name": name, "arguments": {}});
    for (tool, error) in [("weather_echo", None), (AWKWARD, Some("-32602"))] {
        let r = ServerRequest::start(
            "tools/call",
            Some(&call(tool)),
            Some(&json!(1)),
            Some("s"),
            Some("2025-11-25"),
        );
        r.run(async {}, |()| Outcome {
            status: if error.is_some() { 400 } else { 200 },
            error: error.map(Into::into),
        })
        .await;
        let c = BackendCall::start("weather", "stdio", "tools/call", Some(&call(tool)));
        c.finish(error.map(Into::into));
    }
    vmcp_telemetry::session_opened();
    vmcp_telemetry::backends_discovered(1);
    vmcp_telemetry::health_transition("weather", "healthy", "unhealthy");
    vmcp_telemetry::rate_limit_decision(false, "per_user");
    vmcp_telemetry::rate_limit_store_error(true);
    vmcp_telemetry::cache_lookup("capabilities", true);
    vmcp_telemetry::catalog_size("tools", 2);
    vmcp_telemetry::pin_finding("tools", "changed", true);
    vmcp_telemetry::pins_pending(1);
    let took = Duration::from_millis(3);
    vmcp_telemetry::workflow_finished("flow", took, false);
    vmcp_telemetry::find_tool_finished(took, Ok((2, 87.5)));
    vmcp_telemetry::find_tool_finished(took, Err(()));
    vmcp_telemetry::optimizer_call_tool_finished(AWKWARD, took, Ok(true));
    vmcp_telemetry::optimizer_call_tool_finished("weather_echo", took, Err(()));
}

fn check(format: &str, families: &[Value], docs: &BTreeMap<String, (String, BTreeSet<String>)>) {
    let mut seen = BTreeSet::new();
    let mut awkward_label_read_back = false;
    for f in families {
        let name = f["name"].as_str().unwrap();
        let Some((kind, allowed)) = docs.get(name) else {
            panic!("{format}: family {name} is not in docs/metrics.md");
        };
        assert_eq!(f["type"], kind.as_str(), "{format}: {name}");
        if format == "openmetrics" && name.ends_with("_seconds") {
            assert_eq!(f["unit"], "seconds", "{format}: {name}");
        }
        for s in f["samples"].as_array().unwrap() {
            for (key, value) in s["labels"].as_object().unwrap() {
                let bucket = s["name"].as_str().unwrap().ends_with("_bucket");
                assert!(
                    allowed.contains(key) || (bucket && key == "le"),
                    "{format}: {name}: label {key} is not documented"
                );
                awkward_label_read_back |= value == AWKWARD;
            }
        }
        seen.insert(name.to_owned());
    }
    let missing: Vec<_> = docs.keys().filter(|d| !seen.contains(*d)).collect();
    assert!(missing.is_empty(), "{format}: not on the page: {missing:?}");
    assert!(
        awkward_label_read_back,
        "{format}: no label value read back as {AWKWARD:?}"
    );
}

#[test]
fn both_formats_parse_with_prometheus_client_and_match_the_docs() {
    if !parser_available() {
        return;
    }
    setup();
    let docs = documented();
    for (name, format) in [
        ("prometheus", Format::Prometheus),
        ("openmetrics", Format::OpenMetrics),
    ] {
        let page = vmcp_telemetry::metrics_page(format).unwrap().unwrap();
        check(name, &parse(name, &page), &docs);
    }
}

#[test]
fn a_sampled_slow_call_leaves_its_trace_on_its_bucket() {
    setup();
    let page = vmcp_telemetry::metrics_page(Format::OpenMetrics)
        .unwrap()
        .unwrap();
    let with = |trace: &str| -> Vec<&str> {
        page.lines()
            .filter(|l| l.starts_with("mcp_server_operation_duration_seconds_bucket{"))
            .filter(|l| l.contains(&format!("trace_id=\"{trace}\"")))
            .collect()
    };
    let lines = with(SAMPLED);
    assert_eq!(lines.len(), 1, "{page}");
    // `..._bucket{le="0.1",gen_ai_tool_name="slow",...} 1 # {span_id="…",trace_id="…"} 0.06… 1.7e9`
    let (sample, exemplar) = lines[0].split_once(" # ").unwrap();
    assert!(sample.contains("gen_ai_tool_name=\"slow\""), "{sample}");
    let le: f64 = sample
        .split("le=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .map(|v| {
            if v == "+Inf" {
                f64::INFINITY
            } else {
                v.parse().unwrap()
            }
        })
        .unwrap();
    let value: f64 = exemplar.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(value >= 0.06 && value <= le, "{}", lines[0]);
    assert!(with(NOT_SAMPLED).is_empty(), "{page}");

    // Prometheus text has no exemplars; the series is there all the same.
    let text = vmcp_telemetry::metrics_page(Format::Prometheus)
        .unwrap()
        .unwrap();
    assert!(!text.contains(" # {"), "{text}");
    assert!(
        text.lines().any(
            |l| l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("gen_ai_tool_name=\"slow\"")
                && l.ends_with(" 2")
        ),
        "{text}"
    );
}
