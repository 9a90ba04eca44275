import { z } from 'zod';
import { parseLimit } from '../protocol/entry.js';

/** Where a key may be set: `repo` keys in `.chalk/config` or the environment; `machine` keys only in the environment. */
export type KeyScope = 'repo' | 'machine';

export interface KeySpec {
  name: string;
  scope: KeyScope;
  default: string;
  /** One line for the `.chalk/config` template and `chalk config`. */
  help: string;
  /** Parses the raw string; the error message is the whole user-facing line. */
  schema: z.ZodType<unknown>;
  secret?: boolean;
  /** Keys shipped in the `chalk init` template (every repo key unless false). */
  inTemplate?: boolean;
}

const got = (v: unknown) => `(got '${String(v)}')`;

const oneOf = (key: string, values: readonly string[]) => {
  const words =
    values.length === 2
      ? `'${values[0]}' or '${values[1]}'`
      : `${values
          .slice(0, -1)
          .map((v) => `'${v}'`)
          .join(', ')} or '${values[values.length - 1]}'`;
  return z.string().refine((v) => values.includes(v), { error: (i) => `${key} must be ${words} ${got(i.input)}` });
};

const positiveInt = (key: string, what = 'a positive whole number') =>
  z
    .string()
    .refine((v) => /^[1-9][0-9]*$/.test(v), { error: (i) => `${key} must be ${what} ${got(i.input)}` })
    .transform(Number);

const wholeNumber = (key: string) =>
  z
    .string()
    .refine((v) => /^[0-9]+$/.test(v), { error: (i) => `${key} must be a whole number ${got(i.input)}` })
    .transform(Number);

const autoOrPositive = (key: string, what: string) =>
  z.string().refine((v) => v === 'auto' || /^[1-9][0-9]*$/.test(v), {
    error: (i) => `${key} must be 'auto' or ${what} ${got(i.input)}`,
  });

/** The longest delay Node's timers hold, 2^31-1 ms (about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A count of `unit`s that becomes a timer delay, refused (before `rest` reads it) when
 * value times unit is more than Node's timers hold, where it would fire at once instead.
 */
const timerDelay = (key: string, unit: { name: string; ms: number }, rest: z.ZodType<unknown, string>) => {
  const max = Math.floor(MAX_TIMER_MS / unit.ms);
  return z
    .string()
    .refine((v) => !/^[0-9]+$/.test(v) || Number(v) <= max, {
      error: (i) => `${key} must be at most ${max} ${unit.name} (the longest wait Node's timers hold) ${got(i.input)}`,
    })
    .pipe(rest);
};
const SECONDS = { name: 'seconds', ms: 1000 };
const MINUTES = { name: 'minutes', ms: 60_000 };

const bool = (key: string) => oneOf(key, ['true', 'false']).transform((v) => v === 'true');

const dollars = (key: string) =>
  z
    .string()
    .refine((v) => /^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0, {
      error: (i) => `${key} must be a positive amount of US dollars, like 1.00 ${got(i.input)}`,
    })
    .transform(Number);

const httpUrl = (key: string) =>
  z.string().refine(
    (v) => {
      if (!/^https?:\/\//.test(v)) return false;
      try {
        new URL(v);
        return true;
      } catch {
        return false;
      }
    },
    { error: (i) => `${key} must be an http:// or https:// URL ${got(i.input)}` },
  );

const postgresUrl = (key: string) =>
  z.string().refine((v) => v === '' || /^postgres(ql)?:\/\//.test(v), {
    // Never echo the value: a connection string may carry a password.
    error: () => `${key} must be a postgres:// or postgresql:// connection string`,
  });

const text = z.string();

const repo = (
  name: string,
  def: string,
  help: string,
  schema: z.ZodType<unknown> = text,
  extra: Partial<KeySpec> = {},
) => ({ name, scope: 'repo', default: def, help, schema, ...extra }) satisfies KeySpec;
const machine = (
  name: string,
  def: string,
  help: string,
  schema: z.ZodType<unknown> = text,
  extra: Partial<KeySpec> = {},
) => ({ name, scope: 'machine', default: def, help, schema, ...extra }) satisfies KeySpec;

