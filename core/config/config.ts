import { join } from 'node:path';
import { UserError } from '../errors.js';
import { readRepoFile } from '../fs/repo-file.js';
import { ConfigError } from './errors.js';
import { lazyProperty } from './lazy.js';
import type { KeySpec } from './schemas.js';
import { CORE_TABLE, type KeyTable } from './table.js';

export { ConfigError } from './errors.js';

export type Source = 'env' | 'file' | 'default';

export interface ConfigEntry {
  key: string;
  /** The raw effective string. */
  raw: string;
  /** The parsed value (numbers, booleans) as the key's schema gives it. */
  value: unknown;
  source: Source;
  secret: boolean;
  scope: KeySpec['scope'];
  /** Who declared the key: `core` or a plugin's name. */
  plugin: string;
  /**
   * A limit the repository set above this machine's ceiling: what it asked
   * for; `raw` is then the ceiling's value (the ceiling key is `limit.ceiling`).
   */
  heldFrom?: string;
}

const KEY_RE = /^[A-Z][A-Z0-9_]*$/;

export interface ParsedFile {
  /**
   * Every `KEY=value` line, in file order (a later line wins). Which keys count is the
   * key table's business: only repository keys are ever read from here.
   */
  values: Map<string, string>;
}

/** Reads `KEY=value` lines: no quotes, no expansion, never executed. */
export function parseConfigFile(text: string, path = '.chalk/config'): ParsedFile {
  const values = new Map<string, string>();
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const eq = line.indexOf('=');
    const key = eq < 0 ? trimmed : line.slice(0, eq).trim();
    if (eq < 0 || !KEY_RE.test(key)) {
      throw new ConfigError(
        `${path} line ${i + 1}: expected KEY=value with KEY like CHALK_TEST_CMD (got '${trimmed}')`,
      );
    }
    values.set(key, line.slice(eq + 1));
  });
  return { values };
}

export interface LoadOptions {
  /** Repository root holding `.chalk/config`; null outside a repository. */
  root: string | null;
  env?: NodeJS.ProcessEnv;
  /** Called once per unknown key. */
  warn?: (line: string) => void;
  /**
   * The key table: core's keys and those of the plugins known so far (default: core's
   * alone). The kernel widens it with every plugin's keys once they load (`withKeys`).
   */
  keys?: KeyTable;
}

/** Where the values came from, kept so the same sources can be read against a wider key table. */
interface Sources {
  env: NodeJS.ProcessEnv;
  file: ParsedFile;
  warn: (line: string) => void;
}

/** The effective, validated configuration of one repository. */
export class Config {
  constructor(
    readonly entries: ReadonlyMap<string, ConfigEntry>,
    readonly root: string | null,
    private readonly sources: Sources = { env: {}, file: { values: new Map() }, warn: () => {} },
    /** The key table these entries were read against. */
    readonly table: KeyTable = CORE_TABLE,
  ) {}

  /**
   * The same environment and file read against another key table: the kernel's, once the
   * plugins named in CHALK_PLUGINS have loaded and their keys are known. Validates every key
   * (a plugin key's bad value is a ConfigError, one line) and then warns about the file's
   * keys that no one declared.
   */
  withKeys(table: KeyTable): Config {
    return resolveConfig({ table, root: this.root, sources: this.sources, final: true });
  }

  /** The raw effective string of a key. */
  str(key: string): string {
    return this.entry(key).raw;
  }

  num(key: string): number {
    const v = this.entry(key).value;
    if (typeof v !== 'number') throw new Error(`config key ${key} is not numeric`);
    return v;
  }

  bool(key: string): boolean {
    const v = this.entry(key).value;
    if (typeof v !== 'boolean') throw new Error(`config key ${key} is not a boolean`);
    return v;
  }

