import { VERDICTS as LOOP_VERDICTS, STOPPING_VERDICTS } from '../fingerprint/verdict.js';
import type { Card } from './card.js';

/**
 * `chalk share`: an anonymised summary a person may choose to post. Pure. Built from an
 * allow-list: every field is a count, an amount rounded to two significant figures, or a
 * label from a fixed set below. Nothing stored as text (repository names, tickets, paths,
 * test names, errors, notes, prompts and their hash, URLs, model revisions, timestamps) is
 * copied: text is only ever mapped onto a fixed label, anything else becomes `other`.
 */

export const SHARE_SCHEMA = 1;

export const KINDS = ['continue', 'retry', 'fix-review', 'spec-check', 'review', 'distill'] as const;
export const AGENT_OUTCOMES = [
  'ok',
  'blocked',
  'error_max_turns',
  'error_max_budget_usd',
  'error_during_execution',
] as const;
/** The loop verdicts, and `none` for a loop that got none. */
export const VERDICTS = [...LOOP_VERDICTS, 'none'] as const;
export const MODES = ['off', 'shadow', 'on'] as const;
export const REASONS = [
  'blocked',
  'loop_limit',
  'review',
  'deja_vu',
  'repeat',
  'no_change',
  'stuck',
  'failed',
  'agent_error',
  'no_checkpoint',
  'other',
] as const;
export const DECIDER_KINDS = ['stuck', 'rerank'] as const;

/** Two significant figures; null stays null. */
export function round2(n: number | null | undefined): number | null {
  if (n === null || n === undefined || !Number.isFinite(Number(n))) return null;
  const x = Number(n);
  if (x === 0) return 0;
  return Number(x.toPrecision(2));
}

/** A label from `set`, or `other`. */
export const label = <T extends string>(value: string | null | undefined, set: readonly T[]): T | 'other' =>
  set.includes(value as T) ? (value as T) : 'other';

/**
 * A model's family: `claude-<name>-<major>[-<minor>]` with any date revision dropped, an alias
 * (`opus`, `sonnet`, `haiku`), `default`, else `other` (ARNs, gateway names, anything unknown).
 */
export function modelFamily(model: string): string {
  const m = /^claude-(opus|sonnet|haiku)-([0-9])(?:-([0-9]))?(?:-[0-9]{8})?$/.exec(model);
  if (m) return `claude-${m[1]}-${m[2]}${m[3] ? `-${m[3]}` : ''}`;
  if (['opus', 'sonnet', 'haiku', 'default'].includes(model)) return model;
  return 'other';
}

/** A count or size as a range label: 0, 1, 2-3, 4-7, 8-15, 16-31, ... */
export function rangeLabel(n: number): string {
  if (!Number.isFinite(n) || n < 1) return '0';
  const lo = 2 ** Math.floor(Math.log2(n));
  return lo === 1 ? '1' : `${lo}-${lo * 2 - 1}`;
}

