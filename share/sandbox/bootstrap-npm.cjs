// Installs npm from the npm registry when the base image has Node.js but no npm
// (Debian's own npm package drags in some 360 packages). Pinned and checked
// against its published sha512; uses only Node (fetch, crypto) and tar.
'use strict';
const { createHash } = require('node:crypto');
const { writeFileSync, mkdirSync, symlinkSync, rmSync } = require('node:fs');
const { execFileSync } = require('node:child_process');

const version = '10.9.9';
const integrity = 'sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==';
const registry = (process.env.NPM_CONFIG_REGISTRY || 'https://registry.npmjs.org').replace(/\/+$/, '');
const prefix = '/usr/local/lib/chalk-npm';

(async () => {
  const res = await fetch(`${registry}/npm/-/npm-${version}.tgz`);
  if (!res.ok) throw new Error(`fetching npm ${version}: HTTP ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  const got = `sha512-${createHash('sha512').update(body).digest('base64')}`;
  if (got !== integrity) throw new Error(`npm ${version} tarball does not match its published integrity`);
  rmSync(prefix, { recursive: true, force: true });
  mkdirSync(prefix, { recursive: true });
  writeFileSync('/tmp/npm.tgz', body);
  execFileSync('tar', ['-xzf', '/tmp/npm.tgz', '-C', prefix, '--strip-components=1', '--no-same-owner']);
  rmSync('/tmp/npm.tgz');
  for (const bin of ['npm', 'npx']) {
    rmSync(`/usr/local/bin/${bin}`, { force: true });
    symlinkSync(`${prefix}/bin/${bin}-cli.js`, `/usr/local/bin/${bin}`);
  }
})().catch((err) => {
  console.error(`bootstrap-npm: ${err.cause?.message ?? err.message}`);
  process.exit(1);
});
