//! A BERT encoder (the architecture of all-MiniLM-L6-v2, bge-small, e5-small and the other
//! sentence-transformers BERT models): embeddings, `n` post-norm transformer layers, then the
//! sentence-transformers pooling (mean or CLS) and optional L2 normalisation. Inference only,
//! one text at a time (no padding, so no attention mask), on candle's CPU tensors and candle-nn's
//! layers. Not candle-transformers' `BertModel`: that crate compiles 150 models (85 s of a
//! 2-core build) for the one file we would use, and has no MPNet (docs/dependencies.md).
//!
//! MPNet (all-mpnet-base-v2) is the same stack with three differences, all from Hugging Face's
//! `modeling_mpnet.py`: no token-type table, positions counted from `pad_token_id + 1`, and a
//! T5-style relative-position bias (32 buckets, one table shared by all layers) added to every
//! layer's attention scores.

use candle_core::{Device, Module, Tensor};
use candle_nn::ops::softmax_last_dim;
use candle_nn::{Embedding, LayerNorm, VarBuilder, embedding, layer_norm};
use serde_json::Value;

use crate::EmbedError;

/// `config.json`'s fields the encoder needs.
#[derive(Debug, Clone)]
pub(crate) struct BertConfig {
    hidden: usize,
    layers: usize,
    heads: usize,
    intermediate: usize,
    positions: usize,
    types: usize,
    vocab: usize,
    eps: f32,
    activation: Activation,
    arch: Arch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arch {
    Bert,
    /// With the number of relative-position buckets and the first position id.
    MPNet {
        buckets: usize,
        first_position: usize,
    },
}

#[derive(Debug, Clone, Copy)]
enum Activation {
    Gelu,
    GeluTanh,
    Relu,
}

impl BertConfig {
    pub(crate) fn from_json(v: &Value) -> Result<Self, EmbedError> {
        let bad = |m: String| EmbedError::Model(format!("config.json: {m}"));
        let model_type = v.get("model_type").and_then(Value::as_str).unwrap_or("");
        let arch = match model_type {
            "bert" => Arch::Bert,
            "mpnet" => Arch::MPNet {
                buckets: v
                    .get("relative_attention_num_buckets")
                    .and_then(Value::as_u64)
                    .map_or(32, |n| n as usize),
                first_position: v
                    .get("pad_token_id")
                    .and_then(Value::as_u64)
                    .map_or(1, |n| n as usize)
                    + 1,
            },
            _ => {
                return Err(bad(format!(
                    "model_type {model_type:?} is not supported; the local embedder runs BERT and MPNet models (e.g. all-MiniLM-L6-v2, bge-small-en-v1.5, all-mpnet-base-v2)"
                )));
            }
        };
        if let Some(p) = v.get("position_embedding_type").and_then(Value::as_str)
            && p != "absolute"
        {
            return Err(bad(format!(
                "position_embedding_type {p:?} is not supported"
            )));
        }
        let n = |k: &str| {
            v.get(k)
                .and_then(Value::as_u64)
                .map(|n| n as usize)
                .filter(|&n| n > 0)
                .ok_or_else(|| bad(format!("{k} is missing")))
        };
        let activation = match v
            .get("hidden_act")
            .and_then(Value::as_str)
            .unwrap_or("gelu")
        {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => return Err(bad(format!("hidden_act {other:?} is not supported"))),
        };
        let cfg = Self {
            hidden: n("hidden_size")?,
            layers: n("num_hidden_layers")?,
            heads: n("num_attention_heads")?,
            intermediate: n("intermediate_size")?,
            positions: n("max_position_embeddings")?,
            types: n("type_vocab_size").unwrap_or(2),
            vocab: n("vocab_size")?,
            eps: v
                .get("layer_norm_eps")
                .and_then(Value::as_f64)
                .unwrap_or(1e-12) as f32,
            activation,
            arch,
        };
        if let Arch::MPNet {
            buckets,
            first_position,
        } = arch
            && (buckets < 4 || first_position >= cfg.positions)
        {
            return Err(bad(
                "relative_attention_num_buckets or pad_token_id out of range".into(),
            ));
        }
        if !cfg.hidden.is_multiple_of(cfg.heads) {
            return Err(bad(
                "hidden_size is not a multiple of num_attention_heads".into()
            ));
        }
        Ok(cfg)
    }

