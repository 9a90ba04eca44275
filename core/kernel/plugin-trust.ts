import { createHash, type Hash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.js';
import { readJsonRecord, writeJsonRecord } from '../fs/json-record.js';
import { stateDir } from '../layout.js';
import type { ResolvedPlugin } from './plugin-loader.js';

/**
 * Plugin trust, the way direnv and mise do it: a plugin named in a
 * repository's `.chalk/config` (a file anybody, the agent included, can
 * commit) is imported only after someone on this machine acknowledged it with
 * `chalk plugins trust`. The acknowledgement is keyed by the plugin's real
 * path and a sha256 of its content, so a changed plugin needs a new one.
 * Plugins named in the environment need none: whoever sets the environment
 * already runs code on this machine.
 *
 * The record is `<state>/plugins/trusted.json`, mode 0600, written atomically.
 */

/** A package directory over this many files is refused, not hashed. */
export const PLUGIN_MAX_FILES = 5000;
/** A plugin (file or package) over this many bytes is refused, not hashed. */
export const PLUGIN_MAX_BYTES = 50 * 1024 * 1024;

/** Directories a package's hash leaves out, at any depth: its dependencies and its history. */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

export class PluginTrustError extends UserError {
  override name = 'PluginTrustError';
}

export function pluginTrustFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'plugins', 'trusted.json');
}

// --- hashing -------------------------------------------------------------------------

const CHUNK = 64 * 1024;

interface HashFileOptions {
  /** For a package's file: its relative path, hashed as `path NUL size NUL` before the bytes. */
  label: string | null;
  /** Bytes left under PLUGIN_MAX_BYTES. */
  budget: number;
  spec: string;
}

