#!/usr/bin/env bash
# Debian packages the tests use: git, git-lfs (host git must run none of its filters), jq, the Docker engine, Postgres 15, debootstrap.
set -euo pipefail
need=()
for pkg in git git-lfs jq docker.io postgresql debootstrap ca-certificates procps; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
