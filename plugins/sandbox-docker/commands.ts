import type { PluginCommand } from '../../core/plugin.js';

/** The usage line every `chalk sandbox` command shares (the trust commands are core's). */
export const SANDBOX_USAGE = 'chalk sandbox [build [--force] | trust | untrust]';

/** The usage line of `chalk egress` and its trust commands. */
export const EGRESS_USAGE = 'chalk egress [--json] | trust | untrust';

const egress = () => import('./egress-command.js');

/** `chalk sandbox build` and `chalk egress`, this plugin's commands (declared light; a class loads when run). */
export const SANDBOX_COMMANDS: readonly PluginCommand[] = [
  {
    path: ['sandbox', 'build'],
    usage: SANDBOX_USAGE,
    group: 'Setup',
    load: async (clipanion) => (await import('./build-command.js')).sandboxBuildCommand(clipanion),
  },
  { path: ['egress'], usage: EGRESS_USAGE, group: 'Setup', load: async (c) => (await egress()).egressShowCommand(c) },
  {
    path: ['egress', 'trust'],
    usage: EGRESS_USAGE,
    group: 'Setup',
    load: async (c) => (await egress()).egressTrustCommand(c),
  },
  {
    path: ['egress', 'untrust'],
    usage: EGRESS_USAGE,
    group: 'Setup',
    load: async (c) => (await egress()).egressUntrustCommand(c),
  },
];
