import { z } from 'zod';

/**
 * A decider entry: where it is, how much it reads, and how it is admitted.
 * An entry is bounded either by a concurrency (`max_concurrent=N`: a permit per
 * call, returned when the call ends) or by a quota window (`tpm=N`: a token
 * bucket refilled at N tokens per minute, holding at most `burst` tokens,
 * one minute's worth unless declared).
 */
export type AdmissionLimit =
  | { kind: 'concurrency'; maxConcurrent: number }
  | { kind: 'window'; tokensPerMinute: number; burst: number };

export interface DeciderEntry {
  /** Names the entry in records and messages, e.g. `decider`. */
  id: string;
  /** The base URL (never with credentials). */
  url: string;
  /** The context ceiling: a request counted above it is refused before the wire. */
  maxContextTokens: number;
  limit: AdmissionLimit;
}

/** The reference server's window (strands-decider `/health.max_length`). */
export const DEFAULT_CONTEXT_TOKENS = 4096;
export const DEFAULT_LIMIT: AdmissionLimit = { kind: 'concurrency', maxConcurrent: 4 };

const positive = z.coerce.number().int().positive();

/**
 * Parses a declared limit: `max_concurrent=4`, `tpm=15000` or `tpm=15000,burst=2000`.
 * The error is the whole user-facing line.
 */
export function parseLimit(text: string, key = 'the decider limit'): AdmissionLimit {
  const fields = new Map<string, string>();
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new Error(`${key} must look like max_concurrent=4 or tpm=15000 (got '${text}')`);
    fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const num = (name: string) => {
    const parsed = positive.safeParse(fields.get(name));
    if (!parsed.success) throw new Error(`${key}: ${name} must be a positive whole number (got '${fields.get(name)}')`);
    return parsed.data;
  };
  if (fields.has('max_concurrent') && !fields.has('tpm') && fields.size === 1) {
    return { kind: 'concurrency', maxConcurrent: num('max_concurrent') };
  }
  if (fields.has('tpm') && !fields.has('max_concurrent')) {
    const tokensPerMinute = num('tpm');
    return { kind: 'window', tokensPerMinute, burst: fields.has('burst') ? num('burst') : tokensPerMinute };
  }
  throw new Error(`${key} must be either max_concurrent=N or tpm=N[,burst=N] (got '${text}')`);
}

export function describeLimit(limit: AdmissionLimit): string {
  return limit.kind === 'concurrency'
    ? `max_concurrent=${limit.maxConcurrent}`
    : `tpm=${limit.tokensPerMinute},burst=${limit.burst}`;
}
