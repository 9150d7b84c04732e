//! Hybrid ranking as ToolHive merges it, the threshold, the fallback and the shared cache,
//! with an embedder whose vectors are chosen by the test.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use vmcp_embed::{EmbedError, Embedder, EmbeddingCache};

use super::*;

/// Vectors along three axes: arithmetic, text, weather (by the words a text holds).
#[derive(Debug, Default)]
struct Axes {
    texts: AtomicUsize,
    fail: std::sync::atomic::AtomicBool,
}

impl Embedder for Axes {
    fn model_id(&self) -> &str {
        "axes"
    }
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        let fail = self.fail.load(Ordering::SeqCst);
        Box::pin(async move {
            if fail {
                return Err(EmbedError::Service("down".into()));
            }
            Ok(texts
                .iter()
                .map(|t| {
                    let has = |ws: &[&str]| f32::from(u8::from(ws.iter().any(|w| t.contains(w))));
                    vec![
                        has(&["sum", "Adds", "total"]) + 0.01,
                        has(&["text", "echo"]),
                        has(&["rain", "forecast"]),
                    ]
                })
                .collect())
        })
    }
}

fn tools() -> Vec<Value> {
    [
        ("calc_add", "Adds two numbers."),
        ("calc_total", "Computes a running total of values."),
        ("text_echo", "Returns the given text unchanged."),
        ("text_upper", "Uppercases text."),
        ("weather_forecast", "Forecast for a city: rain, sun, wind."),
    ]
    .iter()
    .map(|(n, d)| json!({"name": n, "description": d, "inputSchema": {"type": "object"}}))
    .collect()
}

fn index(embedder: &Arc<Axes>, max: usize, ratio: f64, threshold: f64) -> OptimizerIndex {
    ranked(embedder, max, ratio, threshold, Ranking::ToolHive)
}

fn ranked(
    embedder: &Arc<Axes>,
    max: usize,
    ratio: f64,
    threshold: f64,
    ranking: Ranking,
) -> OptimizerIndex {
    let settings = OptimizerSettings {
        max_tools: max,
        semantic: Some(SemanticSettings {
            cache: Arc::new(EmbeddingCache::new(embedder.clone(), None)),
            ratio,
            threshold,
            timeout: Duration::from_secs(5),
        }),
        ranking,
    };
    OptimizerIndex::build(&settings, &tools(), &BTreeMap::new())
}

