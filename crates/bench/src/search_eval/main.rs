//! `vmcp-search-eval`: how often `find_tool` finds the right tool, and how fast.
//!
//! Scores the optimizer's ranking (the gateway's own code, `vmcp_core::ToolSearch`) on a corpus
//! of real MCP servers' tools and labelled task queries (crates/bench/eval): recall@1, recall@5
//! and MRR for the keyword tier, the semantic tier (local model) and ToolHive's hybrid merge,
//! plus token savings; then search latency and index cost at 10,000 tools. Prints a Markdown
//! report, writes JSON, and with `--min-*` fails when recall drops below a floor (CI's smoke run).

mod corpus;
mod latency;
mod quality;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use serde_json::{Value, json};
use vmcp_core::{OptimizerSettings, Ranking, SemanticSettings, ToolSearch};
use vmcp_embed::{EmbeddingCache, LocalEmbedder};

use quality::Input;

#[derive(Debug, Parser)]
#[command(name = "vmcp-search-eval", about)]
struct Cli {
    /// The evaluation directory (corpus/ and the query files).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/eval"))]
    eval_dir: PathBuf,
    /// Score the small slice (slice.json) instead of every query (queries.json).
    #[arg(long)]
    slice: bool,
    /// The local model directory [default: $VMCP_EMBED_MODEL or the one .ci/venv.sh installs].
    #[arg(long)]
    model: Option<PathBuf>,
    /// `maxToolsToReturn`.
    #[arg(long, default_value_t = 8)]
    max_tools: usize,
    /// Tools in the scale measurement (0: skip it).
    #[arg(long, default_value_t = 10_000)]
    scale: usize,
    /// Rounds of the query set per latency measurement.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where to write the JSON results.
    #[arg(long, default_value = "bench-results/search-eval.json")]
    out: PathBuf,
    /// Fail unless the keyword tier's recall@5 reaches this.
    #[arg(long)]
    min_keyword_recall5: Option<f64>,
    /// Fail unless the hybrid tier's recall@5 reaches this (needs the model).
    #[arg(long)]
    min_hybrid_recall5: Option<f64>,
    /// Keep tool vectors in this file between runs (`embeddingCacheFile`).
    #[arg(long)]
    cache_file: Option<PathBuf>,
    /// Fail unless the keyword tier's recall@5 on the agent's calls reaches this.
    #[arg(long)]
    min_agent_keyword_recall5: Option<f64>,
    /// Fail unless the hybrid tier's recall@5 on the agent's calls reaches this.
    #[arg(long)]
    min_agent_hybrid_recall5: Option<f64>,
    /// Print every query missed in the first five.
    #[arg(long)]
    misses: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let corpus = corpus::load(&cli.eval_dir)?;
    let file = cli.eval_dir.join(if cli.slice {
        "slice.json"
    } else {
        "queries.json"
    });
    let queries = corpus::queries(&file, &corpus)?;
    println!(
        "# find_tool search quality\n\n{} tools from {} servers, {} queries ({}), maxToolsToReturn {}.\n",
        corpus.tools.len(),
        corpus.servers.len(),
        queries.len(),
        file.file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default(),
        cli.max_tools
    );
    let plain = |semantic, ranking| OptimizerSettings {
        max_tools: cli.max_tools,
        semantic,
        ranking,
    };
    let keyword = ToolSearch::new(&plain(None, Ranking::Vmcp), &corpus.tools, &corpus.servers);
    let find_tool = keyword.listed().iter().find(|t| t["name"] == "find_tool");
    let find_tool_tokens = find_tool.map_or(0, |t| t.to_string().len() / 4);
    let toolhive = ToolSearch::new(
        &plain(None, Ranking::ToolHive),
        &corpus.tools,
        &corpus.servers,
    );
    let mut results = Vec::new();
    let mut agent_results = Vec::new();
    for (mode, search) in [("keyword", &keyword), ("keyword (ToolHive)", &toolhive)] {
        results.push(quality::score(mode, search, &queries, Input::Task).await);
        agent_results.push(quality::score(mode, search, &queries, Input::Agent).await);
    }

    let model_dir = cli.model.clone().or_else(vmcp_embed::repo_model_dir);
    let mut embedding = Value::Null;
    let model = match &model_dir {
        Some(dir) => {
            let started = Instant::now();
            let model = LocalEmbedder::load(dir).with_context(|| dir.display().to_string())?;
            let load_ms = started.elapsed().as_millis();
            let cache = Arc::new(EmbeddingCache::new(
                Arc::new(model.clone()),
                cli.cache_file.as_deref(),
            ));
            let texts: Vec<String> = corpus.tools.iter().map(ToolSearch::embedded_text).collect();
            let started = Instant::now();
            cache.vectors(&texts).await?;
            let secs = started.elapsed().as_secs_f64();
            embedding = json!({"model_load_ms": load_ms, "tools": texts.len(),
                               "embed_s_per_1000_tools": secs * 1000.0 / texts.len() as f64});
            for (mode, ratio, ranking) in [
                ("semantic", 1.0, Ranking::Vmcp),
                ("hybrid", 0.5, Ranking::Vmcp),
                ("semantic (ToolHive)", 1.0, Ranking::ToolHive),
                ("hybrid (ToolHive)", 0.5, Ranking::ToolHive),
            ] {
                let search = ToolSearch::new(
                    &plain(
                        Some(SemanticSettings {
                            cache: cache.clone(),
                            ratio,
                            threshold: 1.0,
                            timeout: Duration::from_secs(3600),
                        }),
                        ranking,
                    ),
                    &corpus.tools,
                    &corpus.servers,
                );
                results.push(quality::score(mode, &search, &queries, Input::Task).await);
                agent_results.push(quality::score(mode, &search, &queries, Input::Agent).await);
            }
            Some((model, cache))
        }
        None => {
            println!("note: no local model (set --model or VMCP_EMBED_MODEL): keyword tier only\n");
            None
        }
    };

