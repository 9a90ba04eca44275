import { z } from 'zod';

/**
 * Schema builders for configuration keys: each parses the raw string, and its
 * error message is the whole line the user sees. Core's table (keys.ts) and the
 * plugins' tables are built from these.
 */

export const got = (v: unknown) => `(got '${String(v)}')`;

export const oneOf = (key: string, values: readonly string[]) => {
  const words =
    values.length === 2
      ? `'${values[0]}' or '${values[1]}'`
      : `${values
          .slice(0, -1)
          .map((v) => `'${v}'`)
          .join(', ')} or '${values[values.length - 1]}'`;
  return z.string().refine((v) => values.includes(v), { error: (i) => `${key} must be ${words} ${got(i.input)}` });
};

export const positiveInt = (key: string, what = 'a positive whole number') =>
  z
    .string()
    .refine((v) => /^[1-9][0-9]*$/.test(v), { error: (i) => `${key} must be ${what} ${got(i.input)}` })
    .transform(Number);

export const wholeNumber = (key: string) =>
  z
    .string()
    .refine((v) => /^[0-9]+$/.test(v), { error: (i) => `${key} must be a whole number ${got(i.input)}` })
    .transform(Number);

export const autoOrPositive = (key: string, what: string) =>
  z.string().refine((v) => v === 'auto' || /^[1-9][0-9]*$/.test(v), {
    error: (i) => `${key} must be 'auto' or ${what} ${got(i.input)}`,
  });

/** The longest delay Node's timers hold, 2^31-1 ms (about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A count of `unit`s that becomes a timer delay, refused (before `rest` reads it) when
 * value times unit is more than Node's timers hold, where it would fire at once instead.
 */
export const timerDelay = (key: string, unit: { name: string; ms: number }, rest: z.ZodType<unknown, string>) => {
  const max = Math.floor(MAX_TIMER_MS / unit.ms);
  return z
    .string()
    .refine((v) => !/^[0-9]+$/.test(v) || Number(v) <= max, {
      error: (i) => `${key} must be at most ${max} ${unit.name} (the longest wait Node's timers hold) ${got(i.input)}`,
    })
    .pipe(rest);
};
export const SECONDS = { name: 'seconds', ms: 1000 };
export const MINUTES = { name: 'minutes', ms: 60_000 };

export const bool = (key: string) => oneOf(key, ['true', 'false']).transform((v) => v === 'true');

export const dollars = (key: string) =>
  z
    .string()
    .refine((v) => /^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0, {
      error: (i) => `${key} must be a positive amount of US dollars, like 1.00 ${got(i.input)}`,
    })
    .transform(Number);

export const httpUrl = (key: string) =>
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

export const postgresUrl = (key: string) =>
  z.string().refine((v) => v === '' || /^postgres(ql)?:\/\//.test(v), {
    // Never echo the value: a connection string may carry a password.
    error: () => `${key} must be a postgres:// or postgresql:// connection string`,
  });

export const text = z.string();

/** Where a key may be set: `repo` keys in `.chalk/config` or the environment; `machine` keys only in the environment. */
export type KeyScope = 'repo' | 'machine';

/** One configuration key, as core's table and a plugin's `configuration` declare it. */
export interface KeySpec {
  name: string;
  scope: KeyScope;
  default: string;
  /** One line for the `.chalk/config` template and `chalk config`. */
  help: string;
  /** Parses the raw string; the error message is the whole user-facing line. */
  schema: z.ZodType<unknown>;
  /** Masked by `chalk config`. */
  secret?: boolean;
  /** Keys shipped in the `chalk init` template (every repo key unless false). */
  inTemplate?: boolean;
}

/** A key a repository may set in `.chalk/config` (or the environment). */
export const repoKey = (
  name: string,
  def: string,
  help: string,
  schema: z.ZodType<unknown> = text,
  extra: Partial<KeySpec> = {},
): KeySpec => ({ name, scope: 'repo', default: def, help, schema, ...extra });

/** A key only this machine's environment may set: in `.chalk/config` it is unknown. */
export const machineKey = (
  name: string,
  def: string,
  help: string,
  schema: z.ZodType<unknown> = text,
  extra: Partial<KeySpec> = {},
): KeySpec => ({ name, scope: 'machine', default: def, help, schema, ...extra });
