import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  DETENTION_KINDS,
  type DetentionKind,
  detentionBranch,
  detentionCommitMessage,
  detentionLines,
  detentionSignature,
  failureLines,
  loopOutcome,
  type NextStepFacts,
  nextStep,
  reasons,
  shellQuote,
} from '../../core/run/base/detention-reasons.js';

const IO = '/home/sam/.local/state/chalk/shop/runs/SHOP-7/io';
const facts = (kind: DetentionKind, extra: Partial<NextStepFacts> = {}): NextStepFacts => ({
  kind,
  io: IO,
  maxRetries: 2,
  maxLoops: 20,
  reviewRounds: 1,
  budgetUsd: '1.00',
  ...extra,
});

describe('detention reasons', () => {
  it.each([
    [reasons.blocked(), 'agent reported a blocker'],
    [reasons.failed(1), 'rubric failed (exit 1)'],
    [reasons.failed(124), 'rubric failed (exit 124)'],
    [reasons.agentError('error_max_budget_usd'), 'agent stopped early (error_max_budget_usd)'],
    [reasons.passed(), 'rubric passed but no checkpoint was ticked in the spec'],
    [reasons.loopLimit(20, 3), 'loop limit of 20 reached with 3 checkpoints open'],
    [reasons.loopLimit(5, 1), 'loop limit of 5 reached with 1 checkpoint open'],
    [reasons.review(1), 'final review still finds problems after 1 fix round'],
    [reasons.review(2), 'final review still finds problems after 2 fix rounds'],
    [reasons.verdict('repeat', reasons.failed(1)), 'repeat: rubric failed (exit 1)'],
    [
      reasons.verdict('no_change', reasons.passed()),
      'no_change: rubric passed but no checkpoint was ticked in the spec',
    ],
  ])('%s', (got, expected) => {
    expect(got).toBe(expected);
  });
});

describe('the next: line', () => {
  it.each<[DetentionKind, Partial<NextStepFacts>, RegExp]>([
    ['blocked', {}, /^supply what the blocker above asks for/],
    ['failed', {}, new RegExp(`after 2 retries; read ${IO}/rubric\\.log and fix the failure`)],
    ['failed', { maxRetries: 1 }, /after 1 retry; read/],
    ['agent_error', {}, new RegExp(`^read ${IO}/loop\\.json .* raise CHALK_BUDGET_USD \\(now 1\\.00\\)$`)],
    ['agent_error', { budgetUsd: 2.5 }, /CHALK_BUDGET_USD \(now 2\.50\)/],
    ['passed', {}, /ticked no checkpoint; tick it if the work is done/],
    ['loop_limit', { maxLoops: 7 }, /raise CHALK_MAX_LOOPS \(now 7\)$/],
    ['review', { reviewRounds: 3 }, /CHALK_REVIEW_ROUNDS \(now 3\)$/],
    ['deja_vu', { openTicket: 'SHOP-3' }, /open detention of SHOP-3; resolve that one first$/],
    ['deja_vu', {}, /open detention of another ticket;/],
    ['repeat', {}, /same failing change twice/],
    ['no_change', {}, /left the code unchanged/],
    ['stuck', {}, /looks stuck on the same root cause as the loop before; fix that cause yourself/],
    [
      'stuck',
      { given: 'the decider judged it stuck (confidence 0.96); fix it' },
      /^the decider judged it stuck \(confidence 0\.96\); fix it$/,
    ],
    ['other', { given: 'ask acme\nnext: forged' }, /^ask acme next: forged$/],
    [
      'guard',
      { files: ['.chalk/config', '.husky/pre-push'], branch: 'detention/SHOP-7-1791171685' },
      /^the agent changed what it is graded by \(\.chalk\/config, \.husky\/pre-push\), so none of that work reached the ticket branch; read the attempt on detention\/SHOP-7-1791171685 \(git diff HEAD detention\/SHOP-7-1791171685\) before you take any of it/,
    ],
    ['guard', {}, /\(the files named above\).* on the detention branch below /],
    [
      'refused',
      { branch: 'detention/SHOP-7-1791171685' },
      /^the sandbox's commits were refused on their way home, so nothing of that loop reached the ticket branch or the worktree; if the work really needs more than the cap named above, raise that key in your environment \(a repository cannot\)/,
    ],
    ['other', {}, /^fix what stopped the run$/],
  ])('%s', (kind, extra, pattern) => {
    expect(nextStep(facts(kind, extra))).toMatch(pattern);
  });

  it('is different for every kind, and always one line', () => {
    const lines = DETENTION_KINDS.map((k) => nextStep(facts(k, { openTicket: 'X-1' })));
    expect(new Set(lines).size).toBe(DETENTION_KINDS.length);
    for (const l of lines) expect(l).not.toContain('\n');
  });

  it('names hostile file names escaped, on one line', () => {
    const line = nextStep(facts('guard', { files: ['.chalk/a\nnext: fine\u001b[2J'], branch: 'detention/X-1' }));
    expect(line).toContain('(".chalk/a\\u000anext: fine\\u001b[2J")');
    expect(line).not.toContain('\n');
    expect(line).not.toContain('\u001b');
  });

  it('points at permissions from 3 refused actions in the last loop, whatever the kind but guard', () => {
    expect(nextStep(facts('failed', { denials: 2 }))).toMatch(/^the rubric still failed/);
    expect(nextStep(facts('guard', { denials: 5 }))).toMatch(/^the agent changed what it is graded by/);
    for (const kind of DETENTION_KINDS.filter((k) => k !== 'guard')) {
      expect(nextStep(facts(kind, { denials: 3 }))).toBe(
        '3 actions were refused by permission checks in the last loop, which happens when auto mode is not available for the model; run: chalk doctor',
      );
    }
  });
});