    println!("`tool_description` = the user's task text:\n");
    table(&results);
    agent_results.retain(|s| s.queries > 0);
    if !agent_results.is_empty() {
        println!(
            "\n`find_tool` called as an agent called it (agent_calls.json: description and keywords, {} queries):\n",
            agent_results[0].queries
        );
        table(&agent_results);
    }
    println!(
        "\n`find_tool`'s definition (description names the {} servers and their tool counts): {} tokens (JSON length / 4, as ToolHive counts), against {} for the full tools/list.",
        corpus.servers.len(),
        find_tool_tokens,
        results[0].baseline_tokens
    );
    if !embedding.is_null() {
        println!(
            "\nLocal model: loaded in {} ms; embedding costs {:.1} s per 1,000 tools (once per tool text; cached by content hash).",
            embedding["model_load_ms"],
            embedding["embed_s_per_1000_tools"].as_f64().unwrap_or(0.0)
        );
    }
    if cli.misses {
        for s in &results {
            println!("\n## {} misses ({})\n", s.mode, s.misses.len());
            for (q, got) in &s.misses {
                println!("- {q:?} -> {got:?}");
            }
        }
    }

    let mut scale = Value::Null;
    if cli.scale > 0 {
        let m = model.as_ref().map(|(m, c)| (m, c.as_ref()));
        scale = latency::measure(&corpus, &queries, cli.scale, cli.rounds, m).await;
        println!("\n# find_tool at {} tools\n", scale["tools"]);
        println!("| tier | p50 | p90 |\n|---|---|---|");
        for tier in [
            "keyword",
            "keyword (ToolHive)",
            "hybrid",
            "semantic",
            "hybrid (ToolHive)",
        ] {
            if let Some(t) = scale.get(tier) {
                println!(
                    "| {tier} | {:.3} ms | {:.3} ms |",
                    t["find_p50_ms"].as_f64().unwrap_or(0.0),
                    t["find_p90_ms"].as_f64().unwrap_or(0.0)
                );
            }
        }
        let k = &scale["keyword"];
        println!(
            "\nKeyword index: {:.2} ms and {:.0} KiB RSS per 1,000 tools to build{}.",
            k["build_ms_per_1000_tools"].as_f64().unwrap_or(0.0),
            k["rss_kib_per_1000_tools"].as_f64().unwrap_or(0.0),
            scale
                .get("vectors_kib_per_1000_tools")
                .and_then(Value::as_f64)
                .map(|v| format!("; vectors {v:.0} KiB per 1,000 tools"))
                .unwrap_or_default()
        );
    }

    if let Some(dir) = cli.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let report = json!({
        "corpus": {"tools": corpus.tools.len(), "servers": corpus.servers, "queries": queries.len(), "file": file},
        "max_tools": cli.max_tools,
        "find_tool_tokens": find_tool_tokens,
        "results": results.iter().map(quality::Scores::json).collect::<Vec<_>>(),
        "agent_results": agent_results.iter().map(quality::Scores::json).collect::<Vec<_>>(),
        "embedding": embedding,
        "scale": scale,
    });
    std::fs::write(&cli.out, serde_json::to_string_pretty(&report)?)?;

    let mut failed = Vec::new();
    for (set, input, mode, min) in [
        (&results, "task text", "keyword", cli.min_keyword_recall5),
        (&results, "task text", "hybrid", cli.min_hybrid_recall5),
        (
            &agent_results,
            "agent calls",
            "keyword",
            cli.min_agent_keyword_recall5,
        ),
        (
            &agent_results,
            "agent calls",
            "hybrid",
            cli.min_agent_hybrid_recall5,
        ),
    ] {
        let Some(min) = min else { continue };
        let got = set.iter().find(|s| s.mode == mode).map(|s| s.recall_5);
        if got.is_none_or(|r| r < min) {
            failed.push(format!("{mode} recall@5 on {input} {got:?} is below {min}"));
        }
    }
    anyhow::ensure!(failed.is_empty(), "{}", failed.join("; "));
    Ok(())
}

fn table(results: &[quality::Scores]) {
    println!(
        "| tier | recall@1 | recall@5 | recall@5 even / odd queries | MRR | mean tokens returned | mean savings |"
    );
    println!("|---|---|---|---|---|---|---|");
    for s in results {
        println!(
            "| {} | {:.3} | {:.3} | {:.3} / {:.3} | {:.3} | {:.0} of {} | {:.1}% |",
            s.mode,
            s.recall_1,
            s.recall_5,
            s.recall_5_halves[0],
            s.recall_5_halves[1],
            s.mrr,
            s.returned_tokens,
            s.baseline_tokens,
            s.savings_percent
        );
    }
}
