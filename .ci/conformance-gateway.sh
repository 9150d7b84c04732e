#!/usr/bin/env bash
# The official MCP conformance suite, twice: directly against the conformance fixture (so a
# failure through the gateway is the gateway's), then through vmcp fronting that fixture with the
# `priority` strategy (so names stay bare), a second fixture backend beside it.
# Usage: .ci/conformance-gateway.sh [suite-version]   (default: every pinned version)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p vmcp -p vmcp-testkit --bin vmcp --bin vmcp-fixture --bin vmcp-conformance-fixture

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

wait_line() { for _ in $(seq 200); do grep -q listening "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "no listening line in $1"; return 1; }

./target/debug/vmcp-conformance-fixture --port 0 >"$work/fixture.out" 2>"$work/fixture.err" &
pids+=($!)
wait_line "$work/fixture.out"
fixture_url="$(awk '{print $3}' "$work/fixture.out")/mcp"

cat >"$work/vmcp.yaml" <<YAML
name: conformance
backends:
  - name: conformance
    transport: streamable-http
    url: $fixture_url
  - name: extra
    transport: stdio
    command: $PWD/target/debug/vmcp-fixture
    args: ["--transport", "stdio", "--name", "extra", "--no-resources", "--no-prompts"]
aggregation:
  conflictResolution: priority
  conflictResolutionConfig:
    priorityOrder: [conformance, extra]
YAML
./target/debug/vmcp serve --config "$work/vmcp.yaml" --port 0 >"$work/vmcp.out" 2>"$work/vmcp.err" &
pids+=($!)
wait_line "$work/vmcp.out"
gateway_url=$(awk '{print $4}' "$work/vmcp.out")

echo "== conformance suite directly against the fixture ($fixture_url)"
.ci/conformance.sh "$fixture_url" "$@"
echo "== conformance suite through vmcp ($gateway_url)"
if ! .ci/conformance.sh "$gateway_url" "$@"; then
  echo "-- gateway log (tail)"; tail -40 "$work/vmcp.err"
  exit 1
fi
