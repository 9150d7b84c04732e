//! `search-compare`: vmcp's keyword search against SQLite FTS5 and tantivy on the evaluation
//! corpus repeated to ~10,000 tools. Rounds interleave the engines in one process (a different
//! engine first each round) so machine noise hits all of them alike; memory is measured in a
//! fresh child process per engine, where no earlier build's freed heap can hide the growth.
//!
//!   search-compare [--eval-dir DIR] [--scale N] [--rounds R] [--passes P]
//!   search-compare rss ENGINE [--eval-dir DIR] [--scale N]   (one engine's RSS, printed in KiB)

mod corpus;
mod engines;
mod measure;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use engines::{Engine, Kind};
use measure::{loadavg, median, peak_kib, percentile_ms, quality, rss_kib, timed};

struct Args {
    eval_dir: PathBuf,
    scale: usize,
    rounds: usize,
    passes: usize,
    rss_of: Option<Kind>,
}

fn args() -> Args {
    let mut a = Args {
        eval_dir: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../crates/bench/eval"
        )),
        scale: 10_000,
        rounds: 5,
        passes: 3,
        rss_of: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--eval-dir" => a.eval_dir = value().into(),
            "--scale" => a.scale = value().parse().expect("--scale N"),
            "--rounds" => a.rounds = value().parse().expect("--rounds R"),
            "--passes" => a.passes = value().parse().expect("--passes P"),
            "rss" => a.rss_of = Some(Kind::parse(&value()).expect("an engine name")),
            _ => panic!("unknown argument {flag}"),
        }
    }
    a
}

fn main() {
    let a = args();
    let tools = corpus::tools(&a.eval_dir);
    let queries = corpus::queries(&a.eval_dir);
    let scaled = corpus::scaled(&tools, a.scale);
    if let Some(kind) = a.rss_of {
        // Only the scaled tool texts are alive here; the growth is the index (plus, after the
        // query pass, whatever the engine caches for searching). The peak counts what the build
        // used and freed; it is only meaningful when loading the corpus peaked lower, which
        // the parent checks by printing it beside the others.
        drop(tools);
        let before = rss_kib();
        let peak_before = peak_kib();
        let engine = Engine::build(kind, &scaled);
        let built = rss_kib();
        let peak = peak_kib();
        for q in &queries {
            std::hint::black_box(engine.search(&q.task, 8));
        }
        println!(
            "{} {} {} {}",
            built - before,
            rss_kib() - before,
            peak.saturating_sub(before),
            peak_before.saturating_sub(before)
        );
        return;
    }

    println!("load average at start: {}", loadavg());
    println!(
        "{} tools, {} queries; scaled to {} tools; {} rounds x {} timed passes\n",
        tools.len(),
        queries.len(),
        scaled.len(),
        a.rounds,
        a.passes
    );

    // Quality on the real 371 tools, as vmcp-search-eval scores it.
    let mut quality_of = Vec::new();
    for kind in Kind::ALL {
        let engine = Engine::build(kind, &tools);
        quality_of.push((kind, quality(&engine, &tools, &queries)));
    }

    let mut build_ms: Vec<Vec<f64>> = vec![Vec::new(); Kind::ALL.len()];
    let mut latencies: Vec<Vec<Duration>> = vec![Vec::new(); Kind::ALL.len()];
    let mut round_p50: Vec<Vec<f64>> = vec![Vec::new(); Kind::ALL.len()];
    let mut rss: Vec<Vec<[f64; 4]>> = vec![Vec::new(); Kind::ALL.len()];
    let mut recall5_scaled: Vec<f64> = vec![0.0; Kind::ALL.len()];
    for round in 0..a.rounds {
        for k in 0..Kind::ALL.len() {
            let slot = (k + round) % Kind::ALL.len();
            let kind = Kind::ALL[slot];
            let (engine, took) = timed(|| Engine::build(kind, &scaled));
            build_ms[slot].push(took.as_secs_f64() * 1000.0);
            // One untimed pass (statement caches, first-touch page faults); in the first round it
            // also scores recall at this scale.
            if round == 0 {
                recall5_scaled[slot] = quality(&engine, &tools, &queries).recall_5;
            } else {
                for q in &queries {
                    std::hint::black_box(engine.search(&q.task, 8));
                }
            }
            let mut times = Vec::with_capacity(queries.len() * a.passes);
            for _ in 0..a.passes {
                for q in &queries {
                    let (hits, took) = timed(|| engine.search(&q.task, 8));
                    std::hint::black_box(hits);
                    times.push(took);
                }
            }
            drop(engine);
            times.sort();
            round_p50[slot].push(percentile_ms(&times, 0.5));
            latencies[slot].extend(times);
            rss[slot].push(child_rss(kind, &a));
        }
        eprintln!("round {} done, load {}", round + 1, loadavg());
    }

    println!(
        "| engine | build (median of {}) | find p50 | find p90 | p50 per round | RSS added: built / after queries / peak (median) | recall@1 | recall@5 | MRR | recall@5 at {} |",
        a.rounds,
        scaled.len()
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut peak_note = Vec::new();
    for (slot, kind) in Kind::ALL.into_iter().enumerate() {
        let times = &mut latencies[slot];
        times.sort();
        let mut rounds = round_p50[slot].clone();
        rounds.sort_by(f64::total_cmp);
        let col = |i: usize| -> f64 {
            let mut v: Vec<f64> = rss[slot].iter().map(|r| r[i]).collect();
            median(&mut v) / 1024.0
        };
        let (built, queried, peak, peak_before) = (col(0), col(1), col(2), col(3));
        let q = &quality_of[slot].1;
        println!(
            "| {} | {:.0} ms | {:.3} ms | {:.3} ms | {:.3}-{:.3} ms | {:.1} / {:.1} / {:.1} MiB | {:.3} | {:.3} | {:.3} | {:.3} |",
            kind.describe(),
            median(&mut build_ms[slot]),
            percentile_ms(times, 0.5),
            percentile_ms(times, 0.9),
            rounds.first().unwrap_or(&0.0),
            rounds.last().unwrap_or(&0.0),
            built,
            queried,
            peak,
            q.recall_1,
            q.recall_5,
            q.mrr,
            recall5_scaled[slot]
        );
        peak_note.push((kind, peak_before));
    }
    println!(
        "\n(peak: VmHWM after the build minus VmRSS before it; loading the corpus had already peaked at {} MiB above that baseline)",
        peak_note
            .iter()
            .map(|(k, p)| format!("{} {p:.1}", k.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let top5 = |k: Kind| &quality_of.iter().find(|q| q.0 == k).expect("scored").1.top5;
    let same = top5(Kind::Fts5)
        .iter()
        .zip(top5(Kind::OursToolHive))
        .filter(|(a, b)| a == b)
        .count();
    println!(
        "\nFTS5 and vmcp-search's `ranking: toolhive` give the same first five for {same} of {} queries (371 tools).",
        queries.len()
    );
    println!("load average at end: {}", loadavg());
}

/// Runs `search-compare rss KIND` in a fresh process: KiB added after the build, after a query
/// pass, at the build's peak, and the corpus loading's peak (all against VmRSS before the build).
fn child_rss(kind: Kind, a: &Args) -> [f64; 4] {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe)
        .args([
            "rss",
            kind.name(),
            "--scale",
            &a.scale.to_string(),
            "--eval-dir",
        ])
        .arg(&a.eval_dir)
        .output()
        .expect("run the rss child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut nums = text
        .split_whitespace()
        .map(|n| n.parse::<f64>().unwrap_or(0.0));
    std::array::from_fn(|_| nums.next().unwrap_or(0.0))
}