  /** A comma-separated key as a list, blanks dropped. */
  list(key: string): string[] {
    return this.str(key)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  entry(key: string): ConfigEntry {
    const e = this.entries.get(key);
    if (!e) throw new Error(`no such config key: ${key}`);
    return e;
  }

  /** The key's spec in this configuration's table. */
  spec(key: string): KeySpec | undefined {
    return this.table.find((k) => k.name === key);
  }

  /** What `.chalk/config` says for a machine key, which is never used (only the environment sets it); null when nothing. */
  proposed(key: string): string | null {
    const spec = this.spec(key);
    const v = this.sources.file.values.get(key);
    return spec?.scope === 'machine' && v !== undefined && v.trim() !== '' ? v : null;
  }

  /** Entries for display: secrets masked. */
  display(): Array<{ key: string; value: string; source: string; scope: string; plugin: string }> {
    return [...this.entries.values()].map((e) => ({
      key: e.key,
      value: e.secret && e.raw !== '' ? '********' : e.raw,
      // A repository's limit held to the ceiling says so: `file (asked 12000)`.
      source: e.heldFrom !== undefined ? `file (asked ${e.heldFrom})` : e.source,
      scope: e.scope,
      plugin: e.plugin,
    }));
  }
}

const warnedUnknown = new Set<string>();

/** `.chalk/config`, relative to the repository root. */
export const CONFIG_FILE = '.chalk/config';
/** The largest `.chalk/config` read. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

/**
 * The repository's `.chalk/config`, parsed, or null when there is none (or no repository).
 * Read as hostile input (core/fs/repo-file.ts): a symlinked `.chalk` or config, a FIFO or an
 * oversized file is a ConfigError, one line.
 */
export function readConfigFile(root: string | null): ParsedFile | null {
  if (!root) return null;
  let text: string | null;
  try {
    text = readRepoFile(root, CONFIG_FILE, { maxBytes: CONFIG_MAX_BYTES, what: CONFIG_FILE });
  } catch (err) {
    if (err instanceof UserError) throw new ConfigError(err.message);
    throw err;
  }
  return text === null ? null : parseConfigFile(text);
}

/**
 * Environment > file > default; an empty environment value means the default.
 * When CHALK_PLUGINS names plugins, their keys are not known yet: the file's other keys are
 * warned about only when the kernel's table is (`withKeys`).
 */
export function loadConfig(opts: LoadOptions): Config {
  const env = opts.env ?? process.env;
  const warn = opts.warn ?? ((line: string) => process.stderr.write(`warning: ${line}\n`));
  const file = readConfigFile(opts.root) ?? { values: new Map<string, string>() };
  return resolveConfig({ table: opts.keys ?? CORE_TABLE, root: opts.root, sources: { env, file, warn }, final: false });
}

/** The environment's value of a key, or its default (what a machine key is). */
function machineValue(spec: KeySpec | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (!spec) return undefined;
  const v = env[spec.name];
  return v === undefined || v === '' ? spec.default : v;
}

/**
 * A limit the repository's file set above this machine's ceiling is held to
 * the ceiling (when both can be measured here; `auto` is the reader's to hold).
 */
function holdToCeiling(spec: KeySpec, raw: string, table: KeyTable, env: NodeJS.ProcessEnv): string | null {
  if (!spec.limit) return null;
  const ceiling = machineValue(
    table.find((k) => k.name === spec.limit?.ceiling),
    env,
  );
  if (ceiling === undefined) return null;
  const [asked, most] = [spec.limit.measure(raw), spec.limit.measure(ceiling)];
  return asked !== null && most !== null && asked > most ? ceiling : null;
}

/** The key's value parsed by its schema; a value it refuses is a ConfigError naming where it came from. */
function parseValue(spec: KeySpec, raw: string, source: Source): unknown {
  const parsed = spec.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const msg = parsed.error.issues[0]?.message ?? `${spec.name} has an invalid value`;
  throw new ConfigError(
    source === 'default' ? msg : `${msg} [from ${source === 'env' ? 'the environment' : '.chalk/config'}]`,
  );
}

function resolveConfig(o: { table: KeyTable; root: string | null; sources: Sources; final: boolean }): Config {
  const { env, file } = o.sources;
  const entries = new Map<string, ConfigEntry>();
  for (const spec of o.table) {
    const fromEnv = env[spec.name];
    const fromFile = spec.scope === 'repo' ? file.values.get(spec.name) : undefined;
    let raw: string;
    let source: Source;
    let heldFrom: string | undefined;
    if (fromEnv !== undefined) {
      // Set but empty in the environment: the default, never the file.
      raw = fromEnv === '' ? spec.default : fromEnv;
      source = fromEnv === '' ? 'default' : 'env';
    } else if (fromFile !== undefined && fromFile !== '') {
      raw = fromFile;
      source = 'file';
      // A valid value over the ceiling is held to it; an invalid one is refused below as it is.
      const held = spec.schema.safeParse(raw).success ? holdToCeiling(spec, raw, o.table, env) : null;
      if (held !== null) {
        heldFrom = raw;
        raw = held;
      }
    } else {
      raw = spec.default;
      source = 'default';
    }
    // What was set is checked now, whoever asks for it; a default before the command starts
    // only once every plugin's keys are known (`final`), else when it is first read.
    const now = source !== 'default' || o.final;
    const entry: ConfigEntry = {
      key: spec.name,
      raw,
      value: now ? parseValue(spec, raw, source) : undefined,
      source,
      secret: spec.secret === true,
      scope: spec.scope,
      plugin: spec.plugin,
      ...(heldFrom !== undefined ? { heldFrom } : {}),
    };
    if (!now) lazyProperty(entry, 'value', () => parseValue(spec, raw, source));
    entries.set(spec.name, entry);
  }
  const config = new Config(entries, o.root, o.sources, o.table);
  crossCheck(config);
  const pluginsPending = entries.has('CHALK_PLUGINS') && config.list('CHALK_PLUGINS').length > 0;
  if (o.root && (o.final || !pluginsPending)) warnUnknown(o.root, o.table, o.sources);
  return config;
}

/**
 * Warns once per file and key about a `.chalk/config` key that is not a repository key of
 * the table: unknown, or a machine key, which only this machine's environment sets.
 */
function warnUnknown(root: string, table: KeyTable, sources: Sources): void {
  const scopes = new Map(table.map((k) => [k.name, k.scope]));
  const path = join(root, CONFIG_FILE);
  for (const key of sources.file.values.keys()) {
    const scope = scopes.get(key);
    if (scope === 'repo') continue;
    const id = `${path}\0${key}`;
    if (warnedUnknown.has(id)) continue;
    warnedUnknown.add(id);
    sources.warn(
      scope === 'machine'
        ? `ignoring ${key} in .chalk/config: only this machine's environment sets it`
        : `ignoring unknown key in .chalk/config: ${key}`,
    );
  }
}

function crossCheck(config: Config): void {
  if (config.str('CHALK_PERMISSION_MODE') === 'auto' && /haiku/i.test(config.str('CHALK_MODEL'))) {
    throw new ConfigError(
      'auto mode does not support Haiku; choose another CHALK_MODEL or set CHALK_PERMISSION_MODE=bypass',
    );
  }
}

/** For tests: forget which unknown keys were already warned about. */
export function resetConfigWarnings(): void {
  warnedUnknown.clear();
}
