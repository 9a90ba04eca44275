import { z } from 'zod';
import { DEFAULT_HOME_LIMITS } from '../ports/host-git.js';
import { isToolchain, TOOLCHAIN_NAMES, toolchainList } from '../stack/toolchains.js';
import {
  autoOrPositive,
  bool,
  dollars,
  got,
  httpUrl,
  type KeySpec,
  limitKey,
  MINUTES,
  machineKey as machine,
  oneOf,
  positiveInt,
  postgresUrl,
  repoKey as repo,
  SECONDS,
  timerDelay,
  wholeNumber,
} from './schemas.js';

export type { KeyScope, KeySpec } from './schemas.js';

/** The setup cache's dependency directories by default: JavaScript, Python, Rust and Maven, PHP and Ruby, Gradle, tox and nox. */
export const SETUP_CACHE_DIRS = ['node_modules', '.venv', 'venv', 'target', 'vendor', '.gradle', '.tox', '.nox'];
/** A directory name the setup cache may keep: one path component, never `.`, `..` or `.git`. */
const DIR_NAME = /^(?!\.{1,2}$)(?!\.git$)[A-Za-z0-9_.-]+$/;

export { MAX_TIMER_MS } from './schemas.js';

const seconds = (what: string) => (key: string) =>
  timerDelay(key, SECONDS, positiveInt(key, `a positive whole number of seconds${what}`));
const inSeconds = (raw: string) => `${raw} s`;

/**
 * The limits a repository may lower, or raise only up to this machine's
 * CHALK_CEILING_* (docs/threat-model.md has the table and why each ceiling is
 * where it is): time and output the host gives a command, and the money and
 * loops a run may spend.
 */
const [RUBRIC_TIMEOUT, RUBRIC_TIMEOUT_CEILING] = limitKey({
  name: 'CHALK_RUBRIC_TIMEOUT',
  default: '900',
  help: 'Seconds before a hung rubric is killed',
  schema: seconds(''),
  ceiling: '3600',
  label: 'rubric timeout',
  show: inSeconds,
});
const [SETUP_TIMEOUT, SETUP_TIMEOUT_CEILING] = limitKey({
  name: 'CHALK_SETUP_TIMEOUT',
  default: '1800',
  help: 'Seconds before a hung setup command is killed',
  schema: seconds(''),
  ceiling: '3600',
  label: 'setup timeout',
  show: inSeconds,
});
const [AGENT_TIMEOUT, AGENT_TIMEOUT_CEILING] = limitKey({
  name: 'CHALK_AGENT_TIMEOUT',
  default: '3600',
  help: 'Seconds one agent call may take before it is stopped',
  schema: seconds(''),
  ceiling: '7200',
  label: 'agent timeout',
  show: inSeconds,
});
const [BUDGET, BUDGET_CEILING] = limitKey({
  name: 'CHALK_BUDGET_USD',
  default: '1.00',
  help: 'Spend cap per agent call (--max-budget-usd)',
  schema: dollars,
  ceiling: '1.00',
  label: 'budget',
  show: (raw) => `$${Number(raw).toFixed(2)} a call`,
});
const [MAX_LOOPS, MAX_LOOPS_CEILING] = limitKey({
  name: 'CHALK_MAX_LOOPS',
  default: '20',
  help: 'Loops per run before detention',
  schema: (key) => positiveInt(key),
  ceiling: '20',
  label: 'loops',
});
const [MAX_RETRIES, MAX_RETRIES_CEILING] = limitKey({
  name: 'CHALK_MAX_RETRIES',
  default: '2',
  help: 'Consecutive loops without progress tolerated',
  schema: wholeNumber,
  ceiling: '5',
  label: 'retries',
});
const [REVIEW_ROUNDS, REVIEW_ROUNDS_CEILING] = limitKey({
  name: 'CHALK_REVIEW_ROUNDS',
  default: '1',
  help: 'Fix-and-re-review rounds before detention',
  schema: wholeNumber,
  ceiling: '3',
  label: 'review rounds',
});
const [MAX_PARALLEL, MAX_PARALLEL_CEILING] = limitKey({
  name: 'CHALK_MAX_PARALLEL',
  default: 'auto',
  help: 'Fleet runs at once: auto or a positive whole number',
  schema: (key) => autoOrPositive(key, 'a positive whole number'),
  ceiling: 'auto',
  label: 'fleet runs at once',
});
const [OUTPUT_CAP, OUTPUT_CAP_CEILING] = limitKey({
  name: 'CHALK_OUTPUT_CAP_MB',
  default: '64',
  help: 'MiB of output the host takes from any one command in the sandbox (its log holds that much); past it the command is stopped',
  schema: (key) =>
    positiveInt(key, 'a positive whole number of MiB').refine((n) => n <= 4096, {
      error: (i) => `${key} must be at most 4096 ${got(i.input)}`,
    }),
  ceiling: '256',
  label: 'output cap',
  show: (raw) => `${raw} MiB`,
});

