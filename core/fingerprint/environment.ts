import { cleanLog, type LogInput, logLines } from './log.js';

/**
 * A rubric that could not start: the sandbox lacks a command it runs (`go:
 * command not found`, `sh: 1: vitest: not found`, exit 126 or 127). That is
 * the environment's failure, not the agent's: it is said at once with the
 * missing command, never retried.
 */
export interface EnvironmentFailure {
  /** The command the sandbox lacks, as the shell named it; null when the output names none. */
  command: string | null;
  /** The line that said so (cleaned, at most 200 characters); '' when none did. */
  line: string;
  exitCode: number;
}

const SHELL = String.raw`(?:\S*/)?(?:ba|da|z|k)?sh`;

/**
 * The shells', env's and make's ways of saying a command is not there; capture 1 is the command.
 * A shell names itself, or the script it runs (`run.sh: line 1: go: command not found`).
 */
const NOT_FOUND: readonly RegExp[] = [
  // bash: `bash: line 1: go: command not found`, `run.sh: line 3: go: command not found`
  /^\S+?(?:: line [0-9]+)?: (\S+?): command not found$/,
  // bash and dash with a line: `run.sh: line 2: ./x: No such file or directory`, `sh: 1: vitest: not found`
  /^\S+?: (?:line )?[0-9]+: (\S+?): (?:not found|No such file or directory|Permission denied)$/,
  // a shell without a line: `bash: ./run.sh: No such file or directory`, `bash: ./run.sh: Permission denied`
  new RegExp(`^${SHELL}: (\\S+?): (?:No such file or directory|Permission denied)$`),
  // env in a shebang or a script: `/usr/bin/env: 'python': No such file or directory`
  /^(?:\S*\/)?env: ['‘`]?([^'’`\s]+?)['’`]?: No such file or directory$/,
  // make: `make: go: No such file or directory`, `make: go: Command not found`
  /^make(?:\[[0-9]+\])?: (\S+?): (?:No such file or directory|[Cc]ommand not found)$/,
];

/** A command name shown to the person: a plain word, else not named. */
const COMMAND = /^[A-Za-z0-9_.+@/-]{1,100}$/;

/** The first line of the output that says a command is not there, and that command. */
export function missingCommand(log: LogInput): { command: string | null; line: string } | null {
  for (const raw of logLines(cleanLog(log))) {
    const line = raw.trim();
    for (const p of NOT_FOUND) {
      const m = p.exec(line);
      if (!m) continue;
      const name = m[1] ?? '';
      return { command: COMMAND.test(name) ? name : null, line: line.slice(0, 200) };
    }
  }
  return null;
}

/**
 * Whether a failed rubric run is an environment failure: it named no failing
 * test it ran (a runner that ran tests and reported failures is the code's
 * failure, whatever else it printed), and either a shell said a command is not
 * there, or it exited 126 (not executable) or 127 (not found).
 */
export function environmentFailure(r: {
  exitCode: number;
  log: LogInput;
  tests: readonly string[] | null;
}): EnvironmentFailure | null {
  if (r.exitCode === 0 || (r.tests !== null && r.tests.length > 0)) return null;
  const found = missingCommand(r.log);
  if (found) return { ...found, exitCode: r.exitCode };
  if (r.exitCode === 126 || r.exitCode === 127) return { command: null, line: '', exitCode: r.exitCode };
  return null;
}

/** `'go' is not in the sandbox (bash: go: command not found, exit 127)`, for the run's lines. */
export function describeEnvironment(e: EnvironmentFailure): string {
  const what = e.command ? `'${e.command}' is not in the sandbox` : 'the rubric could not start in the sandbox';
  return `${what} (${e.line ? `${e.line}, ` : ''}exit ${e.exitCode})`;
}
