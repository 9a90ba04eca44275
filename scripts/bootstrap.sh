#!/usr/bin/env bash
# A fresh Debian machine, made ready to run Chalk: git, jq and the Docker engine
# from Debian's packages (dockerd started), the sandbox and egress images built (on a Debian
# base made with debootstrap, so no image registry is needed), and the npm
# dependencies installed with dist/ built. Run as root (or with sudo). Each step
# is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
for pkg in git jq docker.io debootstrap ca-certificates procps; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
bash .ci/setup.d/20-docker.sh
npm ci --no-audit --no-fund
# The egress image beside the sandbox image (a first run would build it otherwise).
bash .ci/setup.d/45-egress.sh
