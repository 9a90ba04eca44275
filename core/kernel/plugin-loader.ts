import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { UserError } from '../errors.js';
import type { Plugin } from './kernel.js';

export class PluginLoadError extends UserError {
  override name = 'PluginLoadError';
}

const pluginShape = z.object({
  name: z.string().min(1),
  register: z.custom<Plugin['register']>((v) => typeof v === 'function', 'register must be a function'),
});

const why = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0] : String(err));

/** Resolves a CHALK_PLUGINS entry: a path (relative to the repository) or an npm package name. */
export function resolvePluginSpecifier(spec: string, root: string): string {
  if (spec.startsWith('.') || isAbsolute(spec)) {
    const p = resolve(root, spec);
    if (!existsSync(p)) throw new PluginLoadError(`plugin '${spec}' failed to load: ${p} does not exist`);
    // A directory is a package: let Node read its package.json "exports"/"main".
    const req = createRequire(join(root, 'noop.js'));
    try {
      return pathToFileURL(req.resolve(p)).href;
    } catch (err) {
      throw new PluginLoadError(`plugin '${spec}' failed to load: ${why(err)}`);
    }
  }
  for (const base of [root, import.meta.dirname]) {
    try {
      return pathToFileURL(createRequire(join(base, 'noop.js')).resolve(spec)).href;
    } catch {
      // try the next base
    }
  }
  throw new PluginLoadError(
    `plugin '${spec}' failed to load: package not found; install it in the repository (npm install ${spec}) or give a path`,
  );
}

/** Imports one plugin module; its default export (or `plugin` export) must be `{ name, register }`. */
export async function loadPlugin(spec: string, root: string): Promise<Plugin> {
  const url = resolvePluginSpecifier(spec, root);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    throw new PluginLoadError(`plugin '${spec}' failed to load: ${why(err)}`);
  }
  const candidate = mod.default ?? mod.plugin;
  const parsed = pluginShape.safeParse(candidate);
  if (!parsed.success) {
    throw new PluginLoadError(
      `plugin '${spec}' failed to load: it must export default { name, register(kernel) } (${parsed.error.issues[0]?.message ?? 'bad shape'})`,
    );
  }
  return candidate as Plugin;
}
