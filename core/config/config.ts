import { join } from 'node:path';
import { UserError } from '../errors.js';
import { readRepoFile } from '../fs/repo-file.js';
import { KEY_BY_NAME, KEYS, type KeySpec } from './keys.js';

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
}

/** Thrown for a bad value or a malformed config line: its message is the one line shown to the user. */
export class ConfigError extends UserError {
  override name = 'ConfigError';
}

const KEY_RE = /^[A-Z][A-Z0-9_]*$/;

export interface ParsedFile {
  values: Map<string, string>;
  /** Keys in the file that are not repository keys, in file order, each once. */
  unknown: string[];
}

/** Reads `KEY=value` lines: no quotes, no expansion, never executed. */
export function parseConfigFile(text: string, path = '.chalk/config'): ParsedFile {
  const values = new Map<string, string>();
  const unknown: string[] = [];
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
    const spec = KEY_BY_NAME.get(key);
    if (spec?.scope !== 'repo') {
      if (!unknown.includes(key)) unknown.push(key);
      return;
    }
    values.set(key, line.slice(eq + 1));
  });
  return { values, unknown };
}

export interface LoadOptions {
  /** Repository root holding `.chalk/config`; null outside a repository. */
  root: string | null;
  env?: NodeJS.ProcessEnv;
  /** Called once per unknown key. */
  warn?: (line: string) => void;
}

/** The effective, validated configuration of one repository. */
export class Config {
  constructor(
    readonly entries: ReadonlyMap<string, ConfigEntry>,
    readonly root: string | null,
  ) {}

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

  /** Entries for display: secrets masked. */
  display(): Array<{ key: string; value: string; source: Source; scope: string }> {
    return [...this.entries.values()].map((e) => ({
      key: e.key,
      value: e.secret && e.raw !== '' ? '********' : e.raw,
      source: e.source,
      scope: e.scope,
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

/** Environment > file > default; an empty environment value means the default. */
export function loadConfig(opts: LoadOptions): Config {
  const env = opts.env ?? process.env;
  const warn = opts.warn ?? ((line: string) => process.stderr.write(`warning: ${line}\n`));
  const file = readConfigFile(opts.root) ?? { values: new Map(), unknown: [] };
  if (opts.root) {
    const path = join(opts.root, CONFIG_FILE);
    for (const key of file.unknown) {
      const id = `${path}\0${key}`;
      if (warnedUnknown.has(id)) continue;
      warnedUnknown.add(id);
      warn(`ignoring unknown key in .chalk/config: ${key}`);
    }
  }
  const entries = new Map<string, ConfigEntry>();
  for (const spec of KEYS) {
    const fromEnv = env[spec.name];
    let raw: string;
    let source: Source;
    if (fromEnv !== undefined) {
      // Set but empty in the environment: the default, never the file.
      raw = fromEnv === '' ? spec.default : fromEnv;
      source = fromEnv === '' ? 'default' : 'env';
    } else if (file.values.has(spec.name) && file.values.get(spec.name) !== '') {
      raw = file.values.get(spec.name) as string;
      source = 'file';
    } else {
      raw = spec.default;
      source = 'default';
    }
    const parsed = spec.schema.safeParse(raw);
    if (!parsed.success) {
      const msg = parsed.error.issues[0]?.message ?? `${spec.name} has an invalid value`;
      throw new ConfigError(
        source === 'default' ? msg : `${msg} [from ${source === 'env' ? 'the environment' : '.chalk/config'}]`,
      );
    }
    entries.set(spec.name, {
      key: spec.name,
      raw,
      value: parsed.data,
      source,
      secret: spec.secret === true,
      scope: spec.scope,
    });
  }
  const config = new Config(entries, opts.root);
  crossCheck(config);
  return config;
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
