use std::sync::Arc;

use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::metrics::{ManualReader, SdkMeterProvider};

use super::*;

#[test]
fn names_get_unit_suffixes_once() {
    let full = |name, unit| {
        let (name, unit) = name_and_unit(name, unit);
        match unit {
            Some(u) => format!("{name}_{}", u.as_str()),
            None => name,
        }
    };
    assert_eq!(
        full("mcp.server.operation.duration", "s"),
        "mcp_server_operation_duration_seconds"
    );
    assert_eq!(
        full("toolhive_vmcp_optimizer_token_savings_percent", "%"),
        "toolhive_vmcp_optimizer_token_savings_percent"
    );
    assert_eq!(
        full("toolhive_vmcp_optimizer_find_tool_results", "{tools}"),
        "toolhive_vmcp_optimizer_find_tool_results"
    );
}

/// A scrape over a fresh provider, with `server_durations` if given.
fn scrape(server_durations: Option<Arc<ServerDurations>>) -> (Scrape, SdkMeterProvider) {
    let reader = Scrape {
        reader: Arc::new(ManualReader::builder().build()),
        server_durations,
    };
    let provider = SdkMeterProvider::builder()
        .with_reader(reader.clone())
        .build();
    (reader, provider)
}

/// The OpenMetrics page of a scrape holding only `durations`.
pub(crate) fn open_metrics_of(durations: Arc<ServerDurations>) -> String {
    let (reader, _provider) = scrape(Some(durations));
    encode(&registry(reader), Format::OpenMetrics).unwrap_or_else(|e| panic!("{e}"))
}

/// Both pages of a provider holding a counter, a histogram and an up-down counter.
fn pages() -> (String, String) {
    let (reader, provider) = scrape(None);
    let m = provider.meter("test");
    let c = m
        .u64_counter("toolhive_mcp_requests")
        .with_description("Requests")
        .build();
    c.add(
        2,
        &[
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("status", "ok"),
        ],
    );
    c.add(1, &[KeyValue::new("tool", "say \"hi\"\\now\nplease")]);
    let h = m
        .f64_histogram("mcp.server.operation.duration")
        .with_unit("s")
        .with_boundaries(vec![0.1, 1.0])
        .build();
    h.record(0.05, &[]);
    h.record(0.5, &[]);
    h.record(5.0, &[]);
    let u = m
        .i64_up_down_counter("toolhive_mcp_active_connections")
        .build();
    u.add(3, &[]);
    u.add(-1, &[]);
    let registry = registry(reader);
    let text = encode(&registry, Format::Prometheus).unwrap_or_else(|e| panic!("{e}"));
    let open = encode(&registry, Format::OpenMetrics).unwrap_or_else(|e| panic!("{e}"));
    (text, open)
}

fn has(page: &str, line: &str) {
    assert!(page.lines().any(|l| l == line), "no {line:?} in:\n{page}");
}

#[test]
fn prometheus_text_keeps_the_series_of_the_hand_written_encoder() {
    let (text, _) = pages();
    for line in [
        "# HELP toolhive_mcp_requests_total Requests",
        "# TYPE toolhive_mcp_requests_total counter",
        "toolhive_mcp_requests_total{mcp_method_name=\"tools/call\",status=\"ok\"} 2",
        "# TYPE mcp_server_operation_duration_seconds histogram",
        "mcp_server_operation_duration_seconds_bucket{le=\"0.1\"} 1",
        "mcp_server_operation_duration_seconds_bucket{le=\"1\"} 2",
        "mcp_server_operation_duration_seconds_bucket{le=\"+Inf\"} 3",
        "mcp_server_operation_duration_seconds_sum 5.55",
        "mcp_server_operation_duration_seconds_count 3",
        "# TYPE toolhive_mcp_active_connections gauge",
        "toolhive_mcp_active_connections 2",
    ] {
        has(&text, line);
    }
    assert!(!text.contains("# EOF"), "{text}");
    assert!(!text.contains("# UNIT"), "{text}");
}

#[test]
fn label_values_are_escaped() {
    let (text, open) = pages();
    let line = "toolhive_mcp_requests_total{tool=\"say \\\"hi\\\"\\\\now\\nplease\"} 1";
    has(&text, line);
    has(&open, line);
}

#[test]
fn openmetrics_types_families_and_ends_with_eof() {
    let (_, open) = pages();
    for line in [
        "# TYPE toolhive_mcp_requests counter",
        "toolhive_mcp_requests_total{mcp_method_name=\"tools/call\",status=\"ok\"} 2",
        "# TYPE mcp_server_operation_duration_seconds histogram",
        "# UNIT mcp_server_operation_duration_seconds seconds",
        "mcp_server_operation_duration_seconds_bucket{le=\"1.0\"} 2",
        "mcp_server_operation_duration_seconds_bucket{le=\"+Inf\"} 3",
        "mcp_server_operation_duration_seconds_count 3",
        "toolhive_mcp_active_connections 2",
    ] {
        has(&open, line);
    }
    assert!(open.ends_with("\n# EOF\n"), "{open}");
}

#[test]
fn label_keys_are_sanitised_and_borrowed_when_valid() {
    assert!(matches!(
        label_key("status_code"),
        Cow::Borrowed("status_code")
    ));
    assert_eq!(label_key("gen_ai.tool.name"), "gen_ai_tool_name");
    assert_eq!(label_key("a:b"), "a_b");
    assert_eq!(label_key("9lives"), "_9lives");
}
