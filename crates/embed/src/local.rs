//! The local embedder: a sentence-transformers BERT model loaded from a directory
//! (`config.json`, `model.safetensors`, `tokenizer.json`, and when present
//! `sentence_bert_config.json`, `1_Pooling/config.json`, `modules.json`).

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::bert::{Bert, BertConfig, pool};
use crate::safetensors::Tensors;
use crate::wordpiece::WordPiece;
use crate::{EmbedError, Embedder};

/// A model in memory; cheap to clone.
#[derive(Debug, Clone)]
pub struct LocalEmbedder(Arc<Model>);

#[derive(Debug)]
struct Model {
    id: String,
    tokenizer: WordPiece,
    bert: Bert,
    max_tokens: usize,
    mean: bool,
    normalize: bool,
    dimension: usize,
}

fn read_json(dir: &Path, name: &str) -> Result<Option<Value>, EmbedError> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EmbedError::Model(format!("{}: {e}", path.display()))),
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir` (blocking: reads and converts every weight).
    ///
    /// # Errors
    /// A missing or unreadable file, or a model that is not a BERT sentence encoder.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let required = |name: &str| {
            read_json(dir, name)?.ok_or_else(|| {
                EmbedError::Model(format!("{} is missing", dir.join(name).display()))
            })
        };
        let cfg = BertConfig::from_json(&required("config.json")?)?;
        let tokenizer = WordPiece::from_json(&required("tokenizer.json")?)?;
        let weights_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights_path)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", weights_path.display())))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
        let mut tensors = Tensors::parse(&bytes)?;
        drop(bytes);
        let dimension = cfg.hidden_size();
        let positions = cfg.max_positions();
        if tokenizer.max_id() >= cfg.vocab_size() {
            return Err(EmbedError::Model(
                "tokenizer.json's vocabulary is larger than the model's".into(),
            ));
        }
        let bert = Bert::load(cfg, &mut tensors)?;
        let max_tokens = read_json(dir, "sentence_bert_config.json")?
            .and_then(|c| c.get("max_seq_length").and_then(Value::as_u64))
            .map_or(positions, |n| n as usize)
            .clamp(2, positions);
        let pooling = read_json(dir, "1_Pooling/config.json")?;
        let flag = |k: &str| {
            pooling
                .as_ref()
                .and_then(|p| p.get(k))
                .and_then(Value::as_bool)
        };
        let mean = flag("pooling_mode_cls_token") != Some(true)
            || flag("pooling_mode_mean_tokens") == Some(true);
        // Sentence-transformers models normalise when modules.json lists a Normalize module;
        // without modules.json, normalise (cosine distance does not care either way).
        let normalize = read_json(dir, "modules.json")?.is_none_or(|m| {
            m.as_array().is_some_and(|mods| {
                mods.iter().any(|x| {
                    x.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.ends_with("Normalize"))
                })
            })
        });
        let hex: String = digest.as_ref()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Self(Arc::new(Model {
            id: format!("local:{hex}:{max_tokens}"),
            tokenizer,
            bert,
            max_tokens,
            mean,
            normalize,
            dimension,
        })))
    }

    /// The vectors' dimension.
    #[must_use]
    pub fn dimension(&self) -> usize {
        self.0.dimension
    }

    /// The token ids a text is encoded to (truncated to the model's sequence length).
    #[must_use]
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.0.tokenizer.encode(text, self.0.max_tokens)
    }

    /// Embeds one text on the calling thread.
    #[must_use]
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let m = &self.0;
        let ids = self.token_ids(text);
        pool(&m.bert.forward(&ids), m.mean, m.normalize)
    }
}

impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.0.id
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            // Inference is CPU work: run it off the async threads, split across the cores.
            let threads = std::thread::available_parallelism().map_or(1, usize::from);
            let per = texts.len().div_ceil(threads).max(1);
            let jobs: Vec<_> = texts
                .chunks(per)
                .map(|chunk| {
                    let model = self.clone();
                    let chunk = chunk.to_vec();
                    tokio::task::spawn_blocking(move || {
                        chunk.iter().map(|t| model.embed_one(t)).collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(texts.len());
            for job in jobs {
                out.extend(
                    job.await
                        .map_err(|e| EmbedError::Model(format!("inference failed: {e}")))?,
                );
            }
            Ok(out)
        })
    }
}
