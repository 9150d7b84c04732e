//! The optimizer's semantic arm (ToolHive's Tier 2): tools embedded as
//! `"name: <name> description: <description>"`, the query's `tool_description` embedded at
//! search time, ranked by cosine distance under a threshold. Tool vectors come from the shared
//! content-hash cache, so a new catalog version embeds only what changed; they are computed in
//! the background as soon as the catalog is built.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use vmcp_embed::{EmbedError, EmbeddingCache, cosine_distance};

/// `embeddingService` / the local model, with ToolHive's hybrid keys.
#[derive(Debug, Clone)]
pub struct SemanticSettings {
    /// The embedder behind its cache (shared by every catalog version).
    pub cache: Arc<EmbeddingCache>,
    /// `hybridSearchSemanticRatio`: the share of results taken from the semantic arm.
    pub ratio: f64,
    /// `semanticDistanceThreshold`: semantic matches farther than this are dropped.
    pub threshold: f64,
    /// `embeddingServiceTimeout`: a search waits at most this long for vectors.
    pub timeout: Duration,
}

impl PartialEq for SemanticSettings {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.cache, &other.cache)
            && self.ratio == other.ratio
            && self.threshold == other.threshold
            && self.timeout == other.timeout
    }
}

impl SemanticSettings {
    /// How many of `max` results the semantic arm supplies (ToolHive rounds half away from
    /// zero).
    pub(crate) fn semantic_limit(&self, max: usize) -> usize {
        ((max as f64 * self.ratio).round() as usize).min(max)
    }
}

/// One catalog's tool vectors, computed once.
#[derive(Debug)]
pub(crate) struct SemanticArm {
    settings: SemanticSettings,
    texts: Arc<[String]>,
    vectors: Arc<OnceCell<Vec<Arc<[f32]>>>>,
}

impl SemanticArm {
    /// Prepares the arm for `docs` (name, description) and starts embedding them.
    pub(crate) fn new(settings: &SemanticSettings, docs: &[(String, String)]) -> Self {
        let texts: Arc<[String]> = docs
            .iter()
            .map(|(n, d)| format!("name: {n} description: {d}"))
            .collect();
        let arm = Self {
            settings: settings.clone(),
            texts,
            vectors: Arc::new(OnceCell::new()),
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let (cache, texts, cell) = (
                arm.settings.cache.clone(),
                arm.texts.clone(),
                arm.vectors.clone(),
            );
            rt.spawn(async move {
                if let Err(e) = cell.get_or_try_init(|| cache.vectors(&texts)).await {
                    tracing::warn!(error = %e, "optimizer: tools not embedded; find_tool uses the keyword tier until they are");
                }
            });
        }
        arm
    }

    pub(crate) fn settings(&self) -> &SemanticSettings {
        &self.settings
    }

    /// Documents within the distance threshold of `query`, nearest first, at most `limit`,
    /// among those `allowed`.
    pub(crate) async fn search(
        &self,
        query: &str,
        limit: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Result<Vec<usize>, EmbedError> {
        let s = &self.settings;
        let work = async {
            let vectors = self
                .vectors
                .get_or_try_init(|| s.cache.vectors(&self.texts))
                .await?;
            let q = s.cache.query(query).await?;
            Ok::<_, EmbedError>((vectors, q))
        };
        let (vectors, q) = tokio::time::timeout(s.timeout, work)
            .await
            .map_err(|_| EmbedError::Service(format!("no answer within {:?}", s.timeout)))??;
        let threshold = s.threshold as f32;
        let mut hits: Vec<(f32, usize)> = vectors
            .iter()
            .enumerate()
            .filter(|&(i, _)| allowed(i))
            .map(|(i, v)| (cosine_distance(&q, v), i))
            .filter(|&(d, _)| d <= threshold)
            .collect();
        hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Ok(hits.into_iter().take(limit).map(|(_, i)| i).collect())
    }
}
