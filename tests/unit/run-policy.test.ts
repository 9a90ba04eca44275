import { describe, expect, it } from 'vitest';
import {
  afterFailedReview,
  afterLoop,
  chooseMode,
  classifyLoop,
  GUARDED_LOOPS_DETAIN,
  guardFeedback,
  type Limits,
  LoopState,
  reviewDue,
  startLoop,
} from '../../core/run/base/policy.js';

const limits: Limits = { maxLoops: 20, maxRetries: 2, reviewRounds: 1 };

describe('mode choice', () => {
  it.each([
    [2, '', 'continue'],
    [2, 'rubric failed (exit 1)\n...', 'retry'],
    [0, '', 'fix-review'],
    [0, 'rubric failed (exit 1)', 'fix-review'],
  ] as const)('open %i, feedback %j: %s', (open, feedback, mode) => {
    expect(chooseMode(open, feedback)).toBe(mode);
  });

  it('reviews only when nothing is open and no findings wait', () => {
    const s = new LoopState();
    expect(reviewDue(1, s)).toBe(false);
    expect(reviewDue(0, s)).toBe(true);
    s.findings = '- [blocker] a.ts: wrong';
    expect(reviewDue(0, s)).toBe(false);
  });
});

describe("classification of a loop's end", () => {
  const base = { mode: 'continue' as const, agentStatus: 'ok', rubricExit: 0, openBefore: 2, openAfter: 1 };
  it.each([
    [{}, 'progressed', ''],
    [{ openAfter: 2 }, 'passed', 'rubric passed but no checkpoint was ticked in the spec'],
    [{ rubricExit: 1 }, 'failed', 'rubric failed (exit 1)'],
    [{ rubricExit: 124 }, 'failed', 'rubric failed (exit 124)'],
    // The agent's failure wins over whatever the rubric said.
    [
      { agentStatus: 'error_max_budget_usd', rubricExit: 0 },
      'agent_error',
      'agent stopped early (error_max_budget_usd)',
    ],
    [{ agentStatus: 'error', rubricExit: 1 }, 'agent_error', 'agent stopped early (error)'],
    // A green fix-review loop progresses without ticking anything.
    [{ mode: 'fix-review', openBefore: 0, openAfter: 0 }, 'progressed', ''],
    [{ mode: 'fix-review', openBefore: 0, openAfter: 0, rubricExit: 2 }, 'failed', 'rubric failed (exit 2)'],
    // A rubric stopped at the output cap says so, whatever exit the kill left it.
    [
      { rubricExit: 143, rubricCappedMb: 64 },
      'failed',
      'rubric printed more than CHALK_OUTPUT_CAP_MB (64 MiB) and was stopped',
    ],
    [{ rubricExit: 1, rubricCappedMb: 8, agentStatus: 'error' }, 'agent_error', 'agent stopped early (error)'],
  ] as const)('%j ends %s', (over, ended, reason) => {
    expect(classifyLoop({ ...base, ...over })).toEqual({ ended, reason });
  });
});

describe('limits', () => {
  it('detains on the loop after CHALK_MAX_LOOPS with the open count', () => {
    const s = new LoopState();
    const small = { ...limits, maxLoops: 2 };
    expect(startLoop(s, small, 3)).toBe(1);
    expect(startLoop(s, small, 3)).toBe(2);
    expect(startLoop(s, small, 3)).toEqual({
      kind: 'loop_limit',
      reason: 'loop limit of 2 reached with 3 checkpoints open',
      detail: '',
    });
  });

  it('tolerates CHALK_MAX_RETRIES loops without progress and detains on the next, with its own kind', () => {
    const s = new LoopState();
    const failed = { ended: 'failed' as const, reason: 'rubric failed (exit 1)' };
    expect(afterLoop(s, limits, failed)).toBeNull();
    expect(afterLoop(s, limits, { ended: 'passed', reason: 'no tick' })).toBeNull();
    expect(afterLoop(s, limits, { ended: 'agent_error', reason: 'agent stopped early (error)' })).toEqual({
      kind: 'agent_error',
      reason: 'agent stopped early (error)',
      detail: '',
    });
  });

  it('progress resets the count, the feedback and the findings', () => {
    const s = new LoopState();
    s.feedback = 'x';
    s.findings = 'y';
    afterLoop(s, limits, { ended: 'failed', reason: 'r' });
    afterLoop(s, limits, { ended: 'failed', reason: 'r' });
    expect(afterLoop(s, limits, { ended: 'progressed', reason: '' })).toBeNull();
    expect([s.failures, s.feedback, s.findings]).toEqual([0, '', '']);
    expect(afterLoop(s, limits, { ended: 'failed', reason: 'r' })).toBeNull();
    expect(afterLoop(s, limits, { ended: 'failed', reason: 'r' })).toBeNull();
    expect(afterLoop(s, limits, { ended: 'failed', reason: 'r' })?.kind).toBe('failed');
  });

  it('CHALK_MAX_RETRIES=0 detains on the first loop without progress', () => {
    expect(afterLoop(new LoopState(), { ...limits, maxRetries: 0 }, { ended: 'passed', reason: 'p' })?.kind).toBe(
      'passed',
    );
  });

  it('a failed review goes to one fix-review round per CHALK_REVIEW_ROUNDS, then detains with the findings', () => {
    const s = new LoopState();
    expect(afterFailedReview(s, limits, '- [blocker] a: b')).toBeNull();
    expect(s.findings).toBe('- [blocker] a: b');
    s.findings = '';
    expect(afterFailedReview(s, limits, '- [blocker] c: d')).toEqual({
      kind: 'review',
      reason: 'final review still finds problems after 1 fix round',
      detail: '- [blocker] c: d',
    });
    expect(afterFailedReview(new LoopState(), { ...limits, reviewRounds: 0 }, 'f')?.reason).toBe(
      'final review still finds problems after 0 fix rounds',
    );
  });
});

