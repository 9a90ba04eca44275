#!/usr/bin/env bash
# The Docker engine and the sandbox image. On a fresh machine: start dockerd
# (docker.io comes from 10-packages.sh), make a Debian base image with
# debootstrap (no image registry is reachable; Debian's mirror is), then build
# chalk-sandbox:local on it. Each step is skipped when its result exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
log=/var/log/chalk-dockerd.log
# In CI (CI=true) the engine also listens on a second, loopback-only address,
# so the remote-engine test (tests/e2e/hostile-*.test.ts) reaches it the way it
# would reach a remote one: DOCKER_HOST, no shared socket path, no host mounts.
# Never on a person's machine (scripts/bootstrap.sh runs this too): an
# unauthenticated TCP engine would let any local user act as root.
remote=""
hosts=(-H unix:///var/run/docker.sock)
if [ "${CI:-}" = true ]; then
  remote=tcp://127.0.0.1:2375
  hosts+=(-H "$remote")
fi

# A dockerd started before the second address existed: restart it with both
# (containers stop; images and volumes stay).
if [ -n "$remote" ] && docker info >/dev/null 2>&1 && ! docker -H "$remote" info >/dev/null 2>&1; then
  pid=$(pgrep -x dockerd || true)
  if [ -n "$pid" ]; then
    echo "restarting dockerd $pid to add $remote"
    kill "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && { echo "dockerd $pid did not stop within 60 s" >&2; exit 1; }
  fi
fi

if ! docker info >/dev/null 2>&1; then
  if ! pgrep -x dockerd >/dev/null; then
    echo "starting dockerd (log: $log)"
    setsid nohup dockerd "${hosts[@]}" >"$log" 2>&1 </dev/null &
  fi
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up within 60 s:" >&2; tail -n 20 "$log" >&2; exit 1; }
fi
echo "docker engine $(docker version -f '{{.Server.Version}}')"
if [ -n "$remote" ]; then
  docker -H "$remote" info >/dev/null 2>&1 || { echo "dockerd does not answer on $remote" >&2; exit 1; }
  echo "export CHALK_TEST_DOCKER_REMOTE=$remote" >>"${CHALK_CI_ENV:-/dev/null}"
fi

base=chalk-debian-base:bookworm
share/sandbox/make-base-image.sh "$base"
CHALK_SANDBOX_BASE="$base" share/sandbox/build-image.sh chalk-sandbox:local
# Later builds (chalk sandbox build in the tests) use the same base, so they hit the cache.
echo "export CHALK_SANDBOX_BASE=$base" >>"${CHALK_CI_ENV:-/dev/null}"
