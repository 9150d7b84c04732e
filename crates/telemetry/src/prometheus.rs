//! Prometheus text exposition (format 0.0.4) of the SDK's collected metrics, written here rather
//! than with `opentelemetry-prometheus`, which is built on the `prometheus` crate (and its
//! protobuf stack) for what is a page of formatting.
//!
//! Names follow the OpenTelemetry-to-Prometheus rules ToolHive's Go exporter applies, so its
//! dashboards find the same series: characters outside `[a-zA-Z0-9_:]` become `_`, a unit adds
//! its suffix (`s` → `_seconds`, `%` → `_percent`, `By` → `_bytes`; `{…}` units add none),
//! monotonic sums add `_total`. Attribute keys are sanitised the same way.

use std::fmt::Write;

use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::{
    AggregatedMetrics, Metric, MetricData, ResourceMetrics, SumDataPoint,
};

/// The text page for everything in `rm`.
pub(crate) fn encode(rm: &ResourceMetrics) -> String {
    let mut out = String::with_capacity(8 * 1024);
    for scope in rm.scope_metrics() {
        for metric in scope.metrics() {
            metric_text(&mut out, metric);
        }
    }
    out
}

/// The Prometheus name of an instrument (without `_total` or histogram suffixes).
pub(crate) fn base_name(name: &str, unit: &str) -> String {
    let mut n = sanitize(name);
    let suffix = match unit {
        "s" => "seconds",
        "ms" => "milliseconds",
        "%" => "percent",
        "By" => "bytes",
        "1" => "ratio",
        _ => "",
    };
    if !suffix.is_empty() && !n.ends_with(suffix) {
        n.push('_');
        n.push_str(suffix);
    }
    n
}

fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

fn metric_text(out: &mut String, m: &Metric) {
    let base = base_name(m.name(), m.unit());
    match m.data() {
        AggregatedMetrics::F64(d) => data_text(out, &base, m.description(), d),
        AggregatedMetrics::U64(d) => data_text(out, &base, m.description(), d),
        AggregatedMetrics::I64(d) => data_text(out, &base, m.description(), d),
    }
}

/// A number as Prometheus writes it.
trait Number: Copy {
    fn text(self) -> String;
}

impl Number for f64 {
    fn text(self) -> String {
        float(self)
    }
}
impl Number for u64 {
    fn text(self) -> String {
        self.to_string()
    }
}
impl Number for i64 {
    fn text(self) -> String {
        self.to_string()
    }
}

fn float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        v.to_string()
    }
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let help = help.replace('\\', "\\\\").replace('\n', "\\n");
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn data_text<T: Number>(out: &mut String, base: &str, help: &str, data: &MetricData<T>) {
    match data {
        MetricData::Gauge(g) => {
            header(out, base, help, "gauge");
            for p in g.data_points() {
                sample(out, base, p.attributes(), None, &p.value().text());
            }
        }
        MetricData::Sum(s) => {
            // A monotonic cumulative sum is a counter; anything else reads as a gauge.
            let counter = s.is_monotonic() && s.temporality() == Temporality::Cumulative;
            let name = if counter {
                format!("{base}_total")
            } else {
                base.to_owned()
            };
            header(out, &name, help, if counter { "counter" } else { "gauge" });
            for p in s.data_points() {
                sum_point(out, &name, p);
            }
        }
        MetricData::Histogram(h) => {
            header(out, base, help, "histogram");
            let bucket = format!("{base}_bucket");
            for p in h.data_points() {
                let mut cumulative = 0u64;
                for (bound, count) in p.bounds().zip(p.bucket_counts()) {
                    cumulative += count;
                    sample(
                        out,
                        &bucket,
                        p.attributes(),
                        Some(&float(bound)),
                        &cumulative.to_string(),
                    );
                }
                sample(
                    out,
                    &bucket,
                    p.attributes(),
                    Some("+Inf"),
                    &p.count().to_string(),
                );
                sample(
                    out,
                    &format!("{base}_sum"),
                    p.attributes(),
                    None,
                    &p.sum().text(),
                );
                sample(
                    out,
                    &format!("{base}_count"),
                    p.attributes(),
                    None,
                    &p.count().to_string(),
                );
            }
        }
        // Exponential histograms are never configured here.
        MetricData::ExponentialHistogram(_) => {}
    }
}

fn sum_point<T: Number>(out: &mut String, name: &str, p: &SumDataPoint<T>) {
    sample(out, name, p.attributes(), None, &p.value().text());
}

fn sample<'a>(
    out: &mut String,
    name: &str,
    attributes: impl Iterator<Item = &'a KeyValue>,
    le: Option<&str>,
    value: &str,
) {
    out.push_str(name);
    let mut labels: Vec<(String, String)> = attributes
        .map(|kv| (sanitize(kv.key.as_str()), label_value(&kv.value)))
        .collect();
    // Sorted, so a series reads the same on every scrape.
    labels.sort();
    if let Some(le) = le {
        labels.push(("le".into(), le.into()));
    }
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", escape(v));
        }
        out.push('}');
    }
    out.push(' ');
    out.push_str(value);
    out.push('\n');
}

fn label_value(v: &Value) -> String {
    v.as_str().into_owned()
}

fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_unit_suffixes_once() {
        assert_eq!(
            base_name("mcp.server.operation.duration", "s"),
            "mcp_server_operation_duration_seconds"
        );
        assert_eq!(
            base_name("toolhive_vmcp_optimizer_token_savings_percent", "%"),
            "toolhive_vmcp_optimizer_token_savings_percent"
        );
        assert_eq!(
            base_name("toolhive_vmcp_optimizer_find_tool_results", "{tools}"),
            "toolhive_vmcp_optimizer_find_tool_results"
        );
    }

    #[test]
    fn encodes_counters_gauges_and_histograms() {
        use opentelemetry::metrics::MeterProvider as _;
        use opentelemetry_sdk::metrics::reader::MetricReader as _;
        use opentelemetry_sdk::metrics::{ManualReader, SdkMeterProvider};
        use std::sync::Arc;

        let reader = Arc::new(ManualReader::builder().build());
        let provider = SdkMeterProvider::builder()
            .with_reader(crate::Scrape(reader.clone()))
            .build();
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
        let mut rm = ResourceMetrics::default();
        reader.collect(&mut rm).unwrap_or_else(|e| panic!("{e}"));
        let text = encode(&rm);
        for line in [
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
            assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
