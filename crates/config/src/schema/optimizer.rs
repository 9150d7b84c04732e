//! `optimizer`: ToolHive's keys (the block's presence turns it on). `find_tool` / `call_tool`
//! replace the tool list; the keyword tier ranks with BM25, the semantic tier asks an embedding
//! service (TEI or OpenAI-compatible) or, vmcp's addition, a model on disk.

use std::collections::BTreeMap;
use std::time::Duration;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields, kind};
use crate::schema::RawSection;

/// `optimizer.embeddingProvider`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EmbeddingProvider {
    /// Hugging Face text-embeddings-inference (`POST /embed`).
    #[default]
    Tei,
    /// An OpenAI-compatible `POST /embeddings`.
    OpenAi,
    /// vmcp's own: a BERT sentence-embedding model loaded from `embeddingModelPath`, no service.
    Local,
}

impl Choice for EmbeddingProvider {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("tei", Self::Tei),
        ("openai", Self::OpenAi),
        ("local", Self::Local),
    ];
}

/// `optimizer.ranking` (vmcp's key): how `find_tool` ranks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchRanking {
    /// vmcp's: the task analysed (literals, filler, synonyms), weighted BM25 over names,
    /// descriptions and parameters, the two arms' scores mixed by the ratio.
    #[default]
    Vmcp,
    /// Exactly ToolHive's (FTS5 phrases and bm25; semantic matches first, then keyword).
    ToolHive,
}

impl Choice for SearchRanking {
    const NAMES: &'static [(&'static str, Self)] =
        &[("vmcp", Self::Vmcp), ("toolhive", Self::ToolHive)];
}

/// `optimizer`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizerConfig {
    /// `embeddingService`: base URL; absent means the keyword tier only.
    pub embedding_service: Option<String>,
    /// `embeddingServiceTimeout` (default 30s).
    pub embedding_service_timeout: Duration,
    /// `embeddingProvider` (default `tei`).
    pub embedding_provider: EmbeddingProvider,
    /// `embeddingModel` (required for `openai`).
    pub embedding_model: Option<String>,
    /// `embeddingModelPath` (vmcp's, with `embeddingProvider: local`): a directory holding
    /// `config.json`, `model.safetensors` and `tokenizer.json`.
    pub embedding_model_path: Option<String>,
    /// `embeddingCacheFile` (vmcp's): where tool vectors are kept across restarts.
    pub embedding_cache_file: Option<String>,
    /// `embeddingHeaders` (openai only).
    pub embedding_headers: BTreeMap<String, String>,
    /// `maxToolsToReturn` (default 8, 1..=50).
    pub max_tools_to_return: u64,
    /// `hybridSearchSemanticRatio` (default 0.5, 0..=1; ToolHive writes it as a string).
    pub hybrid_search_semantic_ratio: f64,
    /// `semanticDistanceThreshold` (default 1.0, 0..=2, cosine distance).
    pub semantic_distance_threshold: f64,
    /// `ranking` (vmcp's; default `vmcp`).
    pub ranking: SearchRanking,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        Self {
            embedding_service: None,
            embedding_service_timeout: Duration::from_secs(30),
            embedding_provider: EmbeddingProvider::Tei,
            embedding_model: None,
            embedding_model_path: None,
            embedding_cache_file: None,
            embedding_headers: BTreeMap::new(),
            max_tools_to_return: 8,
            hybrid_search_semantic_ratio: 0.5,
            semantic_distance_threshold: 1.0,
            ranking: SearchRanking::Vmcp,
            raw: RawSection(serde_json::Value::Object(serde_json::Map::new())),
        }
    }
}

/// A float written as a number or, as ToolHive's schema has it, a string.
fn float(f: &mut Fields<'_>, key: &'static str, issues: &Issues) -> Option<f64> {
    let (v, p) = f.value(key)?;
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    if n.is_none_or(|n| !n.is_finite()) {
        issues.push_new(&p, format!("expected a number, found {}", kind(v)));
        return None;
    }
    n
}

pub(crate) fn decode_optimizer(v: &Value, path: &KeyPath, issues: &Issues) -> OptimizerConfig {
    let mut f = Fields::open(v, path, issues);
    let d = OptimizerConfig::default();
    let cfg = OptimizerConfig {
        embedding_service: f.string("embeddingService").filter(|s| !s.is_empty()),
        embedding_service_timeout: f
            .duration("embeddingServiceTimeout")
            .unwrap_or(d.embedding_service_timeout),
        embedding_provider: f.choice("embeddingProvider").unwrap_or_default(),
        embedding_model: f.string("embeddingModel").filter(|s| !s.is_empty()),
        embedding_model_path: f.string("embeddingModelPath").filter(|s| !s.is_empty()),
        embedding_cache_file: f.string("embeddingCacheFile").filter(|s| !s.is_empty()),
        embedding_headers: f.string_map("embeddingHeaders"),
        max_tools_to_return: f.uint("maxToolsToReturn").unwrap_or(d.max_tools_to_return),
        hybrid_search_semantic_ratio: float(&mut f, "hybridSearchSemanticRatio", issues)
            .unwrap_or(d.hybrid_search_semantic_ratio),
        semantic_distance_threshold: float(&mut f, "semanticDistanceThreshold", issues)
            .unwrap_or(d.semantic_distance_threshold),
        ranking: f.choice("ranking").unwrap_or_default(),
        raw: f.raw_self().unwrap_or(d.raw),
    };
    f.finish();
    cfg
}

impl OptimizerConfig {
    /// Whether the semantic (hybrid) tier is configured.
    #[must_use]
    pub fn semantic(&self) -> bool {
        self.embedding_service.is_some() || self.embedding_provider == EmbeddingProvider::Local
    }
}
