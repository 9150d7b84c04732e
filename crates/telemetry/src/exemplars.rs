//! `mcp_server_operation_duration_seconds` with exemplars: each bucket of `/metrics`' OpenMetrics
//! page carries the trace (and server span) of the last sampled call that fell into it, so a slow
//! bucket links to a trace of a slow call.
//!
//! Only when `/metrics` is served and traces are exported: then this histogram is kept in
//! `prometheus-client`'s `HistogramWithExemplars`, whose exemplars its encoder writes
//! (`prometheus-client` 0.26 writes no exemplar supplied from elsewhere, and the OpenTelemetry SDK
//! 0.33 records none), and `/metrics` encodes it from here instead of from the SDK; OTLP still
//! gets the SDK's copy when it exports metrics. Otherwise nothing here exists or runs. Series are
//! capped like the SDK's (2,000, then one `otel_metric_overflow="true"` series), since labels come
//! from client requests.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use opentelemetry::trace::SpanContext;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use prometheus_client::metrics::family::{Family, MetricConstructor};

use crate::instruments::SECONDS;

/// A series' labels, in the order the SDK's series list them (sorted by key).
pub(crate) type Labels = Vec<(&'static str, Cow<'static, str>)>;

/// An exemplar's labels: the call's trace and server span.
type Trace = [(&'static str, String); 2];

/// The most series kept, as the SDK's cardinality limit.
const SERIES_LIMIT: usize = 2_000;

#[derive(Debug, Clone)]
struct Buckets;

impl MetricConstructor<HistogramWithExemplars<Trace>> for Buckets {
    fn new_metric(&self) -> HistogramWithExemplars<Trace> {
        HistogramWithExemplars::new(SECONDS.into_iter())
    }
}

/// The server operation durations, by series, with exemplars.
#[derive(Debug)]
pub(crate) struct ServerDurations {
    family: Family<Labels, HistogramWithExemplars<Trace>, Buckets>,
    series: AtomicUsize,
}

impl ServerDurations {
    pub(crate) fn new() -> Self {
        Self {
            family: Family::new_with_constructor(Buckets),
            series: AtomicUsize::new(0),
        }
    }

    /// Records one call of `seconds`; `span` is its server span, an exemplar when sampled.
    pub(crate) fn observe(&self, labels: Labels, seconds: f64, span: Option<&SpanContext>) {
        let exemplar = span.filter(|s| s.is_sampled()).map(|s| {
            [
                ("span_id", s.span_id().to_string()),
                ("trace_id", s.trace_id().to_string()),
            ]
        });
        let at = exemplar.as_ref().map(|_| SystemTime::now());
        if let Some(h) = self.family.get(&labels) {
            h.observe(seconds, exemplar, at);
            return;
        }
        let labels = if self.series.fetch_add(1, Ordering::Relaxed) < SERIES_LIMIT {
            labels
        } else {
            self.series.fetch_sub(1, Ordering::Relaxed);
            vec![("otel_metric_overflow", Cow::Borrowed("true"))]
        };
        self.family
            .get_or_create(&labels)
            .observe(seconds, exemplar, at);
    }

    /// Whether no call was recorded yet.
    pub(crate) fn is_empty(&self) -> bool {
        EncodeMetric::is_empty(&self.family)
    }

    /// Encodes every series under the descriptor the caller wrote.
    pub(crate) fn encode(&self, encoder: MetricEncoder<'_>) -> std::fmt::Result {
        self.family.encode(encoder)
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SpanId, TraceFlags, TraceId, TraceState};

    use super::*;

    fn labels(tool: &str) -> Labels {
        vec![
            ("gen_ai_tool_name", Cow::Owned(tool.to_owned())),
            ("mcp_method_name", Cow::Borrowed("tools/call")),
        ]
    }

    #[test]
    fn series_beyond_the_limit_share_one_overflow_series() {
        let d = ServerDurations::new();
        for i in 0..SERIES_LIMIT + 5 {
            d.observe(labels(&format!("t{i}")), 0.1, None);
        }
        d.observe(labels("t0"), 0.1, None);
        assert_eq!(d.series.load(Ordering::Relaxed), SERIES_LIMIT);
        let overflow = vec![("otel_metric_overflow", Cow::Borrowed("true"))];
        assert!(d.family.get(&overflow).is_some());
        assert!(d.family.get(&labels("t0")).is_some());
        assert!(d.family.get(&labels(&format!("t{SERIES_LIMIT}"))).is_none());
    }

    #[test]
    fn only_sampled_spans_become_exemplars() {
        let span = |flags| {
            SpanContext::new(
                TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap_or(TraceId::INVALID),
                SpanId::from_hex("00f067aa0ba902b7").unwrap_or(SpanId::INVALID),
                flags,
                false,
                TraceState::default(),
            )
        };
        let d = std::sync::Arc::new(ServerDurations::new());
        d.observe(labels("a"), 0.5, Some(&span(TraceFlags::SAMPLED)));
        d.observe(labels("b"), 0.5, Some(&span(TraceFlags::NOT_SAMPLED)));
        let page = crate::exposition::tests::open_metrics_of(d);
        let with = page
            .lines()
            .filter(|l| l.contains("# {span_id=\"00f067aa0ba902b7\",trace_id=\"4bf92f3577b34da6a3ce929d0e0e4736\"} 0.5 "))
            .collect::<Vec<_>>();
        assert_eq!(with.len(), 1, "{page}");
        assert!(with[0].contains("gen_ai_tool_name=\"a\""), "{page}");
        assert!(with[0].contains("le=\"0.5\""), "{page}");
    }
}
