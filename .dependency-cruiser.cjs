/**
 * The import graph's rules, checked in CI by `npm run depcheck` (dependency-cruiser).
 * Dependencies point one way: cli/ and plugins/ use core/, core/ never uses them;
 * among core's folders there is no cycle; the ports know only each other and the
 * shared vocabulary (core/protocol/), so a port never drags a core service in.
 */
module.exports = {
  forbidden: [
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
      extensions: ['.ts', '.mjs', '.js', '.d.ts'],
    },
  },
};
