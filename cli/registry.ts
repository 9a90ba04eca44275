import type { CommandClass } from 'clipanion';
import { UserError } from '../core/errors.js';
import type { Plugin } from '../core/kernel/kernel.js';
import { BUILTINS } from '../plugins/builtin.js';
import { LIGHT_COMMANDS } from './light-words.cjs';

/** The built-in groups; a plugin's commands go under their own group ('Plugins' unless they say). */
export type Group = 'Setup' | 'Work' | 'Failure lifecycle' | (string & {});
const GROUPS: readonly Group[] = ['Setup', 'Work', 'Failure lifecycle'];

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
  /** The plugin that added the command; absent for a built-in one. */
  plugin?: string;
  /** A built-in plugin's command: run with the plugin command context, listed as Chalk's own. */
  builtinPlugin?: string;
}

/** A command loaded from a module's default export, or from the named export `name`. */
const entry = (
  path: string[],
  group: Group,
  usage: string,
  load: () => Promise<Record<string, unknown>>,
  name = 'default',
): CommandEntry => ({
  path,
  group,
  usage,
  load: async () => (await load())[name] as CommandClass,
});

const DB_USAGE =
  'chalk db up | down | status [--json] | url | psql | upgrade [--cleanup] | copy [--to-env NAME | --to URL]';
const LESSONS_USAGE = 'chalk lessons [--json] [--all] | show ID | scope ID general|repo|none | forget ID';

const SANDBOX_USAGE = 'chalk sandbox [build [--force] | trust | untrust]';

const CORE_COMMANDS: CommandEntry[] = [
  entry(['doctor'], 'Setup', 'chalk doctor [--json]', () => import('./doctor.js')),
  entry(['init'], 'Setup', 'chalk init', () => import('./init.js')),
  entry(['config'], 'Setup', 'chalk config [--json]', () => import('./config.js')),
  entry(['prompts'], 'Setup', 'chalk prompts [list | eject NAME]', () => import('./prompts.js'), 'PromptsListCommand'),
  entry(
    ['prompts', 'eject'],
    'Setup',
    'chalk prompts [list | eject NAME]',
    () => import('./prompts.js'),
    'PromptsEjectCommand',
  ),
  entry(['new'], 'Work', 'chalk new TICKET [title]', () => import('./new.js')),
  entry(['db', 'up'], 'Setup', DB_USAGE, () => import('./db-up.js')),
  entry(['db', 'down'], 'Setup', DB_USAGE, () => import('./db-down.js')),
  entry(['db', 'status'], 'Setup', DB_USAGE, () => import('./db-status.js')),
  entry(['db', 'url'], 'Setup', DB_USAGE, () => import('./db-url.js')),
  entry(['db', 'psql'], 'Setup', DB_USAGE, () => import('./db-psql.js')),
  entry(['db', 'upgrade'], 'Setup', DB_USAGE, () => import('./db-upgrade.js')),
  entry(['db', 'copy'], 'Setup', DB_USAGE, () => import('./db-copy.js')),
  //COPY
  entry(['status'], 'Work', LIGHT_COMMANDS.status, () => import('./status.js')),
  entry(['run'], 'Work', 'chalk run [--detach]', () => import('./run.js')),
  entry(['check'], 'Work', 'chalk check', () => import('./check.js')),
  entry(
    ['fleet'],
    'Work',
    'chalk fleet EPIC [--plan FILE] [--yes] | --status [--json] | --stop',
    () => import('./fleet.js'),
  ),
  entry(['demo'], 'Work', 'chalk demo [--dir DIR]', () => import('./demo.js')),
  entry(['sandbox', 'trust'], 'Setup', SANDBOX_USAGE, () => import('./sandbox-trust.js')),
  entry(['sandbox', 'untrust'], 'Setup', SANDBOX_USAGE, () => import('./sandbox-trust.js'), 'SandboxUntrustCommand'),
  entry(
    ['office-hours'],
    'Failure lifecycle',
    'chalk office-hours -m NOTE [--detach]',
    () => import('./office-hours.js'),
  ),
  entry(['submit'], 'Failure lifecycle', 'chalk submit', () => import('./submit.js')),
  entry(['cleanup'], 'Failure lifecycle', 'chalk cleanup [--all]', () => import('./cleanup.js')),
  entry(['logs'], 'Work', 'chalk logs TICKET [-f]', () => import('./logs.js')),
  entry(
    ['dashboard'],
    'Work',
    'chalk dashboard [--days N] [--repo NAME | --all] [--output FILE] [--no-open]',
    () => import('./dashboard.js'),
  ),
  entry(['share'], 'Work', 'chalk share [--days N] [--output FILE] [--json]', () => import('./share.js')),
  entry(['why'], 'Failure lifecycle', 'chalk why [TICKET]', () => import('./why.js')),
  entry(['lessons'], 'Failure lifecycle', LESSONS_USAGE, () => import('./lessons.js')),
  entry(['lessons', 'show'], 'Failure lifecycle', LESSONS_USAGE, () => import('./lessons-show.js')),
  entry(['lessons', 'scope'], 'Failure lifecycle', LESSONS_USAGE, () => import('./lessons-scope.js')),
  entry(['lessons', 'forget'], 'Failure lifecycle', LESSONS_USAGE, () => import('./lessons-forget.js')),
  entry(['decider', 'trust'], 'Setup', 'chalk decider trust | untrust URL', () => import('./decider-trust.js')),
  entry(['decider', 'untrust'], 'Setup', 'chalk decider trust | untrust URL', () => import('./decider-untrust.js')),
  entry(['decider', 'status'], 'Setup', 'chalk decider status [--json]', () => import('./decider-status.js')),
  entry(
    ['plugins'],
    'Setup',
    'chalk plugins [list [--json] | trust | untrust [SPEC]]',
    () => import('./plugins-list.js'),
  ),
  entry(
    ['plugins', 'list'],
    'Setup',
    'chalk plugins [list [--json] | trust | untrust [SPEC]]',
    () => import('./plugins-list.js'),
  ),
  entry(
    ['plugins', 'trust'],
    'Setup',
    'chalk plugins [list [--json] | trust | untrust [SPEC]]',
    () => import('./plugins-trust.js'),
  ),
  entry(
    ['plugins', 'untrust'],
    'Setup',
    'chalk plugins [list [--json] | trust | untrust [SPEC]]',
    () => import('./plugins-untrust.js'),
  ),
];

