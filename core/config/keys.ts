import { z } from 'zod';
import {
  autoOrPositive,
  bool,
  dollars,
  got,
  httpUrl,
  type KeySpec,
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
export { MAX_TIMER_MS } from './schemas.js';

/**
 * Core's configuration keys, repository keys first in template order. Plugins declare their
 * own (`Plugin.configuration`); the kernel's table is this plus theirs (table.ts).
 */
export const KEYS: readonly KeySpec[] = [
  repo('CHALK_BASE_BRANCH', 'main', 'Branch that ticket worktrees start from and requests target'),
  repo(
    'CHALK_FORGE',
    'auto',
    'auto (github.com origin -> github, else gitlab; none without an origin) or the name of a forge a plugin offers: github, gitlab, none, ...',
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
    'CHALK_RUBRIC_TIMEOUT',
    '900',
    'Seconds before a hung rubric is killed',
    timerDelay(
      'CHALK_RUBRIC_TIMEOUT',
      SECONDS,
      positiveInt('CHALK_RUBRIC_TIMEOUT', 'a positive whole number of seconds'),
    ),
  ),
  repo(
    'CHALK_TEST_REPORT',
    '',
    'Path of the test report the rubric writes: JUnit XML (also Surefire, xunit), go test -json, jest or vitest JSON, mocha JSON, TAP, xUnit.net v2 or trx',
  ),
  repo('CHALK_BUDGET_USD', '1.00', 'Spend cap per agent call (--max-budget-usd)', dollars('CHALK_BUDGET_USD')),
  repo('CHALK_MAX_LOOPS', '20', 'Loops per run before detention', positiveInt('CHALK_MAX_LOOPS')),
  repo('CHALK_MAX_RETRIES', '2', 'Consecutive loops without progress tolerated', wholeNumber('CHALK_MAX_RETRIES')),
  repo(
    'CHALK_FP_RULES',
    'shadow',
    'off, shadow (record verdicts) or on (also detain on deja_vu/repeat/no_change)',
    oneOf('CHALK_FP_RULES', ['off', 'shadow', 'on']),
  ),
  repo(
    'CHALK_RERUN_FAILED',
    'auto',
    'auto: a failed rubric with known failing tests runs once more on the same tree; a test that then passes is flaky, left out of the fingerprint. off: never',
    oneOf('CHALK_RERUN_FAILED', ['auto', 'off']),
  ),
  repo(
    'CHALK_FP_FEEDBACK',
    'false',
    'true: a retry is told the failing tests and first error',
    bool('CHALK_FP_FEEDBACK'),
  ),
  repo(
    'CHALK_MAX_PARALLEL',
    'auto',
    'Fleet runs at once: auto or a positive whole number',
    autoOrPositive('CHALK_MAX_PARALLEL', 'a positive whole number'),
  ),
  repo(
    'CHALK_FLEET_BUDGET_USD',
    '',
    'Spend ceiling of a whole fleet (empty: none): no workstream starts once the recorded spend plus a run at its worst would pass it, and runs in flight stop into detention before a loop that could',
    z.string().refine((v) => v === '' || (/^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0), {
      error: (i) =>
        `CHALK_FLEET_BUDGET_USD must be empty or a positive amount of US dollars, like 20.00 ${got(i.input)}`,
    }),
  ),
  repo(
    'CHALK_OUTPUT_CAP_MB',
    '64',
    'MiB of output the host takes from any one command in the sandbox (its log holds that much); past it the command is stopped',
    positiveInt('CHALK_OUTPUT_CAP_MB', 'a positive whole number of MiB').refine((n) => n <= 4096, {
      error: (i) => `CHALK_OUTPUT_CAP_MB must be at most 4096 ${got(i.input)}`,
    }),
  ),
  repo(
    'CHALK_DECIDER',
    'off',
    'off, shadow (record answers) or on (act on confident answers)',
    oneOf('CHALK_DECIDER', ['off', 'shadow', 'on']),
  ),
  repo(
    'CHALK_DECIDER_THRESHOLD',
    '0.9',
    'Confidence a decider answer needs before Chalk acts on it',
    z
      .string()
      .refine((v) => /^(0\.[5-9][0-9]{0,2}|1(\.0{0,3})?)$/.test(v), {
        error: (i) =>
          `CHALK_DECIDER_THRESHOLD must be a confidence from 0.5 to 1, to at most three places ${got(i.input)}`,
      })
      .transform(Number),
  ),
  repo(
    'CHALK_DECIDER_MIN_LESSONS',
    '30',
    'Resolved lessons needed before semantic recall and rerank',
    wholeNumber('CHALK_DECIDER_MIN_LESSONS'),
  ),
  repo('CHALK_TEXTBOOK', '.chalk/textbook.md', 'Rules appended to every agent system prompt'),
  repo(
    'CHALK_AUTO_MR',
    'true',
    'true: push and open the request at the end; false: stop at done',
    bool('CHALK_AUTO_MR'),
  ),
  repo('CHALK_SPEC_CHECK', 'true', 'Check the spec before the first loop', bool('CHALK_SPEC_CHECK')),
  repo('CHALK_REVIEW', 'true', 'Review the work once every checkpoint is ticked', bool('CHALK_REVIEW')),
  repo('CHALK_REVIEW_ROUNDS', '1', 'Fix-and-re-review rounds before detention', wholeNumber('CHALK_REVIEW_ROUNDS')),
  repo('CHALK_REVIEW_MODEL', '', 'Review model (empty: the CLI default)'),
  repo('CHALK_CHEAP_MODEL', 'haiku', 'Model for the spec check and distillation'),
  repo('CHALK_DISTILL', 'true', 'Distil office-hours notes into lessons', bool('CHALK_DISTILL')),
  repo(
    'CHALK_PERMISSION_MODE',
    'auto',
    'auto (Claude Code auto mode) or bypass (--dangerously-skip-permissions, inside the sandbox)',
    oneOf('CHALK_PERMISSION_MODE', ['auto', 'bypass']),
  ),
  repo('CHALK_MODEL', '', 'Loop model (--model); empty: the CLI default'),
  repo('CHALK_PLUGINS', '', 'Comma-separated npm package names or paths of third-party plugins'),
  machine(
    'CHALK_DATABASE_URL',
    '',
    'Postgres server for telemetry and lessons; empty: the embedded database',
    postgresUrl('CHALK_DATABASE_URL'),
    { secret: true },
  ),
  machine(
    'CHALK_DB_TIMEOUT',
    'auto',
    'Seconds to wait for the database',
    timerDelay('CHALK_DB_TIMEOUT', SECONDS, autoOrPositive('CHALK_DB_TIMEOUT', 'a positive number of seconds')),
  ),
  machine('CHALK_DECIDER_URL', 'http://127.0.0.1:8471', 'Decider base URL', httpUrl('CHALK_DECIDER_URL')),
  machine(
    'CHALK_DECIDER_PROVIDER',
    'auto',
    'auto (a loopback CHALK_DECIDER_URL -> local when a plugin offers it, else hosted) or the name of a decider a plugin offers',
    z.string().refine((v) => /^[a-z0-9][a-z0-9._-]{0,63}$/.test(v), {
      error: (i) => `CHALK_DECIDER_PROVIDER must be 'auto' or a decider's name, like 'hosted' ${got(i.input)}`,
    }),
  ),
  machine('CHALK_EMBED_URL', 'http://127.0.0.1:8472', 'Embedding service base URL', httpUrl('CHALK_EMBED_URL')),
  machine(
    'CHALK_DECIDER_IDLE_MINUTES',
    '30',
    'Local decider services exit after this idle time',
    timerDelay('CHALK_DECIDER_IDLE_MINUTES', MINUTES, positiveInt('CHALK_DECIDER_IDLE_MINUTES')),
  ),
  machine(
    'CHALK_DECIDER_TIMEOUT',
    'auto',
    'Seconds a run waits for the local decider to load',
    timerDelay(
      'CHALK_DECIDER_TIMEOUT',
      SECONDS,
      autoOrPositive('CHALK_DECIDER_TIMEOUT', 'a positive number of seconds'),
    ),
  ),
];