    /// The longest sequence the position table covers.
    pub(crate) fn max_positions(&self) -> usize {
        match self.arch {
            Arch::Bert => self.positions,
            Arch::MPNet { first_position, .. } => self.positions - first_position,
        }
    }

    pub(crate) fn vocab_size(&self) -> usize {
        self.vocab
    }

    pub(crate) fn hidden_size(&self) -> usize {
        self.hidden
    }
}

/// A dense layer computed as `(W · xᵀ)ᵀ` with PyTorch's `[out, in]` weight as stored: gemm runs
/// far better with the weight's hundreds of rows as the left operand than with a query's dozen
/// tokens there. A 15-token query took 9.2 ms this way against 13.9 ms as `x · Wᵀ` on a
/// contiguous transposed copy (candle-nn's `Linear`, a view, was slower still), the same as our
/// ndarray encoder's 9.0 ms (all-MiniLM-L6-v2, `vmcp-search-eval --scale 1000`, one session).
#[derive(Debug)]
struct Linear {
    weight: Tensor,
    bias: Tensor,
}

impl Linear {
    fn load(inp: usize, out: usize, vb: VarBuilder<'_>) -> candle_core::Result<Self> {
        Ok(Self {
            weight: vb.get((out, inp), "weight")?,
            bias: vb.get(out, "bias")?,
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        self.weight.matmul(&x.t()?)?.t()?.broadcast_add(&self.bias)
    }
}

/// One post-norm transformer layer.
#[derive(Debug)]
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded encoder.
#[derive(Debug)]
pub(crate) struct Bert {
    cfg: BertConfig,
    words: Embedding,
    positions: Embedding,
    /// BERT's token-type 0 row, `[1, hidden]` (MPNet has none).
    type0: Option<Tensor>,
    /// MPNet's relative-position bias table, `[buckets, heads]`.
    relative_bias: Option<Tensor>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
}

fn model_error(e: candle_core::Error) -> EmbedError {
    EmbedError::Model(e.to_string())
}

impl Bert {
    /// Reads the weights from `vb`, which is already at the model's root (`embeddings.*`,
    /// `encoder.*`); every tensor's shape is checked against the config.
    pub(crate) fn load(cfg: BertConfig, vb: &VarBuilder<'_>) -> Result<Self, EmbedError> {
        Self::load_weights(cfg, vb).map_err(model_error)
    }

    fn load_weights(cfg: BertConfig, vb: &VarBuilder<'_>) -> candle_core::Result<Self> {
        let (h, eps) = (cfg.hidden, f64::from(cfg.eps));
        let emb = vb.pp("embeddings");
        let words = embedding(cfg.vocab, h, emb.pp("word_embeddings"))?;
        let positions = embedding(cfg.positions, h, emb.pp("position_embeddings"))?;
        let (type0, relative_bias) = match cfg.arch {
            Arch::Bert => {
                let types = emb.get((cfg.types, h), "token_type_embeddings.weight")?;
                (Some(types.narrow(0, 0, 1)?), None)
            }
            Arch::MPNet { buckets, .. } => {
                let bias = vb.get(
                    (buckets, cfg.heads),
                    "encoder.relative_attention_bias.weight",
                )?;
                (None, Some(bias))
            }
        };
        let embedding_norm = layer_norm(h, eps, emb.pp("LayerNorm"))?;
        // Where each attention weight lives: BERT's `attention.self.query` ... and
        // `attention.output.{dense,LayerNorm}`, MPNet's `attention.attn.{q,k,v,o}` and
        // `attention.LayerNorm`.
        let (q, k, v, o, norm) = match cfg.arch {
            Arch::Bert => (
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "attention.output.LayerNorm",
            ),
            Arch::MPNet { .. } => (
                "attention.attn.q",
                "attention.attn.k",
                "attention.attn.v",
                "attention.attn.o",
                "attention.LayerNorm",
            ),
        };
        let layers = (0..cfg.layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                Ok(Layer {
                    query: Linear::load(h, h, l.pp(q))?,
                    key: Linear::load(h, h, l.pp(k))?,
                    value: Linear::load(h, h, l.pp(v))?,
                    attention_out: Linear::load(h, h, l.pp(o))?,
                    attention_norm: layer_norm(h, eps, l.pp(norm))?,
                    intermediate: Linear::load(h, cfg.intermediate, l.pp("intermediate.dense"))?,
                    output: Linear::load(cfg.intermediate, h, l.pp("output.dense"))?,
                    output_norm: layer_norm(h, eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<candle_core::Result<_>>()?;
        Ok(Self {
            cfg,
            words,
            positions,
            type0,
            relative_bias,
            embedding_norm,
            layers,
        })
    }

    /// The sentence vector of `ids`: the last layer's states pooled (mean or CLS), then
    /// optionally L2-normalised. `ids` must be non-empty, no longer than
    /// [`BertConfig::max_positions`] and inside the vocabulary (the caller checks all three).
    pub(crate) fn embed(
        &self,
        ids: &[u32],
        mean: bool,
        normalize: bool,
    ) -> Result<Vec<f32>, EmbedError> {
        let states = self.forward(ids).map_err(model_error)?;
        let pooled = if mean { states.mean(0) } else { states.get(0) };
        let mut v = pooled
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(model_error)?;
        if normalize {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(v)
    }

    /// The last layer's hidden states, `[tokens, hidden]`.
    fn forward(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let n = ids.len();
        let first_position = match self.cfg.arch {
            Arch::Bert => 0,
            Arch::MPNet { first_position, .. } => first_position,
        };
        let dev = &Device::Cpu;
        let ids = Tensor::from_slice(ids, n, dev)?;
        let start = first_position as u32;
        let positions = Tensor::arange(start, start + n as u32, dev)?;
        let mut x = (self.words.forward(&ids)? + self.positions.forward(&positions)?)?;
        if let Some(type0) = &self.type0 {
            x = x.broadcast_add(type0)?;
        }
        let mut x = self.embedding_norm.forward(&x)?;
        let bias = self.position_bias(n)?;
        for layer in &self.layers {
            x = self.layer(layer, &x, bias.as_ref())?;
        }
        Ok(x)
    }

    /// MPNet's bias for every (head, query position, key position): `[heads, n, n]`.
    fn position_bias(&self, n: usize) -> candle_core::Result<Option<Tensor>> {
        let Some(table) = &self.relative_bias else {
            return Ok(None);
        };
        let buckets = table.dim(0)?;
        let index: Vec<u32> = (0..n)
            .flat_map(|i| {
                (0..n).map(move |j| relative_bucket(j as i64 - i as i64, buckets, 128) as u32)
            })
            .collect();
        let index = Tensor::from_vec(index, n * n, &Device::Cpu)?;
        let bias = table
            .index_select(&index, 0)?
            .reshape((n, n, self.cfg.heads))?;
        Ok(Some(bias.permute((2, 0, 1))?.contiguous()?))
    }

    fn layer(&self, l: &Layer, x: &Tensor, bias: Option<&Tensor>) -> candle_core::Result<Tensor> {
        let n = x.dim(0)?;
        let heads = self.cfg.heads;
        let d = self.cfg.hidden / heads;
        // `[n, hidden]` to `[heads, n, d]`.
        let split = |t: Tensor| t.reshape((n, heads, d))?.transpose(0, 1)?.contiguous();
        let q = split(l.query.forward(x)?)?;
        let k = split(l.key.forward(x)?)?;
        let v = split(l.value.forward(x)?)?;
        let mut scores = (q.matmul(&k.t()?)? * (1.0 / (d as f64).sqrt()))?;
        if let Some(bias) = bias {
            scores = (scores + bias)?;
        }
        let probs = softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(0, 1)?
            .reshape((n, self.cfg.hidden))?;
        let x = l
            .attention_norm
            .forward(&(l.attention_out.forward(&context)? + x)?)?;
        let inner = l.intermediate.forward(&x)?;
        let inner = match self.cfg.activation {
            Activation::Gelu => inner.gelu_erf()?,
            Activation::GeluTanh => inner.gelu()?,
            Activation::Relu => inner.relu()?,
        };
        l.output_norm.forward(&(l.output.forward(&inner)? + x)?)
    }
}

/// T5's bidirectional relative-position bucket, as MPNet computes it: half the buckets for keys
/// after the query; within each half, exact distances below a quarter of the buckets, then
/// logarithmic steps up to `max_distance`.
fn relative_bucket(relative: i64, buckets: usize, max_distance: usize) -> usize {
    let half = buckets / 2;
    let n = -relative;
    let mut bucket = if n < 0 { half } else { 0 };
    let n = n.unsigned_abs() as usize;
    let exact = half / 2;
    bucket += if n < exact {
        n
    } else {
        let large = exact
            + ((n as f32 / exact as f32).ln() / (max_distance as f32 / exact as f32).ln()
                * (half - exact) as f32) as usize;
        large.min(half - 1)
    };
    bucket
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_buckets_follow_t5() {
        // Same position, and exact distances up to 7 each way (keys after the query in the
        // upper half of the buckets).
        assert_eq!(relative_bucket(0, 32, 128), 0);
        assert_eq!(relative_bucket(-7, 32, 128), 7);
        assert_eq!(relative_bucket(7, 32, 128), 23);
        // Logarithmic from 8: 8 + floor(ln(n / 8) / ln(16) * 8), capped at 15.
        assert_eq!(relative_bucket(-8, 32, 128), 8);
        assert_eq!(relative_bucket(-16, 32, 128), 10);
        assert_eq!(relative_bucket(-127, 32, 128), 15);
        assert_eq!(relative_bucket(-1000, 32, 128), 15);
        assert_eq!(relative_bucket(16, 32, 128), 26);
    }

    #[test]
    fn reads_mpnet_configs() {
        let cfg = BertConfig::from_json(&serde_json::json!({
            "model_type": "mpnet", "hidden_size": 768, "num_hidden_layers": 12,
            "num_attention_heads": 12, "intermediate_size": 3072,
            "max_position_embeddings": 514, "vocab_size": 30527, "pad_token_id": 1,
            "relative_attention_num_buckets": 32, "layer_norm_eps": 1e-5
        }))
        .unwrap();
        // Positions start after the padding id, so 514 rows hold 512 tokens.
        assert_eq!(cfg.max_positions(), 512);
        assert_eq!(
            cfg.arch,
            Arch::MPNet {
                buckets: 32,
                first_position: 2
            }
        );
        let err = BertConfig::from_json(&serde_json::json!({
            "model_type": "mpnet", "hidden_size": 8, "num_hidden_layers": 1,
            "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 2,
            "vocab_size": 10, "pad_token_id": 1
        }))
        .unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }

    #[test]
    fn refuses_other_architectures() {
        let err =
            BertConfig::from_json(&serde_json::json!({"model_type": "xlm-roberta"})).unwrap_err();
        assert!(err.to_string().contains("not supported"), "{err}");
        let err = BertConfig::from_json(&serde_json::json!({"model_type": "bert"})).unwrap_err();
        assert!(err.to_string().contains("hidden_size is missing"), "{err}");
    }
}
