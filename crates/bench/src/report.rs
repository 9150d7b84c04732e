//! Presenting results: one Markdown table per scenario on stdout, the targets of the issue
//! checked against what was measured, and everything as one JSON document.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};

use crate::stats::{fmt, us};

/// The table and JSON of one scenario.
pub(crate) struct Section {
    pub(crate) key: &'static str,
    pub(crate) title: String,
    pub(crate) header: Vec<&'static str>,
    pub(crate) rows: Vec<Vec<String>>,
    pub(crate) notes: Vec<String>,
    pub(crate) json: Value,
}

impl Section {
    /// An empty section.
    pub(crate) fn new(key: &'static str, title: &str, header: &[&'static str]) -> Section {
        Section {
            key,
            title: title.to_owned(),
            header: header.to_vec(),
            rows: Vec::new(),
            notes: Vec::new(),
            json: Value::Null,
        }
    }

    /// The section as Markdown.
    pub(crate) fn markdown(&self) -> String {
        let mut out = format!("### {}\n\n", self.title);
        let _ = writeln!(out, "| {} |", self.header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(self.header.len()));
        for row in &self.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        for note in &self.notes {
            let _ = write!(out, "\n{note}\n");
        }
        out
    }
}

/// The measurements the issue sets targets for; `None` when not measured in this run.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Gateway minus direct, µs (negative when the gateway run happened to be faster).
    pub(crate) added_p50_c1: Option<f64>,
    pub(crate) added_p99_c1: Option<f64>,
    pub(crate) gateway_cpu_c32: Option<Duration>,
    pub(crate) rps_ratio_c32: Option<f64>,
    pub(crate) warm_session_p50: Option<Duration>,
    pub(crate) rss_idle_kib: Option<u64>,
    pub(crate) bytes_per_session: Option<f64>,
}

struct Target {
    what: &'static str,
    goal: &'static str,
    measured: Option<String>,
    met: Option<bool>,
}

impl Findings {
    fn targets(&self) -> Vec<Target> {
        let d = |v: Option<Duration>, max_us: f64, what, goal| Target {
            what,
            goal,
            measured: v.map(fmt),
            met: v.map(|v| us(v) < max_us),
        };
        let a = |v: Option<f64>, max_us: f64, what, goal| Target {
            what,
            goal,
            measured: v.map(fmt_added),
            met: v.map(|v| v < max_us),
        };
        vec![
            a(
                self.added_p50_c1,
                100.0,
                "added latency p50, tools/call, c=1",
                "< 100µs",
            ),
            a(
                self.added_p99_c1,
                500.0,
                "added latency p99, tools/call, c=1",
                "< 500µs",
            ),
            d(
                self.gateway_cpu_c32,
                30.0,
                "gateway CPU per tools/call, c=32",
                "< 30µs",
            ),
            Target {
                what: "throughput gateway / direct, c=32",
                goal: ">= 40%",
                measured: self.rps_ratio_c32.map(|r| format!("{:.0}%", r * 100.0)),
                met: self.rps_ratio_c32.map(|r| r >= 0.40),
            },
            d(
                self.warm_session_p50,
                2000.0,
                "warm initialize + tools/list, 10x100 tools, p50",
                "< 2ms",
            ),
            Target {
                what: "gateway RSS idle",
                goal: "< 30 MB",
                measured: self
                    .rss_idle_kib
                    .map(|k| format!("{:.1} MB", k as f64 / 1024.0)),
                met: self.rss_idle_kib.map(|k| k < 30 * 1024),
            },
            Target {
                what: "RSS per idle Legacy session",
                goal: "< 20 KB",
                measured: self
                    .bytes_per_session
                    .map(|b| format!("{:.1} KB", b / 1024.0)),
                met: self.bytes_per_session.map(|b| b < 20.0 * 1024.0),
            },
        ]
    }

    /// The targets as a section.
    pub(crate) fn section(&self) -> Section {
        let mut s = Section::new("targets", "Targets", &["target", "goal", "measured", "met"]);
        let targets = self.targets();
        for t in &targets {
            s.rows.push(vec![
                t.what.to_owned(),
                t.goal.to_owned(),
                t.measured.clone().unwrap_or_else(|| "not measured".into()),
                match t.met {
                    Some(true) => "yes".into(),
                    Some(false) => "**no**".into(),
                    None => "-".into(),
                },
            ]);
        }
        s.json = targets
            .iter()
            .map(
                |t| json!({"target": t.what, "goal": t.goal, "measured": t.measured, "met": t.met}),
            )
            .collect();
        s
    }
}

/// Writes the JSON document to `path`, creating its directory.
///
/// # Errors
/// When the file cannot be written.
pub(crate) fn write_json(path: &Path, doc: &Value) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(doc)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// `part` of `whole` as a ratio, if `whole` is not zero.
pub(crate) fn ratio(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| part / whole)
}

/// Added latency in µs: `gateway` minus `direct`, signed.
pub(crate) fn added(gateway: Duration, direct: Duration) -> f64 {
    us(gateway) - us(direct)
}

/// A signed µs value for tables: `+87.3µs`, `-2.0µs`.
pub(crate) fn fmt_added(us: f64) -> String {
    format!("{us:+.1}µs")
}
