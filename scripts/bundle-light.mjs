#!/usr/bin/env node
// The second step of `npm run build` (after tsc): bundles dist/cli/light.js, the entry of the
// commands cli/light-words.cts names (`chalk status`), with everything it imports (Chalk's
// modules, zod, clipanion, pg) into one CommonJS file, dist/cli/light.cjs, which the binary runs
// with a V8 code cache (cli/code-cache.cts): no module to resolve, read or compile one by one.
//
// The bundle holds its own copy of every Chalk module it uses, so it must never load another:
// the build fails when any module in it could import a Chalk module at run time (a dynamic
// import of one, which is how plugins and the kernel are loaded) or when an `import(` or an
// `import.meta` it cannot place is left in the output. A process running the bundle therefore
// never imports a plugin, and a process that imports a plugin (through main.js) never ran the
// bundle: there is one copy of chalk-harness's published entries in either.
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { rolldown } from 'rolldown';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const entry = join(dist, 'cli', 'light.js');
const out = join(dist, 'cli', 'light.cjs');

const ownModule = (id) => id.startsWith(dist + sep);
const problems = [];

/** `import.meta` of a module of dist/, as the module would see it where tsc wrote it. */
const placeImportMeta = {
  name: 'chalk-import-meta',
  transform(code, id) {
    if (!ownModule(id) || !code.includes('import.meta')) return null;
    const rel = JSON.stringify(relative(dirname(out), id).split(sep).join('/'));
    const file = `require("node:path").join(__dirname, ${rel})`;
    const placed = code
      .replace(/\bimport\.meta\.url\b/g, `require("node:url").pathToFileURL(${file}).href`)
      .replace(/\bimport\.meta\.filename\b/g, file)
      .replace(/\bimport\.meta\.dirname\b/g, `require("node:path").dirname(${file})`);
    if (/\bimport\.meta\b/.test(placed)) problems.push(`${relative(root, id)} uses import.meta beyond url, filename and dirname`);
    return { code: placed, map: null };
  },
};

/**
 * pg requires node's dns when it loads, for the one function that looks a host up (libpq's
 * connection string, for pg-native); loading dns sets up its resolver, a few milliseconds at every
 * start of a command that never resolves a name (the embedded server is a Unix socket). In the
 * bundle dns is required when that function first runs. The build stops if pg's line changed.
 */
const PG_DNS = "const dns = require('dns')";
const lazyPgDns = {
  name: 'chalk-lazy-pg-dns',
  transform(code, id) {
    if (!id.endsWith(`${sep}pg${sep}lib${sep}connection-parameters.js`)) return null;
    if (code.split(PG_DNS).length !== 2 || (code.match(/\bdns\./g) ?? []).length !== 1 || !code.includes('dns.lookup(')) {
      problems.push(`${relative(root, id)}: pg no longer loads dns as this build expects (${PG_DNS}; dns.lookup once)`);
      return null;
    }
    return { code: code.replace(PG_DNS, "const dns = { lookup: (...args) => require('dns').lookup(...args) }"), map: null };
  },
};

/**
 * pg's crypto helpers read `crypto.webcrypto` when they load, which makes Node load its Web Crypto
 * (a millisecond at every start); only a password login over SCRAM uses it, never the embedded
 * server's socket. In the bundle it is read at the first use. The build stops if pg's lines changed.
 */
const PG_WEBCRYPTO = 'const webCrypto = nodeCrypto.webcrypto || globalThis.crypto';
const PG_SUBTLE = 'const subtleCrypto = webCrypto.subtle';
const lazyPgWebCrypto = {
  name: 'chalk-lazy-pg-webcrypto',
  transform(code, id) {
    if (!id.endsWith(`${sep}pg${sep}lib${sep}crypto${sep}utils.js`)) return null;
    const web = [...code.matchAll(/\bwebCrypto\.(\w+)/g)].map((m) => m[1]);
    const subtle = [...code.matchAll(/\bsubtleCrypto\.(\w+)/g)].map((m) => m[1]);
    if (
      code.split(PG_WEBCRYPTO).length !== 2 ||
      code.split(PG_SUBTLE).length !== 2 ||
      web.some((m) => m !== 'subtle' && m !== 'getRandomValues') ||
      subtle.some((m) => !['digest', 'importKey', 'sign', 'deriveBits'].includes(m))
    ) {
      problems.push(`${relative(root, id)}: pg no longer uses Web Crypto as this build expects (${PG_WEBCRYPTO})`);
      return null;
    }
    const lazy = '(() => nodeCrypto.webcrypto || globalThis.crypto)';
    return {
      code: code
        .replace(PG_WEBCRYPTO, `const webCrypto = { getRandomValues: (b) => ${lazy}().getRandomValues(b) }`)
        .replace(
          PG_SUBTLE,
          `const subtleCrypto = Object.fromEntries(['digest', 'importKey', 'sign', 'deriveBits'].map((f) => [f, (...a) => ${lazy}().subtle[f](...a)]))`,
        ),
      map: null,
    };
  },
};

/** Refuses a dynamic import of a Chalk module: it would load a second copy beside the bundle's. */
const noDynamicChalkImport = {
  name: 'chalk-no-dynamic-import',
  async resolveId(source, importer, options) {
    if (options.kind !== 'dynamic-import' || !importer) return null;
    const resolved = await this.resolve(source, importer, { skipSelf: true, kind: options.kind });
    if (resolved && !resolved.external && ownModule(resolved.id)) {
      problems.push(`${relative(root, importer)} imports ${source} at run time`);
      return { id: source, external: true }; // not followed: the build fails below, naming every one
    }
    return null;
  },
};

const bundle = await rolldown({
  input: entry,
  platform: 'node',
  // pg requires pg-native only when pg.native is read, which Chalk never does; it is not installed.
  external: [/^node:/, 'pg-native'],
  plugins: [placeImportMeta, lazyPgDns, lazyPgWebCrypto, noDynamicChalkImport],
  logLevel: 'warn',
});
const tmp = `${out}.${process.pid}.tmp`;
try {
  await bundle.write({
    file: tmp,
    format: 'cjs',
    codeSplitting: false,
    // ASCII only: V8 then holds the source as one byte a character, not two, and reads it faster.
    charset: 'ascii',
    // Minified: the binary reads, hashes and makes a string of the whole file at every start (about
    // 3 ms for half a megabyte on this machine's cores), and the code cache does not shrink the file.
    // Functions and classes keep their names (error messages and stack traces read them).
    minify: true,
    keepNames: true,
    // Licences stay; the rest of the comments are bytes to read and hash at every start.
    comments: { legal: true, annotation: false, jsdoc: false },
  });
} finally {
  await bundle.close();
}
const code = readFileSync(tmp, 'utf8');
if (/\bimport\.meta\b/.test(code)) problems.push('the bundle still uses import.meta');
if (/(?<![.\w$])import\s*\(/.test(code)) problems.push('the bundle still imports a module at run time (import(...))');
if (problems.length > 0) {
  // No bundle at all rather than an older one: the binary then runs `chalk status` from main.js.
  rmSync(tmp, { force: true });
  rmSync(out, { force: true });
  process.stderr.write(`bundle-light: dist/cli/light.cjs not made:\n${problems.map((p) => `  ${p}\n`).join('')}`);
  process.exit(1);
}
renameSync(tmp, out);
