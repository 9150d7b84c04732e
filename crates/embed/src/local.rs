//! The local embedder: a sentence-transformers BERT model loaded from a directory
//! (`config.json`, `model.safetensors`, `tokenizer.json`, and when present
//! `sentence_bert_config.json`, `1_Pooling/config.json`, `modules.json`).

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, BertConfig};
use crate::{EmbedError, Embedder};

/// A model in memory; cheap to clone.
#[derive(Debug, Clone)]
pub struct LocalEmbedder(Arc<Model>);

#[derive(Debug)]
struct Model {
    id: String,
    tokenizer: Tokenizer,
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
        // gemm (under candle) would split every matrix product over the cores through rayon
        // (see `on_this_thread`). The cores are the serving threads'; `embed` spreads texts
        // over them itself.
        gemm::set_threading_threshold(usize::MAX);
        let config = required("config.json")?;
        let cfg = BertConfig::from_json(&config)?;
        let dimension = cfg.hidden_size();
        let positions = cfg.max_positions();
        let max_tokens = read_json(dir, "sentence_bert_config.json")?
            .and_then(|c| c.get("max_seq_length").and_then(Value::as_u64))
            .map_or(positions, |n| n as usize)
            .clamp(2, positions);
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), max_tokens)?;
        if tokenizer.get_vocab_size(true) > cfg.vocab_size() {
            return Err(EmbedError::Model(
                "tokenizer.json's vocabulary is larger than the model's".into(),
            ));
        }
        let weights_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights_path)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", weights_path.display())))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
        let bad_weights =
            |e: candle_core::Error| EmbedError::Model(format!("{}: {e}", weights_path.display()));
        let tensors =
            candle_core::safetensors::load_buffer(&bytes, &Device::Cpu).map_err(bad_weights)?;
        drop(bytes);
        // f16 and bf16 checkpoints are widened to f32 as each weight is read.
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let vb = model_root(vb, config.get("model_type").and_then(Value::as_str));
        let bert = Bert::load(cfg, &vb).map_err(|e| match e {
            EmbedError::Model(m) => EmbedError::Model(format!("{}: {m}", weights_path.display())),
            other => other,
        })?;
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

    /// The token ids a text is encoded to, with the model's special tokens, truncated to its
    /// sequence length.
    ///
    /// # Errors
    /// When the tokenizer fails on the text.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let text = bounded(text, self.0.max_tokens);
        let encoding = self
            .0
            .tokenizer
            .encode(text, true)
            .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Embeds one text on the calling thread.
    ///
    /// # Errors
    /// When the tokenizer or the forward pass fails.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let m = &self.0;
        let ids = self.token_ids(text)?;
        if ids.is_empty() {
            return Err(EmbedError::Model(
                "the tokenizer produced no tokens (tokenizer.json adds no special tokens)".into(),
            ));
        }
        on_this_thread(|| m.bert.embed(&ids, m.mean, m.normalize))
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
                        chunk
                            .iter()
                            .map(|t| model.embed_one(t))
                            .collect::<Result<Vec<_>, _>>()
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(texts.len());
            for job in jobs {
                out.extend(
                    job.await
                        .map_err(|e| EmbedError::Model(format!("inference failed: {e}")))??,
                );
            }
            Ok(out)
        })
    }
}

/// Reads `tokenizer.json` with Hugging Face's `tokenizers` (normaliser, pre-tokeniser, model and
/// special-token template exactly as the model was trained), truncating to `max_tokens` as
/// sentence-transformers does and never padding (one text at a time).
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer, EmbedError> {
    let bad = |e: &dyn std::fmt::Display| EmbedError::Model(format!("{}: {e}", path.display()));
    if !path.is_file() {
        return Err(EmbedError::Model(format!("{} is missing", path.display())));
    }
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| bad(&e))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|e| bad(&e))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

/// Where the encoder's weights start: at the root as sentence-transformers saves them, or under
/// the architecture's prefix (`bert.`, `mpnet.`) as a transformers checkpoint has them.
fn model_root<'a>(vb: VarBuilder<'a>, model_type: Option<&str>) -> VarBuilder<'a> {
    const PROBE: &str = "embeddings.word_embeddings.weight";
    if vb.contains_tensor(PROBE) {
        return vb;
    }
    model_type
        .into_iter()
        .chain(["bert", "model"])
        .find(|p| vb.contains_tensor(&format!("{p}.{PROBE}")))
        .map_or(vb.clone(), |p| vb.pp(p))
}

/// At most this many bytes of a text reach the tokenizer per token the model reads, so a
/// backend's megabyte-long description costs no more to embed than a short one. Tokens are a
/// few bytes each; only a text whose first tokens average more than 64 bytes (long whitespace
/// runs, words past 100 characters that become one unknown token) can lose tokens at its end.
const BYTES_PER_TOKEN: usize = 64;

/// `text` cut (at a character boundary) to what `max_tokens` tokens could ever come from.
fn bounded(text: &str, max_tokens: usize) -> &str {
    &text[..text.floor_char_boundary(max_tokens.saturating_mul(BYTES_PER_TOKEN))]
}

thread_local! {
    /// A rayon pool whose only worker is this thread: candle-nn's softmax and layer norm split
    /// their rows over rayon's global pool, waking its threads for every operation. With
    /// neither this nor gemm's threshold, the optimizer's evaluation took 62% more CPU (30 s of
    /// it in the kernel) and queries were slower (docs/optimizer.md). candle's own pool for
    /// element-wise operations on 64k values or more is sized only by `RAYON_NUM_THREADS` or
    /// `CANDLE_NUM_THREADS`, which the container image sets to 1.
    static THIS_THREAD: Option<rayon::ThreadPool> = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .ok();
}

/// Runs `f` with rayon's parallel work kept on the calling thread.
fn on_this_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    THIS_THREAD.with(|pool| match pool {
        Some(pool) => pool.install(f),
        None => f(),
    })
}
