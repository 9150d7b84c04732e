#!/bin/sh
# Clean release build of `minimal` (one GETEX on a current-thread runtime) with redis-rs alone
# (as crates/redis builds it), with fred alone (the features a port of crates/redis would need:
# i-pubsub, subscriber-client) and with fred plus its rustls-on-ring TLS: CPU seconds (user + sys),
# packages in the build graph, and the stripped binary's size. A fresh target directory per
# variant ($BASE-redis, ...), so each build compiles all of its dependencies. Run `cargo fetch`
# first, so no download is timed.
set -eu
cd "$(dirname "$0")"
BASE=${BASE:-/tmp/fred-compare-target/clean}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| variant | packages (cargo tree -e normal) | clean build wall s | user+sys CPU s | stripped bytes |"
echo "|---|---:|---:|---:|---:|"
for variant in redis fred fred-tls; do
    feat="--no-default-features --features min-$variant"
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
for variant in redis fred fred-tls; do
    cargo tree -e normal --prefix none --no-default-features --features min-$variant \
        | sed 's/ (\*)$//' | sed 's/ (.*)$//' | sort -u | grep -v '^fred-compare ' > "$BASE-$variant.packages"
done
echo "packages fred adds over redis-rs (name version):"
comm -13 "$BASE-redis.packages" "$BASE-fred.packages" | sed 's/^/  /'
echo "packages TLS adds to fred:"
comm -13 "$BASE-fred.packages" "$BASE-fred-tls.packages" | sed 's/^/  /'
