#!/usr/bin/env bash
# The official MCP conformance suite, directly against the conformance fixture (so a failure
# through the gateway is the gateway's) and through vmcp fronting it, with the `priority` strategy
# (so names stay bare) and a second backend beside it:
#   - the fixture serving both revisions: the suite at 2025-11-25 (0.1.16 and 0.2) and at
#     2026-07-28 (0.2), so the gateway talks 2026-07-28 to it;
#   - the fixture serving 2025-11-25 only (--legacy-only): the 2025-11-25 suites again, so the
#     session-based backend path is covered too.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p vmcp -p vmcp-testkit --bin vmcp --bin vmcp-fixture --bin vmcp-conformance-fixture

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

wait_line() { for _ in $(seq 200); do grep -q listening "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "no listening line in $1"; return 1; }

# start_fixture NAME [ARGS...] -> prints the fixture's MCP URL
start_fixture() {
  local name=$1; shift
  ./target/debug/vmcp-conformance-fixture --port 0 "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  wait_line "$work/$name.out"
}

# start_gateway NAME FIXTURE_URL -> the gateway's MCP URL in $work/NAME.url
start_gateway() {
  local name=$1 url=$2
  cat >"$work/$name.yaml" <<YAML
name: conformance
backends:
  - name: conformance
    transport: streamable-http
    url: $url
  - name: extra
    transport: stdio
    command: $PWD/target/debug/vmcp-fixture
    args: ["--transport", "stdio", "--name", "extra", "--no-resources", "--no-prompts"]
aggregation:
  conflictResolution: priority
  conflictResolutionConfig:
    priorityOrder: [conformance, extra]
YAML
  ./target/debug/vmcp serve --config "$work/$name.yaml" --port 0 >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  wait_line "$work/$name.out"
  awk '{print $4}' "$work/$name.out" >"$work/$name.url"
}

run() { # label url args...
  local label=$1 url=$2; shift 2
  echo "== $label ($url)"
  if ! .ci/conformance.sh "$url" "$@"; then
    for f in "$work"/gw-*.err; do echo "-- $f (tail)"; tail -30 "$f"; done
    exit 1
  fi
}

start_fixture both
both_url="$(awk '{print $3}' "$work/both.out")/mcp"
start_fixture legacy --legacy-only
legacy_url="$(awk '{print $3}' "$work/legacy.out")/mcp"
start_gateway gw-both "$both_url"
start_gateway gw-legacy "$legacy_url"

run "suite at 2025-11-25, directly against the fixture" "$both_url"
run "suite at 2026-07-28, directly against the fixture" "$both_url" 0.2 --spec-version 2026-07-28
run "suite at 2025-11-25, through vmcp (2026-07-28 backend)" "$(cat "$work/gw-both.url")"
run "suite at 2026-07-28, through vmcp (2026-07-28 backend)" "$(cat "$work/gw-both.url")" 0.2 --spec-version 2026-07-28
run "suite at 2025-11-25, through vmcp (2025-11-25 backend)" "$(cat "$work/gw-legacy.url")"
# A draft scenario the gateway implements: Mcp-Param-* headers (x-mcp-header) validated on the
# client edge and generated towards the backend.
run "draft scenario http-custom-header-server-validation, through vmcp" "$(cat "$work/gw-both.url")" 0.2 --spec-version 2026-07-28 --scenario http-custom-header-server-validation
echo "== conformance: every pass green"
