//! `find_tool` at scale: the corpus repeated to 10,000 tools; index build time and memory, and
//! search latency for the keyword tier and, with the local model, the hybrid and semantic
//! tiers. Copies of a tool reuse its original's vector (embedding 10,000 texts would take
//! minutes and measure nothing new: a search's work is one query embedding and a scan), so the
//! embedding cost per 1,000 tools is measured separately on the real corpus.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use vmcp_core::{OptimizerSettings, Ranking, SemanticSettings, ToolSearch};
use vmcp_embed::{EmbedError, Embedder, EmbeddingCache, LocalEmbedder};

use crate::corpus::{Corpus, Query, scaled};

/// Answers copies' texts with their originals' vectors and anything else with the model.
#[derive(Debug)]
struct Replicated {
    model: LocalEmbedder,
    known: HashMap<String, Arc<[f32]>>,
}

impl Embedder for Replicated {
    fn model_id(&self) -> &str {
        "replicated"
    }
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(texts.len());
            for t in texts {
                match self.known.get(t) {
                    Some(v) => out.push(v.to_vec()),
                    // A query: the real model, run as the gateway runs it.
                    None => out.extend(self.model.embed(std::slice::from_ref(t)).await?),
                }
            }
            Ok(out)
        })
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

async fn time_queries(search: &ToolSearch, queries: &[Query], rounds: usize) -> (f64, f64) {
    let mut times = Vec::with_capacity(queries.len() * rounds);
    for _ in 0..rounds {
        for q in queries {
            let args = json!({"tool_description": q.text});
            let started = Instant::now();
            let r = search.find(&args).await;
            times.push(started.elapsed());
            std::hint::black_box(r);
        }
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.9))
}

fn settings(
    max: usize,
    semantic: Option<(Arc<EmbeddingCache>, f64)>,
    ranking: Ranking,
) -> OptimizerSettings {
    OptimizerSettings {
        max_tools: max,
        semantic: semantic.map(|(cache, ratio)| SemanticSettings {
            cache,
            ratio,
            threshold: 1.0,
            timeout: Duration::from_secs(3600),
        }),
        ranking,
    }
}

/// Runs the scale measurements; `model` and the corpus vectors in `cache` enable the semantic rows.
pub(crate) async fn measure(
    corpus: &Corpus,
    queries: &[Query],
    n: usize,
    rounds: usize,
    model: Option<(&LocalEmbedder, &EmbeddingCache)>,
) -> Value {
    let (tools, original) = scaled(corpus, n);
    let servers = BTreeMap::new();
    let before = rss_kib();
    let started = Instant::now();
    let keyword = ToolSearch::new(&settings(8, None, Ranking::Vmcp), &tools, &servers);
    let build_ms = started.elapsed().as_secs_f64() * 1000.0;
    let index_kib = rss_kib().saturating_sub(before);
    let (p50, p90) = time_queries(&keyword, queries, rounds).await;
    let per_k = 1000.0 / tools.len() as f64;
    let mut out = json!({
        "tools": tools.len(),
        "keyword": {"build_ms_per_1000_tools": build_ms * per_k,
                    "rss_kib_per_1000_tools": index_kib as f64 * per_k,
                    "find_p50_ms": p50, "find_p90_ms": p90},
    });
    drop(keyword);
    let toolhive = ToolSearch::new(&settings(8, None, Ranking::ToolHive), &tools, &servers);
    let (p50, p90) = time_queries(&toolhive, queries, rounds).await;
    out["keyword (ToolHive)"] = json!({"find_p50_ms": p50, "find_p90_ms": p90});
    drop(toolhive);
    if let Some((model, cache)) = model {
        let originals: Vec<String> = corpus.tools.iter().map(ToolSearch::embedded_text).collect();
        let vectors = cache.vectors(&originals).await.unwrap_or_default();
        let by_text: HashMap<String, Arc<[f32]>> = originals.into_iter().zip(vectors).collect();
        let known = original
            .iter()
            .filter_map(|(copy, orig)| Some((copy.clone(), by_text.get(orig)?.clone())))
            .collect();
        let replicated = Arc::new(EmbeddingCache::new(
            Arc::new(Replicated {
                model: model.clone(),
                known,
            }),
            None,
        ));
        for (name, ratio, ranking) in [
            ("hybrid", 0.5, Ranking::Vmcp),
            ("semantic", 1.0, Ranking::Vmcp),
            ("hybrid (ToolHive)", 0.5, Ranking::ToolHive),
        ] {
            let search = ToolSearch::new(
                &settings(8, Some((replicated.clone(), ratio)), ranking),
                &tools,
                &servers,
            );
            // The first search waits for the (replicated) vectors; not timed.
            search.find(&json!({"tool_description": "warm up"})).await;
            let (p50, p90) = time_queries(&search, queries, rounds).await;
            out[name] = json!({"find_p50_ms": p50, "find_p90_ms": p90});
        }
        let dim = by_text.values().next().map_or(0, |v| v.len());
        out["vectors_kib_per_1000_tools"] = json!((dim * 4 * 1000) as f64 / 1024.0);
    }
    out
}
