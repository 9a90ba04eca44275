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

/** True when `word` names a command the bundle serves (in the forms `lightForm` accepts). */
export function isLightWord(word: string | undefined): word is LightWord {
  return word !== undefined && Object.hasOwn(LIGHT_COMMANDS, word);
}

/** A command line the bundle runs: the command, and whether `--json` was given. */
export interface LightForm {
  word: LightWord;
  json: boolean;
}

/**
 * The binary's arguments when the bundle serves them, exactly as written: the command's word
 * alone or followed by `--json`, nothing else. Any other spelling (help, a misspelt or repeated
 * flag, `--json=true`) is null and goes to main.js, whose parser (clipanion) answers it, so the
 * bundle holds no parser: loading clipanion was a twentieth of `chalk status`'s time.
 */
export function lightForm(argv: readonly string[]): LightForm | null {
  const [word, ...rest] = argv;
  if (!isLightWord(word)) return null;
  if (rest.length === 0) return { word, json: false };
  if (rest.length === 1 && rest[0] === '--json') return { word, json: true };
  return null;
}
