#!/bin/sh
# Runs once, as root, when Chalk layers itself on a dev container's image: installs what the
# sandbox scripts need and the image lacks (bash, git, ca-certificates, jq, ripgrep, and
# setpriv, which starts the agent CLI as the sandbox user)
# and adds the extra CA bundle at /etc/chalk/ca.pem to the system trust store. No Node.js:
# the claude CLI is a native binary.
set -eu
export DEBIAN_FRONTEND=noninteractive
ca=/etc/chalk/ca.pem
has() { command -v "$1" >/dev/null 2>&1; }
has apt-get || { echo "Chalk's layer needs a Debian- or Ubuntu-based image (apt-get); this one has none" >&2; exit 1; }
if [ -s "$ca" ]; then
  echo "Acquire::https::CAInfo \"$ca\";" >/etc/apt/apt.conf.d/99chalk-ca
fi
need=""
has bash || need="$need bash"
has git || need="$need git"
has jq || need="$need jq"
has rg || need="$need ripgrep"
has setpriv || need="$need util-linux"
{ [ -f /etc/ssl/certs/ca-certificates.crt ] && has update-ca-certificates; } || need="$need ca-certificates"
if [ -n "$need" ]; then
  echo "installing:$need"
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $need >/dev/null
  rm -rf /var/lib/apt/lists/*
fi
if [ -s "$ca" ]; then
  cp "$ca" /usr/local/share/ca-certificates/chalk-extra.crt
  update-ca-certificates >/dev/null 2>&1
fi
rm -f /etc/apt/apt.conf.d/99chalk-ca