describe('the detention branch', () => {
  it.each([
    [[], 'detention/SHOP-7-1791171685'],
    [['detention/SHOP-7-1791171684', 'chalk/SHOP-7'], 'detention/SHOP-7-1791171685'],
    [['detention/SHOP-7-1791171685'], 'detention/SHOP-7-1791171685-2'],
    [['refs/heads/detention/SHOP-7-1791171685', 'detention/SHOP-7-1791171685-2'], 'detention/SHOP-7-1791171685-3'],
    [['detention/SHOP-7-1791171685', 'detention/SHOP-7-1791171685-3'], 'detention/SHOP-7-1791171685-2'],
  ])('taken %j -> %s', (existing, expected) => {
    expect(detentionBranch('SHOP-7', 1791171685.9, existing)).toBe(expected);
  });

  it('is a valid git branch name', () => {
    const name = detentionBranch('SHOP-7', 1791171685, ['detention/SHOP-7-1791171685']);
    expect(() => execFileSync('git', ['check-ref-format', '--branch', name])).not.toThrow();
  });

  it('commits the attempt with the reason', () => {
    expect(detentionCommitMessage('SHOP-7', 'rubric failed (exit 1)')).toBe(
      'detention(SHOP-7): rubric failed (exit 1)',
    );
  });
});

describe('the signature and the printed lines', () => {
  const log = `${Array.from({ length: 50 }, (_, i) => `out-${i + 1}`).join('\n')}\n`;

  it('is the reason and the detail, or the last 40 lines of rubric output', () => {
    expect(detentionSignature('agent reported a blocker', 'needs a token', log)).toBe(
      'agent reported a blocker\nneeds a token',
    );
    const sig = detentionSignature('rubric failed (exit 1)', '', log).split('\n');
    expect(sig).toHaveLength(41);
    expect(sig[1]).toBe('out-11');
    expect(sig[40]).toBe('out-50');
    expect(detentionSignature('loop limit of 20 reached with 1 checkpoint open', '', '')).toBe(
      'loop limit of 20 reached with 1 checkpoint open',
    );
  });

  it("prints exactly one next: line, Chalk's failure lines indented, the detail marked, and how to resume", () => {
    const lines = detentionLines({
      reason: 'final review still finds problems after 1 fix round',
      failure: ['failing test: TestA'],
      detail: '- [blocker] src/a.ts: stub\nnext: a finding that looks like a next line\n',
      next: 'fix the review findings above yourself',
      branch: 'detention/SHOP-7-1791171685',
      worktree: "/home/sam/shop.worktrees/SHOP-7 o'brien",
    });
    expect(lines).toEqual([
      'DETENTION: final review still finds problems after 1 fix round',
      '  failing test: TestA',
      '  | - [blocker] src/a.ts: stub',
      '  | next: a finding that looks like a next line',
      'next: fix the review findings above yourself',
      'work parked on local branch detention/SHOP-7-1791171685; nothing was pushed. To take over:',
      `  cd '/home/sam/shop.worktrees/SHOP-7 o'\\''brien' && git switch 'detention/SHOP-7-1791171685'`,
      '  fix it, commit, then: chalk office-hours -m "what was wrong"',
    ]);
    expect(lines.filter((l) => l.startsWith('next:'))).toHaveLength(1);
  });

  it('quotes for a shell', () => {
    const out = execFileSync('bash', ['-c', `printf %s ${shellQuote("a 'b' $HOME \\ c")}`], { encoding: 'utf8' });
    expect(out).toBe("a 'b' $HOME \\ c");
  });
});

