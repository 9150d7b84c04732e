#!/usr/bin/env bash
# Test services from Debian's packages, installed only when missing: redis-server (sessions and
# rate limits shared by replicas) and haproxy (the round-robin balancer in front of them). The
# tests start their own instances on free loopback ports; nothing here runs a service.
set -euo pipefail
export PATH="$PATH:/usr/sbin"
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
command -v haproxy >/dev/null && [ -x "$(command -v haproxy)" ] || need+=(haproxy)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Debian starts the packaged services; the tests need only the binaries.
for svc in redis-server haproxy; do
  if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
  service "$svc" stop >/dev/null 2>&1 || true
done
redis-server --version
# sed reads to the end: head would close the pipe early, and under pipefail the writer's SIGPIPE
# (exit 141) would fail CI at random.
haproxy -v | sed -n 1p
