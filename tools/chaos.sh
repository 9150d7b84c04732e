#!/usr/bin/env bash
# The chaos suite's long run (crates/vmcp/tests/chaos.rs): every fault scenario with SECS seconds
# of load each (default 50; a fifth before the fault, three tenths during, half after), one at a
# time. Prints the results table and writes it into docs/reliability.md: the long-run table for
# SECS >= 20, the CI (short) table otherwise. The JSON lines and the full log stay in
# target/chaos/. Scenarios ignored for a known issue run too (their rows show it), so the run
# fails while one is open.
#
#   tools/chaos.sh          # 50 s per fault, about 10 minutes on 2 cores
#   tools/chaos.sh 6        # what CI runs, for the short table
#
# Needs redis-server (.ci/services.sh installs it); everything listens on 127.0.0.1.
set -euo pipefail
secs="${1:-50}"
case "$secs" in
  '' | *[!0-9.]*) echo "usage: $0 [SECS]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export PATH="$PATH:/usr/sbin"
command -v redis-server >/dev/null || { echo "redis-server is missing: run .ci/services.sh" >&2; exit 1; }

out="${CARGO_TARGET_DIR:-$root/target}/chaos"
case "$out" in /*) ;; *) out="$root/$out" ;; esac
mkdir -p "$out"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
report="$out/report-$stamp.jsonl"
log="$out/run-$stamp.log"

cargo test -q -p vmcp --test chaos --no-run
started=$(date +%s)
# CI=true: a missing Redis fails the run instead of skipping its scenarios.
set +e
CI=true VMCP_CHAOS_SECS="$secs" VMCP_CHAOS_REPORT="$report" \
  cargo test -q -p vmcp --test chaos -- --include-ignored --nocapture 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
took=$(( $(date +%s) - started ))
[ -s "$report" ] || { echo "no scenario reported (see $log)" >&2; exit 1; }

python3 - "$report" "$secs" "$took" "$stamp" <<'PY' > "$out/table-$stamp.md"
import json, subprocess, sys
path, secs, took, stamp = sys.argv[1:5]
rows = [json.loads(l) for l in open(path) if l.strip()]
rows.sort(key=lambda r: r["fault"].lower())
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
print(f"{len(rows)} scenarios, {secs} s of load each, {took} s in all (build excluded); commit {commit}, {cores} cores, debug build, {stamp}.")
print()
print("| fault | requests | ok | errors | mismatched | wrong ids | hung | sessions lost | errors naming the part | recovery ms | slowest ms (deadline) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    rec = "none" if r["recovery_ms"] is None else r["recovery_ms"]
    print(f'| {r["fault"]} | {r["requests"]} | {r["ok"]} | {r["errors"]} | {r["mismatched"]} | '
          f'{r["wrong_ids"]} | {r["hung"]} | {r["sessions_lost"]} | {r["errors_named_pct"]:.0f} % | '
          f'{rec} | {r["slowest_ms"]} ({r["deadline_ms"]}) |')
PY
cat "$out/table-$stamp.md"

# Between the markers of the section this run fills.
which=$(python3 -c "print('long' if float('$secs') >= 20 else 'short')")
python3 - docs/reliability.md "$out/table-$stamp.md" "$which" <<'PY'
import sys
doc, table, which = sys.argv[1:4]
begin, end = f"<!-- chaos:{which}:begin -->", f"<!-- chaos:{which}:end -->"
text = open(doc).read()
if begin not in text or end not in text:
    sys.exit(f"{doc} has no {begin} ... {end} markers; paste the table above by hand")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(doc, "w").write(head + begin + "\n" + open(table).read() + end + tail)
print(f"wrote the {which} table into {doc}")
PY
[ "$status" -eq 0 ] || echo "the suite FAILED (exit $status): see $log" >&2
exit "$status"
