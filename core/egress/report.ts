import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * `io/egress.jsonl`, what a run's sandbox was refused on its way out: one JSON line per
 * destination and phase, with its count and the reason the sandbox was given. Written by the
 * run (core/run/base/egress.ts), read by `chalk why` and the request body. The lines came from a
 * proxy that read a sandbox's requests: they are data, checked and capped on the way in and
 * on the way out.
 */

export const egressLine = z.object({
  phase: z.string().max(40),
  host: z.string().max(255),
  port: z.number().int().min(1).max(65535),
  kind: z.enum(['policy', 'private', 'loopback', 'sni', 'protocol', 'dns', 'gateway']),
  count: z.number().int().positive(),
  reason: z.string().max(1000),
  first: z.number(),
  last: z.number(),
});
export type EgressLine = z.infer<typeof egressLine>;

/** The most io/egress.jsonl holds; past it, refusals are still logged but no longer kept. */
export const EGRESS_FILE_CAP = 1024 * 1024;

export const target = (l: Pick<EgressLine, 'host' | 'port'>) =>
  l.host.includes(':') ? `[${l.host}]:${l.port}` : `${l.host}:${l.port}`;

/** Refusals the person can lift by allowing the destination (the others are never allowed). */
export const allowable = (kind: EgressLine['kind']) => kind === 'policy' || kind === 'private';

/** The setting that would allow these destinations. */
export function allowLine(targets: readonly string[]): string {
  return targets.length === 0 ? '' : `CHALK_EGRESS_ALLOW=${targets.join(',')}`;
}

export function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The lines of an egress file that are well formed (the rest ignored). */
export function readEgress(path: string): EgressLine[] {
  const out: EgressLine[] = [];
  for (const raw of readText(path).slice(0, EGRESS_FILE_CAP).split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const p = egressLine.safeParse(JSON.parse(raw));
      if (p.success) out.push(p.data);
    } catch {}
  }
  return out;
}

export interface BlockedHost {
  target: string;
  count: number;
  phases: string[];
  /** Whether allowing the destination would lift it (its refusals were of the policy, not the protocol). */
  allowable: boolean;
  /** The reason of its first refusal, as the sandbox was given it. */
  reason: string;
}

/** Refused destinations of a run, most refused first: their counts and the phases they were refused in. */
export function blockedHosts(lines: readonly EgressLine[]): BlockedHost[] {
  const by = new Map<string, BlockedHost>();
  for (const l of lines) {
    const t = target(l);
    const e = by.get(t) ?? { target: t, count: 0, phases: [], allowable: false, reason: l.reason };
    e.count += l.count;
    e.allowable ||= allowable(l.kind);
    if (!e.phases.includes(l.phase)) e.phases.push(l.phase);
    by.set(t, e);
  }
  return [...by.values()].sort((a, b) => b.count - a.count || (a.target < b.target ? -1 : 1));
}

/** A reason's first sentence, for a one-line listing. */
export const firstSentence = (s: string) =>
  s
    .split(/(?<=\.) /)[0]
    ?.replace(/\.$/, '')
    .slice(0, 200) ?? '';

/** One line per refused destination, for a person: how often, when, and what would allow it. */
export function blockedLine(b: BlockedHost): string {
  const allow = b.target.endsWith(':53')
    ? 'a DNS lookup (names resolve at the proxy)'
    : `to allow: CHALK_EGRESS_ALLOW=${b.target}`;
  return `${b.target} refused ${b.count} time${b.count === 1 ? '' : 's'} (${b.phases.slice(0, 5).join(', ')}); ${allow}`;
}
