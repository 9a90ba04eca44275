#!/bin/sh
# Runs once at image build, as root, on any Debian-based base: installs what is
# missing (bash, git, ca-certificates, jq, ripgrep, Node.js >= 18, and npm), fetches the
# undici that Node's proxy preload uses, and adds the extra CA bundle at /etc/chalk/ca.pem
# to the system trust store.
set -eu
export DEBIAN_FRONTEND=noninteractive
ca=/etc/chalk/ca.pem

# A TLS-intercepting proxy may sit in front of an https apt source too.
if [ -s "$ca" ]; then
  echo "Acquire::https::CAInfo \"$ca\";" >/etc/apt/apt.conf.d/99chalk-ca
fi

need=""
has() { command -v "$1" >/dev/null 2>&1; }
has bash || need="$need bash"
has git || need="$need git"
has jq || need="$need jq"
has rg || need="$need ripgrep"
[ -f /etc/ssl/certs/ca-certificates.crt ] && has update-ca-certificates || need="$need ca-certificates"
node_major=0
if has node; then node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0); fi
[ "$node_major" -ge 18 ] || need="$need nodejs"

if [ -n "$need" ]; then
  echo "installing:$need"
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $need >/dev/null
  rm -rf /var/lib/apt/lists/*
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || { echo "Node.js $node_major is too old; the sandbox needs >= 18" >&2; exit 1; }
if ! has npm; then
  # Debian's npm package pulls in hundreds of packages; the registry's npm is one tarball.
  [ -s "$ca" ] && export NODE_EXTRA_CA_CERTS="$ca"
  node /usr/local/lib/chalk/bootstrap-npm.cjs
fi

# undici for node-proxy.cjs (Node's fetch through the sandbox's egress proxy); 6.x runs on Node 18.
[ -s "$ca" ] && export NODE_EXTRA_CA_CERTS="$ca"
node /usr/local/lib/chalk/fetch-package.cjs undici 6.29.1 \
  'sha512-EvRlUt/QqAEvXdQeRMYUfwOQsfzpDztykrG2owGEE/rBOBoYv9uF39ZzsNDh4lTFHhTr2XOZjKkYgueD12ZmGA==' \
  /usr/local/lib/chalk/node_modules/undici

if [ -s "$ca" ]; then
  # update-ca-certificates appends every certificate of each .crt file to the bundle.
  cp "$ca" /usr/local/share/ca-certificates/chalk-extra.crt
  update-ca-certificates >/dev/null 2>&1
fi
rm -f /etc/apt/apt.conf.d/99chalk-ca
echo "bash $(bash -c 'echo $BASH_VERSION'), $(git --version), node $(node --version), npm $(npm --version)"
