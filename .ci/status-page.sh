#!/usr/bin/env bash
# The human-readable /status page in a real browser (Debian chromium, headless): the gateway runs
# .ci/status-page.yaml (one backend that serves, one that cannot start); chromium asks for /status
# with its own Accept header, which must get the HTML page, not JSON. The rendered DOM must name
# the gateway, both backends, their health and the tool count, and a screenshot read back by OCR
# (tesseract) must show the backend names and health words.
# Leaves target/status-page/{status.html,status.png,status-ocr.txt} behind for a look.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "status-page: FAIL: $*" >&2
  exit 1
}

# The browser, the OCR engine and a font, installed only when missing.
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v tesseract >/dev/null || need+=(tesseract-ocr tesseract-ocr-eng)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  echo "status-page: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

cargo build -q --locked -p vmcp -p vmcp-testkit --bin vmcp --bin vmcp-fixture

out=target/status-page
mkdir -p "$out"
rm -f "$out"/status.html "$out"/status.png "$out"/status-ocr.txt
work=$(mktemp -d)
gateway=
cleanup() {
  if [ -n "$gateway" ]; then kill "$gateway" 2>/dev/null || true; wait "$gateway" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

./target/debug/vmcp serve --config .ci/status-page.yaml --port 0 >"$work/vmcp.out" 2>"$work/vmcp.err" &
gateway=$!
for _ in $(seq 200); do grep -q listening "$work/vmcp.out" 2>/dev/null && break; sleep 0.05; done
mcp_url=$(awk '/listening/ {print $4}' "$work/vmcp.out")
[ -n "$mcp_url" ] || { cat "$work/vmcp.err" >&2; fail "the gateway did not start"; }
status_url="${mcp_url%/mcp}/status"

# One MCP session, so the page has a session to count (the gateway aggregates at start).
curl -sf -o /dev/null "$mcp_url" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"status-page","version":"1"}}}' ||
  fail "initialize through the gateway failed"

# Wait until the JSON form says what the page should show: ready, notes healthy with its tools,
# ledger failed. Its answer (no Accept header) must stay JSON. Prints the tool count, ledger's
# health and each backend's circuit state.
check_json='
import json, sys
s = json.load(sys.stdin)
b = {x["name"]: x for x in s["backends"]}
notes, ledger = b["notes"], b["ledger"]
if (s["ready"] and s["sessions"] >= 1 and notes["health"] == "healthy"
        and notes.get("toolCount", 0) > 0 and ledger["health"] in ("degraded", "unhealthy")):
    print(notes["toolCount"], ledger["health"], notes.get("circuitState"), ledger.get("circuitState"))
'
seen=
for _ in $(seq 100); do
  seen=$(curl -sf "$status_url" | python3 -c "$check_json" 2>/dev/null) && [ -n "$seen" ] && break
  sleep 0.1
done
[ -n "$seen" ] || fail "/status never showed notes healthy and ledger failed: $(curl -s "$status_url")"
read -r tools ledger_health notes_circuit ledger_circuit <<<"$seen"
circuits=()
for c in "$notes_circuit" "$ledger_circuit"; do [ "$c" = None ] || circuits+=(">$c<"); done

browser() {
  timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$work")" "$@" 2>>"$work/chromium.err"
}

# (1) The DOM chromium built from the page it was served.
browser --dump-dom "$status_url" >"$out/status.html" ||
  { tail -20 "$work/chromium.err" >&2; fail "chromium --dump-dom failed"; }
grep -q '<table' "$out/status.html" ||
  fail "chromium was not served the HTML page (see $out/status.html)"
for want in 'statusdemo' '>notes<' '>ledger<' '>healthy<' ">$ledger_health<" "<b>$tools</b> tools" \
  '<b>1/2</b> backends healthy' ${circuits[@]+"${circuits[@]}"}; do
  grep -qF -- "$want" "$out/status.html" || fail "the page's DOM lacks '$want' (see $out/status.html)"
done

# (2) What a person sees: a screenshot, read back by OCR.
browser --hide-scrollbars --window-size=1280,800 --screenshot="$PWD/$out/status.png" "$status_url" >/dev/null ||
  { tail -20 "$work/chromium.err" >&2; fail "chromium --screenshot failed"; }
[ -s "$out/status.png" ] || fail "chromium wrote no screenshot"
tesseract "$out/status.png" "$out/status-ocr" --psm 4 >/dev/null 2>&1 || fail "tesseract failed"
ocr="$out/status-ocr.txt"
line_with() { grep -iwE "$1" "$ocr" | grep -iwqE "$2"; }
line_with 'notes' 'healthy' || fail "OCR: no line shows 'notes' as healthy (see $ocr and $out/status.png)"
line_with 'ledger' "$ledger_health" || fail "OCR: no line shows 'ledger' as $ledger_health (see $ocr and $out/status.png)"
grep -iqw 'statusdemo' "$ocr" || fail "OCR: the title 'statusdemo' is not on the screenshot (see $ocr)"

echo "status-page: ok (DOM and OCR show notes healthy with $tools tools, ledger $ledger_health, circuits ${notes_circuit}/${ledger_circuit}; $out/status.png)"
