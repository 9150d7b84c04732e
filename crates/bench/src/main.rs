//! `vmcp-bench`: starts a fixture backend, measures calls to it directly, starts the real
//! `vmcp` binary in front of it, measures the same through the gateway, and prints Markdown
//! tables plus a JSON file. See docs/benchmarks.md. Nothing here asserts timings: a run fails
//! only when something breaks (a process does not start, a request errors).

mod additions;
mod bearer;
mod cli;
mod config_extra;
mod http;
mod load;
mod oidc_provider;
mod procfs;
mod procs;
mod report;
mod scenarios;
mod services;
mod setup;
mod stats;
mod stdio;

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use serde_json::{Map, Value, json};

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every selected scenario; false when one failed or a request errored.
async fn run(cli: &cli::Cli) -> anyhow::Result<bool> {
    if cfg!(debug_assertions) {
        eprintln!("warning: vmcp-bench is a debug build; use `cargo run --release -p vmcp-bench`");
    }
    if let Some(why) = additions::redis_missing(cli) {
        println!("{why}");
        report::write_json(&cli.out, &json!({"skipped": why}))?;
        return Ok(true);
    }
    if !cli.no_build {
        procs::build_release()?;
    }
    let settings = cli.settings();
    let mut env = procs::Env::new(&procs::bin_dir(cli.bin_dir.as_deref()))?;
    let additions = additions::Additions::start(cli, &mut env).await?;
    let started = Instant::now();
    let mut findings = report::Findings::default();
    let mut sections = Map::new();
    let mut ok = true;
    for &scenario in &settings.scenarios {
        eprintln!("running scenario {scenario:?}...");
        match scenarios::run(scenario, &env, &settings, &mut findings).await {
            Ok(section) => {
                println!("{}", section.markdown());
                sections.insert(section.key.to_owned(), section.json);
            }
            Err(e) => {
                eprintln!("scenario {scenario:?} failed: {e:#}");
                sections.insert(format!("{scenario:?}"), json!({"error": format!("{e:#}")}));
                ok = false;
            }
        }
    }
    let targets = findings.section();
    println!("{}", targets.markdown());
    if let Some(line) = additions.summary() {
        eprintln!("{line}");
    }
    let errors = load::total_errors();
    if errors > 0 {
        eprintln!("{errors} requests failed during load runs (see the errors columns)");
        ok = false;
    }
    let doc = json!({
        "machine": procfs::machine(),
        "settings": {
            "duration_s": settings.duration.as_secs_f64(),
            "warmup_s": settings.warmup.as_secs_f64(),
            "concurrency": settings.concurrency,
            "repeat": settings.repeat,
            "sessions": settings.sessions,
            "soak_s": settings.soak.as_secs_f64(),
            "load_runs": settings.load_runs,
            "cold_runs": settings.cold_runs,
            "iterations": settings.iterations,
            "quick": settings.quick,
            "oidc": cli.oidc,
            "redis": cli.redis,
            "config_extra": cli.config_extra,
        },
        "scenarios": Value::Object(sections),
        "targets": targets.json,
        "request_errors": errors,
        "elapsed_s": started.elapsed().as_secs_f64(),
    });
    report::write_json(&cli.out, &doc)?;
    eprintln!(
        "wrote {} in {:.1}s",
        cli.out.display(),
        started.elapsed().as_secs_f64()
    );
    drop(additions);
    if ok {
        env.clean();
    } else {
        eprintln!("process logs kept in {}", env.scratch.display());
    }
    Ok(ok)
}
