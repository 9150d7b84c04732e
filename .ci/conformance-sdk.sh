#!/usr/bin/env bash
# The official MCP conformance suite against independent servers that serve BOTH revisions,
# each built with an official SDK, directly and through vmcp in front of it (one vmcp per server);
# then .ci/conformance-compare.py checks that every check passing directly passes through the
# gateway too (the listed exceptions aside). Servers:
#   - python:     the Python MCP SDK (tests/interop/conformance_server.py);
#   - rmcp:       rmcp, the Rust SDK (crates/rmcp-conformance);
#   - everything: the official TypeScript reference server, @modelcontextprotocol/server-everything
#                 from the npm registry (pinned below), which nobody here wrote.
# Suites, for each: 0.1.16 (active set) and 0.2.0-alpha.12 --suite all at --spec-version
# 2025-11-25 and 2026-07-28. Every run is done even when one fails; the exit status says if any did.
# KEEP_WORK=1 keeps the temporary directory (suite outputs, server and vmcp logs) and names it.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/venv.sh
cargo build -q -p vmcp -p vmcp-testkit --bin vmcp --bin vmcp-fixture
cargo build -q -p vmcp-rmcp-conformance

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP_WORK:-}" = 1 ]; then echo "== kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
wait_line() { for _ in $(seq 300); do grep -q listening "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "no listening line in $1"; cat "${1%.out}.err" 2>/dev/null; return 1; }

# start_server NAME COMMAND... -> the server's MCP URL in $work/NAME.url
start_server() {
  local name=$1; shift
  "$@" --port 0 >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  wait_line "$work/$name.out"
  echo "$(awk '{print $2}' "$work/$name.out")/mcp" >"$work/$name.url"
}

# start_gateway NAME SERVER_URL ISOLATION -> the URL of a vmcp in front of the server (and a
# second, stdio backend, so the aggregation is real) in $work/gw-NAME.url; its log is
# $work/gw-NAME.err
start_gateway() {
  local name=$1 url=$2 isolation=$3
  cat >"$work/gw-$name.yaml" <<YAML
name: conformance
backends:
  - name: $name
    transport: streamable-http
    url: $url
    isolation: $isolation
  - name: extra
    transport: stdio
    command: $PWD/target/debug/vmcp-fixture
    args: ["--transport", "stdio", "--name", "extra", "--no-resources", "--no-prompts"]
aggregation:
  conflictResolution: priority
  conflictResolutionConfig:
    priorityOrder: [$name, extra]
YAML
  ./target/debug/vmcp serve --config "$work/gw-$name.yaml" --port 0 >"$work/gw-$name.out" 2>"$work/gw-$name.err" &
  pids+=($!)
  wait_line "$work/gw-$name.out"
  awk '{print $4}' "$work/gw-$name.out" >"$work/gw-$name.url"
}

start_server python .ci/.venv/bin/python tests/interop/conformance_server.py
start_server rmcp ./target/debug/vmcp-rmcp-conformance

# The TypeScript reference server takes its port from PORT and says so on stderr.
everything=.ci/.everything
everything_version=2026.8.31
if [ ! -f "$everything/node_modules/@modelcontextprotocol/server-everything/package.json" ] ||
  ! grep -q "\"version\": \"$everything_version\"" "$everything/node_modules/@modelcontextprotocol/server-everything/package.json"; then
  npm install --silent --no-audit --no-fund --prefix "$everything" "@modelcontextprotocol/server-everything@$everything_version" >/dev/null
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$port node "$everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
  >"$work/everything.out" 2>"$work/everything.err" &
pids+=($!)
for _ in $(seq 300); do grep -q listening "$work/everything.err" 2>/dev/null && break; sleep 0.05; done
grep -q listening "$work/everything.err" || { echo "the everything server did not start"; cat "$work/everything.err"; exit 1; }
echo "http://127.0.0.1:$port/mcp" >"$work/everything.url"
# The Python SDK and everything servers sit behind one backend session that all client sessions
# share: the default a user gets. rmcp sends a tool's log notifications on the session's standalone
# GET stream, outside the call; on a shared connection nothing says which client's call a message
# there belongs to (a tool may talk after its call ended, while another client's call is in flight),
# so vmcp drops it and logs once that `isolation: perSession` delivers them
# (crates/backend/src/inbound.rs). That is the setting for such a server, so it is used here.
start_gateway python "$(cat "$work/python.url")" shared
start_gateway rmcp "$(cat "$work/rmcp.url")" perSession
start_gateway everything "$(cat "$work/everything.url")" shared

failed=()
run() { # server label suite args... ; runs directly and through that server's vmcp, then compares
  local server=$1 label=$2; shift 2
  local slug; slug=$server-$(echo "$label" | tr -c 'a-z0-9' '-')
  local ok=1
  for side in direct gateway; do
    local url; url=$(cat "$work/$server.url"); [ "$side" = gateway ] && url=$(cat "$work/gw-$server.url")
    echo "== $server: $label, $side ($url)"
    if ! .ci/conformance.sh "$url" "$@" -o "$work/$slug-$side" >"$work/$slug-$side.log" 2>&1; then
      # The everything server is a reference server, not a conformance one: many checks fail on
      # it directly, so only the comparison below judges it.
      if [ "$server" != everything ]; then
        grep -E "^(✗|Total|== )" "$work/$slug-$side.log" || true
        [ "$side" = gateway ] && { echo "-- vmcp log (tail)"; tail -30 "$work/gw-$server.err"; }
        ok=0
      fi
    fi
    grep -E "^Total" "$work/$slug-$side.log" || true
  done
  .ci/conformance-compare.py "$work/$slug-direct" "$work/$slug-gateway" || ok=0
  [ "$ok" = 1 ] || failed+=("$server: $label")
}

for server in python rmcp everything; do
  run "$server" "0.1.16 active" 0.1
  run "$server" "0.2 all at 2025-11-25" 0.2 --suite all --spec-version 2025-11-25
  run "$server" "0.2 all at 2026-07-28" 0.2 --suite all --spec-version 2026-07-28
done
if [ ${#failed[@]} -gt 0 ]; then
  printf '== FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "== conformance over the Python SDK, rmcp and TypeScript everything servers: every check passing directly passes through vmcp"
