//! A scenario's counts: kept while the load runs, then printed as one markdown table row on
//! stderr, appended as one JSON line to `VMCP_CHAOS_REPORT` when set, and asserted on.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use serde_json::json;

use super::RECOVERY_BOUND;
use super::outcome::{Outcome, names_any, says_unknown_tool};

/// Most distinct error texts kept as samples.
const MAX_SAMPLES: usize = 16;
/// Longest sample kept.
const SAMPLE_CHARS: usize = 240;

/// The phases of a scenario, for errors by phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Before = 0,
    During = 1,
    After = 2,
}

/// What the clients saw.
#[derive(Debug, Default, Clone)]
pub(crate) struct Counts {
    pub(crate) requests: u64,
    pub(crate) ok: u64,
    pub(crate) errors: u64,
    /// Errors whose text names the failing part.
    pub(crate) named: u64,
    pub(crate) unknown_tool: u64,
    pub(crate) mismatched: u64,
    pub(crate) wrong_ids: u64,
    pub(crate) hung: u64,
    pub(crate) sessions_lost: u64,
    pub(crate) errors_by_phase: [u64; 3],
    /// Slowest answered request, in ms.
    pub(crate) slowest_ms: u64,
    /// Distinct error texts (digits folded, cut) and how often each came.
    pub(crate) samples: BTreeMap<String, u64>,
    /// Answers meant for another request, as received (a few).
    pub(crate) misdelivered: Vec<String>,
}

impl Counts {
    /// Counts one request of `phase` that took `took`.
    pub(crate) fn add(
        &mut self,
        phase: Phase,
        outcome: &Outcome,
        parts: &[String],
        took: Duration,
    ) {
        self.requests += 1;
        if *outcome != Outcome::Hung {
            self.slowest_ms = self.slowest_ms.max(took.as_millis() as u64);
        }
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Error(text) => {
                self.errors += 1;
                self.errors_by_phase[phase as usize] += 1;
                if names_any(text, parts) {
                    self.named += 1;
                }
                if says_unknown_tool(text) {
                    self.unknown_tool += 1;
                }
                self.sample(text);
            }
            Outcome::Mismatched(text) => {
                self.mismatched += 1;
                self.keep_misdelivered(text);
            }
            Outcome::WrongId(text) => {
                self.wrong_ids += 1;
                self.keep_misdelivered(text);
            }
            Outcome::SessionLost(text) => {
                self.sessions_lost += 1;
                self.sample(&format!("session lost: {text}"));
            }
            Outcome::Hung => self.hung += 1,
        }
    }

    fn sample(&mut self, text: &str) {
        let folded = fold_numbers(text);
        if let Some(n) = self.samples.get_mut(&folded) {
            *n += 1;
        } else if self.samples.len() < MAX_SAMPLES {
            self.samples.insert(folded, 1);
        }
    }

    fn keep_misdelivered(&mut self, text: &str) {
        if self.misdelivered.len() < 5 {
            self.misdelivered
                .push(text.chars().take(SAMPLE_CHARS).collect());
        }
    }
}

/// `text` cut to [`SAMPLE_CHARS`], with every run of two or more digits (ports, ids, times)
/// shown as `#`, so errors that differ only there count as one; single digits (`svc1`) stay.
fn fold_numbers(text: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        match digits.len() {
            0 => {}
            1 => out.push_str(&digits),
            _ => out.push('#'),
        }
        digits.clear();
        out.push(c);
    }
    out.pop();
    out.chars().take(SAMPLE_CHARS).collect()
}

/// One scenario's result.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) fault: String,
    pub(crate) secs: f64,
    pub(crate) deadline: Duration,
    pub(crate) counts: Counts,
    /// From the end of the fault to the first good answer from the faulted part.
    pub(crate) recovery: Option<Duration>,
    /// From opening the sessions to the last client stopping.
    pub(crate) took: Duration,
}

/// The table's header, as docs/reliability.md has it.
pub(crate) const HEADER: &str = "| fault | requests | ok | errors | mismatched | wrong ids | hung | sessions lost | errors naming the part | recovery ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

