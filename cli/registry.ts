import type { CommandClass } from 'clipanion';

export type Group = 'Setup' | 'Work' | 'Failure lifecycle';

/**
 * Every command, with the words that select it and a lazy loader, so a
 * command's module (and its dependencies) is imported only when it runs.
 */
export interface CommandEntry {
  /** The words that select the command, e.g. ['db', 'up']. */
  path: string[];
  group: Group;
  /** The usage line shown by `chalk help`. */
  usage: string;
  load: () => Promise<CommandClass>;
}

const entry = (
  path: string[],
  group: Group,
  usage: string,
  load: () => Promise<{ default: CommandClass }>,
): CommandEntry => ({
  path,
  group,
  usage,
  load: async () => (await load()).default,
});

export const COMMANDS: CommandEntry[] = [
  entry(['config'], 'Setup', 'chalk config [--json]', () => import('./config.js')),
];

/** The entry whose path is the longest prefix of the arguments. */
export function findCommand(args: string[]): CommandEntry | undefined {
  let best: CommandEntry | undefined;
  for (const c of COMMANDS) {
    if (c.path.every((w, i) => args[i] === w) && (!best || c.path.length > best.path.length)) best = c;
  }
  return best;
}

export function usageText(version: string): string {
  const groups: Group[] = ['Setup', 'Work', 'Failure lifecycle'];
  const lines = [`chalk ${version}: runs Claude Code agents unattended on tickets`, ''];
  for (const g of groups) {
    const usages = [...new Set(COMMANDS.filter((c) => c.group === g).map((c) => c.usage))];
    if (usages.length === 0) continue;
    lines.push(g);
    for (const u of usages) lines.push(`  ${u}`);
  }
  lines.push('', 'chalk help | chalk version');
  return `${lines.join('\n')}\n`;
}
