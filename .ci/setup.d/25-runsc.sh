#!/usr/bin/env bash
# gVisor for the CHALK_SANDBOX_RUNTIME=runsc test (tests/e2e/runtime-gvisor.test.ts), in CI
# only: Debian's runsc, registered with dockerd in /etc/docker/daemon.json and loaded with a
# SIGHUP (running containers are untouched). runsc uses the container's own network
# namespace (--network=host): its own netstack refuses to start on machines like CI's, where
# it takes the container's namespace for the root one. Never on a person's machine
# (scripts/bootstrap.sh does not run this): registering a runtime is the person's choice.
set -euo pipefail
if [ "${CI:-}" != true ]; then
  echo "runsc: registered in CI only"
  exit 0
fi
if ! dpkg-query -W -f='${Status}' runsc 2>/dev/null | grep -q 'install ok installed'; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends runsc >/dev/null
fi
conf=/etc/docker/daemon.json
mkdir -p /etc/docker
[ -s "$conf" ] || echo '{}' >"$conf"
if ! jq -e '.runtimes.runsc' "$conf" >/dev/null; then
  tmp=$(mktemp)
  jq '.runtimes.runsc = {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=host"]}' "$conf" >"$tmp"
  mv "$tmp" "$conf"
  kill -HUP "$(pgrep -x dockerd)"
fi
for _ in $(seq 1 30); do
  docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' && break
  sleep 1
done
docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' || { echo "dockerd did not load the runsc runtime" >&2; exit 1; }
echo "runsc $(runsc --version | head -1 | awk '{print $3}') registered with dockerd"
