//! `/metrics` pages from the SDK's collected metrics, encoded by `prometheus-client` (the
//! Prometheus project's Rust client) in Prometheus text 0.0.4 or OpenMetrics 1.0 text.
//!
//! The OpenTelemetry SDK stays the store of the measurements: one record feeds both this page and
//! OTLP, and its cardinality limit (2,000 series per instrument) bounds what labels taken from
//! client requests can grow to. (The exception, the server durations kept with exemplars, is
//! `crate::exemplars`.) [`Scrape`] is the SDK reader `/metrics` collects through and
//! the `prometheus-client` collector that hands each collected data point to the encoder, so the
//! formatting, escaping and OpenMetrics framing are the crate's; what stays here is the mapping
//! of OpenTelemetry's names to Prometheus', as ToolHive's Go exporter applies it so its
//! dashboards find the same series: characters outside `[a-zA-Z0-9_:]` become `_`, a unit adds
//! its suffix (`s` → `_seconds`, `%` → `_percent`, `By` → `_bytes`; `{…}` units add none),
//! monotonic sums are counters (`_total`). Attribute keys are sanitised the same way.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{
    AggregatedMetrics, HistogramDataPoint, Metric, MetricData, ResourceMetrics,
};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::exemplar::Exemplar;
use prometheus_client::registry::{Registry, Unit};

use crate::exemplars::ServerDurations;
use crate::instruments::{SERVER_DURATION, SERVER_DURATION_HELP};
use crate::{Format, TelemetryError};

/// The reader `/metrics` collects through, shared between the meter provider (as a reader) and
/// the registry (as a collector), and the server durations kept with exemplars, if they are.
#[derive(Debug, Clone)]
pub(crate) struct Scrape {
    pub(crate) reader: Arc<ManualReader>,
    pub(crate) server_durations: Option<Arc<ServerDurations>>,
}

impl MetricReader for Scrape {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.reader.register_pipeline(pipeline);
    }
    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.reader.collect(rm)
    }
    fn force_flush(&self) -> OTelSdkResult {
        self.reader.force_flush()
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.reader.shutdown_with_timeout(timeout)
    }
    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.reader.temporality(kind)
    }
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let mut rm = ResourceMetrics::default();
        if let Err(e) = self.reader.collect(&mut rm) {
            tracing::warn!("telemetry: collecting metrics: {e}");
        }
        let kept_here = self.server_durations.as_ref();
        for scope in rm.scope_metrics() {
            for metric in scope.metrics() {
                if kept_here.is_none() || metric.name() != SERVER_DURATION {
                    encode_metric(&mut encoder, metric)?;
                }
            }
        }
        match kept_here {
            Some(durations) if !durations.is_empty() => {
                let (name, unit) = name_and_unit(SERVER_DURATION, "s");
                let e = encoder.encode_descriptor(
                    &name,
                    SERVER_DURATION_HELP,
                    unit.as_ref(),
                    MetricType::Histogram,
                )?;
                durations.encode(e)
            }
            _ => Ok(()),
        }
    }
}

/// A registry whose only content is `scrape`'s metrics.
pub(crate) fn registry(scrape: Scrape) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(scrape));
    registry
}

/// The page for everything in `registry`, in `format`.
pub(crate) fn encode(registry: &Registry, format: Format) -> Result<String, TelemetryError> {
    let mut page = String::with_capacity(16 * 1024);
    let encoded = match format {
        Format::Prometheus => {
            prometheus_client::encoding::prometheus_text::encode(&mut page, registry)
        }
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut page, registry),
    };
    encoded.map_err(|_| TelemetryError("encoding the metrics page failed".into()))?;
    Ok(page)
}

/// An instrument's Prometheus name without the unit, and the unit (the name's suffix, and
/// OpenMetrics' `# UNIT`). A name that ends in its unit already keeps it once.
pub(crate) fn name_and_unit(name: &str, unit: &str) -> (String, Option<Unit>) {
    let mut name = sanitize(name);
    let unit = match unit {
        "s" => Unit::Seconds,
        "ms" => Unit::Other("milliseconds".into()),
        "%" => Unit::Other("percent".into()),
        "By" => Unit::Bytes,
        "1" => Unit::Ratios,
        _ => return (name, None),
    };
    let suffix = format!("_{}", unit.as_str());
    if name.ends_with(&suffix) {
        name.truncate(name.len() - suffix.len());
    }
    (name, Some(unit))
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

/// A label key as Prometheus allows it: borrowed when it is one already.
fn label_key(key: &str) -> Cow<'_, str> {
    let valid = !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Cow::Borrowed(key)
    } else {
        Cow::Owned(sanitize(key).replace(':', "_"))
    }
}

/// A data point's attributes as a label set, sorted so a series reads the same on every scrape.
fn labels<'a>(attributes: impl Iterator<Item = &'a KeyValue>) -> Vec<(Cow<'a, str>, Cow<'a, str>)> {
    let mut labels: Vec<_> = attributes
        .map(|kv| (label_key(kv.key.as_str()), kv.value.as_str()))
        .collect();
    labels.sort();
    labels
}