async fn find(idx: &OptimizerIndex, description: &str, keywords: &[&str]) -> Vec<String> {
    let all = tools();
    let visible: HashSet<&str> = all.iter().filter_map(|t| t["name"].as_str()).collect();
    let r = idx
        .find(
            &json!({"tool_description": description, "tool_keywords": keywords}),
            Some(&visible),
        )
        .await;
    r["structuredContent"]["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn semantic_results_come_first_then_keyword_results_not_already_present() {
    let axes = Arc::new(Axes::default());
    // max 4, ratio 0.5: two semantic (the arithmetic tools), then two keyword (the text tools).
    let idx = index(&axes, 4, 0.5, 1.0);
    let got = find(&idx, "what is the sum", &["echo", "uppercases"]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(&got[..2], ["calc_add", "calc_total"], "{got:?}");
    assert!(got[2..].iter().all(|n| n.starts_with("text_")), "{got:?}");
    // ratio 0.3 of 4 rounds to 1 semantic result.
    let idx = index(&axes, 4, 0.3, 1.0);
    let got = find(&idx, "what is the sum", &["echo", "uppercases"]).await;
    assert_eq!(got[0], "calc_add");
    assert!(got[1..].iter().all(|n| n.starts_with("text_")), "{got:?}");
    // ratio 0: keyword tier only.
    let idx = index(&axes, 4, 0.0, 1.0);
    assert!(
        find(&idx, "what is the sum", &["echo", "uppercases"])
            .await
            .iter()
            .all(|n| n.starts_with("text_"))
    );
}

#[tokio::test]
async fn the_threshold_drops_far_matches_and_a_failure_falls_back_to_keywords() {
    let axes = Arc::new(Axes::default());
    // Semantic only, tight threshold: only vectors pointing the same way as the query.
    let idx = index(&axes, 5, 1.0, 0.05);
    assert_eq!(find(&idx, "rain forecast", &[]).await, ["weather_forecast"]);
    axes.fail.store(true, Ordering::SeqCst);
    let idx = index(&axes, 5, 1.0, 0.05);
    assert_eq!(
        find(&idx, "echo", &[]).await,
        ["text_echo"],
        "the keyword tier answers when the embedder fails"
    );
}

#[tokio::test]
async fn vmcp_ranking_mixes_both_arms_by_the_ratio() {
    let axes = Arc::new(Axes::default());
    // The task's meaning (to this embedder) is arithmetic ("sum"), its only matching word is
    // in text_upper ("uppercases"): ratio 1 ranks by meaning, ratio 0 by words, and 0.5
    // scores the best of each arm alike.
    let task = "sum uppercases";
    let by_meaning = find(&ranked(&axes, 5, 1.0, 1.0, Ranking::Vmcp), task, &[]).await;
    assert_eq!(
        &by_meaning[..2],
        ["calc_add", "calc_total"],
        "{by_meaning:?}"
    );
    let by_words = find(&ranked(&axes, 5, 0.0, 1.0, Ranking::Vmcp), task, &[]).await;
    assert_eq!(by_words, ["text_upper"]);
    let mut mixed = find(&ranked(&axes, 3, 0.5, 1.0, Ranking::Vmcp), task, &[]).await;
    mixed.sort();
    assert_eq!(mixed, ["calc_add", "calc_total", "text_upper"]);
    // Without an embedder the keyword arm answers alone; filler ("will", "it", "in") is
    // dropped, so only "rain" and "paris" are searched.
    let keyword_only = OptimizerIndex::build(
        &OptimizerSettings {
            max_tools: 3,
            semantic: None,
            ranking: Ranking::Vmcp,
        },
        &tools(),
        &BTreeMap::new(),
    );
    assert_eq!(
        find(&keyword_only, "will it rain in Paris?", &[]).await,
        ["weather_forecast"]
    );
    // A task that is all filler matches nothing (and is not an error).
    assert!(
        find(&keyword_only, "can you do it for me", &[])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn vmcp_ranking_falls_back_to_keywords_when_the_embedder_fails() {
    let axes = Arc::new(Axes::default());
    axes.fail.store(true, Ordering::SeqCst);
    let idx = ranked(&axes, 5, 1.0, 1.0, Ranking::Vmcp);
    assert_eq!(find(&idx, "echo this back", &[]).await[0], "text_echo");
}

#[tokio::test]
async fn a_new_catalog_version_embeds_only_what_changed() {
    let axes = Arc::new(Axes::default());
    let cache = Arc::new(EmbeddingCache::new(axes.clone(), None));
    let settings = OptimizerSettings {
        max_tools: 3,
        semantic: Some(SemanticSettings {
            cache,
            ratio: 0.5,
            threshold: 1.0,
            timeout: Duration::from_secs(5),
        }),
        ranking: Ranking::ToolHive,
    };
    let first = OptimizerIndex::build(&settings, &tools(), &BTreeMap::new());
    find(&first, "sum", &[]).await;
    assert_eq!(axes.texts.load(Ordering::SeqCst), 5 + 1);
    let mut changed = tools();
    changed[0]["description"] = json!("Adds two or more numbers.");
    let second = OptimizerIndex::build(&settings, &changed, &BTreeMap::new());
    find(&second, "sum", &[]).await;
    assert_eq!(
        axes.texts.load(Ordering::SeqCst),
        6 + 1 + 1,
        "one changed tool and the query"
    );
}
