#!/usr/bin/env bash
# Builds and runs the coverage-guided fuzz targets (libFuzzer, through the libfuzzer-sys crate)
# with plain cargo and the instrumentation flags cargo-fuzz passes, so nothing beyond the
# machine's stable toolchain and a C++ compiler is needed. See docs/fuzzing.md.
#
#   fuzz/run.sh TARGET SECONDS [libFuzzer flags...]   fuzz one target for SECONDS
#   fuzz/run.sh all SECONDS [libFuzzer flags...]      every target in turn, SECONDS each
#   fuzz/run.sh TARGET 0                              replay the corpora only (no fuzzing)
#   fuzz/run.sh build | list
#
# One fuzzer runs at a time, in one process. New inputs go to fuzz/target/corpus/TARGET (kept
# between runs, not committed); the committed seeds in fuzz/corpus/TARGET are only read. A crash
# leaves its input in fuzz/artifacts/TARGET/ and makes the script exit non-zero.
# FUZZ_SANITIZER=address builds with AddressSanitizer (unstable rustc flag: RUSTC_BOOTSTRAP=1).
# FUZZ_PROFILE=smoke builds faster and less optimised (CI's smoke run); the default is release.
set -euo pipefail
cd "$(dirname "$0")"

targets=(jsonrpc_envelope era_classify headers sse cursor request_state jose config template
  cedar_entities)
triple=$(rustc -vV | sed -n 's/^host: //p')
profile=${FUZZ_PROFILE:-release}
target_dir=${CARGO_TARGET_DIR:-target}

# cargo-fuzz's flags: inline 8-bit edge counters with a PC table, comparison tracing (libFuzzer
# learns the constants a parser compares against), stack-depth tracing, --cfg fuzzing.
rustflags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth \
--cfg fuzzing -Cdebug-assertions -Coverflow-checks"
if [[ -n "${FUZZ_SANITIZER:-}" ]]; then
  rustflags+=" -Zsanitizer=${FUZZ_SANITIZER}"
  export RUSTC_BOOTSTRAP=1
fi

build() {
  # The main workspace's lock pins every shared dependency to what the gateway ships with; cargo
  # then adds only the fuzz crate's own (libfuzzer-sys). Copied each time, so it never drifts.
  cp ../Cargo.lock Cargo.lock
  # --target keeps build scripts and proc macros uninstrumented (they run on the host).
  RUSTFLAGS="$rustflags" cargo build --profile "$profile" --target "$triple" --bins
}

run() {
  local target=$1 seconds=$2
  shift 2
  mkdir -p "$target_dir/corpus/$target" "artifacts/$target"
  local limit=(-max_total_time="$seconds")
  [[ "$seconds" == 0 ]] && limit=(-runs=0)
  echo "== fuzz $target (${seconds}s)"
  "$target_dir/$triple/$profile/$target" "${limit[@]}" -rss_limit_mb=2048 -max_len=65536 -timeout=25 \
    -print_final_stats=1 -artifact_prefix="artifacts/$target/" "$@" \
    "$target_dir/corpus/$target" "corpus/$target"
}

case "${1:-}" in
  build) build ;;
  list) printf '%s\n' "${targets[@]}" ;;
  all)
    seconds=${2:?usage: fuzz/run.sh all SECONDS}
    shift 2
    build
    failed=()
    for t in "${targets[@]}"; do
      run "$t" "$seconds" "$@" || failed+=("$t")
    done
    if ((${#failed[@]})); then
      echo "fuzz: failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
      exit 1
    fi
    echo "fuzz: ${#targets[@]} targets ran ${seconds}s each, no crash"
    ;;
  "")
    sed -n '6,10p' "$0" >&2
    exit 2
    ;;
  *)
    target=$1
    seconds=${2:?usage: fuzz/run.sh TARGET SECONDS}
    shift 2
    [[ " ${targets[*]} " == *" $target "* ]] || { echo "unknown target $target" >&2; exit 2; }
    build
    run "$target" "$seconds" "$@"
    ;;
esac
