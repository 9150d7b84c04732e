//! Part 1: crates/template/tests/go_behaviour.rs, compiled into this binary (build.rs) with
//! `assert!`/`assert_eq!` replaced by macros that record each check instead of panicking, run once
//! per engine. Every check is one case; `exec_tests_from_go`, which asserts once over its whole
//! table, is replaced by a loop over the same `EXEC_TESTS` table.
use std::{
    cell::{Cell, RefCell},
    collections::BTreeMap,
    fmt::Write as _,
    panic::{AssertUnwindSafe, catch_unwind},
};

use crate::shim::{ENGINE, Engine, LAST, Outcome};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Verdict {
    Pass,
    WrongOutput,
    ErrorWhereGoSucceeds,
    SuccessWhereGoErrors,
    /// Errors as expected, but the check also compares our message text (our own format, not
    /// Go's `template: NAME:LINE:COL: ...`), which the other engine's message does not match.
    ErrorsOtherMessage,
    Panic,
}

pub struct Case {
    pub group: &'static str,
    pub src: String,
    pub want: String,
    pub got: String,
    pub verdict: Verdict,
}

/// Cases the test file adapts from Go (noted in its comments) with what Go does instead.
const ADAPTED: &[(&str, &str)] = &[
    (
        "{{if eq 2 2.0}}true{{else}}false{{end}}",
        "Go errors: incompatible types for comparison",
    ),
    (
        "{{if lt 2 2.5}}true{{else}}false{{end}}",
        "Go errors: incompatible types for comparison",
    ),
    (
        "{{.steps.n.x}}",
        "Go errors: nil pointer evaluating interface {}.x",
    ),
];

pub fn adapted(src: &str) -> Option<&'static str> {
    ADAPTED.iter().find(|(s, _)| *s == src).map(|(_, go)| *go)
}

