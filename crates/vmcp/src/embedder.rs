//! The optimizer's embedder, from the config: a TEI server, an OpenAI-compatible endpoint, or a
//! model on disk; behind the content-hash cache (and its file, when configured).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use vmcp_config::{EmbeddingProvider, OptimizerConfig};
use vmcp_core::SemanticSettings;
use vmcp_embed::{Embedder, EmbeddingCache, LocalEmbedder, OpenAiEmbedder, TeiEmbedder};

/// The semantic arm's settings, or None for the keyword tier alone.
pub(crate) fn semantic(o: &OptimizerConfig) -> anyhow::Result<Option<SemanticSettings>> {
    if !o.semantic() {
        return Ok(None);
    }
    let embedder: Arc<dyn Embedder> = match (o.embedding_provider, &o.embedding_service) {
        (EmbeddingProvider::Local, _) => {
            let dir = o
                .embedding_model_path
                .as_deref()
                .context("optimizer.embeddingModelPath is required")?;
            let started = std::time::Instant::now();
            let model = LocalEmbedder::load(Path::new(dir))
                .with_context(|| format!("optimizer.embeddingModelPath {dir}"))?;
            tracing::info!(
                model = dir,
                dimension = model.dimension(),
                ms = started.elapsed().as_millis() as u64,
                "optimizer: local embedding model loaded"
            );
            if std::env::var_os("RAYON_NUM_THREADS").is_none()
                && std::env::var_os("CANDLE_NUM_THREADS").is_none()
            {
                // candle sizes its element-wise thread pool from these alone, and its threads
                // spin on the cores that serve requests (docs/optimizer.md); the container
                // image sets RAYON_NUM_THREADS=1.
                tracing::warn!(
                    "optimizer: set RAYON_NUM_THREADS=1 for the local embedder: without it, embedding \
                     takes about a quarter more CPU and slows searches (docs/optimizer.md)"
                );
            }
            Arc::new(model)
        }
        (EmbeddingProvider::Tei, Some(url)) => Arc::new(TeiEmbedder::new(
            vmcp_backend::http_client()?,
            url,
            o.embedding_service_timeout,
        )),
        (EmbeddingProvider::OpenAi, Some(url)) => Arc::new(OpenAiEmbedder::new(
            vmcp_backend::http_client()?,
            url,
            o.embedding_model.as_deref().unwrap_or_default(),
            std::env::var("OPENAI_API_KEY").ok(),
            o.embedding_headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            o.embedding_service_timeout,
        )),
        (_, None) => return Ok(None),
    };
    let cache = EmbeddingCache::new(embedder, o.embedding_cache_file.as_deref().map(Path::new));
    Ok(Some(SemanticSettings {
        cache: Arc::new(cache),
        ratio: o.hybrid_search_semantic_ratio,
        threshold: o.semantic_distance_threshold,
        timeout: o.embedding_service_timeout,
    }))
}
