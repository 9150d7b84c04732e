//! Part 3: render time per template on the context a workflow step sees (crates/workflow's
//! engine: `params`, `steps.<id>.{status,output}`, `vars`, `workflow`). Both engines are timed in
//! the same rounds, interleaved; each figure is the median over rounds of the mean time per render
//! in that round.
use std::{fmt::Write as _, hint::black_box, time::Instant};

use serde_json::{Value, json};

use crate::gt;

/// The context after four of five steps, as in benchmarks.md's scenario 6, plus two steps with
/// list output.
fn context() -> Value {
    let mut steps = serde_json::Map::new();
    for i in 1..=4 {
        steps.insert(
            format!("s{i}"),
            json!({"status": "completed", "output": {"text": "one"}}),
        );
    }
    let items: Vec<Value> = (0..20)
        .map(|i| json!({"id": i, "title": format!("item {i}"), "done": i % 2 == 0}))
        .collect();
    steps.insert(
        "fetch".into(),
        json!({"status": "completed", "output": {"items": items}}),
    );
    steps.insert(
        "get_packages".into(),
        json!({"status": "completed", "output": {"packages": [
        {"name": "left-pad", "v": 1}, {"name": "is-odd", "v": 2.5}, {"name": "lodash", "v": 4}]}}),
    );
    json!({
        "params": {"env": "prod", "count": 3, "message": "hello"},
        "steps": steps,
        "vars": {},
        "workflow": {"id": "wf-0123456789abcdef", "duration_ms": 0, "step_count": 5,
            "status": "pending", "start_time": "2026-05-01T10:00:00Z"},
    })
}

const TEMPLATES: &[&str] = &[
    "{{.steps.s4.output.text}}",
    "{{.steps.fetch.output.items | len}}",
    r#"{{if eq .params.env "prod"}}{{.steps.s1.output.text}}{{else}}none{{end}}"#,
    "{{range $i, $p := .steps.get_packages.output.packages}}{{$i}}:{{$p.name}} {{end}}",
    r#"{{printf "%s has %d items" .params.env (len .steps.fetch.output.items)}}"#,
    "{{json .steps.get_packages.output}}",
];

/// Mean nanoseconds per call of `f` over `n` calls.
fn time(n: u32, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(n)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(rounds: usize, n: u32) -> String {
    let ctx = context();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ns per render, median of {rounds} rounds x {n} renders (min-max over rounds)\n\
         | template | ours | gotmpl (data converted once) | gotmpl + converting the context |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    let conv = {
        let mut v = Vec::new();
        for _ in 0..rounds {
            v.push(time(n, || {
                black_box(gt::to_value(black_box(&ctx)));
            }));
        }
        v
    };
    for src in TEMPLATES {
        let ours = vmcp_template::Template::parse(src).expect("ours parses");
        let theirs = gt::parse(src).expect("gotmpl parses");
        let pre = gt::to_value(&ctx);
        let a = ours.render(&ctx).expect("ours renders");
        let b = theirs.execute_to_string(&pre).expect("gotmpl renders");
        let note = if a == b {
            String::new()
        } else {
            format!(" (outputs differ: {a:?} vs {b:?})")
        };
        let (mut o, mut g, mut gc) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            o.push(time(n, || {
                black_box(ours.render(black_box(&ctx)).ok());
            }));
            g.push(time(n, || {
                black_box(theirs.execute_to_string(black_box(&pre)).ok());
            }));
            gc.push(time(n, || {
                black_box(
                    theirs
                        .execute_to_string(&gt::to_value(black_box(&ctx)))
                        .ok(),
                );
            }));
        }
        let cell = |v: &Vec<f64>| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            format!("{:.0} ({lo:.0}-{hi:.0})", median(v.clone()))
        };
        let _ = writeln!(
            out,
            "| `{src}`{note} | {} | {} | {} |",
            cell(&o),
            cell(&g),
            cell(&gc)
        );
    }
    let small = json!({"params": ctx["params"], "vars": {}, "workflow": ctx["workflow"],
        "steps": {"s1": ctx["steps"]["s1"], "s2": ctx["steps"]["s2"], "s3": ctx["steps"]["s3"],
            "s4": ctx["steps"]["s4"]}});
    let mut small_conv = Vec::new();
    for _ in 0..rounds {
        small_conv.push(time(n, || {
            black_box(gt::to_value(black_box(&small)));
        }));
    }
    let _ = writeln!(
        out,
        "converting the context (serde_json -> gotmpl::Value) alone: {:.0} ns; \
         scenario 6's context (steps s1-s4 only): {:.0} ns",
        median(conv),
        median(small_conv)
    );
    out
}
