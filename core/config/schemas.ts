import { z } from 'zod';
import { lazyProperty } from './lazy.js';

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

/**
 * What makes a repository key a limit: a repository may lower it, or raise it
 * only up to its ceiling, a machine key (the environment's alone) of the same
 * schema. `measure` sizes a value for the comparison; null where it cannot be
 * told from the text alone (`auto`), and the reader then holds it to the
 * ceiling itself (the sandbox's CPUs, the fleet's parallelism).
 */
export interface Limit {
  /** The machine key holding the ceiling, `CHALK_CEILING_<name>`. */
  ceiling: string;
  measure: (raw: string) => number | null;
  /** How the run's first lines name it (`memory`, `rubric timeout`) and show a value. */
  label: string;
  show: (raw: string) => string;
}

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
  /** A limit, held to the machine's ceiling when the repository sets it. */
  limit?: Limit;
}

/**
 * A key's schema, or a function that makes it. A function is called the first time the key's
 * `schema` is read and never again: zod builds a schema out of several objects, and a command
 * that reads a few keys (`chalk status`) then does not build the hundred others (a third of
 * a thousand objects, and the garbage collections they cost, at every start).
 */
export type SchemaOf = z.ZodType<unknown> | (() => z.ZodType<unknown>);

/** The spec with `schema` made from `schema` on first read when it is a function (see SchemaOf). */
function withSchema(spec: Omit<KeySpec, 'schema'>, schema: SchemaOf): KeySpec {
  if (typeof schema !== 'function') return { ...spec, schema };
  return lazyProperty(spec as KeySpec, 'schema', schema);
}

/** A key a repository may set in `.chalk/config` (or the environment). */
export const repoKey = (
  name: string,
  def: string,
  help: string,
  schema: SchemaOf = text,
  extra: Partial<Omit<KeySpec, 'schema'>> = {},
): KeySpec => withSchema({ name, scope: 'repo', default: def, help, ...extra }, schema);

/** A key only this machine's environment may set: in `.chalk/config` it is unknown. */
export const machineKey = (
  name: string,
  def: string,
  help: string,
  schema: SchemaOf = text,
  extra: Partial<Omit<KeySpec, 'schema'>> = {},
): KeySpec => withSchema({ name, scope: 'machine', default: def, help, ...extra }, schema);

/** A plain number's size; null for anything else (`auto`). */
export const numberSize = (raw: string): number | null => (/^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : null);

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A size like 512m or 4g in bytes; null for anything else. */
export const byteSize = (raw: string): number | null => {
  const m = /^([1-9][0-9]*)([kmg]?)$/i.exec(raw);
  return m ? Number(m[1]) * (UNITS[(m[2] ?? '').toLowerCase()] ?? 1) : null;
};

/**
 * A repository key that is a limit, and its ceiling: the machine key
 * `CHALK_CEILING_<name>` with the same kind of value (`schema` is made for
 * each key's name, so an error names the key that is wrong) and `ceiling` as
 * its default.
 */
export function limitKey(o: {
  name: string;
  default: string;
  help: string;
  schema: (key: string) => z.ZodType<unknown>;
  ceiling: string;
  label: string;
  show?: (raw: string) => string;
  measure?: Limit['measure'];
}): [KeySpec, KeySpec] {
  const ceiling = `CHALK_CEILING_${o.name.replace(/^CHALK_/, '')}`;
  const limit: Limit = { ceiling, measure: o.measure ?? numberSize, label: o.label, show: o.show ?? ((raw) => raw) };
  return [
    repoKey(o.name, o.default, o.help, () => o.schema(o.name), { limit }),
    machineKey(ceiling, o.ceiling, `Most a repository's .chalk/config may set ${o.name} to`, () => o.schema(ceiling)),
  ];
}
