import { ConfigError } from './errors.js';
import { KEYS } from './keys.js';
import type { KeySpec } from './schemas.js';

/** Core's name for itself as the declarer of its keys. */
export const CORE = 'core';

/** A key as the table holds it: its spec and who declared it (`core` or a plugin's name). */
export interface DeclaredKey extends KeySpec {
  plugin: string;
}

export type KeyTable = readonly DeclaredKey[];

/** One declarer's keys: core's table or a plugin's `configuration`. */
export interface KeyGroup {
  plugin: string;
  keys?: readonly KeySpec[];
}

/**
 * `spec` as `plugin` declared it: its own properties copied as they are, so a schema made on
 * first read (SchemaOf) is not made here, as spreading the spec would.
 */
function declared(spec: KeySpec, plugin: string): DeclaredKey {
  const key = { plugin } as DeclaredKey;
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(spec))) {
    if (!d.enumerable || name === 'plugin') continue;
    Object.defineProperty(
      key,
      name,
      'value' in d ? { ...d, writable: true, configurable: true } : { ...d, configurable: true },
    );
  }
  return key;
}

/**
 * The key table: core's keys, then each plugin's in registration order. A name
 * declared twice (two plugins, or a plugin repeating a core key) is refused with
 * one line naming both declarers, since neither could be trusted to win.
 */
export function keyTable(groups: readonly KeyGroup[]): KeyTable {
  const byName = new Map<string, DeclaredKey>();
  for (const group of groups) {
    for (const spec of group.keys ?? []) {
      const earlier = byName.get(spec.name);
      if (earlier) {
        const who = (p: string) => (p === CORE ? 'core' : `plugin ${p}`);
        throw new ConfigError(
          `configuration key ${spec.name} is declared twice, by ${who(earlier.plugin)} and by ${who(group.plugin)}; remove one of the plugins from CHALK_PLUGINS`,
        );
      }
      byName.set(spec.name, declared(spec, group.plugin));
    }
  }
  return [...byName.values()];
}

/** Core's keys alone (what a test or tool gets without naming any plugin). */
export const CORE_TABLE: KeyTable = keyTable([{ plugin: CORE, keys: KEYS }]);

/** The table of core's keys and the given plugins' (`{ name, configuration }`), in their order. */
export function pluginKeyTable(plugins: ReadonlyArray<{ name: string; configuration?: readonly KeySpec[] }>): KeyTable {
  return keyTable([{ plugin: CORE, keys: KEYS }, ...plugins.map((p) => ({ plugin: p.name, keys: p.configuration }))]);
}
