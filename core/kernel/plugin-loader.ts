import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { UserError } from '../errors.js';
import type { Plugin } from './kernel.js';

export class PluginLoadError extends UserError {
  override name = 'PluginLoadError';
}

const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', `${what} must be a function`);

/** A configuration key as a plugin declares it (core/config/schemas.ts KeySpec). */
const keyShape = z.object({
  name: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'a configuration key name must be like ACME_REGION'),
  scope: z.enum(['repo', 'machine'], { error: "a configuration key's scope must be 'repo' or 'machine'" }),
  default: z.string({ error: "a configuration key's default must be a string" }),
  help: z.string({ error: 'a configuration key needs a help line' }),
  schema: z.custom<z.ZodType<unknown>>(
    (v) => typeof (v as { safeParse?: unknown } | null)?.safeParse === 'function',
    "a configuration key's schema must be a zod schema",
  ),
  secret: z.boolean().optional(),
  inTemplate: z.boolean().optional(),
});

/** A command as a plugin declares it (core/kernel/kernel.ts PluginCommand). */
const commandShape = z.object({
  path: z
    .array(z.string().regex(/^[a-z][a-z0-9-]*$/, 'a command word must be like sync or acme-report'))
    .min(1, 'a command needs at least one word'),
  usage: z.string({ error: 'a command needs a usage line' }),
  group: z.string().optional(),
  load: fn("a command's load"),
});

const pluginShape = z.object({
  name: z.string().min(1),
  configuration: z.array(keyShape).optional(),
  commands: z.array(commandShape).optional(),
  register: fn('register'),
});

const why = (err: unknown) => (err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err));

/**
 * A CHALK_PLUGINS entry found on disk but not imported: what `import()` gets
 * and what trust is keyed by (core/kernel/plugin-trust.ts). Resolving reads
 * package.json files only; it never runs the plugin's code.
 */
export interface ResolvedPlugin {
  /** The entry as written in CHALK_PLUGINS. */
  spec: string;
  /** The entry module's file URL. */
  url: string;
  /** The entry module's real path. */
  entry: string;
  /** 'file' for a path to a module, 'package' for a package directory or an npm package name. */
  kind: 'file' | 'package';
  /** The real path that is hashed and trusted: the module itself, or the package's root directory. */
  trustPath: string;
}

const failed = (spec: string, reason: string) => new PluginLoadError(`plugin '${spec}' failed to load: ${reason}`);

const inside = (dir: string, file: string) => file.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);

/** The package name in a specifier: `@scope/name` or `name`, without a subpath. */
function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec);
}

/** The directory of the package that holds `entry`: the nearest package.json named `name`, else the nearest one. */
function packageRootOf(entry: string, name: string): string {
  let nearest: string | null = null;
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      nearest ??= dir;
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === name) return dir;
      } catch {
        // not a manifest we can read: keep looking
      }
    }
    if (dirname(dir) === dir) return nearest ?? dirname(entry);
  }
}

/** Finds a CHALK_PLUGINS entry: a path (relative to the repository) or an npm package name. */
export function resolvePlugin(spec: string, root: string): ResolvedPlugin {
  if (spec.startsWith('.') || isAbsolute(spec)) {
    const p = resolve(root, spec);
    if (!existsSync(p)) throw failed(spec, `${p} does not exist`);
    const real = realpathSync(p);
    // A directory is a package: let Node read its package.json "exports"/"main".
    let entry: string;
    try {
      entry = realpathSync(createRequire(join(root, 'noop.js')).resolve(p));
    } catch (err) {
      throw failed(spec, why(err));
    }
    if (!statSync(real).isDirectory())
      return { spec, url: pathToFileURL(entry).href, entry, kind: 'file', trustPath: entry };
    if (!inside(real, entry)) throw failed(spec, `its entry point ${entry} is outside the package ${real}`);
    return { spec, url: pathToFileURL(entry).href, entry, kind: 'package', trustPath: real };
  }
  for (const base of [root, import.meta.dirname]) {
    let entry: string;
    try {
      entry = realpathSync(createRequire(join(base, 'noop.js')).resolve(spec));
    } catch {
      continue; // try the next base
    }
    return {
      spec,
      url: pathToFileURL(entry).href,
      entry,
      kind: 'package',
      trustPath: packageRootOf(entry, packageName(spec)),
    };
  }
  throw failed(spec, `package not found; install it in the repository (npm install ${spec}) or give a path`);
}

/** Resolves a CHALK_PLUGINS entry to the file URL `import()` is given. */
export function resolvePluginSpecifier(spec: string, root: string): string {
  return resolvePlugin(spec, root).url;
}

/**
 * Imports a resolved plugin; its default export (or `plugin` export) must be
 * `{ name, configuration?, commands?, register }`.
 */
export async function importPlugin(resolved: ResolvedPlugin): Promise<Plugin> {
  const { spec } = resolved;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(resolved.url)) as Record<string, unknown>;
  } catch (err) {
    throw failed(spec, why(err));
  }
  const candidate = mod.default ?? mod.plugin;
  const parsed = pluginShape.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw failed(
      spec,
      `it must export default { name, configuration?, commands?, register(kernel) } (${issue?.message ?? 'bad shape'}${where})`,
    );
  }
  return candidate as Plugin;
}

/** Resolves and imports one plugin (no trust check: bootKernel does that for plugins named in .chalk/config). */
export async function loadPlugin(spec: string, root: string): Promise<Plugin> {
  return importPlugin(resolvePlugin(spec, root));
}
