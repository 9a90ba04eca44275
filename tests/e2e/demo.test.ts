import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBanner } from '../../core/demo/demo.js';
import { run } from '../../core/process/run.js';
import { tempDir } from '../helpers/cli.js';
import { cleanEnv, e2eAvailable, explain, IMAGE, type Rig, runCli, startRig } from './harness.js';

/**
 * `chalk demo` as a newcomer runs it: no agent credential, so the shipped
 * scripted model stands in (and the first line says so); the example is made,
 * and the real loop takes it to a pushed branch and a summary.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('chalk demo, end to end', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('runs the whole loop on the example with the scripted model and pushes the branch', async () => {
    const dir = join(tempDir('chalk-demo-test-'), 'example');
    const env = { ...cleanEnv(), ...rig.env, NO_COLOR: '1', CHALK_IMAGE: IMAGE };
    const r = await runCli(['demo', '--dir', dir], { cwd: tempDir(), env, ticket: 'DEMO-1' });
    expect(r.code, explain(r)).toBe(0);
    const [first] = r.stdout.split('\n');
    expect(first).toMatch(/^chalk demo: no agent credential is set .*a scripted model stands in for Claude/);
    expect(r.stdout).not.toContain('saw requests it did not expect');
    expect(r.lines.filter((l) => / started$/.test(l))).toEqual([
      'loop 1 (continue) started',
      'loop 2 (continue) started',
      'final review started',
    ]);
    // The summary is printed as a marked block, so nothing in it passes for Chalk's own lines.
    expect(r.lines).toContain('  | - Agent loops: 2');
    expect(r.lines).toContain('  | - Rubric: `node --test` passed in the sandbox');

    // The agent's work is real: the code and tests are on the branch, pushed, and pass on the host.
    const root = join(dir, 'chalk-demo');
    const git = async (...a: string[]) => (await run('git', a, { cwd: root })).stdout.trim();
    expect((await git('log', '--format=%s', 'main..chalk/DEMO-1')).split('\n')).toEqual([
      'chalk(DEMO-1): continue, loop 2',
      'chalk(DEMO-1): continue, loop 1',
      'chalk(DEMO-1): spec',
    ]);
    expect(await git('show', 'chalk/DEMO-1:specs/DEMO-1.md')).not.toContain('- [ ]');
    expect(await git('--git-dir', join(dir, 'origin.git'), 'rev-parse', 'chalk/DEMO-1')).toBe(
      await git('rev-parse', 'chalk/DEMO-1'),
    );
    const tests = await run(process.execPath, ['--test'], { cwd: root });
    expect(tests.code, tests.stdout).toBe(0);
    expect(tests.stdout).toMatch(/# pass 3/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a directory that is not empty, before it starts anything', async () => {
    const dir = tempDir('chalk-demo-busy-');
    await run('git', ['init', '-q'], { cwd: dir });
    const env = { ...cleanEnv(), ...rig.env, NO_COLOR: '1' };
    const r = await runCli(['demo', '--dir', dir], { cwd: dir, env, ticket: 'DEMO-1' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`chalk: ${dir} is not empty; give chalk demo an empty or new directory`);
  });
});

describe('chalk demo: the first line', () => {
  it('names the credential Claude will use, never its value', () => {
    const line = demoBanner(false, { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat-secret-value' });
    expect(line).toMatch(/^chalk demo: running with Claude through your CLAUDE_CODE_OAUTH_TOKEN/);
    expect(line).not.toContain('secret-value');
  });

  it('says a scripted model stands in when there is no credential', () => {
    expect(demoBanner(true, {})).toMatch(
      /^chalk demo: no agent credential is set .*scripted model stands in for Claude/,
    );
  });
});
