/*
 * The commands served from the bundle of cli/light.ts (dist/cli/light.cjs) rather than by
 * cli/main.js, with their usage lines. CommonJS, so that the binary (cli/chalk.cts) reads it
 * without loading an ES module; cli/registry.ts lists the same usage lines in `chalk help`.
 *
 * A command belongs here only when it never imports a plugin, boots a kernel or loads any
 * Chalk module at run time (its whole graph is in the bundle, which the build checks), and
 * when its first word selects it in cli/registry.ts whatever follows: built-in plugins and
 * CHALK_PLUGINS plugins may not add a command that starts with a built-in command's word.
 */
export const LIGHT_COMMANDS = {
  status: 'chalk status [--json]',
} as const;

export type LightWord = keyof typeof LIGHT_COMMANDS;

/** True when the binary's first argument names a command the bundle serves. */
export function isLightWord(word: string | undefined): word is LightWord {
  return word !== undefined && Object.hasOwn(LIGHT_COMMANDS, word);
}