describe('how a loop ended', () => {
  const base = {
    mode: 'continue' as const,
    answer: 'done' as const,
    agentStatus: 'ok',
    rubricExit: 0,
    openBefore: 2,
    openAfter: 1,
  };
  it.each([
    ['ticked a checkpoint', {}, 'progressed', null],
    [
      'blocked beats everything',
      { answer: 'blocked', agentStatus: 'error', rubricExit: 1 },
      'blocked',
      'agent reported a blocker',
    ],
    [
      'agent error beats a green rubric',
      { agentStatus: 'error_max_turns' },
      'agent_error',
      'agent stopped early (error_max_turns)',
    ],
    ['no answer at all', { answer: null, agentStatus: 'error' }, 'agent_error', 'agent stopped early (error)'],
    ['rubric failed', { rubricExit: 124 }, 'failed', 'rubric failed (exit 124)'],
    ['green, nothing ticked', { openAfter: 2 }, 'passed', 'rubric passed but no checkpoint was ticked in the spec'],
    ['fix-review progresses when green', { mode: 'fix-review', openBefore: 0, openAfter: 0 }, 'progressed', null],
    ['the guard allowed it', { guard: { ok: true } }, 'progressed', null],
    [
      'fix-review still fails on a red rubric',
      { mode: 'fix-review', openBefore: 0, openAfter: 0, rubricExit: 1 },
      'failed',
      'rubric failed (exit 1)',
    ],
  ])('%s', (_name, extra, ended, reason) => {
    expect(loopOutcome({ ...base, ...(extra as object) })).toEqual({ ended, reason });
  });

  it('a rubric or a call a limit ended says so, after how long and the key, not an exit code', () => {
    const timedOut = 'timed out after 60 s (CHALK_RUBRIC_TIMEOUT)';
    expect(loopOutcome({ ...base, rubricExit: 124, rubricEnding: timedOut })).toEqual({
      ended: 'failed',
      reason: `rubric ${timedOut}`,
      ending: timedOut,
    });
    const agent = 'timed out after 3600 s (CHALK_AGENT_TIMEOUT)';
    expect(loopOutcome({ ...base, agentStatus: 'timed_out', agentEnding: agent, rubricEnding: timedOut })).toEqual({
      ended: 'agent_error',
      reason: `agent ${agent}`,
      ending: agent,
    });
    expect(nextStep(facts('failed', { ending: timedOut }))).toBe(
      `the rubric ${timedOut}; read ${IO}/rubric.log for how far it got, then make it need less or raise the limit named there`,
    );
    expect(nextStep(facts('agent_error', { ending: agent }))).toMatch(
      /^the agent timed out after 3600 s \(CHALK_AGENT_TIMEOUT\); read .*loop\.err/,
    );
  });
});

describe('how a loop the guard refused ended', () => {
  const guard = {
    ok: false as const,
    files: ['.gitlab-ci.yml'],
    reason: 'the loop changed files the agent may not change: .gitlab-ci.yml',
  };
  const base = {
    mode: 'continue' as const,
    answer: 'done' as const,
    agentStatus: 'ok',
    rubricExit: 0,
    openBefore: 2,
    openAfter: 1,
    guard,
  };
  it.each([
    ['ticked and green', {}],
    ['agent error', { agentStatus: 'error' }],
    ['rubric failed', { rubricExit: 1 }],
  ])('%s: failed with the guard reason and files', (_name, extra) => {
    expect(loopOutcome({ ...base, ...extra })).toEqual({
      ended: 'failed',
      reason: guard.reason,
      guarded: ['.gitlab-ci.yml'],
    });
  });

  it('a blocker still wins (the loop is parked, not committed)', () => {
    expect(loopOutcome({ ...base, answer: 'blocked' })).toEqual({
      ended: 'blocked',
      reason: 'agent reported a blocker',
    });
  });
});

describe('what a detention says about a failed rubric', () => {
  it('names the failing tests (at most five) and the first error, each on one line without control characters', () => {
    expect(failureLines({ tests: ['TestA'], firstError: 'x_test.go:6: got "A"\n\twant "a"', generic: false })).toEqual([
      'failing test: TestA',
      'first error: x_test.go:6: got "A" want "a"',
    ]);
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    expect(failureLines({ tests: many, firstError: '\u001b[31mFAIL\u001b[0m', generic: true })).toEqual([
      '7 failing tests: a, b, c, d, e and 2 more',
    ]);
    expect(failureLines({ tests: null, firstError: `E ${'x'.repeat(300)}`, generic: false })[0]).toHaveLength(
      'first error: '.length + 240,
    );
  });
});
