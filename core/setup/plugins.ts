import { resolve } from 'node:path';
import { type Config, readConfigFile } from '../config/config.js';
import { UserError } from '../errors.js';
import { type ResolvedPlugin, resolvePlugin } from '../kernel/plugin-loader.js';
import {
  pluginHash,
  readPluginTrust,
  type TrustState,
  trustPlugin,
  trustState,
  untrustPlugin,
} from '../kernel/plugin-trust.js';

/**
 * `chalk plugins list | trust | untrust`: what the commands call. Nothing
 * here imports a plugin; plugins are resolved (package.json files read) and
 * hashed only.
 */

const specs = (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The plugins the repository's .chalk/config names, whatever the environment says. */
export function fileNamedPlugins(root: string | null): string[] {
  if (!root) throw new UserError('not in a git repository: run this where .chalk/config names the plugins');
  return specs(readConfigFile(root)?.values.get('CHALK_PLUGINS') ?? '');
}

export interface PluginRow {
  spec: string;
  /** Where CHALK_PLUGINS came from. */
  source: 'env' | 'file';
  /** The real path trust is keyed by; null when the plugin cannot be found. */
  path: string | null;
  hash: string | null;
  /** `not-needed` for a plugin named in the environment; `error` when it cannot be found or hashed. */
  status: TrustState | 'not-needed' | 'error';
  /** Why, for `error`. */
  detail?: string;
}

/** Each plugin the effective CHALK_PLUGINS names, with its trust on this machine. */
export function listPlugins(config: Config, opts: { root: string; env?: NodeJS.ProcessEnv }): PluginRow[] {
  const source = config.entry('CHALK_PLUGINS').source === 'env' ? 'env' : 'file';
  const entries = readPluginTrust(opts.env);
  return config.list('CHALK_PLUGINS').map((spec): PluginRow => {
    try {
      const plugin = resolvePlugin(spec, opts.root);
      const hash = pluginHash(plugin);
      const status = source === 'env' ? 'not-needed' : trustState({ trustPath: plugin.trustPath, hash }, entries);
      return { spec, source, path: plugin.trustPath, hash, status };
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      return { spec, source, path: null, hash: null, status: 'error', detail: err.message };
    }
  });
}

export interface TrustedPlugin {
  spec: string;
  path: string;
  hash: string;
  /** False when this content at this path was already trusted. */
  added: boolean;
}

/**
 * Trusts every plugin .chalk/config names. Every one is resolved and hashed first, so a plugin
 * that cannot be found or hashed stops the command before anything is recorded.
 */
export function trustFilePlugins(root: string | null, env: NodeJS.ProcessEnv = process.env): TrustedPlugin[] {
  const checked = fileNamedPlugins(root).map((spec) => {
    const plugin = resolvePlugin(spec, root as string);
    return { spec, trustPath: plugin.trustPath, hash: pluginHash(plugin) };
  });
  return checked.map((p) => ({ spec: p.spec, path: p.trustPath, hash: p.hash, added: trustPlugin(p, { env }) }));
}

export interface UntrustedPlugin {
  spec: string;
  path: string;
  /** False when it was not trusted. */
  removed: boolean;
}

/** The real path a spec is trusted under; a plugin that is gone is looked up by its plain path. */
function trustPathOf(spec: string, root: string): string {
  let plugin: ResolvedPlugin;
  try {
    plugin = resolvePlugin(spec, root);
  } catch (err) {
    if (err instanceof UserError && (spec.startsWith('.') || spec.startsWith('/'))) return resolve(root, spec);
    throw err;
  }
  return plugin.trustPath;
}

/** Takes back the trust of one plugin, or of every plugin .chalk/config names. */
export function untrustPlugins(
  root: string | null,
  opts: { spec?: string; env?: NodeJS.ProcessEnv } = {},
): UntrustedPlugin[] {
  const env = opts.env ?? process.env;
  const list = opts.spec !== undefined ? [opts.spec] : fileNamedPlugins(root);
  if (!root && opts.spec !== undefined && !opts.spec.startsWith('/')) {
    throw new UserError('not in a git repository: give the absolute path of the plugin to untrust');
  }
  const base = root ?? '/';
  return list.map((spec) => {
    const path = trustPathOf(spec, base);
    return { spec, path, removed: untrustPlugin(path, env) };
  });
}
