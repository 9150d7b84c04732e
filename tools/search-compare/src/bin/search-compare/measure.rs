//! Clock, memory and ranking-quality helpers.

use std::time::{Duration, Instant};

use crate::corpus::Labelled;
use crate::engines::Engine;
use search_compare::Tool;

/// This process's resident set (VmRSS), KiB.
pub fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

/// This process's peak resident set so far (VmHWM), KiB.
pub fn peak_kib() -> u64 {
    status_kib("VmHWM:")
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

pub fn loadavg() -> String {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let out = f();
    (out, started.elapsed())
}

/// Nearest-rank percentile of sorted samples, in ms.
pub fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

pub struct Quality {
    pub recall_1: f64,
    pub recall_5: f64,
    pub mrr: f64,
    /// Each query's first five names, to compare two engines' rankings.
    pub top5: Vec<Vec<String>>,
}

/// recall@1, recall@5 (any expected tool in the first five) and MRR over the top 8, as
/// `vmcp-search-eval` scores them. On the scaled corpus, hit `i` is read as tool
/// `i % tools.len()` (a copy counts as its original: copies have the same text).
pub fn quality(engine: &Engine, tools: &[Tool], queries: &[Labelled]) -> Quality {
    let (mut r1, mut r5, mut rr) = (0usize, 0usize, 0.0);
    let mut top5 = Vec::new();
    for q in queries {
        let names: Vec<&str> = engine
            .search(&q.task, 8)
            .into_iter()
            .map(|i| tools[i % tools.len()].name.as_str())
            .collect();
        let rank = names.iter().position(|n| q.expected.iter().any(|e| e == n));
        r1 += usize::from(rank == Some(0));
        r5 += usize::from(rank.is_some_and(|r| r < 5));
        rr += rank.map_or(0.0, |r| 1.0 / (r + 1) as f64);
        top5.push(names.iter().take(5).map(|s| s.to_string()).collect());
    }
    let n = queries.len().max(1) as f64;
    Quality {
        recall_1: r1 as f64 / n,
        recall_5: r5 as f64 / n,
        mrr: rr / n,
        top5,
    }
}
