#!/usr/bin/env bash
# Builds vmcp and the example MCP servers (crates/examples), starts the HTTP one (weather), and
# runs the gateway on examples/quickstart.yaml at http://127.0.0.1:4483/mcp. Ctrl-C stops
# everything.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p vmcp -p vmcp-examples --bin vmcp --bin notes-server --bin weather-server
./target/debug/weather-server --port "${WEATHER_PORT:-4484}" >/dev/null &
weather=$!
export WEATHER_URL="http://127.0.0.1:${WEATHER_PORT:-4484}/mcp"
./target/debug/vmcp serve --config examples/quickstart.yaml "$@" &
gateway=$!
trap 'kill $gateway $weather 2>/dev/null; wait' EXIT INT TERM
wait $gateway
