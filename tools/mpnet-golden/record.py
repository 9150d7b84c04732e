#!/usr/bin/env python3
"""Records reference embeddings of sentence-transformers/all-mpnet-base-v2, computed by Hugging
Face's own Python implementation (transformers' MPNetModel on PyTorch, CPU, float32), so the Rust
MPNet encoder in crates/embed is checked against an implementation we did not write.

It reproduces what sentence-transformers does for this model (modules.json: Transformer ->
Pooling -> Normalize) without depending on sentence-transformers itself:
  * tokenize each text stripped of surrounding whitespace, truncation on, max_length =
    max_seq_length from sentence_bert_config.json (384), no padding (one text per batch);
  * mean-pool the last hidden state over the attention mask (1_Pooling/config.json:
    pooling_mode_mean_tokens);
  * L2-normalise (the Normalize module).

Texts: the "text" fields of crates/embed/tests/data/minilm_golden.json, in order, then
"Food is eating a man.". Output: a JSON list of {"text", "ids", "embedding"} (768 floats rounded
to 7 significant digits).

Run (from the repo root; the model directory comes from crates/bench/eval/fetch-mpnet.sh):
  python3 -m venv /tmp/mpnet-ref
  /tmp/mpnet-ref/bin/pip install -r tools/mpnet-golden/requirements.txt
  /tmp/mpnet-ref/bin/python tools/mpnet-golden/record.py target/models/all-mpnet-base-v2 \
      crates/embed/tests/data/mpnet_golden.json

Last run with CPython 3.11.7, torch 2.15.0 (+cu132 PyPI wheel, run on CPU), transformers 5.24.0,
tokenizers 0.23.3, safetensors 0.8.0, numpy 2.4.6.
"""

import json
import os
import sys

import torch
from transformers import AutoModel, AutoTokenizer

TEXTS_FROM = os.path.join(os.path.dirname(__file__), "../../crates/embed/tests/data/minilm_golden.json")
EXTRA_TEXTS = ["Food is eating a man."]


def sig7(x: float) -> float:
    """Rounds to 7 significant digits (float32 carries about 7.2)."""
    return float(f"{x:.7g}")


def main() -> None:
    model_dir, out_path = sys.argv[1], sys.argv[2]
    with open(os.path.join(model_dir, "sentence_bert_config.json")) as f:
        max_seq_length = json.load(f)["max_seq_length"]
    with open(TEXTS_FROM) as f:
        texts = [case["text"] for case in json.load(f)] + EXTRA_TEXTS

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, dtype=torch.float32).eval()

    records = []
    with torch.no_grad():
        for text in texts:
            # sentence-transformers strips each input, then truncates to max_seq_length.
            enc = tokenizer(text.strip(), truncation=True, max_length=max_seq_length, return_tensors="pt")
            hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            embedding = torch.nn.functional.normalize(pooled, p=2, dim=1)[0]
            records.append({
                "text": text,
                "ids": [int(i) for i in enc["input_ids"][0]],
                "embedding": [sig7(x) for x in embedding.tolist()],
            })

    # Compact, one case per line.
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(lines) + "\n]\n")


if __name__ == "__main__":
    main()
