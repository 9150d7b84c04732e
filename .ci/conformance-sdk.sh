#!/usr/bin/env bash
# The official MCP conformance suite against an independent server that serves BOTH revisions,
# built with the Python MCP SDK (tests/interop/conformance_server.py), directly and through vmcp in
# front of it; then .ci/conformance-compare.py checks that every check passing directly passes
# through the gateway too (the listed exceptions aside). Suites: 0.1.16 (active set) and
# 0.2.0-alpha.12 --suite all at --spec-version 2025-11-25 and 2026-07-28.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/venv.sh
cargo build -q -p vmcp -p vmcp-testkit --bin vmcp --bin vmcp-fixture

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
wait_line() { for _ in $(seq 300); do grep -q listening "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "no listening line in $1"; cat "${1%.out}.err" 2>/dev/null; return 1; }

.ci/.venv/bin/python tests/interop/conformance_server.py --port 0 >"$work/sdk.out" 2>"$work/sdk.err" &
pids+=($!)
wait_line "$work/sdk.out"
sdk_url="$(awk '{print $2}' "$work/sdk.out")/mcp"

cat >"$work/gw.yaml" <<YAML
name: conformance
backends:
  - name: sdk
    transport: streamable-http
    url: $sdk_url
  - name: extra
    transport: stdio
    command: $PWD/target/debug/vmcp-fixture
    args: ["--transport", "stdio", "--name", "extra", "--no-resources", "--no-prompts"]
aggregation:
  conflictResolution: priority
  conflictResolutionConfig:
    priorityOrder: [sdk, extra]
YAML
./target/debug/vmcp serve --config "$work/gw.yaml" --port 0 >"$work/gw.out" 2>"$work/gw.err" &
pids+=($!)
wait_line "$work/gw.out"
gw_url=$(awk '{print $4}' "$work/gw.out")

run() { # label suite args... ; runs directly and through vmcp, then compares
  local label=$1; shift
  local slug; slug=$(echo "$label" | tr -c 'a-z0-9' '-')
  for side in direct gateway; do
    local url=$sdk_url; [ "$side" = gateway ] && url=$gw_url
    echo "== $label, $side ($url)"
    if ! .ci/conformance.sh "$url" "$@" -o "$work/$slug-$side" >"$work/$slug-$side.log" 2>&1; then
      grep -E "^(✗|Total|== )" "$work/$slug-$side.log" || true
      [ "$side" = gateway ] && { echo "-- vmcp log (tail)"; tail -30 "$work/gw.err"; }
      exit 1
    fi
    grep -E "^Total" "$work/$slug-$side.log" || true
  done
  .ci/conformance-compare.py "$work/$slug-direct" "$work/$slug-gateway"
}

run "0.1.16 active" 0.1
run "0.2 all at 2025-11-25" 0.2 --suite all --spec-version 2025-11-25
run "0.2 all at 2026-07-28" 0.2 --suite all --spec-version 2026-07-28
echo "== conformance over the Python SDK server: every check passing directly passes through vmcp"
