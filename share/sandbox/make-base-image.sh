#!/usr/bin/env bash
# Makes a minimal Debian base image without any image registry: debootstrap a
# root file system from a Debian mirror, then `docker import` it. The sandbox
# Dockerfile builds on it with --build-arg CHALK_SANDBOX_BASE=<tag>.
#
# usage: make-base-image.sh [TAG]   (default chalk-debian-base:bookworm)
# env:   CHALK_BASE_SUITE (bookworm), CHALK_BASE_MIRROR (http://deb.debian.org/debian),
#        CHALK_BASE_FORCE=1 rebuilds an image that already exists.
set -euo pipefail
tag="${1:-chalk-debian-base:bookworm}"
suite="${CHALK_BASE_SUITE:-bookworm}"
mirror="${CHALK_BASE_MIRROR:-http://deb.debian.org/debian}"

if [ "${CHALK_BASE_FORCE:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "base image $tag exists; skipping (CHALK_BASE_FORCE=1 rebuilds)"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "make-base-image: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "make-base-image: debootstrap needs root" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
# minbase: essential packages plus apt; the Dockerfile installs the rest.
# ca-certificates comes along so an https mirror or registry works from the first RUN.
debootstrap --variant=minbase --include=ca-certificates "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}
# Keep the image small and the apt lists fresh for the Dockerfile's own update.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
EOF
tar --numeric-owner -C "$root" -c . |
  docker import --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' - "$tag" >/dev/null
echo "made base image $tag from debian $suite"
