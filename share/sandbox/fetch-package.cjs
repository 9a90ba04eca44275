// Fetches one pinned npm package from the registry, checks it against its published sha512
// and unpacks it into a directory: how images get a package with only Node (fetch, crypto) and
// tar, no npm. Used at image build: bootstrap-npm.cjs (npm itself) and the undici the sandbox's
// Node preload and the egress daemon use.
//   node fetch-package.cjs NAME VERSION INTEGRITY DEST
'use strict';
const { createHash } = require('node:crypto');
const { writeFileSync, mkdirSync, rmSync } = require('node:fs');
const { execFileSync } = require('node:child_process');

const registry = (process.env.NPM_CONFIG_REGISTRY || 'https://registry.npmjs.org').replace(/\/+$/, '');

async function fetchPackage(name, version, integrity, dest) {
  const base = name.split('/').pop();
  const res = await fetch(`${registry}/${name}/-/${base}-${version}.tgz`);
  if (!res.ok) throw new Error(`fetching ${name} ${version}: HTTP ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  const got = `sha512-${createHash('sha512').update(body).digest('base64')}`;
  if (got !== integrity) throw new Error(`${name} ${version} tarball does not match its published integrity`);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const tgz = `/tmp/${base}-${version}.tgz`;
  writeFileSync(tgz, body);
  execFileSync('tar', ['-xzf', tgz, '-C', dest, '--strip-components=1', '--no-same-owner']);
  rmSync(tgz);
}

module.exports = { fetchPackage };

if (require.main === module) {
  const [name, version, integrity, dest] = process.argv.slice(2);
  fetchPackage(name, version, integrity, dest).catch((err) => {
    console.error(`fetch-package: ${err.cause?.message ?? err.message}`);
    process.exit(1);
  });
}
