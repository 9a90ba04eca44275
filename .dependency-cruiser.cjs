/**
 * The import graph's rules, checked in CI by `npm run depcheck` (dependency-cruiser).
 * Dependencies point one way: cli/ and plugins/ use core/, core/ never uses them;
 * among core's folders there is no cycle; the ports know only each other and the
 * shared vocabulary (core/protocol/), so a port never drags a core service in.
 */
const { exports: published } = require('./package.json');

/**
 * The core files a plugin may import: the entry points package.json publishes
 * (`chalk-harness/plugin`, `/keys`, `/decider`, `/host`, `/store`, `/testing`), read from its
 * `exports` map, so a built-in plugin uses exactly what a third party gets.
 */
const entryFiles = Object.values(published)
  .map((e) => (typeof e === 'object' ? e.types : null))
  .filter((t) => typeof t === 'string' && t.startsWith('./dist/core/'))
  .map((t) => t.slice('./dist/'.length).replace(/\.d\.ts$/, '.ts'));
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PUBLISHED = `^(${entryFiles.map(escape).join('|')})$`;

module.exports = {
  forbidden: [
    {
      name: 'plugin-uses-published-entries',
      severity: 'error',
      comment:
        "a plugin imports core only through the entry points package.json's exports publish, as a third party does",
      from: { path: '^plugins/[^/]+/' },
      to: { path: '^core/', pathNot: PUBLISHED },
    },
    {
      name: 'plugin-not-into-another-plugin',
      severity: 'error',
      comment: "a plugin's folder is its own: it never imports another plugin's files (share through a core entry)",
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/', pathNot: '^plugins/$1/' },
    },
    {
      name: 'core-not-upward',
      severity: 'error',
      comment: 'core/ knows ports, never a provider, a command, a test or a bench',
      from: { path: '^core/' },
      to: { path: '^(plugins|cli|tests|bench)/' },
    },
    {
      name: 'no-core-folder-cycle',
      severity: 'error',
      comment: 'no cycle between the folders of core/ (a shared module belongs to neither user)',
      scope: 'folder',
      from: { path: '^core/' },
      to: { path: '^core/', circular: true },
    },
    {
      name: 'no-deep-core-import',
      severity: 'error',
      comment:
        "a core folder's subfolders are its own: others import the folder's top files, so every edge between " +
        'core folders is seen by no-core-folder-cycle at the top level',
      from: { path: '^core/([^/]+)/' },
      to: { path: '^core/[^/]+/[^/]+/', pathNot: '^core/$1/' },
    },
    {
      name: 'no-module-cycle',
      severity: 'error',
      comment: 'no import cycle between files',
      from: { path: '^(core|plugins|cli|demo)/' },
      to: { circular: true },
    },
    {
      name: 'ports-know-only-ports',
      severity: 'error',
      comment: 'core/ports imports nothing but core/ports and the shared vocabulary in core/protocol/',
      from: { path: '^core/ports/' },
      to: { pathNot: '^core/(ports|protocol)/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'protocol-is-a-leaf',
      severity: 'error',
      comment: 'the shared vocabulary depends on no other part of Chalk',
      from: { path: '^core/protocol/' },
      to: { path: '^(core|plugins|cli|demo)/', pathNot: '^core/protocol/' },
    },
    {
      name: 'egress-daemon-stands-alone',
      severity: 'error',
      comment:
        'the egress daemon is copied into its own image (Node 18, undici 6): it imports Node built-ins, undici and its own folder only',
      from: { path: '^plugins/sandbox-docker/egress/daemon/' },
      to: { pathNot: ['^plugins/sandbox-docker/egress/daemon/', '^node_modules/undici/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'an import that resolves to nothing would hide an edge from these rules',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.cts', '.mjs', '.js', '.d.ts'],
    },
  },
};
