#!/usr/bin/env bash
# Starts Debian's Postgres 15 cluster (installed by 10-packages.sh) on loopback only,
# creates a throwaway role and database for the store tests and exports its URL as
# CHALK_TEST_PG_URL. The store tests run once against it and once against embedded PGlite.
set -euo pipefail
ver=15
cluster=main
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$ver $cluster"; then
  pg_createcluster "$ver" "$cluster" >/dev/null
fi
conf=/etc/postgresql/$ver/$cluster/postgresql.conf
grep -q "^listen_addresses = '127.0.0.1'" "$conf" || echo "listen_addresses = '127.0.0.1'" >>"$conf"
if ! pg_lsclusters -h | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $4}' | grep -q online; then
  pg_ctlcluster "$ver" "$cluster" start
fi
port=$(pg_lsclusters -h | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $3}')
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 1
done
pg_isready -q -h 127.0.0.1 -p "$port"
# One random password per machine, kept (root-only) so that running this step again does not
# change it under tests that are already running.
pwfile=/var/lib/postgresql/chalk_test.password
if [ ! -s "$pwfile" ]; then
  (umask 077; head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$pwfile")
fi
pw=$(cat "$pwfile")
su postgres -c "psql -X -q -p $port -v ON_ERROR_STOP=1" <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chalk_test') THEN CREATE ROLE chalk_test LOGIN CREATEDB; END IF;
END \$\$;
ALTER ROLE chalk_test CREATEDB PASSWORD '$pw';
SELECT 'CREATE DATABASE chalk_test OWNER chalk_test' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'chalk_test') \gexec
SQL
# The store tests create one database per test file (CREATEDB); pg_trgm ships with Debian's
# postgresql-15 and is a trusted extension, so the database owner may create it. No pgvector:
# this is the "plain server" case (embeddings as real[], semantic recall off).
echo "export CHALK_TEST_PG_URL=postgresql://chalk_test:$pw@127.0.0.1:$port/chalk_test" >>"$CHALK_CI_ENV"
echo "postgres $ver/$cluster on 127.0.0.1:$port, database chalk_test"
