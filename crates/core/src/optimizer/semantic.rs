//! The optimizer's semantic arm (ToolHive's Tier 2): tools embedded by name and the lead of
//! their description, the query's `tool_description` embedded at search time, ranked by cosine distance under a threshold. Tool vectors come from the shared
//! content-hash cache, so a new catalog version embeds only what changed; they are computed in
//! the background as soon as the catalog is built.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use vmcp_embed::{EmbedError, EmbeddingCache};

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

/// What is embedded for a tool: its name as words and the first two sentences of its
/// description. ToolHive embeds `name: <name> description: <description>`; on our evaluation
/// (docs/optimizer.md) the shorter text raised hybrid recall@5 from 0.677 to 0.716 and costs
/// less to embed: long descriptions (parameter lists, examples) dilute a sentence embedding.
pub(crate) fn embedded_text(name: &str, description: &str) -> String {
    let words = name.replace(['_', '-'], " ");
    let lead: String = description.split_inclusive(". ").take(2).collect();
    format!("{words}: {}", lead.trim())
}

/// One catalog's tool vectors, computed once.
#[derive(Debug)]
pub(crate) struct SemanticArm {
    settings: SemanticSettings,
    texts: Arc<[String]>,
    vectors: Arc<OnceCell<UnitVectors>>,
}

/// The tools' vectors scaled to unit length in one contiguous block, so a search is one dot
/// product per tool (cosine distance = 1 − dot).
#[derive(Debug)]
struct UnitVectors {
    dim: usize,
    data: Vec<f32>,
}

impl UnitVectors {
    async fn embed(cache: &EmbeddingCache, texts: &[String]) -> Result<Self, EmbedError> {
        let vectors = cache.vectors(texts).await?;
        let dim = vectors.first().map_or(0, |v| v.len());
        let mut data = Vec::with_capacity(dim * vectors.len());
        for v in &vectors {
            data.extend(unit(v));
        }
        Ok(Self { dim, data })
    }
}

fn unit(v: &[f32]) -> impl Iterator<Item = f32> + '_ {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    v.iter().map(move |x| x * scale)
}

/// A dot product written for the auto-vectoriser: eight independent accumulators.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

impl SemanticArm {
    /// Prepares the arm for `docs` (name, description) and starts embedding them.
    pub(crate) fn new(settings: &SemanticSettings, docs: &[(String, String)]) -> Self {
        let texts: Arc<[String]> = docs.iter().map(|(n, d)| embedded_text(n, d)).collect();
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
                if let Err(e) = cell.get_or_try_init(|| UnitVectors::embed(&cache, &texts)).await {
                    tracing::warn!(error = %e, "optimizer: tools not embedded; find_tool uses the keyword tier until they are");
                }
            });
        }
        arm
    }

    pub(crate) fn settings(&self) -> &SemanticSettings {
        &self.settings
    }

    /// Documents within the distance threshold of `query` with their cosine distance, nearest
    /// first, at most `limit`, among those `allowed`.
    pub(crate) async fn search(
        &self,
        query: &str,
        limit: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Result<Vec<(usize, f32)>, EmbedError> {
        let s = &self.settings;
        let work = async {
            let vectors = self
                .vectors
                .get_or_try_init(|| UnitVectors::embed(&s.cache, &self.texts))
                .await?;
            let q = s.cache.query(query).await?;
            Ok::<_, EmbedError>((vectors, q))
        };
        let (table, q) = tokio::time::timeout(s.timeout, work)
            .await
            .map_err(|_| EmbedError::Service(format!("no answer within {:?}", s.timeout)))??;
        if q.len() != table.dim {
            return Err(EmbedError::Service(format!(
                "query vector has {} dimensions, tools {}",
                q.len(),
                table.dim
            )));
        }
        let q: Vec<f32> = unit(&q).collect();
        let threshold = s.threshold as f32;
        let mut hits: Vec<(f32, usize)> = table
            .data
            .chunks_exact(table.dim.max(1))
            .enumerate()
            .filter(|&(i, _)| allowed(i))
            .map(|(i, v)| ((1.0 - dot(&q, v)).clamp(0.0, 2.0), i))
            .filter(|&(d, _)| d <= threshold)
            .collect();
        let by_distance =
            |a: &(f32, usize), b: &(f32, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, by_distance);
            hits.truncate(limit);
        }
        hits.sort_by(by_distance);
        Ok(hits.into_iter().map(|(d, i)| (i, d)).collect())
    }
}
