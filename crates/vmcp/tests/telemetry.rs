//! Metrics and traces through the real binary: `/metrics` scraped and checked against the list in
//! docs/metrics.md; a tools/call's server and client spans received by an OTLP collector (the
//! test kit's receiver) in the client's trace, with the backend getting that trace's context, and
//! metrics pushed there too; and `samplingRate: 0` exporting no span.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::{Client, Gateway, eventually, http, http_backend, stdio_backend, text_of};
use serde_json::json;
use vmcp_testkit::{FaultProxy, FixtureOptions, OtlpReceiver, ReceivedSpan, serve_http_in_process};

/// The documented metrics: Prometheus name → (kind, labels).
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
            (tick(cells[1]), (cells[2].to_owned(), labels))
        })
        .collect()
}

/// One sample line of Prometheus text: series name and its labels.
fn parse_sample(line: &str) -> (String, BTreeMap<String, String>) {
    let Some(open) = line.find('{') else {
        let name = line.split(' ').next().unwrap();
        return (name.to_owned(), BTreeMap::new());
    };
    let name = line[..open].to_owned();
    let mut labels = BTreeMap::new();
    let mut rest = &line[open + 1..];
    while !rest.starts_with('}') {
        let eq = rest.find('=').unwrap();
        let key = rest[..eq].to_owned();
        let mut value = String::new();
        let mut chars = rest[eq + 2..].char_indices();
        let end = loop {
            match chars.next().unwrap() {
                (_, '\\') => {
                    let (_, c) = chars.next().unwrap();
                    value.push(if c == 'n' { '\n' } else { c });
                }
                (i, '"') => break eq + 2 + i + 1,
                (_, c) => value.push(c),
            }
        };
        labels.insert(key, value);
        rest = rest[end..].trim_start_matches(',');
    }
    (name, labels)
}

/// The documented family a series belongs to (histograms expose `_bucket`, `_sum`, `_count`).
fn family<'d>(
    series: &str,
    docs: &'d BTreeMap<String, (String, BTreeSet<String>)>,
) -> Option<(&'d String, &'d BTreeSet<String>, bool)> {
    if let Some((name, (_, labels))) = docs.get_key_value(series) {
        return Some((name, labels, false));
    }
    ["_bucket", "_sum", "_count"].iter().find_map(|suffix| {
        let base = series.strip_suffix(suffix)?;
        let (name, (kind, labels)) = docs.get_key_value(base)?;
        (kind == "histogram").then_some((name, labels, *suffix == "_bucket"))
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_scrape_matches_the_documented_list() {
    let gw = Gateway::start(&format!(
        "name: tel\nbackends:\n{}telemetry:\n  enablePrometheusMetricsPath: true\n",
        stdio_backend("weather", "")
    ));
    let c = Client::connect(&gw.url).await;
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "hi"})).await),
        "hi"
    );
    assert!(c.call("nope", json!({})).await.get("error").is_some());
    c.ok("tools/list", json!({})).await;

    let resp = http()
        .get(format!("{}/metrics", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let page = resp.text().await.unwrap();

    let docs = documented();
    let mut seen = BTreeSet::new();
    for line in page
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, labels) = parse_sample(line);
        let Some((name, allowed, bucket)) = family(&series, &docs) else {
            panic!("{series} is not in docs/metrics.md:\n{line}");
        };
        for key in labels.keys() {
            assert!(
                allowed.contains(key) || (bucket && key == "le"),
                "{series}: label {key} is not documented for {name}"
            );
        }
        seen.insert(name.clone());
    }
    for expected in [
        "toolhive_mcp_requests_total",
        "toolhive_mcp_request_duration_seconds",
        "mcp_server_operation_duration_seconds",
        "toolhive_mcp_tool_calls_total",
        "mcp_client_operation_duration_seconds",
        "toolhive_vmcp_backend_requests_total",
        "toolhive_vmcp_backend_requests_duration_seconds",
        "toolhive_vmcp_backends_discovered",
    ] {
        assert!(seen.contains(expected), "{expected} not scraped:\n{page}");
    }
    // ToolHive's dashboards query these exact series.
    assert!(
        page.contains("toolhive_mcp_tool_calls_total{server=\"tel\",tool=\"weather_echo\"} 1"),
        "{page}"
    );
    assert!(
        page.contains("toolhive_vmcp_backends_discovered 1"),
        "{page}"
    );
    // The unknown tool's failure is labelled with its JSON-RPC code.
    assert!(
        page.lines().any(
            |l| l.starts_with("mcp_server_operation_duration_seconds_count")
                && l.contains("error_type=\"-32602\"")
        ),
        "{page}"
    );
}