describe('a loop the guard refused', () => {
  const refused = {
    ok: false as const,
    files: ['.chalk/config'],
    reason: 'the loop changed files the agent may not change: .chalk/config',
  };
  const base = { mode: 'continue' as const, agentStatus: 'ok', rubricExit: 0, openBefore: 2, openAfter: 1 };
  const guarded = { ended: 'failed', reason: refused.reason, guarded: ['.chalk/config'] };

  it.each([
    ['green and ticked: never progress', {}],
    ['green, nothing ticked', { openAfter: 2 }],
    ['the rubric failed', { rubricExit: 1 }],
    ['the agent stopped early', { agentStatus: 'error_max_turns' }],
    ['a green fix-review loop', { mode: 'fix-review' as const, openBefore: 0, openAfter: 0 }],
  ])('%s: failed with the guard reason', (_name, over) => {
    expect(classifyLoop({ ...base, ...over, guard: refused })).toEqual(guarded);
  });

  it('a loop the guard allowed is classified as before', () => {
    expect(classifyLoop({ ...base, guard: { ok: true } })).toEqual({ ended: 'progressed', reason: '' });
    expect(classifyLoop({ ...base, rubricExit: 1, guard: { ok: true } })).toEqual({
      ended: 'failed',
      reason: 'rubric failed (exit 1)',
    });
  });

  const ending = { ended: 'failed' as const, reason: refused.reason, guarded: ['.chalk/config', '.husky/pre-push'] };
  const detained = { kind: 'guard', reason: refused.reason, detail: '', files: ['.chalk/config', '.husky/pre-push'] };

  it('detains on the second guarded loop of a run, progress in between or not', () => {
    expect(GUARDED_LOOPS_DETAIN).toBe(2);
    const s = new LoopState();
    const roomy = { ...limits, maxRetries: 5 };
    expect(afterLoop(s, roomy, ending)).toBeNull();
    expect(afterLoop(s, roomy, { ended: 'progressed', reason: '' })).toBeNull();
    expect(afterLoop(s, roomy, { ended: 'failed', reason: 'rubric failed (exit 1)' })).toBeNull();
    expect(afterLoop(s, roomy, ending)).toEqual(detained);
  });

  it.each<[string, number, Array<'guard' | 'fail'>, string | null]>([
    ['one guarded loop within the retries', 2, ['guard'], null],
    ['CHALK_MAX_RETRIES=0: the first guarded loop', 0, ['guard'], 'guard'],
    ['CHALK_MAX_RETRIES=1: a failure, then a guarded loop', 1, ['fail', 'guard'], 'guard'],
    ['CHALK_MAX_RETRIES=1: a guarded loop, then a failure detains as that failure', 1, ['guard', 'fail'], 'failed'],
    ['two guarded loops in a row', 9, ['guard', 'guard'], 'guard'],
  ])('%s', (_name, maxRetries, loops, kind) => {
    const s = new LoopState();
    let last = null as ReturnType<typeof afterLoop>;
    for (const l of loops) {
      last = afterLoop(s, { ...limits, maxRetries }, l === 'guard' ? ending : { ended: 'failed', reason: 'r' });
    }
    expect(last?.kind ?? null).toBe(kind);
    if (kind === 'guard') expect(last).toEqual(detained);
  });

  it('tells the next loop the reason and what to put back, without rubric output', () => {
    const f = guardFeedback(refused.reason).split('\n');
    expect(f[0]).toBe(refused.reason);
    expect(f.slice(1).join(' ')).toMatch(/Nothing from that loop was committed\. Put those files back/);
    expect(f.slice(1).join(' ')).toMatch(/A second such loop stops the run\.$/);
  });
});

describe('a loop whose commits were refused on their way home', () => {
  const base = { mode: 'continue' as const, agentStatus: 'ok', rubricExit: 0, openBefore: 2, openAfter: 1 };
  const why = "the sandbox's tree has more than 500000 files: CHALK_HOME_MAX_FILES caps it at 500000";

  it('failed, saying it was refused and why, never blaming the files it is graded by', () => {
    const ending = classifyLoop({ ...base, refused: why });
    expect(ending).toEqual({ ended: 'failed', reason: `refused on the way home: ${why}`, refused: true });
    expect(ending.guarded).toBeUndefined();
  });

  it('detains at once, as refused, whatever the retries left', () => {
    const s = new LoopState();
    const ending = classifyLoop({ ...base, refused: why });
    expect(afterLoop(s, { ...limits, maxRetries: 9 }, ending)).toEqual({
      kind: 'refused',
      reason: `refused on the way home: ${why}`,
      detail: '',
    });
    expect(s.guarded).toBe(0);
  });
});
