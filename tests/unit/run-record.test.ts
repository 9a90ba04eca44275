import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { fingerprintFailure } from '../../core/fingerprint/fingerprint.js';
import { runPaths } from '../../core/layout.js';
import type { Agent, AgentResult } from '../../core/ports/agent.js';
import { bootId, pidFileBoot, readPid } from '../../core/process/pid.js';
import { claim, refuseLiveRun } from '../../core/run/base/claim.js';
import type { RunContext } from '../../core/run/base/context.js';
import type { RunDeps } from '../../core/run/base/deps.js';
import { CallTracker, interruptedRecord, trackingAgent } from '../../core/run/base/interrupt.js';
import { callRecord } from '../../core/run/base/record.js';

const ctx = { repo: 'shop', ticket: 'SHOP-7', branch: 'chalk/SHOP-7', promptHash: 'abcd1234' } as RunContext;

const result: AgentResult = {
  answer: 'none',
  status: 'ok',
  costUsd: 0.123456,
  usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheCreationTokens: 40, turns: 5 },
  denials: [{ tool: 'Bash', input: {} }],
  model: 'claude-sonnet-4-5',
  exitCode: 0,
  raw: '{}',
  stderr: '',
  durationMs: 12_400,
};

const failing = fingerprintFailure({
  log: 'FAILED tests/test_a.py::test_one - assert 1 == 2\nFAILED tests/test_b.py::test_two\n',
  report: null,
  treeId: 'a'.repeat(40),
});

const facts = {
  loop: 3,
  kind: 'retry',
  agentStatus: 'ok',
  rubricExit: 1,
  progressed: false,
  budgetUsd: 1,
  lessons: 2,
  runId: 'SHOP-7-1791171685',
  fingerprint: failing,
  verdict: 'spinning' as const,
};

describe('a loop call as a runs row', () => {
  it('fills every column from the result, the facts and the fingerprint', () => {
    const row = callRecord(ctx, result, { ...facts, fpRules: 'shadow' });
    expect(row).toEqual({
      repo: 'shop',
      ticket: 'SHOP-7',
      branch: 'chalk/SHOP-7',
      loop: 3,
      kind: 'retry',
      agentStatus: 'ok',
      rubricExit: 1,
      progressed: false,
      model: 'claude-sonnet-4-5',
      prompts: 'abcd1234',
      costUsd: 0.1235,
      budgetUsd: 1,
      durationS: 12,
      inputTokens: 10,
      outputTokens: 20,
      cacheReadTokens: 30,
      cacheWriteTokens: 40,
      turns: 5,
      denials: 1,
      lessons: 2,
      runId: 'SHOP-7-1791171685',
      testsHash: failing.testsHash,
      failing: 2,
      failingTests: ['tests/test_a.py::test_one', 'tests/test_b.py::test_two'],
      firstError: failing.firstError,
      treeId: 'a'.repeat(40),
      verdict: 'spinning',
      fpRules: 'shadow',
      flakyTests: null,
    });
    expect(failing.firstError).not.toBe('');
  });

  it('records the flaky tests of a loop whose rubric ran twice, none when there were none or rules are off', () => {
    const flakyTests = ['tests/test_net.py::test_fetch'];
    expect(callRecord(ctx, result, { ...facts, fpRules: 'shadow', flakyTests }).flakyTests).toEqual(flakyTests);
    expect(callRecord(ctx, result, { ...facts, fpRules: 'shadow', flakyTests: [] }).flakyTests).toBeNull();
    expect(callRecord(ctx, result, { ...facts, fpRules: 'off', flakyTests }).flakyTests).toBeNull();
  });

  it('records no fingerprint and no verdict under CHALK_FP_RULES=off, but the mode itself', () => {
    const row = callRecord(ctx, result, { ...facts, fpRules: 'off' });
    expect([row.testsHash, row.failing, row.failingTests, row.firstError, row.treeId, row.verdict]).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(row.fpRules).toBe('off');
  });

  it('falls back to the configured model when the result names none', () => {
    expect(callRecord(ctx, { ...result, model: '' }, { ...facts, fpRules: 'on', model: 'opus' }).model).toBe('opus');
  });
});

describe('the claim on a ticket', () => {
  const paths = () => runPaths('shop', 'SHOP-7', { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'chalk-claim-')) });

  it('writes the pid, wipes io/, and removes only its own pid when released', () => {
    const p = paths();
    const release = claim(p, 'SHOP-7');
    expect(readPid(p.pid)).toBe(process.pid);
    expect(pidFileBoot(p.pid)).toBe(bootId());
    writeFileSync(p.rubricLog, 'old');
    release();
    expect(existsSync(p.pid)).toBe(false);
    claim(p, 'SHOP-7')();
    expect(existsSync(p.rubricLog)).toBe(false);
  });

  it('refuses while another live process holds the ticket, and ignores a dead one', () => {
    const p = paths();
    claim(p, 'SHOP-7');
    // The parent of this test process is alive and is not us.
    writeFileSync(p.pid, `${process.ppid}\n`);
    expect(() => refuseLiveRun(p, 'SHOP-7')).toThrow(`a run for SHOP-7 is already active (pid ${process.ppid})`);
    expect(() => claim(p, 'SHOP-7')).toThrow(/already active/);
    writeFileSync(p.pid, '999999999\n');
    expect(() => claim(p, 'SHOP-7')()).not.toThrow();
  });
});

describe('a call cut short by a signal', () => {
  it('is known while it runs, and becomes an interrupted row with the loop it belongs to', async () => {
    const tracker = new CallTracker();
    tracker.loop = 4;
    let seen: unknown = 'unset';
    const agent: Agent = {
      call: async () => {
        seen = tracker.current;
        return result as never;
      },
      modelFor: (kind) => (kind === 'retry' ? 'sonnet-from-the-agent' : 'other'),
      cannotRun: () => null,
    };
    let t = 1_000;
    const tracked = trackingAgent(agent, tracker, () => t);
    await tracked.call('retry', 'p', {
      where: { exec: async () => ({ exitCode: 0, stdout: '', stderr: '', timedOut: false }) },
    });
    expect(seen).toEqual({ kind: 'retry', loop: 4, startedAt: 1_000 });
    expect(tracker.current).toBeNull();
    await tracked.call('review', 'p', {
      where: { exec: async () => ({ exitCode: 0, stdout: '', stderr: '', timedOut: false }) },
    });
    expect(seen).toMatchObject({ kind: 'review', loop: 0 });

    t = 8_600;
    expect(tracked.modelFor('retry')).toBe('sonnet-from-the-agent');
    const config = loadConfig({ root: null, env: { CHALK_MODEL: 'sonnet', CHALK_FP_RULES: 'on' } });
    // The model recorded is the one the Agent port says the kind asks for, not a rule of core's.
    const deps = { config, agent: tracked } as RunDeps;
    const row = interruptedRecord(ctx, deps, { kind: 'retry', loop: 4, startedAt: 1_000 }, 'SHOP-7-1', t);
    expect(row).toMatchObject({
      loop: 4,
      kind: 'retry',
      agentStatus: 'interrupted',
      progressed: false,
      model: 'sonnet-from-the-agent',
      costUsd: 0,
      budgetUsd: 1,
      durationS: 8,
      runId: 'SHOP-7-1',
      fpRules: 'on',
    });
  });
});