thread_local! {
    /// The test function running, and whether its `assert_eq!` checks expect an error.
    static GROUP: Cell<(&'static str, bool)> = const { Cell::new(("", false)) };
    static CASES: RefCell<Vec<Case>> = const { RefCell::new(Vec::new()) };
}

pub fn record(passed: bool, expects_error: bool, want: String) {
    let last = LAST.with(|l| l.borrow_mut().take());
    let (src, got) = match &last {
        Some((src, o)) => (src.clone(), o.clone()),
        None => (String::new(), Outcome::Err("(no render)".into())),
    };
    let verdict = match (passed, got.clone()) {
        (true, _) => Verdict::Pass,
        (false, Outcome::Panic(_)) => Verdict::Panic,
        (false, Outcome::Ok(_)) if expects_error => Verdict::SuccessWhereGoErrors,
        (false, Outcome::Ok(_)) => Verdict::WrongOutput,
        (false, Outcome::Err(_)) if expects_error => Verdict::ErrorsOtherMessage,
        (false, Outcome::Err(_)) => Verdict::ErrorWhereGoSucceeds,
    };
    let group = GROUP.with(Cell::get).0;
    CASES.with(|c| {
        c.borrow_mut().push(Case {
            group,
            src,
            want,
            got: format!("{got:?}"),
            verdict,
        });
    });
}

pub fn group_expects_error() -> bool {
    GROUP.with(Cell::get).1
}

macro_rules! assert_eq {
    ($l:expr, $r:expr $(, $($msg:tt)*)?) => {
        match (&$l, &$r) {
            (l, r) => $crate::conformance::record(
                *l == *r,
                $crate::conformance::group_expects_error(),
                format!("{r:?}"),
            ),
        }
    };
}

/// Every `assert!` in go_behaviour.rs checks that something fails.
macro_rules! assert {
    ($c:expr $(, $($msg:tt)*)?) => {
        $crate::conformance::record($c, true, "an error".into())
    };
}

#[allow(dead_code, unused_variables, clippy::all)]
mod go {
    include!(concat!(env!("OUT_DIR"), "/go_behaviour.rs"));

    /// `exec_tests_from_go` with one recorded case per row.
    pub(super) fn exec_table() {
        let data = tval();
        for &(_, src, want) in EXEC_TESTS {
            let got = render(src, &data);
            let passed = match (want, &got) {
                (Some(w), Ok(g)) => w == g,
                (None, Err(_)) => true,
                _ => false,
            };
            super::record(passed, want.is_none(), format!("{want:?}"));
        }
    }

    /// (test function, runner, its `assert_eq!` checks expect errors, run for gotmpl).
    pub(super) const GROUPS: &[(&str, fn(), bool, bool)] = &[
        ("exec_tests_from_go", exec_table, false, true),
        ("dot_of_every_kind", dot_of_every_kind, false, true),
        ("comparisons_from_go", comparisons_from_go, false, true),
        (
            "error_messages_name_the_action",
            error_messages_name_the_action,
            true,
            true,
        ),
        (
            "missing_and_null_values",
            missing_and_null_values,
            false,
            true,
        ),
        (
            "printing_nested_values_and_floats",
            printing_nested_values_and_floats,
            false,
            true,
        ),
        (
            "trim_markers_and_comments",
            trim_markers_and_comments,
            false,
            true,
        ),
        ("variables_and_scoping", variables_and_scoping, false, true),
        (
            "define_template_and_block",
            define_template_and_block,
            false,
            true,
        ),
        (
            "toolhive_style_templates",
            toolhive_style_templates,
            false,
            true,
        ),
        // Tests our API (`is_plain`), not Go's behaviour.
        ("plain_templates", plain_templates, false, false),
        (
            "parse_errors_have_positions",
            parse_errors_have_positions,
            true,
            true,
        ),
    ];
}

mod names {
    include!(concat!(env!("OUT_DIR"), "/test_fns.rs"));
}

/// Runs every group on `engine`; a group that panics outside the engine is recorded as one case.
pub fn run(engine: Engine) -> Vec<Case> {
    for name in names::TEST_FNS {
        std::assert!(
            go::GROUPS.iter().any(|g| g.0 == *name),
            "go_behaviour.rs has a test this tool does not run: {name}"
        );
    }
    ENGINE.with(|e| e.set(engine));
    CASES.with(|c| c.borrow_mut().clear());
    for &(name, f, expects_error, for_gotmpl) in go::GROUPS {
        if engine == Engine::Gotmpl && !for_gotmpl {
            continue;
        }
        GROUP.with(|g| g.set((name, expects_error)));
        if catch_unwind(AssertUnwindSafe(f)).is_err() {
            record(false, expects_error, "(test function panicked)".into());
        }
    }
    CASES.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

pub fn report(engine: Engine, cases: &[Case]) -> String {
    let mut out = String::new();
    let mut by_group: BTreeMap<(&str, Verdict), usize> = BTreeMap::new();
    let mut totals: BTreeMap<Verdict, usize> = BTreeMap::new();
    let mut adapted_lines = Vec::new();
    for c in cases {
        if let Some(go) = adapted(&c.src) {
            adapted_lines.push(format!("  {:?}: {:?} ({go})", c.src, c.got));
            continue;
        }
        *by_group.entry((c.group, c.verdict)).or_default() += 1;
        *totals.entry(c.verdict).or_default() += 1;
    }
    let n: usize = totals.values().sum();
    let _ = writeln!(
        out,
        "== {engine:?}: {n} cases from go_behaviour.rs (adapted ones apart)"
    );
    for (v, k) in &totals {
        let _ = writeln!(out, "  {v:?}: {k}");
    }
    let _ = writeln!(out, "by test function:");
    let mut last = "";
    for ((g, v), k) in &by_group {
        if *g != last {
            let _ = write!(out, "\n  {g}:");
            last = g;
        }
        let _ = write!(out, " {v:?} {k}");
    }
    let _ = writeln!(
        out,
        "\nadapted from Go in the test file (ours answers differently from Go):"
    );
    for l in adapted_lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "failures:");
    for c in cases
        .iter()
        .filter(|c| c.verdict != Verdict::Pass && adapted(&c.src).is_none())
    {
        let _ = writeln!(
            out,
            "  [{:?}] {}: {:?}\n      want {}\n      got  {}",
            c.verdict, c.group, c.src, c.want, c.got
        );
    }
    out
}