/**
 * Core's configuration keys, repository keys first in template order. Plugins declare their
 * own (`Plugin.configuration`); the kernel's table is this plus theirs (table.ts).
 */
export const KEYS: readonly KeySpec[] = [
  repo('CHALK_BASE_BRANCH', 'main', 'Branch that ticket worktrees start from and requests target'),
  repo(
    'CHALK_FORGE',
    'auto',
    'auto (the offered forge that claims the origin remote: github for github.com, else gitlab; none without an origin) or the name of a forge a plugin offers: github, gitlab, none, ...',
    () =>
      z.string().refine((v) => /^[a-z0-9][a-z0-9._-]{0,63}$/.test(v), {
        // Which names exist is known once the plugins are registered: the kernel checks it when it settles.
        error: (i) => `CHALK_FORGE must be 'auto' or a forge's name, like 'github', 'gitlab' or 'none' ${got(i.input)}`,
      }),
  ),
  repo(
    'CHALK_TEST_CMD',
    '',
    'The rubric: run with bash in the sandbox after every loop; exit 0 only when the work is acceptable',
  ),
  repo('CHALK_SETUP_CMD', '', 'Run once per fresh sandbox before the rubric, e.g. npm ci'),
  repo(
    'CHALK_TOOLCHAIN',
    '',
    `Toolchains the sandbox image adds for the rubric and setup, comma-separated: ${TOOLCHAIN_NAMES.join(', ')} (chalk init writes what the repository needs)`,
    () =>
      z.string().refine((v) => toolchainList(v).every(isToolchain), {
        error: (i) => `CHALK_TOOLCHAIN must be a comma list of ${TOOLCHAIN_NAMES.join(', ')} ${got(i.input)}`,
      }),
  ),
  repo(
    'CHALK_SETUP_CACHE',
    'true',
    'true: what the setup command leaves (dependency directories, the home directory) is saved once per image, setup command and lockfiles, and later sandboxes start from it instead of running setup',
    () => bool('CHALK_SETUP_CACHE'),
  ),
  repo(
    'CHALK_SETUP_CACHE_DIRS',
    SETUP_CACHE_DIRS.join(','),
    'Names of the directories the setup cache keeps wherever setup made them in the clone (git tracking nothing in them)',
    () =>
      z.string().refine((v) => v.split(',').every((n) => n.trim() === '' || DIR_NAME.test(n.trim())), {
        error: (i) =>
          `CHALK_SETUP_CACHE_DIRS must be a comma list of directory names like node_modules,.venv (no '/', '..' or .git) ${got(i.input)}`,
      }),
  ),
  repo(
    'CHALK_CLONE_DEPTH',
    '0',
    "Commits of the base branch's history a sandbox gets below where the ticket left it (0: all of it); for a history too long to stream on each start",
    () => wholeNumber('CHALK_CLONE_DEPTH'),
  ),
  RUBRIC_TIMEOUT,
  SETUP_TIMEOUT,
  AGENT_TIMEOUT,
  repo(
    'CHALK_TEST_REPORT',
    '',
    'Path of the test report the rubric writes: JUnit XML (also Surefire, xunit), go test -json, jest or vitest JSON, mocha JSON, TAP, xUnit.net v2 or trx',
  ),
  BUDGET,
  MAX_LOOPS,
  MAX_RETRIES,
  repo(
    'CHALK_FP_RULES',
    'shadow',
    'off, shadow (record verdicts) or on (also detain on deja_vu/repeat/no_change)',
    () => oneOf('CHALK_FP_RULES', ['off', 'shadow', 'on']),
  ),
  repo(
    'CHALK_BASELINE',
    'check',
    "check: the rubric runs once on the base before any agent call, and a red base stops the run; known: the base's failing tests are the baseline, and a loop is green when it adds none; off: no check",
    () => oneOf('CHALK_BASELINE', ['check', 'known', 'off']),
  ),
  repo(
    'CHALK_RERUN_FAILED',
    'auto',
    'auto: a failed rubric with known failing tests runs once more on the same tree; a test that then passes is flaky, left out of the fingerprint. off: never',
    () => oneOf('CHALK_RERUN_FAILED', ['auto', 'off']),
  ),
  repo('CHALK_FP_FEEDBACK', 'false', 'true: a retry is told the failing tests and first error', () =>
    bool('CHALK_FP_FEEDBACK'),
  ),
  MAX_PARALLEL,
  repo(
    'CHALK_FLEET_BUDGET_USD',
    '',
    'Spend ceiling of a whole fleet (empty: none): no workstream starts once the recorded spend plus a run at its worst would pass it, and runs in flight stop into detention before a loop that could',
    () =>
      z.string().refine((v) => v === '' || (/^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0), {
        error: (i) =>
          `CHALK_FLEET_BUDGET_USD must be empty or a positive amount of US dollars, like 20.00 ${got(i.input)}`,
      }),
  ),
  OUTPUT_CAP,
  repo('CHALK_DECIDER', 'off', 'off, shadow (record answers) or on (act on confident answers)', () =>
    oneOf('CHALK_DECIDER', ['off', 'shadow', 'on']),
  ),
  repo('CHALK_DECIDER_THRESHOLD', '0.9', 'Confidence a decider answer needs before Chalk acts on it', () =>
    z
      .string()
      .refine((v) => /^(0\.[5-9][0-9]{0,2}|1(\.0{0,3})?)$/.test(v), {
        error: (i) =>
          `CHALK_DECIDER_THRESHOLD must be a confidence from 0.5 to 1, to at most three places ${got(i.input)}`,
      })
      .transform(Number),
  ),
  repo('CHALK_DECIDER_MIN_LESSONS', '30', 'Resolved lessons needed before semantic recall and rerank', () =>
    wholeNumber('CHALK_DECIDER_MIN_LESSONS'),
  ),
  repo('CHALK_TEXTBOOK', '.chalk/textbook.md', 'Rules appended to every agent system prompt'),
  repo('CHALK_AUTO_MR', 'true', 'true: push and open the request at the end; false: stop at done', () =>
    bool('CHALK_AUTO_MR'),
  ),
  repo('CHALK_SPEC_CHECK', 'true', 'Check the spec before the first loop', () => bool('CHALK_SPEC_CHECK')),
  repo('CHALK_REVIEW', 'true', 'Review the work once every checkpoint is ticked', () => bool('CHALK_REVIEW')),
  REVIEW_ROUNDS,
  repo('CHALK_REVIEW_MODEL', '', 'Review model (empty: the CLI default)'),
  repo('CHALK_CHEAP_MODEL', 'haiku', 'Model for the spec check and distillation'),
  repo('CHALK_DISTILL', 'true', 'Distil office-hours notes into lessons', () => bool('CHALK_DISTILL')),
  repo(
    'CHALK_PERMISSION_MODE',
    'auto',
    'auto (Claude Code auto mode) or bypass (--dangerously-skip-permissions, inside the sandbox)',
    () => oneOf('CHALK_PERMISSION_MODE', ['auto', 'bypass']),
  ),
  repo('CHALK_MODEL', '', 'Loop model (--model); empty: the CLI default'),
  repo('CHALK_PLUGINS', '', 'Comma-separated npm package names or paths of third-party plugins'),
  machine(
    'CHALK_HOME_MAX_FILES',
    String(DEFAULT_HOME_LIMITS.maxFiles),
    'Files the tree a sandbox sends home may hold (checked before anything is checked out; a detention branch too)',
    () => positiveInt('CHALK_HOME_MAX_FILES'),
  ),
  machine(
    'CHALK_HOME_MAX_MB',
    String(DEFAULT_HOME_LIMITS.maxMiB),
    'MiB the tree a sandbox sends home may take once checked out (every file counted, shared content each time)',
    () => positiveInt('CHALK_HOME_MAX_MB', 'a positive whole number of MiB'),
  ),
  machine(
    'CHALK_HOME_MAX_PATH',
    String(DEFAULT_HOME_LIMITS.maxPathBytes),
    'Bytes of the longest path the tree a sandbox sends home may have (a path 3,000 directories deep is 6,000)',
    () => positiveInt('CHALK_HOME_MAX_PATH', 'a positive whole number of bytes'),
  ),
  machine(
    'CHALK_HOME_MAX_OBJECTS',
    String(DEFAULT_HOME_LIMITS.maxObjects),
    "Objects a sandbox's bundle may hold (commits, trees, files), read from its pack before git reads it",
    () => positiveInt('CHALK_HOME_MAX_OBJECTS'),
  ),
  machine(
    'CHALK_SETUP_CACHE_MB',
    '2048',
    'MiB one saved setup state may take on this machine; a setup that leaves more is not saved',
    () => positiveInt('CHALK_SETUP_CACHE_MB', 'a positive whole number of MiB'),
  ),
  machine(
    'CHALK_DATABASE_URL',
    '',
    'Postgres server for telemetry and lessons; empty: the embedded database',
    () => postgresUrl('CHALK_DATABASE_URL'),
    { secret: true },
  ),
  machine('CHALK_DB_TIMEOUT', 'auto', 'Seconds to wait for the database', () =>
    timerDelay('CHALK_DB_TIMEOUT', SECONDS, autoOrPositive('CHALK_DB_TIMEOUT', 'a positive number of seconds')),
  ),
  machine('CHALK_DECIDER_URL', 'http://127.0.0.1:8471', 'Decider base URL', () => httpUrl('CHALK_DECIDER_URL')),
  machine(
    'CHALK_DECIDER_PROVIDER',
    'auto',
    'auto (a loopback CHALK_DECIDER_URL -> local when a plugin offers it, else hosted) or the name of a decider a plugin offers',
    () =>
      z.string().refine((v) => /^[a-z0-9][a-z0-9._-]{0,63}$/.test(v), {
        error: (i) => `CHALK_DECIDER_PROVIDER must be 'auto' or a decider's name, like 'hosted' ${got(i.input)}`,
      }),
  ),
  machine('CHALK_EMBED_URL', 'http://127.0.0.1:8472', 'Embedding service base URL', () => httpUrl('CHALK_EMBED_URL')),
  machine('CHALK_DECIDER_IDLE_MINUTES', '30', 'Local decider services exit after this idle time', () =>
    timerDelay('CHALK_DECIDER_IDLE_MINUTES', MINUTES, positiveInt('CHALK_DECIDER_IDLE_MINUTES')),
  ),
  machine('CHALK_DECIDER_TIMEOUT', 'auto', 'Seconds a run waits for the local decider to load', () =>
    timerDelay(
      'CHALK_DECIDER_TIMEOUT',
      SECONDS,
      autoOrPositive('CHALK_DECIDER_TIMEOUT', 'a positive number of seconds'),
    ),
  ),
  RUBRIC_TIMEOUT_CEILING,
  SETUP_TIMEOUT_CEILING,
  AGENT_TIMEOUT_CEILING,
  OUTPUT_CAP_CEILING,
  BUDGET_CEILING,
  MAX_LOOPS_CEILING,
  MAX_RETRIES_CEILING,
  REVIEW_ROUNDS_CEILING,
  MAX_PARALLEL_CEILING,
];
