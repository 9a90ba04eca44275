// Installs npm from the npm registry when the base image has Node.js but no npm
// (Debian's own npm package drags in some 360 packages). Pinned and checked
// against its published sha512 (fetch-package.cjs).
'use strict';
const { symlinkSync, rmSync } = require('node:fs');
const { fetchPackage } = require('./fetch-package.cjs');

const version = '10.9.9';
const integrity = 'sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==';
const prefix = '/usr/local/lib/chalk-npm';

(async () => {
  await fetchPackage('npm', version, integrity, prefix);
  for (const bin of ['npm', 'npx']) {
    rmSync(`/usr/local/bin/${bin}`, { force: true });
    symlinkSync(`${prefix}/bin/${bin}-cli.js`, `/usr/local/bin/${bin}`);
  }
})().catch((err) => {
  console.error(`bootstrap-npm: ${err.cause?.message ?? err.message}`);
  process.exit(1);
});
