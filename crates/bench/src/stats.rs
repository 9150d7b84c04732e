//! Latency summaries from sorted samples: exact percentiles, no histogram approximation.

use std::time::Duration;

use serde_json::{Value, json};

/// Percentiles of a set of latency samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Latency {
    pub(crate) count: usize,
    pub(crate) p50: Duration,
    pub(crate) p90: Duration,
    pub(crate) p99: Duration,
    pub(crate) max: Duration,
    pub(crate) mean: Duration,
}

impl Latency {
    /// Summarises `samples` (nanoseconds, any order; sorted in place).
    pub(crate) fn of(samples: &mut [u64]) -> Latency {
        if samples.is_empty() {
            return Latency::default();
        }
        samples.sort_unstable();
        let sum: u128 = samples.iter().map(|s| u128::from(*s)).sum();
        let mean = u64::try_from(sum / samples.len() as u128).unwrap_or(u64::MAX);
        Latency {
            count: samples.len(),
            p50: Duration::from_nanos(percentile(samples, 50.0)),
            p90: Duration::from_nanos(percentile(samples, 90.0)),
            p99: Duration::from_nanos(percentile(samples, 99.0)),
            max: Duration::from_nanos(samples[samples.len() - 1]),
            mean: Duration::from_nanos(mean),
        }
    }

    /// As JSON, in microseconds.
    pub(crate) fn to_json(self) -> Value {
        json!({
            "count": self.count,
            "p50_us": us(self.p50),
            "p90_us": us(self.p90),
            "p99_us": us(self.p99),
            "max_us": us(self.max),
            "mean_us": us(self.mean),
        })
    }
}

/// Nearest-rank percentile of sorted `samples`.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A duration in microseconds, rounded to 0.1 µs.
pub(crate) fn us(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e7).round() / 10.0
}

/// A duration for tables: `87.3µs`, `1.42ms`, `2.10s`.
pub(crate) fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut samples: Vec<u64> = (1..=100).rev().collect();
        let l = Latency::of(&mut samples);
        assert_eq!(l.p50, Duration::from_nanos(50));
        assert_eq!(l.p90, Duration::from_nanos(90));
        assert_eq!(l.p99, Duration::from_nanos(99));
        assert_eq!(l.max, Duration::from_nanos(100));
        assert_eq!(Latency::of(&mut []), Latency::default());
        assert_eq!(Latency::of(&mut [7]).p99, Duration::from_nanos(7));
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt(Duration::from_nanos(87_300)), "87.3µs");
        assert_eq!(fmt(Duration::from_micros(1420)), "1.42ms");
    }
}
