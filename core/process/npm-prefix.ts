import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { run } from './run.js';

/** One npm package at an exact version. */
export interface NpmPackage {
  name: string;
  version: string;
}

/** The version of `name` installed under the prefix `dir`, or null. */
export function installedVersion(dir: string, name: string): string | null {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : null;
  } catch {
    return null;
  }
}

/**
 * Installs exact versions of npm packages into a private prefix in the state directory (never
 * Chalk's own node_modules), unless every one is already there at its version: how Chalk gets
 * parts it needs only sometimes (the embedding runtime, an older PGlite for `chalk db upgrade`).
 * True when it installed (`before` is called first, with the specs); a failed install is one
 * line naming `what`.
 */
export async function ensureNpmPrefix(
  dir: string,
  packages: readonly NpmPackage[],
  what: string,
  env: NodeJS.ProcessEnv = process.env,
  before: (specs: string) => void = () => {},
): Promise<boolean> {
  if (packages.every((p) => installedVersion(dir, p.name) === p.version)) return false;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const specs = packages.map((p) => `${p.name}@${p.version}`);
  before(specs.join(', '));
  const r = await run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--omit=dev', ...specs], { env });
  if (r.code === 127) throw new UserError(`installing ${what} needs npm, which is not on PATH`);
  if (r.code !== 0) {
    const line = (r.stderr.trim() || r.stdout.trim()).split('\n').find((l) => l.trim() !== '') ?? '';
    throw new UserError(`installing ${what} (${specs.join(', ')}) failed: ${line}`);
  }
  return true;
}