/** The ISO week of a date, e.g. `2026-W41`. */
export function isoWeek(d: Date): string {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const start = Date.UTC(t.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((t.getTime() - start) / 86_400_000 + 1) / 7);
  return `${t.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

export interface HostFacts {
  platform: string;
  arch: string;
  cpus: number;
  memoryBytes: number;
}

const tally = <T extends string>(entries: [string, number][], set: readonly T[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const [k, n] of entries) {
    const l = label(k, set);
    out[l] = (out[l] ?? 0) + Number(n);
  }
  return out;
};

const share = (a: number, b: number) => (b > 0 ? round2(a / b) : null);

/** A decider URL as `local` (loopback or a Unix socket) or `hosted`; never the URL. */
export function deciderWhere(url: string): 'local' | 'hosted' | 'none' {
  if (url === '') return 'none';
  try {
    const u = new URL(url);
    if (u.protocol === 'unix:' || ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname)) return 'local';
  } catch {
    return 'hosted';
  }
  return 'hosted';
}

export interface ShareOptions {
  card: Card;
  chalkVersion: string;
  host: HostFacts;
  now: Date;
}

export function shareSummary({ card, chalkVersion, host, now }: ShareOptions) {
  const s = card.raw.summary;
  const t = s.totals;
  const n = (k: string) => Number(t[k] ?? 0);
  const byModel: Record<string, { loops: number; checkpoints: number; cost: number }> = {};
  for (const m of s.by_model) {
    const f = modelFamily(m.model);
    const cur = byModel[f] ?? { loops: 0, checkpoints: 0, cost: 0 };
    byModel[f] = { loops: cur.loops + m.loops, checkpoints: cur.checkpoints + m.checkpoints, cost: cur.cost + m.cost };
  }
  const byKind: Record<string, { calls: number; cost: number; seconds: number }> = {};
  for (const k of s.by_kind) {
    const l = label(k.kind, KINDS);
    const cur = byKind[l] ?? { calls: 0, cost: 0, seconds: 0 };
    byKind[l] = { calls: cur.calls + k.calls, cost: cur.cost + k.cost, seconds: cur.seconds + k.seconds };
  }
  const agent: Record<string, { loops: number; turns: number }> = {};
  for (const a of s.agent) {
    const l = label(a.status, AGENT_OUTCOMES);
    const cur = agent[l] ?? { loops: 0, turns: 0 };
    agent[l] = { loops: cur.loops + a.loops, turns: cur.turns + a.turns };
  }
  const d = card.raw.decider;
  const models: Record<string, number> = {};
  for (const m of d.models) {
    const w = deciderWhere(m.url);
    models[w] = (models[w] ?? 0) + m.asked;
  }
  const lh = card.raw.runs.lessons_help.all;
  const l = card.ledger;
  return {
    schema: SHARE_SCHEMA,
    chalk: /^[0-9]+\.[0-9]+\.[0-9]+$/.test(chalkVersion) ? chalkVersion : 'other',
    harness: 'claude-code',
    week: isoWeek(now),
    days: card.settings.days,
    host: {
      os: label(host.platform, ['darwin', 'linux']),
      arch: host.arch === 'x64' ? 'x86_64' : label(host.arch, ['arm64']),
      cpus: rangeLabel(host.cpus),
      memory_gib: rangeLabel(host.memoryBytes / 2 ** 30),
    },
    totals: {
      calls: n('calls'),
      loops: n('loops'),
      checkpoints: n('checkpoints'),
      tickets: n('tickets'),
      runs: n('runs'),
      repositories: n('repositories'),
      submitted: s.events.submitted,
      detentions: s.events.detentions,
      refused_actions: n('denials'),
      cost: round2(n('cost')),
      loop_cost: round2(n('loop_cost')),
      no_progress_cost: round2(n('no_progress_cost')),
      tokens: round2(n('input_tokens') + n('output_tokens') + n('cache_read_tokens') + n('cache_write_tokens')),
    },
    rates: {
      cost_per_checkpoint: share(n('cost'), n('checkpoints')),
      loops_per_checkpoint: share(n('loops'), n('checkpoints')),
      no_progress_share: share(n('no_progress_cost'), n('loop_cost')),
      detention_rate: share(s.events.detentions, n('tickets')),
      review_pass_rate: share(s.checks.review.ran - s.checks.review.failed, s.checks.review.ran),
      spec_check_pass_rate: share(s.checks.spec_check.ran - s.checks.spec_check.failed, s.checks.spec_check.ran),
      cache_read_share: share(n('cache_read_tokens'), n('input_tokens') + n('cache_read_tokens')),
    },
    by_kind: Object.fromEntries(
      Object.entries(byKind).map(([k, v]) => [
        k,
        {
          calls: v.calls,
          cost: round2(v.cost),
          avg_cost: share(v.cost, v.calls),
          avg_seconds: share(v.seconds, v.calls),
        },
      ]),
    ),
    by_model: Object.fromEntries(
      Object.entries(byModel).map(([k, v]) => [
        k,
        { loops: v.loops, checkpoints: v.checkpoints, cost: round2(v.cost) },
      ]),
    ),
    budget: {
      cap: round2(s.budget.cap),
      median_loop_cost: round2(s.budget.median),
      p90_loop_cost: round2(s.budget.p90),
      max_loop_cost: round2(s.budget.max),
      loops_near_cap: s.budget.near_cap,
    },
    review: { ran: s.checks.review.ran, failed: s.checks.review.failed, cost: round2(s.checks.review.cost) },
    spec_check: {
      ran: s.checks.spec_check.ran,
      failed: s.checks.spec_check.failed,
      cost: round2(s.checks.spec_check.cost),
    },
    agent,
    events: { ...s.events },
    detentions_by_reason: tally(Object.entries(s.detentions_by_reason), REASONS),
    verdicts: tally(Object.entries(s.verdicts), VERDICTS),
    fp_rules: tally(Object.entries(s.fp_rules), MODES),
    lessons: {
      retries_with: lh.with,
      retries_with_passed: lh.with_passed,
      retries_without: lh.without,
      retries_without_passed: lh.without_passed,
      opened: Number(s.lessons.opened ?? 0),
      resolved: Number(s.lessons.resolved ?? 0),
      distilled: Number(s.lessons.distilled ?? 0),
      fingerprinted: Number(s.lessons.fingerprinted ?? 0),
      scope_repo: Number(s.lessons.scope_repo ?? 0),
      scope_general: Number(s.lessons.scope_general ?? 0),
    },
    ledger: {
      judgeable_runs: l.judgeableRuns,
      detained_runs: l.detainedRuns,
      no_progress_cost: round2(l.noProgressCost),
      would_have_saved: round2(l.wouldHaveSaved),
      false_stops: l.falseStops,
      detained_improving: l.detainedImproving,
      failed_loops: n('failed_loops'),
      failed_loops_naming_no_tests: n('failed_loops_no_tests'),
      saved_by_verdict: Object.fromEntries(STOPPING_VERDICTS.map((v) => [v, round2(l.savedByVerdict[v] ?? 0)])),
    },
    decider: {
      asked: d.asked,
      answered: d.answered,
      acted: d.acted,
      median_answer_ms: d.median_latency_ms === null ? null : Math.round(d.median_latency_ms / 10) * 10,
      by_kind: tally(Object.entries(d.by_kind), DECIDER_KINDS),
      by_mode: tally(Object.entries(d.by_mode), ['shadow', 'on']),
      no_answer: d.no_answer.reduce((a, x) => a + x.calls, 0),
      would_stop: {
        correct: card.deciderWouldStop.correct,
        false_stops: card.deciderWouldStop.falseStops,
        waiting: card.deciderWouldStop.waiting,
      },
      bands: card.bands.map((b) => ({ band: b.band, answers: b.answers, right: b.right })),
      gates: card.calibration.map((g) => ({
        where: deciderWhere(g.url),
        judged: g.judged,
        correct: g.correct,
        false_stops: g.falseStops,
        waiting: g.waiting,
        passes: g.passes,
      })),
      models,
    },
  };
}

export type ShareSummary = ReturnType<typeof shareSummary>;
