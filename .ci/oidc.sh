#!/usr/bin/env bash
# Installs the test OpenID Provider's dependencies (npm package oidc-provider, pinned with its
# lockfile) into tests/oidc/node_modules (git-ignored), for the tests that start
# `node tests/oidc/provider.mjs`. Idempotent: a second run with an unchanged lockfile only checks
# that the modules load. Uses the system `node`/`npm` (Node >= 20), or $NODE / $NPM if set.
# Prints nothing on success; exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../tests/oidc"
NODE="${NODE:-node}"
NPM="${NPM:-npm}"

major="$("$NODE" -p 'process.versions.node.split(".")[0]')"
if (( major < 20 )); then
    echo "oidc.sh: Node >= 20 is required, found $("$NODE" --version)" >&2
    exit 1
fi

stamp=node_modules/.vmcp-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    "$NPM" ci --no-audit --no-fund --loglevel=error >/dev/null
    echo "$want" >"$stamp"
fi

# The provider's two direct dependencies must load on this Node.
"$NODE" --input-type=module -e "await import('oidc-provider'); await import('jose');" 2>/dev/null \
    || { echo "oidc.sh: oidc-provider does not load; try: rm -rf tests/oidc/node_modules" >&2; exit 1; }
