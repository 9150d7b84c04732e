#!/bin/sh
# Clean release build of `minimal` with std's HashMap alone, then with moka alone: CPU seconds
# (user + sys), packages in the build graph, and the stripped binary's size. A fresh target
# directory per variant ($BASE-std, $BASE-moka), so each build compiles all of its dependencies.
# Run `cargo fetch` first, so no download is timed.
set -eu
cd "$(dirname "$0")"
BASE=${BASE:-/tmp/moka-compare-target/clean}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| variant | packages (cargo tree -e normal) | clean build wall s | user+sys CPU s | stripped bytes |"
echo "|---|---:|---:|---:|---:|"
for variant in std moka; do
    if [ "$variant" = std ]; then feat="--no-default-features"; else feat="--no-default-features --features moka"; fi
    dir="$BASE-$variant"
    rm -rf "$dir"
    pkgs=$(cargo tree -e normal --prefix none $feat | sed 's/ (\*)$//' | sort -u | wc -l)
    # bash's `time` is not POSIX sh: read the CPU from /usr/bin/time's output.
    CARGO_TARGET_DIR="$dir" /usr/bin/time -f "%e %U %S" -o "$dir.time" \
        nice -n 19 cargo build --release --quiet $feat --bin minimal
    read wall user sys < "$dir.time"
    cpu=$(awk "BEGIN { printf \"%.2f\", $user + $sys }")
    strip -o "$dir.stripped" "$dir/release/minimal"
    size=$(stat -c %s "$dir.stripped")
    echo "| $variant | $pkgs | $wall | $cpu | $size |"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "packages moka adds:"
cargo tree -e normal --prefix none --no-default-features --features moka | sed 's/ (\*)$//' | sort -u \
    | grep -v '^moka-compare ' | sed 's/^/  /'
