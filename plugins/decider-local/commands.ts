import type { PluginCommand } from '../../core/plugin.js';

const USAGE = 'chalk decider up | down';

/**
 * `chalk decider up | down`, this plugin's commands (declared here, light, so `chalk help`
 * lists them without importing the plugin; each class loads only when its words are given).
 */
export const DECIDER_LOCAL_COMMANDS: readonly PluginCommand[] = [
  {
    path: ['decider', 'up'],
    usage: USAGE,
    group: 'Setup',
    load: async (clipanion) => (await import('./up-command.js')).deciderUpCommand(clipanion),
  },
  {
    path: ['decider', 'down'],
    usage: USAGE,
    group: 'Setup',
    load: async (clipanion) => (await import('./up-command.js')).deciderDownCommand(clipanion),
  },
];
