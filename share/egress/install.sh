#!/bin/sh
# Runs once at the egress image's build, as root: Squid with TLS peeking, socat (Squid's
# helper talks to the daemon's socket through it), Node when the base has none, the extra CA,
# undici for the gateway, the certificate Squid's peeking port needs (it never bumps, so no
# client ever sees it), the error pages, and the daemon's user.
set -eu
export DEBIAN_FRONTEND=noninteractive
here=/usr/local/lib/chalk-egress
ca=/etc/chalk/ca.pem
if [ -s "$ca" ]; then
  echo "Acquire::https::CAInfo \"$ca\";" >/etc/apt/apt.conf.d/99chalk-ca
fi
need="squid-openssl socat openssl ca-certificates"
command -v node >/dev/null 2>&1 || need="$need nodejs"
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $need >/dev/null
rm -rf /var/lib/apt/lists/* /etc/apt/apt.conf.d/99chalk-ca
if [ -s "$ca" ]; then
  cp "$ca" /usr/local/share/ca-certificates/chalk-extra.crt
  update-ca-certificates >/dev/null 2>&1
  export NODE_EXTRA_CA_CERTS="$ca"
fi
node "$here/fetch-package.cjs" undici 6.29.1 \
  'sha512-EvRlUt/QqAEvXdQeRMYUfwOQsfzpDztykrG2owGEE/rBOBoYv9uF39ZzsNDh4lTFHhTr2XOZjKkYgueD12ZmGA==' \
  /opt/chalk-egress/node_modules/undici
printf '{ "type": "module", "private": true }\n' >/opt/chalk-egress/package.json
mkdir -p /etc/chalk-egress/errors
cp -r /usr/share/squid/errors/templates/. /etc/chalk-egress/errors/
cp "$here/ERR_CHALK_EGRESS" "$here/ERR_CHALK_PRIVATE" /etc/chalk-egress/errors/
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=chalk-egress-unused \
  -keyout /tmp/k.pem -out /tmp/c.pem >/dev/null 2>&1
cat /tmp/k.pem /tmp/c.pem >/etc/chalk-egress/unused.pem
rm -f /tmp/k.pem /tmp/c.pem
chown root:proxy /etc/chalk-egress/unused.pem
chmod 0640 /etc/chalk-egress/unused.pem
groupadd --gid 10050 chalkegress
useradd --no-create-home --home-dir /nonexistent --uid 10050 --gid 10050 --shell /usr/sbin/nologin chalkegress
echo "squid $(/usr/sbin/squid -v | head -1 | sed 's/.*Version //'), node $(node --version)"