/**
 * Chalk's commands: its own, and the built-in plugins' (registered by those plugins, e.g.
 * `chalk decider up` by decider-local), each placed before the first of Chalk's own that
 * shares its first word, so `chalk help` reads as one list.
 */
export const COMMANDS: CommandEntry[] = withBuiltinPluginCommands(CORE_COMMANDS);

function withBuiltinPluginCommands(core: readonly CommandEntry[]): CommandEntry[] {
  const all = [...core];
  for (const plugin of BUILTINS) {
    for (const command of plugin.commands ?? []) {
      const at = all.findIndex((c) => !c.builtinPlugin && c.path[0] === command.path[0]);
      const e: CommandEntry = {
        path: command.path,
        group: command.group ?? 'Setup',
        usage: command.usage,
        builtinPlugin: plugin.name,
        load: async () => (await command.load(await import('clipanion'))) as CommandClass,
      };
      all.splice(at < 0 ? all.length : at, 0, e);
    }
  }
  return all;
}

/** The entry whose path is the longest prefix of the arguments (among the built-in commands unless told). */
export function findCommand(args: string[], commands: readonly CommandEntry[] = COMMANDS): CommandEntry | undefined {
  let best: CommandEntry | undefined;
  for (const c of commands) {
    if (c.path.every((w, i) => args[i] === w) && (!best || c.path.length > best.path.length)) best = c;
  }
  return best;
}

/**
 * The entries of the commands plugins declare. A command may not take a built-in command's
 * first word (it could never run, or would shadow part of Chalk's own), nor another plugin's
 * words; either is refused with one line naming the plugin.
 */
export function pluginCommands(
  plugins: readonly Pick<Plugin, 'name' | 'commands'>[],
  clipanion: () => Promise<typeof import('clipanion')>,
): CommandEntry[] {
  const builtinWords = new Set(COMMANDS.map((c) => c.path[0]));
  const entries: CommandEntry[] = [];
  for (const plugin of plugins) {
    for (const command of plugin.commands ?? []) {
      const words = `chalk ${command.path.join(' ')}`;
      if (builtinWords.has(command.path[0])) {
        throw new UserError(
          `plugin ${plugin.name}'s command '${words}' starts with '${command.path[0]}', a built-in command's word; rename it`,
        );
      }
      const same = entries.find((e) => e.path.join(' ') === command.path.join(' '));
      if (same) {
        throw new UserError(`plugins ${same.plugin} and ${plugin.name} both add the command '${words}'`);
      }
      entries.push({
        path: command.path,
        group: command.group ?? 'Plugins',
        usage: command.usage,
        plugin: plugin.name,
        load: async () => command.load(await clipanion()),
      });
    }
  }
  return entries;
}

/** `chalk help`: the built-in commands by group, then the plugins' (`extra`) by theirs. */
export function usageText(version: string, extra: readonly CommandEntry[] = []): string {
  const all = [...COMMANDS, ...extra];
  const groups = [...GROUPS, ...new Set(extra.map((c) => c.group).filter((g) => !GROUPS.includes(g)))];
  const lines = [`chalk ${version}: runs Claude Code agents unattended on tickets`, ''];
  for (const g of groups) {
    const usages = [
      ...new Set(
        all.filter((c) => c.group === g).map((c) => (c.plugin ? `${c.usage}  (plugin ${c.plugin})` : c.usage)),
      ),
    ];
    if (usages.length === 0) continue;
    lines.push(g);
    for (const u of usages) lines.push(`  ${u}`);
  }
  lines.push('', 'chalk help | chalk version');
  return `${lines.join('\n')}\n`;
}
