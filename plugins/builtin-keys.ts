import type { KeySpec } from '../core/keys.js';
import { DECIDER_HTTP_KEYS } from './decider-http/keys.js';
import { SANDBOX_PLUGIN_KEYS } from './sandbox-docker/keys.js';

/**
 * Every built-in plugin's name and configuration keys, in registration order: all that reading
 * the configuration needs. Nothing here imports a plugin, a command or a loader, so a command
 * that reads its configuration through this list alone (`chalk status`, served from the bundle
 * cli/light.ts is built into) has no path to any plugin's code. plugins/builtin.ts adds each
 * plugin's commands and loader to these.
 */
export const BUILTIN_KEYS = [
  { name: 'store' },
  { name: 'lesson-memory' },
  { name: 'core-forge' },
  { name: 'forge-github' },
  { name: 'forge-gitlab' },
  { name: 'core-decider' },
  { name: 'decider-http', configuration: DECIDER_HTTP_KEYS },
  { name: 'decider-local' },
  { name: 'embed-local' },
  { name: 'sandbox-docker', configuration: SANDBOX_PLUGIN_KEYS },
  { name: 'core-agent' },
  { name: 'core-fleet' },
] as const satisfies readonly { name: string; configuration?: readonly KeySpec[] }[];

/** A built-in plugin's name. */
export type BuiltinName = (typeof BUILTIN_KEYS)[number]['name'];
