#!/usr/bin/env bash
# Builds the sandbox image with the docker CLI, for machines where Chalk itself
# is not built yet (CI runs this before `npm ci`). `chalk sandbox build` does the
# same through the Docker API; both label the image with the same context hash,
# so either one skips a build the other already made.
#
# usage: build-image.sh [TAG]   (default chalk-sandbox:local)
# env:   CHALK_SANDBOX_BASE (base image), CHALK_SANDBOX_CA (extra CA bundle; else
#        NODE_EXTRA_CA_CERTS, else SSL_CERT_FILE), CHALK_SANDBOX_FORCE=1 rebuilds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-chalk-sandbox:local}"
# Without CHALK_SANDBOX_BASE, a rebuild keeps the base the existing image was made on.
prev="$(docker image inspect -f '{{index .Config.Labels "chalk.base"}}' "$tag" 2>/dev/null || true)"
base="${CHALK_SANDBOX_BASE:-${prev:-node:22-bookworm-slim}}"
ca=""
for c in "${CHALK_SANDBOX_CA:-}" "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}"; do
  if [ -n "$c" ]; then ca="$c"; break; fi
done
if [ -n "$ca" ] && [ ! -r "$ca" ]; then echo "build-image: CA bundle $ca is not readable" >&2; exit 1; fi

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
files=(Dockerfile install-packages.sh bootstrap-npm.cjs fetch-package.cjs node-proxy.cjs)
for f in "${files[@]}"; do cp "$here/$f" "$ctx/$f"; done
if [ -n "$ca" ]; then cp "$ca" "$ctx/chalk-ca.pem"; else : >"$ctx/chalk-ca.pem"; fi
# The hash `chalk sandbox build` computes too (plugins/sandbox-docker/image-context.ts).
hash="$(
  {
    for f in "${files[@]}" chalk-ca.pem; do printf '%s\0' "$f"; cat "$ctx/$f"; printf '\0'; done
    printf 'base\0%s' "$base"
  } | sha256sum | cut -d' ' -f1
)"
if [ "${CHALK_SANDBOX_FORCE:-0}" != 1 ] &&
  [ "$(docker image inspect -f '{{index .Config.Labels "chalk.context"}}' "$tag" 2>/dev/null || true)" = "$hash" ]; then
  echo "sandbox image $tag is up to date; skipping (CHALK_SANDBOX_FORCE=1 rebuilds)"
  exit 0
fi
docker build -q --build-arg "CHALK_SANDBOX_BASE=$base" --label "chalk.context=$hash" --label "chalk.base=$base" -t "$tag" "$ctx" >/dev/null
echo "built sandbox image $tag on $base"
