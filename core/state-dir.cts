import { homedir } from 'node:os';
import { join } from 'node:path';

/*
 * CommonJS, so that the `chalk` binary (cli/chalk.cts) can require it before any ES module
 * loads: it keeps its code cache in the state directory (core/layout.ts re-exports this).
 */

/** The machine's Chalk state directory, `${XDG_STATE_HOME:-~/.local/state}/chalk` (an empty XDG_STATE_HOME is unset). */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(base, 'chalk');
}
