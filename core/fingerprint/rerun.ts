import { commandWords, shellWord, type Word } from './command-words.js';
import { type LogInput, LogWindows } from './log.js';
import { detectRunners, RUNNERS, type Runner } from './runners/index.js';
import { unique } from './runners/lines.js';

/**
 * The flaky rerun's command: the rubric again, running only the tests that
 * failed, where the runner can select them (each runner's `select`, in
 * core/fingerprint/runners/), else null and the rubric runs whole. The IDs come
 * out of the sandbox, so they only ever become single words, quoted: a test
 * named `$(touch x)` is passed as those characters and nothing runs.
 */

/** At most this many failing tests are selected; past it the rubric runs whole. */
export const MAX_SELECTED = 100;
/** At most this many characters of selection are added to the command. */
export const MAX_SELECTION_CHARS = 16 * 1024;

/** Launchers that run the next words as a command: `npx vitest`, `uv run pytest`, `python3 -m pytest`. */
const LAUNCHERS: readonly (readonly string[])[] = [
  ['npx'],
  ['bunx'],
  ['pnpm', 'exec'],
  ['pnpm', 'dlx'],
  ['yarn', 'exec'],
  ['uv', 'run'],
  ['poetry', 'run'],
  ['pdm', 'run'],
  ['pipenv', 'run'],
  ['hatch', 'run'],
  ['rye', 'run'],
];

/** Package-manager scripts (`npm test`, `yarn test`, `npm run test:unit`): the selection goes after the script, with npm's `--`. */
function scriptInvocation(words: readonly string[]): { length: number; dashes: boolean } | null {
  const [pm, verb, name] = words;
  if (pm === 'npm' || pm === 'bun') {
    if (verb === 'test' || verb === 't') return { length: 2, dashes: true };
    if ((verb === 'run' || verb === 'run-script') && name !== undefined && !name.startsWith('-')) {
      return { length: 3, dashes: true };
    }
    return null;
  }
  if (pm === 'pnpm' || pm === 'yarn') {
    if (verb === 'test') return { length: 2, dashes: false };
    if (verb === 'run' && name !== undefined && !name.startsWith('-')) return { length: 3, dashes: false };
  }
  return null;
}

const isPython = (w: string) => /^(?:.*\/)?python(?:[0-9](?:\.[0-9]+)?)?$/.test(w);
const base = (w: string) => w.replace(/^.*\//, '');

/** How many words start the command before the runner's own name (env assignments, launchers, `python -m`). */
function launcherLength(words: readonly string[]): number {
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) i++;
  for (let again = true; again; ) {
    again = false;
    for (const l of LAUNCHERS) {
      if (l.every((w, k) => words[i + k] === w)) {
        i += l.length;
        again = true;
      }
    }
    if (isPython(words[i] ?? '') && words[i + 1] === '-m') {
      i += 2;
      again = true;
    }
  }
  return i;
}

/** An ID that may become one argument: no control character, no leading dash (never an option). */
const selectable = (id: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  id !== '' && !id.startsWith('-') && !/[\u0000-\u001f\u007f]/.test(id);

export interface Rerun {
  /** The command that runs only the failing tests. */
  command: string;
  /** The runner that selects them. */
  runner: string;
  /** How many tests it selects. */
  selected: number;
}

/** The positional arguments of the runner's words (not options, not an option's value, not redirections). */
function positionals(rest: readonly Word[], valueOptions: ReadonlySet<string>): Set<number> {
  const at = new Set<number>();
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as Word;
    if (w.redirect) continue;
    if (w.value === '--') break;
    if (w.value.startsWith('-')) {
      if (!w.value.includes('=') && valueOptions.has(w.value)) i++;
      continue;
    }
    at.add(i);
  }
  return at;
}

function selectWith(
  runner: Runner,
  all: Word[][],
  o: { detected: boolean; ids: readonly string[]; report: boolean },
): Rerun | null {
  const select = runner.select;
  if (!select) return null;
  const last = all[all.length - 1] as Word[];
  const values = last.map((w) => w.value);
  const head = launcherLength(values);
  const own = select.commands.find((c) =>
    c.every((w, k) => (k === 0 ? base(values[head] ?? '') : values[head + k]) === w),
  );
  // Through a package script, only the runner's own output says which runner the script runs.
  const script = !own && select.packageScripts && o.detected ? scriptInvocation(values.slice(head)) : null;
  if (!script && !own) return null;
  const ids = unique(o.ids);
  if (ids.length === 0 || ids.length > MAX_SELECTED || !ids.every(selectable)) return null;
  const start = head + (script ? script.length : (own as readonly string[]).length);
  const rest = last.slice(start);
  const places = script ? new Set<number>() : positionals(rest, new Set(select.valueOptions ?? []));
  const given = [...places].map((i) => (rest[i] as Word).value);
  const chosen = select.args({ ids, report: o.report, positionals: given });
  if (chosen === null) return null;
  const added = [...chosen.args, ...(chosen.after ?? [])];
  if (added.join(' ').length > MAX_SELECTION_CHARS || added.some((a) => a.includes('\0'))) return null;
  const raw = (ws: readonly Word[]) => ws.map((w) => w.raw);
  const dashAt = rest.findIndex((w) => !w.redirect && w.value === '--');
  const redirects = raw(rest.filter((w) => w.redirect));
  const kept = rest.filter((w) => !w.redirect);
  let words: string[];
  if (script) {
    // The script's own arguments stay; the selection goes last, after the package manager's `--`.
    const dashes = script.dashes && dashAt < 0 ? ['--'] : [];
    words = [...raw(last.slice(0, start)), ...raw(kept), ...dashes, ...added.map(shellWord), ...redirects];
  } else {
    const before = (dashAt < 0 ? rest : rest.slice(0, dashAt)).filter((w, i) => !w.redirect && !places.has(i));
    const afterDash = dashAt < 0 ? [] : raw(rest.slice(dashAt + 1).filter((w) => !w.redirect));
    const tail = (chosen.after ?? []).map(shellWord);
    words = [
      ...raw(last.slice(0, start)),
      ...raw(before),
      ...chosen.args.map(shellWord),
      ...(dashAt >= 0 || tail.length > 0 ? ['--', ...afterDash, ...tail] : []),
      ...redirects,
    ];
  }
  // Earlier steps that set up the shell (cd, source, export) stay; checks and builds already ran once.
  const setup = all.slice(0, -1).filter((seg) => ['cd', 'source', '.', 'export'].includes(seg[0]?.value ?? ''));
  const command = [...setup.map((seg) => raw(seg).join(' ')), words.join(' ')].join(' && ');
  return { command, runner: runner.name, selected: ids.length };
}

/**
 * The rubric command rewritten to run only the failing tests `ids` (the
 * loop's fingerprint: from the report when `report`, else from the output
 * `log`), or null when no runner can select them all from this command.
 */
export function selectiveRerun(
  command: string,
  o: { log: LogInput; ids: readonly string[]; report: boolean },
): Rerun | null {
  const all = commandWords(command);
  if (all === null) return null;
  const detected = new Set(detectRunners(LogWindows.of(o.log)));
  for (const runner of RUNNERS) {
    const r = selectWith(runner, all, { detected: detected.has(runner), ids: o.ids, report: o.report });
    if (r) return r;
  }
  return null;
}

/** Whether a log looks like `runner`'s output (a selective rerun's, to tell a run that ran nothing). */
export const showsRunner = (log: LogInput, runner: string): boolean =>
  detectRunners(LogWindows.of(log)).some((r) => r.name === runner);
