import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPid } from '../../core/process/pid.js';
import * as s from '../fakes/model-script.js';
import {
  calls,
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  events,
  explain,
  makeScenario,
  type Rig,
  runDir,
  startRig,
} from './harness.js';

/**
 * The run-loop helper's own smoke test of `chalk run` as a user meets it:
 * the one-line refusals (nothing started), `chalk check`, and a background
 * run followed with `chalk logs -f` to a push with CHALK_FORGE=none. The
 * scenario suites (happy, detention, review, lifecycle) cover the rest.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('chalk run smoke', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('refuses with one line and exit 1, before starting anything', async () => {
    const sc = makeScenario({ ticket: 'SMK-1' });
    const refused = async (env: Record<string, string | undefined>, line: string | RegExp) => {
      const r = await chalk(rig, sc, ['run'], { env });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(line);
    };
    await refused({ CHALK_TEST_CMD: '' }, 'chalk: CHALK_TEST_CMD is not set in .chalk/config (run: chalk init)');
    await refused(
      { ANTHROPIC_API_KEY: '' },
      'chalk: no agent credentials; export one of: ANTHROPIC_API_KEY CLAUDE_CODE_OAUTH_TOKEN ANTHROPIC_AUTH_TOKEN',
    );
    // Another live run of the ticket: this test process holds the pid file.
    const paths = runDir(rig, sc);
    mkdirSync(paths.dir, { recursive: true });
    writeFileSync(paths.pid, `${process.pid}\n`);
    await refused({}, `chalk: a run for SMK-1 is already active (pid ${process.pid})`);
    writeFileSync(paths.pid, '999999999\n');
    writeFileSync(join(sc.root, 'scratch.txt'), 'not committed\n');
    await refused({}, `chalk: uncommitted changes in ${sc.root}; commit them first (the sandbox only sees commits)`);
    sc.git('clean', '-fq');
    sc.git('rm', '-q', `specs/${sc.ticket}.md`);
    sc.git('commit', '-qm', 'drop the spec');
    await refused({}, 'chalk: missing spec: specs/SMK-1.md (create one with: chalk new SMK-1)');
    sc.git('checkout', '-q', 'main');
    await refused({}, "chalk: branch 'main' has no ticket key (expected e.g. chalk/PROJ-123)");
    expect(await containers(sc)).toEqual([]);
    // Nothing was claimed: no io/ directory, and the run wrote nothing anywhere.
    expect(existsSync(paths.io)).toBe(false);
    sc.dispose();
  });

  it('chalk check asks the spec check every time and passes', async () => {
    const sc = makeScenario({ ticket: 'SMK-2' });
    rig.script({});
    const first = await chalk(rig, sc, ['check'], { env: { CHALK_TEST_CMD: '' } });
    expect(first.code, explain(first)).toBe(0);
    expect(
      first.lines.some((l) => /^spec check passed \(\$\d+\.\d\d, \d+s\)$/.test(l)),
      explain(first),
    ).toBe(true);
    const again = await chalk(rig, sc, ['check']);
    expect(again.code, explain(again)).toBe(0);
    expect(rig.seen.map((x) => x.kind)).toEqual(['spec', 'spec']);
    expect((await calls(rig, sc)).map((c) => [c.kind, c.agent_status])).toEqual([
      ['spec-check', 'pass'],
      ['spec-check', 'pass'],
    ]);
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });

  it('--detach returns at once, status says running, logs -f follows the run to its end', async () => {
    const sc = makeScenario({ ticket: 'SMK-3' });
    rig.script({
      loops: [[s.bash('sleep 3'), ...doCheckpoint(sc.ticket, 1)], doCheckpoint(sc.ticket, 2)],
    });
    const env = { CHALK_FORGE: 'none' };
    const started = await chalk(rig, sc, ['run', '--detach'], { env });
    expect(started.code, explain(started)).toBe(0);
    const m = /^running in the background \(pid (\d+)\); follow with: chalk logs SMK-3 -f$/.exec(
      started.lines[0] ?? '',
    );
    expect(m, explain(started)).not.toBeNull();
    const pid = Number(m?.[1]);
    const paths = runDir(rig, sc);
    expect(readPid(paths.pid)).toBe(pid);
    const status = await chalk(rig, sc, ['status', '--json']);
    const state = (JSON.parse(status.stdout) as { tickets: { ticket: string; state: string }[] }).tickets.find(
      (t) => t.ticket === sc.ticket,
    )?.state;
    expect(state).toBe('running');

    const followed = await chalk(rig, sc, ['logs', sc.ticket, '-f'], { env });
    expect(followed.code, explain(followed)).toBe(0);
    expect(followed.lines).toContain('loop 2 (continue) started');
    expect(followed.lines).toContain(`pushed ${sc.branch}; CHALK_FORGE=none, so no request was opened. Summary:`);
    expect(followed.lines).toContain('  | ## Chalk run summary');
    for (let i = 0; i < 50 && existsSync(paths.pid); i++) await delay(100);
    expect(existsSync(paths.pid)).toBe(false);

    const plain = await chalk(rig, sc, ['logs', sc.ticket]);
    expect(plain.stdout).toBe(followed.stdout);
    expect(sc.originBranches()).toContain(sc.branch);
    expect(sc.forge.requests()).toEqual([]);
    expect(await events(rig, sc)).toEqual(['ready']);
    expect(await containers(sc)).toEqual([]);

    const none = await chalk(rig, sc, ['logs', 'SMK-99']);
    expect(none.code).toBe(1);
    expect(none.stderr.trim()).toBe('chalk: no background run log for SMK-99');
    sc.dispose();
  });
});
