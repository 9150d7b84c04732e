#!/usr/bin/env bash
# Alternates vmcp-bench over several builds (or configs) in one session, so their numbers are
# comparable (docs/benchmarks.md, Method): ROUNDS rounds, each running every
# LABEL=DIR[@EXTRA.yaml][+oidc][+redis] once, in order. DIR holds `vmcp` and `vmcp-fixture`;
# EXTRA is a YAML file for --config-extra; +oidc and +redis (after DIR or after EXTRA, in any
# order) pass --oidc / --redis for that label only.
# Niced (19) processes of other work are paused while it runs, and resumed at the end.
#
#   tools/bench-ab.sh OUT first=/tmp/first main=/tmp/main lto=/tmp/lto@/tmp/audit.yaml \
#       prod=/tmp/main@crates/bench/configs/production.yaml+oidc+redis
#   env: BENCH (vmcp-bench binary, default target/release/vmcp-bench), ROUNDS (3),
#        SCENARIOS (call), CONCURRENCY (1,32)
# Then: python3 tools/bench-ab-summary.py OUT LABEL...   (medians per label, edge and concurrency)
set -euo pipefail
out=$1; shift
bench=${BENCH:-target/release/vmcp-bench}
( while true; do
    p=$(ps -eo pid=,ni= | awk '$2==19{print $1}'); [ -n "$p" ] && kill -STOP $p
    sleep 0.5
  done ) &
pauser=$!
resume() { kill $pauser 2>/dev/null || true; p=$(ps -eo pid=,ni= | awk '$2==19{print $1}'); [ -n "$p" ] && kill -CONT $p || true; }
trap resume EXIT
for round in $(seq "${ROUNDS:-3}"); do
  for pair in "$@"; do
    label=${pair%%=*}; dir=${pair#*=}; extra=""; oidc=""; redis=""
    case $dir in *@*) extra=${dir#*@}; dir=${dir%%@*};; esac
    # The +oidc / +redis suffixes, off the end of DIR and of EXTRA.
    for part in dir extra; do
      while :; do
        case ${!part} in
          *+oidc) printf -v "$part" %s "${!part%+oidc}"; oidc=1;;
          *+redis) printf -v "$part" %s "${!part%+redis}"; redis=1;;
          *) break;;
        esac
      done
    done
    "$bench" --no-build --bin-dir "$dir" --scenarios "${SCENARIOS:-call}" \
      --concurrency "${CONCURRENCY:-1,32}" ${extra:+--config-extra "$extra"} \
      ${oidc:+--oidc} ${redis:+--redis} \
      --out "$out-$label-$round.json" > "$out-$label-$round.md" 2>&1 || echo "FAILED: $label, round $round (see $out-$label-$round.md)"
  done
done