/// A scrape that asks for OpenMetrics gets it (typed families, `# EOF`); one that asks for
/// Prometheus text, or says nothing, gets text 0.0.4.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_negotiates_openmetrics() {
    let gw = Gateway::start(&format!(
        "name: tel\nbackends:\n{}telemetry:\n  enablePrometheusMetricsPath: true\n",
        stdio_backend("weather", "")
    ));
    let c = Client::connect(&gw.url).await;
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "hi"})).await),
        "hi"
    );
    let scrape = |accept: Option<&'static str>| {
        let mut request = http().get(format!("{}/metrics", gw.base));
        if let Some(a) = accept {
            request = request.header("accept", a);
        }
        async move {
            let resp = request.send().await.unwrap();
            assert_eq!(resp.status(), 200);
            let header = |h: &str| resp.headers()[h].to_str().unwrap().to_owned();
            let (content_type, vary) = (header("content-type"), header("vary"));
            (content_type, vary, resp.text().await.unwrap())
        }
    };

    // What Prometheus sends: OpenMetrics preferred over text.
    let (content_type, vary, page) = scrape(Some(
        "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.1",
    ))
    .await;
    assert_eq!(
        content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert_eq!(vary, "accept");
    assert!(page.ends_with("\n# EOF\n"), "{page}");
    assert!(
        page.lines()
            .any(|l| l == "# TYPE toolhive_mcp_tool_calls counter"),
        "{page}"
    );
    assert!(
        page.contains("toolhive_mcp_tool_calls_total{server=\"tel\",tool=\"weather_echo\"} 1"),
        "{page}"
    );
    assert!(
        page.lines()
            .any(|l| l == "# UNIT mcp_server_operation_duration_seconds seconds"),
        "{page}"
    );

    for accept in [Some("text/plain;version=0.0.4"), None] {
        let (content_type, _, page) = scrape(accept).await;
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        assert!(!page.contains("# EOF"), "{page}");
        assert!(
            page.lines()
                .any(|l| l == "# TYPE toolhive_mcp_tool_calls_total counter"),
            "{page}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_path_is_off_without_the_flag() {
    let gw = Gateway::start(&format!(
        "name: tel\nbackends:\n{}",
        stdio_backend("weather", "")
    ));
    let resp = http()
        .get(format!("{}/metrics", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

/// A gateway tracing every request to `receiver`, in front of an HTTP fixture seen through a
/// recording proxy.
async fn traced_gateway(
    receiver: &OtlpReceiver,
    sampling: &str,
) -> (Gateway, FaultProxy, tokio::task::JoinHandle<()>) {
    let (backend_url, task) = serve_http_in_process(FixtureOptions {
        name: "weather".into(),
        ..FixtureOptions::default()
    })
    .await;
    let proxy = FaultProxy::start(&backend_url).await;
    let gw = Gateway::start_env(
        &format!(
            "name: tel\nbackends:\n{}telemetry:\n  endpoint: {}\n  insecure: true\n  tracingEnabled: true\n  metricsEnabled: true\n  samplingRate: \"{sampling}\"\n  serviceName: vmcp-under-test\n",
            http_backend("weather", &proxy.url),
            receiver.endpoint
        ),
        &[],
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
        ],
    );
    (gw, proxy, task)
}

async fn spans_of(receiver: &OtlpReceiver, trace_id: &str, n: usize) -> Vec<ReceivedSpan> {
    let arrived = eventually(Duration::from_secs(15), || async {
        receiver
            .spans()
            .iter()
            .filter(|s| s.trace_id == trace_id)
            .count()
            >= n
    })
    .await;
    let spans: Vec<_> = receiver
        .spans()
        .into_iter()
        .filter(|s| s.trace_id == trace_id)
        .collect();
    assert!(arrived, "fewer than {n} spans of {trace_id}: {spans:#?}");
    spans
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_call_trace_reaches_the_collector_and_the_backend() {
    let receiver = OtlpReceiver::start().await;
    let (gw, proxy, _backend) = traced_gateway(&receiver, "1").await;
    let c = Client::connect(&gw.url).await;

    // Context from the HTTP header.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let body = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "weather_echo", "arguments": {"text": "traced"}}});
    let traceparent = format!("00-{trace_id}-{parent}-01");
    let a = c
        .post_bytes(
            c.session.clone(),
            serde_json::to_vec(&body).unwrap(),
            &[("traceparent", &traceparent)],
        )
        .await;
    assert_eq!(text_of(&a.body), "traced", "{}", a.text);

    let spans = spans_of(&receiver, trace_id, 2).await;
    let server = spans
        .iter()
        .find(|s| s.kind == "server")
        .unwrap_or_else(|| panic!("no server span: {spans:#?}"));
    assert_eq!(server.name, "tools/call weather_echo");
    assert_eq!(server.parent_span_id, parent, "{server:#?}");
    assert_eq!(server.attribute("mcp.method.name"), Some("tools/call"));
    assert_eq!(server.attribute("gen_ai.tool.name"), Some("weather_echo"));
    assert_eq!(server.attribute("mcp.session.id"), c.session.as_deref());
    assert_eq!(server.service, "vmcp-under-test");
    let client = spans
        .iter()
        .find(|s| s.kind == "client")
        .unwrap_or_else(|| panic!("no client span: {spans:#?}"));
    assert_eq!(client.name, "tools/call echo");
    assert_eq!(client.parent_span_id, server.span_id, "{spans:#?}");
    assert_eq!(client.attribute("target.workload_name"), Some("weather"));

    // The backend got the client span as its parent, as a header and in `_meta`.
    let backend_parent = format!("00-{trace_id}-{}-01", client.span_id);
    let sent = proxy.sent().to_ascii_lowercase();
    assert!(
        sent.contains(&format!("traceparent: {backend_parent}\r\n")),
        "no traceparent header {backend_parent} in:\n{sent}"
    );
    assert!(
        sent.contains(&format!("\"traceparent\":\"{backend_parent}\"")),
        "no _meta.traceparent {backend_parent} in:\n{sent}"
    );

    // Context from `params._meta`, no header: the same shape of trace.
    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    let parent = "b7ad6b7169203331";
    let body = json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
        "params": {"name": "weather_echo", "arguments": {"text": "meta"},
            "_meta": {"traceparent": format!("00-{trace_id}-{parent}-01")}}});
    let a = c.post_raw(c.session.clone(), body).await;
    assert_eq!(text_of(&a.body), "meta", "{}", a.text);
    let spans = spans_of(&receiver, trace_id, 2).await;
    let server = spans.iter().find(|s| s.kind == "server").unwrap();
    assert_eq!(server.parent_span_id, parent, "{spans:#?}");
    let client = spans.iter().find(|s| s.kind == "client").unwrap();
    assert_eq!(client.parent_span_id, server.span_id, "{spans:#?}");

    // Metrics go to the same collector over OTLP, under their instrument names.
    let pushed = eventually(Duration::from_secs(10), || async {
        let names = receiver.metric_names();
        [
            "mcp.server.operation.duration",
            "toolhive_vmcp_backend_requests",
        ]
        .iter()
        .all(|n| names.iter().any(|m| m == n))
    })
    .await;
    assert!(pushed, "{:?}", receiver.metric_names());
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_rate_zero_exports_no_spans() {
    let receiver = OtlpReceiver::start().await;
    let (mut gw, proxy, _backend) = traced_gateway(&receiver, "0").await;
    let c = Client::connect(&gw.url).await;
    for text in ["one", "two"] {
        assert_eq!(
            text_of(&c.call("weather_echo", json!({"text": text})).await),
            text
        );
    }
    // Shutdown flushes whatever the batch holds: nothing may arrive.
    assert!(gw.terminate().success(), "{}", gw.logs());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.spans().is_empty(), "{:#?}", receiver.spans());
    // Context still propagates, marked not sampled.
    let sent = proxy.sent().to_ascii_lowercase();
    assert!(
        sent.lines()
            .any(|l| l.starts_with("traceparent: 00-") && l.trim_end().ends_with("-00")),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn optimizer_find_tool_and_call_tool_are_counted() {
    let gw = Gateway::start(&format!(
        "name: tel\nbackends:\n{}optimizer: {{}}\ntelemetry:\n  enablePrometheusMetricsPath: true\n",
        stdio_backend("weather", "")
    ));
    let c = Client::connect(&gw.url).await;
    let found = c
        .call(
            "find_tool",
            json!({"tool_description": "echo some text back"}),
        )
        .await;
    assert!(found.get("result").is_some(), "{found}");
    let called = c
        .call(
            "call_tool",
            json!({"tool_name": "weather_echo", "parameters": {"text": "hi"}}),
        )
        .await;
    assert_eq!(text_of(&called), "hi", "{called}");
    let page = http()
        .get(format!("{}/metrics", gw.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("toolhive_vmcp_optimizer_find_tool_requests_total 1"),
        "{page}"
    );
    assert!(
        page.contains("toolhive_vmcp_optimizer_find_tool_duration_seconds_count 1"),
        "{page}"
    );
    assert!(
        page.contains(
            "toolhive_vmcp_optimizer_call_tool_requests_total{tool_name=\"weather_echo\"} 1"
        ),
        "{page}"
    );
}

/// Requests answered outside the dispatch get their server span too: `initialize`,
/// `logging/setLevel` and `resources/subscribe` (Legacy), `server/discover` (2026-07-28).
#[tokio::test(flavor = "multi_thread")]
async fn session_and_discovery_requests_get_server_spans() {
    let receiver = OtlpReceiver::start().await;
    let (gw, _proxy, _backend) = traced_gateway(&receiver, "1").await;
    let c = Client::connect(&gw.url).await;
    let level = c
        .request("logging/setLevel", json!({"level": "info"}))
        .await;
    assert!(level.get("result").is_some(), "{level}");
    let discover = common::eras::ModernClient::new(&gw.url)
        .request("server/discover", json!({}))
        .await;
    assert_eq!(discover.status, 200, "{}", discover.text);
    let wanted = ["initialize", "logging/setLevel", "server/discover"];
    let arrived = eventually(Duration::from_secs(15), || async {
        let spans = receiver.spans();
        wanted
            .iter()
            .all(|w| spans.iter().any(|s| s.kind == "server" && s.name == *w))
    })
    .await;
    let names: Vec<String> = receiver.spans().into_iter().map(|s| s.name).collect();
    assert!(arrived, "missing server spans among {names:?}");
    let set_level = receiver
        .spans()
        .into_iter()
        .find(|s| s.name == "logging/setLevel")
        .unwrap();
    assert_eq!(set_level.attribute("mcp.session.id"), c.session.as_deref());
}