/** Every configuration key, repository keys first in template order. */
export const KEYS: readonly KeySpec[] = [
  repo('CHALK_BASE_BRANCH', 'main', 'Branch that ticket worktrees start from and requests target'),
  repo(
    'CHALK_FORGE',
    'auto',
    'auto (github.com origin -> github, else gitlab), github, gitlab or none',
    oneOf('CHALK_FORGE', ['auto', 'github', 'gitlab', 'none']),
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
  repo('CHALK_TEST_REPORT', '', 'Path of a JUnit XML, go test -json or jest --json report the rubric writes'),
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
    'CHALK_SANDBOX_MEM_MB',
    '2048',
    'MiB of memory one sandbox may use (its limit, with no swap beyond it)',
    positiveInt('CHALK_SANDBOX_MEM_MB', 'a positive whole number of MiB').transform(Number),
  ),
  repo(
    'CHALK_SANDBOX_CPUS',
    'auto',
    "CPUs one sandbox may use: auto (half the Docker engine's, at least 1) or a number like 1.5",
    z.string().refine((v) => v === 'auto' || (/^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0 && Number(v) <= 1024), {
      error: (i) => `CHALK_SANDBOX_CPUS must be 'auto' or a positive number of CPUs like 2 or 1.5 ${got(i.input)}`,
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
  repo('CHALK_IMAGE', 'chalk-sandbox:local', 'Sandbox image; a non-default image is never built, only used'),
  repo(
    'CHALK_TMPFS_SIZE',
    '4g',
    'Size of the RAM disk the clone lives on',
    z.string().refine((v) => /^[1-9][0-9]*[kmg]?$/i.test(v), {
      error: (i) => `CHALK_TMPFS_SIZE must be a size like 512m or 4g ${got(i.input)}`,
    }),
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
  machine('CHALK_DECIDER_TOKEN', '', 'Bearer token for the decider', text, { secret: true }),
  machine(
    'CHALK_DECIDER_LIMIT',
    'max_concurrent=4',
    'Decider admission: max_concurrent=N (calls in flight) or tpm=N[,burst=N] (a token bucket per minute)',
    z.string().superRefine((v, ctx) => {
      try {
        parseLimit(v, 'CHALK_DECIDER_LIMIT');
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  ),
  machine(
    'CHALK_DECIDER_CONTEXT_TOKENS',
    '4096',
    "The decider's context window in tokens; a request counted above it is not sent",
    positiveInt('CHALK_DECIDER_CONTEXT_TOKENS'),
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
  machine(
    'CHALK_SANDBOX_BASE',
    '',
    'Base image chalk sandbox build builds on (any Debian-based image); empty: the base the image was made on, else node:22-bookworm-slim',
  ),
  machine(
    'CHALK_SANDBOX_CA',
    '',
    'Extra CA bundle carried into the sandbox image; empty: NODE_EXTRA_CA_CERTS, else SSL_CERT_FILE',
  ),
  machine('CHALK_OTEL_ENDPOINT', '', 'Export Claude Code telemetry to this OTLP endpoint'),
  machine(
    'CHALK_OTEL_HEADERS',
    'false',
    'true: also hand OTEL_EXPORTER_OTLP_HEADERS (often a token) to the agent CLI in the sandbox',
    bool('CHALK_OTEL_HEADERS'),
  ),
  machine(
    'CHALK_OTEL_PROTOCOL',
    'grpc',
    'OTLP protocol',
    oneOf('CHALK_OTEL_PROTOCOL', ['grpc', 'http/protobuf', 'http/json']),
  ),
  machine(
    'CHALK_OTEL_SIGNALS',
    'traces',
    'Comma list of traces, metrics, logs',
    z.string().refine((v) => v.split(',').every((s) => ['traces', 'metrics', 'logs'].includes(s.trim())), {
      error: (i) => `CHALK_OTEL_SIGNALS must be a comma list of 'traces', 'metrics' and 'logs' ${got(i.input)}`,
    }),
  ),
];

export const KEY_BY_NAME: ReadonlyMap<string, KeySpec> = new Map(KEYS.map((k) => [k.name, k]));
