//! Writes reference embeddings for vmcp-embed's tests, computed with Hugging Face's own
//! libraries (candle-transformers' BERT and the `tokenizers` crate), so our encoder is checked
//! against an implementation we did not write. Usage: embed-golden <model dir> > golden.json
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams};

const TEXTS: &[&str] = &[
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome!",
    "name: git_log description: Shows the commit logs",
    "Créer un ticket GitHub – déjà vu, naïve café résumé",
    "中文字符 and emoji 🚀 mixed with UPPER case, punctuation!!! (brackets) [x] {y} 'quotes' \"double\"",
    "get_pull_request_files: List files changed in a pull request; supports pagination via page and perPage.",
    "",
];

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("model dir"));
    let device = Device::Cpu;
    let config: Config =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let vb = unsafe {
        VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &device)
            .unwrap()
    };
    let model = BertModel::load(vb, &config).unwrap();
    let mut tok = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    tok.with_padding(None);
    tok.with_truncation(Some(TruncationParams { max_length: 256, ..Default::default() }))
        .unwrap();
    let mut long = String::new();
    for i in 0..200 {
        long.push_str(&format!("word{i} repeated text segment "));
    }
    let mut texts: Vec<String> = TEXTS.iter().map(|s| s.to_string()).collect();
    texts.push(long);
    let mut out = Vec::new();
    for text in &texts {
        let enc = tok.encode(text.as_str(), true).unwrap();
        let ids: Vec<u32> = enc.get_ids().to_vec();
        let n = ids.len();
        let input = Tensor::new(ids.as_slice(), &device).unwrap().unsqueeze(0).unwrap();
        let types = input.zeros_like().unwrap();
        let hidden = model.forward(&input, &types, None).unwrap(); // [1, n, 384]
        let mean = (hidden.sum(1).unwrap() / n as f64).unwrap();
        let norm = mean.sqr().unwrap().sum_keepdim(1).unwrap().sqrt().unwrap();
        let v: Vec<f32> = mean.broadcast_div(&norm).unwrap().squeeze(0).unwrap().to_vec1().unwrap();
        out.push(serde_json::json!({"text": text, "ids": ids, "embedding": v}));
    }
    println!("{}", serde_json::to_string(&out).unwrap());
}
