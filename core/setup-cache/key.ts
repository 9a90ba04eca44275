import { createHash } from 'node:crypto';
import type { TreeEntry } from '../ports/host-git.js';

/**
 * What a saved setup state is keyed by (pure). A setup command installs what the
 * repository's manifests and lockfiles say, so the key is the repository itself (its main
 * checkout's real path: another repository, even one with the same name and the same
 * lockfiles, never shares a state), the image's id, the command, the directories kept,
 * and the id git gives each of those files in the committed tree (a hash of its content,
 * read by host git from the tree: the host never reads the file, which may be a symlink
 * or huge).
 */

/** Manifests and lockfiles by name, at any depth of the tree. */
const SETUP_INPUTS: ReadonlySet<string> = new Set([
  // JavaScript
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'yarn.lock',
  '.yarnrc.yml',
  'bun.lock',
  'bun.lockb',
  '.npmrc',
  '.nvmrc',
  // Python
  'pyproject.toml',
  'poetry.lock',
  'uv.lock',
  'pdm.lock',
  'Pipfile',
  'Pipfile.lock',
  'setup.py',
  'setup.cfg',
  'tox.ini',
  '.python-version',
  // Go, Rust
  'go.mod',
  'go.sum',
  'go.work',
  'go.work.sum',
  'Cargo.toml',
  'Cargo.lock',
  'rust-toolchain',
  'rust-toolchain.toml',
  // Ruby, PHP, Elixir, Dart, Swift
  'Gemfile',
  'Gemfile.lock',
  '.ruby-version',
  'composer.json',
  'composer.lock',
  'mix.exs',
  'mix.lock',
  'pubspec.yaml',
  'pubspec.lock',
  'Package.swift',
  'Package.resolved',
  // JVM, .NET
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'gradle.lockfile',
  'packages.lock.json',
  'global.json',
  'Directory.Packages.props',
  // Any stack
  '.tool-versions',
]);

/** Names that vary: `requirements-dev.txt`, `constraints.txt`, `app.csproj`. */
const SETUP_INPUT_PATTERNS = [/^requirements.*\.(txt|in)$/, /^constraints.*\.txt$/, /\.(csproj|fsproj)$/];

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** The tree's manifests and lockfiles, by path. */
export function setupInputs(entries: readonly TreeEntry[]): TreeEntry[] {
  return entries
    .filter((e) => {
      const name = baseName(e.path);
      return SETUP_INPUTS.has(name) || SETUP_INPUT_PATTERNS.some((p) => p.test(name));
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export interface SetupKeyParts {
  /** The main checkout's real path. */
  repoRoot: string;
  imageId: string;
  command: string;
  dirs: readonly string[];
  /** `setupInputs` of the tree the sandbox was cloned at. */
  inputs: readonly TreeEntry[];
}

/** The key: a sha256 of every part, in a fixed order. */
export function setupKey(p: SetupKeyParts): string {
  const canonical = JSON.stringify([
    'chalk-setup-state-1',
    p.repoRoot,
    p.imageId,
    p.command,
    [...p.dirs],
    p.inputs.map((e) => [e.path, e.mode, e.oid]),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * Whether a sandbox's state after setup may be saved for others: only when its tree is a
 * base branch commit's but for ticket specs (`changed`: the paths between the fork point
 * and the clone's HEAD). A branch with the agent's commits (a resumed run, office hours,
 * a review) may be restored into, never saved from, so no agent's work reaches the state
 * another sandbox starts from.
 */
export function maySaveFrom(changed: readonly string[] | null, specDir: string): boolean {
  return changed?.every((p) => p.startsWith(specDir)) === true;
}
