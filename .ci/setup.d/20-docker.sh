#!/usr/bin/env bash
# The Docker engine and the sandbox image. On a fresh machine: start dockerd
# (docker.io comes from 10-packages.sh), make a Debian base image with
# debootstrap (no image registry is reachable; Debian's mirror is), then build
# chalk-sandbox:local on it. Each step is skipped when its result exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
log=/var/log/chalk-dockerd.log

if ! docker info >/dev/null 2>&1; then
  if ! pgrep -x dockerd >/dev/null; then
    echo "starting dockerd (log: $log)"
    setsid nohup dockerd >"$log" 2>&1 </dev/null &
  fi
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up within 60 s:" >&2; tail -n 20 "$log" >&2; exit 1; }
fi
echo "docker engine $(docker version -f '{{.Server.Version}}')"

base=chalk-debian-base:bookworm
share/sandbox/make-base-image.sh "$base"
CHALK_SANDBOX_BASE="$base" share/sandbox/build-image.sh chalk-sandbox:local
# Later builds (chalk sandbox build in the tests) use the same base, so they hit the cache.
echo "export CHALK_SANDBOX_BASE=$base" >>"${CHALK_CI_ENV:-/dev/null}"
