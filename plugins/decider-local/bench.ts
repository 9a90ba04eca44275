import { noul } from '../../core/decider.js';
import type { Decider } from '../../core/plugin.js';

/** How many warm questions the median is over, after one warm-up. */
export const BENCH_QUESTIONS = 5;
/** Each benchmark question's own time (a cold service may be slow; the median says how slow). */
export const BENCH_QUESTION_MS = 60_000;

/** The median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('the median of nothing');
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** A stuck question's state of the size a loop sends: two loops' failures and a 40-line diffstat (> 1,000 characters). */
export function benchState(): string {
  const files = Array.from(
    { length: 40 },
    (_, i) =>
      ` src/module-${String(i).padStart(2, '0')}/handler.ts | ${(i % 9) + 1} ${'+'.repeat((i % 5) + 1)}${'-'.repeat(i % 3)}`,
  );
  return [
    'previous loop:',
    '  failing tests (2): tests/cart.test.ts > totals include tax, tests/cart.test.ts > empty cart is zero',
    '  first error: AssertionError: expected 10.8 to equal 10.5 at tests/cart.test.ts:14',
    'current loop:',
    '  failing tests (2): tests/cart.test.ts > totals include tax, tests/cart.test.ts > empty cart is zero',
    '  first error: AssertionError: expected 10.8 to equal 10.5 at tests/cart.test.ts:14',
    'changes between the two loops (git diff --stat):',
    ...files,
    ` 40 files changed, 212 insertions(+), 40 deletions(-)`,
  ].join('\n');
}

export const STUCK_INSTRUCTIONS =
  'Is the agent stuck on the same root cause as in the previous loop, so that another attempt would fail the same way?';

/**
 * The median time of BENCH_QUESTIONS warm stuck questions (after one warm-up), asked the way a
 * loop asks them (taking turns). Throws with the failure's line when one gets no answer.
 */
export async function measureMedianMs(decider: Decider, now: () => number = Date.now): Promise<number> {
  const request = { state: benchState(), questions: { stuck: noul(STUCK_INSTRUCTIONS) } };
  const times: number[] = [];
  for (let i = 0; i <= BENCH_QUESTIONS; i++) {
    const t0 = now();
    const reply = await decider.decide(request, { deadline: t0 + BENCH_QUESTION_MS });
    if (!reply.ok) throw new Error(`benchmark question ${i + 1} got no answer: ${reply.failure.describe()}`);
    if (i > 0) times.push(now() - t0);
  }
  return Math.round(median(times));
}