impl Report {
    /// Share of errors that name the failing part, in percent (100 with no errors).
    pub(crate) fn named_pct(&self) -> f64 {
        match self.counts.errors {
            0 => 100.0,
            n => 100.0 * self.counts.named as f64 / n as f64,
        }
    }

    /// The markdown row.
    pub(crate) fn row(&self) -> String {
        let c = &self.counts;
        let recovery = self
            .recovery
            .map_or("none".to_owned(), |d| d.as_millis().to_string());
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0} % | {} |",
            self.fault,
            c.requests,
            c.ok,
            c.errors,
            c.mismatched,
            c.wrong_ids,
            c.hung,
            c.sessions_lost,
            self.named_pct(),
            recovery
        )
    }

    /// Prints the row (and the error samples) on stderr, and appends the JSON line to
    /// `VMCP_CHAOS_REPORT` when set.
    pub(crate) fn publish(&self) {
        let c = &self.counts;
        eprintln!(
            "{HEADER}\n{}\n  ({:.1} s under load)",
            self.row(),
            self.took.as_secs_f64()
        );
        for (text, n) in &c.samples {
            eprintln!("  {n} x {text}");
        }
        let line = json!({
            "fault": self.fault,
            "secs": self.secs,
            "requests": c.requests,
            "ok": c.ok,
            "errors": c.errors,
            "errors_named": c.named,
            "errors_named_pct": self.named_pct(),
            "unknown_tool": c.unknown_tool,
            "mismatched": c.mismatched,
            "wrong_ids": c.wrong_ids,
            "hung": c.hung,
            "sessions_lost": c.sessions_lost,
            "recovery_ms": self.recovery.map(|d| d.as_millis() as u64),
            "errors_before": c.errors_by_phase[Phase::Before as usize],
            "errors_during": c.errors_by_phase[Phase::During as usize],
            "errors_after": c.errors_by_phase[Phase::After as usize],
            "slowest_ms": c.slowest_ms,
            "deadline_ms": self.deadline.as_millis() as u64,
            "took_ms": self.took.as_millis() as u64,
            "error_samples": c.samples,
        });
        if let Ok(path) = std::env::var("VMCP_CHAOS_REPORT") {
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| writeln!(f, "{line}"));
            if let Err(e) = written {
                panic!("cannot append to VMCP_CHAOS_REPORT={path}: {e}");
            }
        }
    }

    /// The suite's promises: nothing delivered to the wrong request, no wrong id, nothing hung,
    /// no session lost, every error names the failing part (and none says the tool does not
    /// exist), and a good answer came within [`RECOVERY_BOUND`] of the fault's end.
    pub(crate) fn assert_clean(&self) {
        let c = &self.counts;
        let context = format!(
            "{}\n{}\nerror samples: {:#?}\nmisdelivered: {:#?}",
            HEADER,
            self.row(),
            c.samples,
            c.misdelivered
        );
        assert_eq!(
            c.mismatched, 0,
            "answers with another request's content\n{context}"
        );
        assert_eq!(c.wrong_ids, 0, "answers under another id\n{context}");
        assert_eq!(c.hung, 0, "requests past {:?}\n{context}", self.deadline);
        assert_eq!(c.sessions_lost, 0, "sessions lost\n{context}");
        assert_eq!(
            c.unknown_tool, 0,
            "'unknown tool' for a tool the caller may see\n{context}"
        );
        assert_eq!(
            c.named, c.errors,
            "errors that do not name the failing part\n{context}"
        );
        assert!(
            self.recovery.is_some_and(|d| d <= RECOVERY_BOUND),
            "no good answer within {RECOVERY_BOUND:?} of the fault's end\n{context}"
        );
        assert!(c.ok > 0, "nothing succeeded\n{context}");
    }

    /// That the fault was felt: some request failed (so a pass is not a fault that missed).
    pub(crate) fn assert_felt(&self) {
        assert!(
            self.counts.errors > 0,
            "the fault caused no error at all\n{HEADER}\n{}",
            self.row()
        );
    }
}
