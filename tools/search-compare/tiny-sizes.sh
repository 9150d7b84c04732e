#!/bin/sh
# Clean release build time and stripped size of `tiny` per engine (none = the baseline).
# Each engine gets its own fresh target directory, so every build compiles all of its
# dependencies from scratch (the registry download is not timed: run `cargo fetch` first).
# Run it alone: a build elsewhere on the machine changes the times.
#   sh tools/search-compare/tiny-sizes.sh [TARGET_PREFIX]   (default /tmp/search-compare-tiny)
#   ENGINES="fts5 tantivy" sh tools/search-compare/tiny-sizes.sh   (some engines only)
set -eu
cd "$(dirname "$0")"
prefix=${1:-/tmp/search-compare-tiny}
echo "cores: $(nproc); rustc: $(rustc --version)"
engines=${ENGINES:-none ours fts5 tantivy}
for engine in $engines; do
    dir=$prefix-$engine
    rm -rf "$dir"
    if [ "$engine" = none ]; then features=""; else features="--features $engine"; fi
    load0=$(cut -d" " -f1-3 /proc/loadavg)
    # shellcheck disable=SC2086
    CARGO_TARGET_DIR=$dir /usr/bin/time -f '%e %U %S' -o "$dir.time" \
        nice -n 19 cargo build --release --quiet --no-default-features $features --bin tiny
    read -r wall user sys < "$dir.time"
    cp "$dir/release/tiny" "$dir/tiny.stripped"
    strip "$dir/tiny.stripped"
    # shellcheck disable=SC2086
    crates=$(cargo tree --offline -e normal,build --no-default-features $features --prefix none \
        | sed 's/ (\*)$//' | sort -u | wc -l)
    echo "load before $engine: $load0; after: $(cut -d" " -f1-3 /proc/loadavg)"
    printf '%-8s build %6.1f s wall, %6.1f s CPU  stripped %9d bytes  unstripped %9d bytes  packages (normal + build, itself included) %d\n' \
        "$engine" "$wall" "$(echo "$user + $sys" | bc)" "$(stat -c %s "$dir/tiny.stripped")" \
        "$(stat -c %s "$dir/release/tiny")" "$crates"
done
