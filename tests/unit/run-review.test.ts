import { describe, expect, it } from 'vitest';
import { afterFailedReview, type Limits, LoopState, reviewDue } from '../../core/run/base/policy.js';
import { noVerdict, reviewOutcome } from '../../core/run/loop/review.js';

const finding = { severity: 'blocker' as const, file: 'src/cart.ts', issue: 'the total ignores quantities' };
const answer = (verdict: 'pass' | 'fail', over: object = {}) => ({
  verdict,
  summary: ' Looks fine. ',
  findings: [],
  ...over,
});

describe('what a review answer means', () => {
  it.each([
    [
      'a pass',
      { answer: answer('pass'), verdict: 'pass', status: 'ok' },
      { passed: true, summary: 'Looks fine.', findings: '' },
    ],
    [
      'a fail with findings',
      { answer: answer('fail', { findings: [finding] }), verdict: 'fail', status: 'ok' },
      { passed: false, summary: 'Looks fine.', findings: '- [blocker] src/cart.ts: the total ignores quantities' },
    ],
    [
      'a fail without findings',
      { answer: answer('fail'), verdict: 'fail', status: 'ok' },
      { passed: false, summary: 'Looks fine.', findings: '- [blocker] Looks fine.' },
    ],
    [
      'a fail without findings or summary',
      { answer: answer('fail', { summary: '' }), verdict: 'fail', status: 'ok' },
      { passed: false, summary: '', findings: '- [blocker] the review failed without findings' },
    ],
    [
      'no answer from a call that ended ok',
      { answer: null, verdict: 'none', status: 'ok' },
      { passed: false, summary: '', findings: '- [blocker] the review gave no readable verdict' },
    ],
    [
      'no answer from a call that stopped early',
      { answer: null, verdict: 'none', status: 'error_max_turns' },
      {
        passed: false,
        summary: '',
        findings: '- [blocker] the review gave no readable verdict (the call ended error_max_turns)',
      },
    ],
    [
      'an answer whose verdict is not readable',
      { answer: answer('pass'), verdict: 'none', status: 'ok' },
      { passed: false, summary: '', findings: '- [blocker] the review gave no readable verdict' },
    ],
  ] as const)('%s', (_name, input, expected) => {
    expect(reviewOutcome(input)).toEqual(expected);
  });

  it('names the status only when the call did not end ok', () => {
    expect(noVerdict('ok')).toBe('the review gave no readable verdict');
    expect(noVerdict('error')).toBe('the review gave no readable verdict (the call ended error)');
  });
});

describe('a review with no verdict goes through the fix-review rounds like a failing one', () => {
  const limits: Limits = { maxLoops: 20, maxRetries: 2, reviewRounds: 1 };
  it('first a fix-review loop with the finding, then a review detention', () => {
    const s = new LoopState();
    const { findings } = reviewOutcome({ answer: null, verdict: 'none', status: 'ok' });
    expect(afterFailedReview(s, limits, findings)).toBeNull();
    expect(s.findings).toBe('- [blocker] the review gave no readable verdict');
    expect(reviewDue(0, s)).toBe(false);
    s.findings = '';
    expect(afterFailedReview(s, limits, findings)).toEqual({
      kind: 'review',
      reason: 'final review still finds problems after 1 fix round',
      detail: '- [blocker] the review gave no readable verdict',
    });
  });
});