/** Feeds one regular file into the hash without following a link; returns the bytes read. */
function hashFile(hash: Hash, path: string, opts: HashFileOptions): number {
  const { spec, budget } = opts;
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO swapped in after the walk must not hang the open.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw new PluginTrustError(`plugin '${spec}': cannot read ${path} (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw new PluginTrustError(`plugin '${spec}': ${path} is not a regular file; it cannot be trusted`);
    if (st.size > budget) throw tooBig(spec);
    if (opts.label !== null) hash.update(`${opts.label}\0${st.size}\0`);
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, st.size + 1));
    let total = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return total;
      total += n;
      if (total > budget) throw tooBig(spec);
      hash.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}

const tooBig = (spec: string) =>
  new PluginTrustError(
    `plugin '${spec}' is over ${PLUGIN_MAX_BYTES / (1024 * 1024)} MiB; Chalk will not hash or trust it (publish a smaller package)`,
  );

/** Every regular file under `dir`, relative, '/'-separated, sorted by code unit; links and specials refused. */
function packageFiles(dir: string, spec: string): string[] {
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const d of readdirSync(rel === '' ? dir : join(dir, rel), { withFileTypes: true })) {
      const path = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) {
        if (!SKIPPED_DIRS.has(d.name)) walk(path);
      } else if (d.isFile()) {
        files.push(path);
        if (files.length > PLUGIN_MAX_FILES) {
          throw new PluginTrustError(
            `plugin '${spec}' has over ${PLUGIN_MAX_FILES} files outside node_modules/; Chalk will not hash or trust it`,
          );
        }
      } else {
        const what = d.isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
        throw new PluginTrustError(
          `plugin '${spec}': ${path} in ${dir} is ${what}; a package Chalk trusts holds regular files only`,
        );
      }
    }
  };
  walk('');
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The plugin's content hash, `sha256:<hex>`: for a file, the sha256 of its bytes (what
 * `sha256sum` prints); for a package directory, of every regular file outside node_modules/
 * and .git/, in sorted order, each as `path NUL size NUL bytes`.
 */
export function pluginHash(plugin: Pick<ResolvedPlugin, 'spec' | 'trustPath'>): string {
  const { spec, trustPath } = plugin;
  const hash = createHash('sha256');
  if (!lstatSync(trustPath).isDirectory()) {
    hashFile(hash, trustPath, { label: null, budget: PLUGIN_MAX_BYTES, spec });
    return `sha256:${hash.digest('hex')}`;
  }
  let budget = PLUGIN_MAX_BYTES;
  for (const rel of packageFiles(trustPath, spec)) {
    budget -= hashFile(hash, join(trustPath, rel), { label: rel, budget, spec });
  }
  return `sha256:${hash.digest('hex')}`;
}

// --- the record ----------------------------------------------------------------------

const entrySchema = z.object({
  path: z.string().min(1),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  spec: z.string(),
  trustedAt: z.string(),
});
const recordSchema = z.object({ version: z.literal(1), plugins: z.array(entrySchema) });

export type TrustEntry = z.infer<typeof entrySchema>;

/** What a trust record holds and the command that writes it, for its lines. */
export interface TrustRecordUse {
  what: string;
  command: string;
}
const PLUGINS: TrustRecordUse = { what: 'plugin', command: 'chalk plugins trust' };

export function readPluginTrust(env: NodeJS.ProcessEnv = process.env): TrustEntry[] {
  return readTrustRecord(pluginTrustFile(env), PLUGINS);
}

/**
 * A trust record at `file` (the plugins' here; the sandbox image's dev container has its own):
 * its entries, [] when there is none. A damaged record's line says what it is and what to run.
 */
export function readTrustRecord(file: string, how: TrustRecordUse): TrustEntry[] {
  const damaged = (f: string) =>
    new PluginTrustError(`${f} is not a ${how.what} trust record; delete it and run ${how.command} again`);
  return readJsonRecord(file, recordSchema, { version: 1, plugins: [] }, damaged).plugins;
}

/** Replaces the record: a temporary file (0600, in the same directory) renamed over it. */
function writeTrustRecord(file: string, entries: TrustEntry[]): void {
  writeJsonRecord(file, { version: 1, plugins: entries });
}

export type TrustState = 'trusted' | 'changed' | 'untrusted';

/** Whether this exact content at this real path was acknowledged on this machine. */
export function trustState(
  plugin: { trustPath: string; hash: string },
  entries: readonly TrustEntry[] = readPluginTrust(),
): TrustState {
  const entry = entries.find((e) => e.path === plugin.trustPath);
  if (!entry) return 'untrusted';
  return entry.hash === plugin.hash ? 'trusted' : 'changed';
}

/** Records the acknowledgement (one per real path: the newest hash wins); false when it was already there. */
export function trustPlugin(
  plugin: { spec: string; trustPath: string; hash: string },
  opts: { env?: NodeJS.ProcessEnv; now?: Date } = {},
): boolean {
  return addTrust(pluginTrustFile(opts.env ?? process.env), plugin, { ...PLUGINS, now: opts.now });
}

/** Adds one acknowledgement to the record at `file`; false when this content was already trusted there. */
export function addTrust(
  file: string,
  subject: { spec: string; trustPath: string; hash: string },
  opts: TrustRecordUse & { now?: Date },
): boolean {
  const entries = readTrustRecord(file, opts);
  if (trustState(subject, entries) === 'trusted') return false;
  const entry: TrustEntry = {
    path: subject.trustPath,
    hash: subject.hash,
    spec: subject.spec,
    trustedAt: (opts.now ?? new Date()).toISOString(),
  };
  writeTrustRecord(file, [...entries.filter((e) => e.path !== subject.trustPath), entry]);
  return true;
}

/** Takes the acknowledgement of a real path back; false when there was none. */
export function untrustPlugin(trustPath: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return removeTrust(pluginTrustFile(env), trustPath, PLUGINS);
}

/** Removes the acknowledgement of `trustPath` from the record at `file`; false when there was none. */
export function removeTrust(file: string, trustPath: string, how: TrustRecordUse): boolean {
  const entries = readTrustRecord(file, how);
  const kept = entries.filter((e) => e.path !== trustPath);
  if (kept.length === entries.length) return false;
  writeTrustRecord(file, kept);
  return true;
}

/** The one line a command stops with when a plugin named in .chalk/config is not acknowledged. */
export function untrustedMessage(spec: string, state: Exclude<TrustState, 'trusted'>): string {
  const what = state === 'changed' ? 'changed since it was trusted on this machine' : 'is not trusted on this machine';
  return `plugin '${spec}' named in .chalk/config ${what}; review it, then run: chalk plugins trust`;
}

/**
 * Refuses, before anything is imported, a plugin named in .chalk/config whose real path
 * and content were not acknowledged on this machine.
 */
export function assertPluginTrusted(plugin: ResolvedPlugin, entries: readonly TrustEntry[]): void {
  const state = trustState({ trustPath: plugin.trustPath, hash: pluginHash(plugin) }, entries);
  if (state !== 'trusted') throw new PluginTrustError(untrustedMessage(plugin.spec, state));
}