/// No exemplar: the SDK records none (its data points' exemplars are always empty in 0.33).
const NO_EXEMPLAR: Option<&Exemplar<NoLabelSet, f64>> = None;
const NO_EXEMPLARS: Option<&HashMap<usize, Exemplar<NoLabelSet, f64>>> = None;

/// A number the SDK aggregates, as the encoder takes it.
trait Number: Copy {
    fn counter(self, e: &mut MetricEncoder<'_>) -> fmt::Result;
    fn gauge(self, e: &mut MetricEncoder<'_>) -> fmt::Result;
    fn float(self) -> f64;
}

impl Number for u64 {
    fn counter(self, e: &mut MetricEncoder<'_>) -> fmt::Result {
        e.encode_counter(&self, NO_EXEMPLAR)
    }
    fn gauge(self, e: &mut MetricEncoder<'_>) -> fmt::Result {
        e.encode_gauge(&self)
    }
    #[allow(clippy::cast_precision_loss)] // A histogram's sum of counts; f64 is the format's.
    fn float(self) -> f64 {
        self as f64
    }
}

impl Number for i64 {
    fn counter(self, e: &mut MetricEncoder<'_>) -> fmt::Result {
        // A monotonic sum never goes below zero.
        e.encode_counter(&u64::try_from(self).unwrap_or(0), NO_EXEMPLAR)
    }
    fn gauge(self, e: &mut MetricEncoder<'_>) -> fmt::Result {
        e.encode_gauge(&self)
    }
    #[allow(clippy::cast_precision_loss)]
    fn float(self) -> f64 {
        self as f64
    }
}

impl Number for f64 {
    fn counter(self, e: &mut MetricEncoder<'_>) -> fmt::Result {
        e.encode_counter(&self, NO_EXEMPLAR)
    }
    fn gauge(self, e: &mut MetricEncoder<'_>) -> fmt::Result {
        e.encode_gauge(&self)
    }
    fn float(self) -> f64 {
        self
    }
}

fn encode_metric(encoder: &mut DescriptorEncoder<'_>, m: &Metric) -> fmt::Result {
    match m.data() {
        AggregatedMetrics::F64(d) => encode_data(encoder, m, d),
        AggregatedMetrics::U64(d) => encode_data(encoder, m, d),
        AggregatedMetrics::I64(d) => encode_data(encoder, m, d),
    }
}

fn encode_data<T: Number>(
    encoder: &mut DescriptorEncoder<'_>,
    m: &Metric,
    data: &MetricData<T>,
) -> fmt::Result {
    let kind = match data {
        MetricData::Gauge(g) if g.data_points().next().is_some() => MetricType::Gauge,
        // A monotonic cumulative sum is a counter; anything else reads as a gauge.
        MetricData::Sum(s) if s.data_points().next().is_some() => {
            if s.is_monotonic() && s.temporality() == Temporality::Cumulative {
                MetricType::Counter
            } else {
                MetricType::Gauge
            }
        }
        MetricData::Histogram(h) if h.data_points().next().is_some() => MetricType::Histogram,
        // Nothing recorded yet; exponential histograms are never configured here.
        _ => return Ok(()),
    };
    let (name, unit) = name_and_unit(m.name(), m.unit());
    let mut e = encoder.encode_descriptor(&name, m.description(), unit.as_ref(), kind)?;
    match data {
        MetricData::Gauge(g) => {
            for p in g.data_points() {
                p.value()
                    .gauge(&mut e.encode_family(&labels(p.attributes()))?)?;
            }
        }
        MetricData::Sum(s) => {
            for p in s.data_points() {
                let labels = labels(p.attributes());
                let mut series = e.encode_family(&labels)?;
                if kind == MetricType::Counter {
                    p.value().counter(&mut series)?;
                } else {
                    p.value().gauge(&mut series)?;
                }
            }
        }
        MetricData::Histogram(h) => {
            for p in h.data_points() {
                histogram(&mut e.encode_family(&labels(p.attributes()))?, p)?;
            }
        }
        MetricData::ExponentialHistogram(_) => {}
    }
    Ok(())
}

fn histogram<T: Number>(e: &mut MetricEncoder<'_>, p: &HistogramDataPoint<T>) -> fmt::Result {
    // The SDK counts per bucket with one more count than bounds (above the last); the encoder
    // takes per-bucket counts with `+Inf` as the last bound.
    let mut counts = p.bucket_counts();
    let mut buckets: Vec<(f64, u64)> = p
        .bounds()
        .map(|bound| (bound, counts.next().unwrap_or(0)))
        .collect();
    buckets.push((f64::INFINITY, counts.next().unwrap_or(0)));
    e.encode_histogram(p.sum().float(), p.count(), &buckets, NO_EXEMPLARS)
}

#[cfg(test)]
pub(crate) mod tests;
