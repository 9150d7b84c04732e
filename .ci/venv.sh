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
