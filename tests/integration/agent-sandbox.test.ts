import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaudeAgent } from '../../core/agent/driver.js';
import * as s from '../fakes/model-script.js';
import { type ModelServer, startModelServer } from '../fakes/model-server.js';
import { imagePresent } from './agent-container.js';
import {
  bringHomeForTest,
  dockerReachable,
  labelledContainers,
  makeTestRepo,
  TEST_IMAGE,
  testSandbox,
} from './sandbox-helpers.js';

/**
 * The agent in the real sandbox (plugins/sandbox-docker): its edit comes home
 * as a fast-forward, and SIGTERM during a slow call leaves no container.
 */
const available = (await dockerReachable()) && (await imagePresent());
if (process.env.CI === 'true' && !available) throw new Error(`CI needs the sandbox image ${TEST_IMAGE}`);

const agent = new ClaudeAgent({
  budgetUsd: '1.00',
  permissionMode: 'bypass',
  model: '',
  cheapModel: 'haiku',
  reviewModel: '',
});

describe.skipIf(!available)('the agent in a real sandbox', { timeout: 180_000 }, () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(async () => {
    await model?.close();
  });

  it("brings the agent's edit home as a fast-forward of the ticket branch", async () => {
    const repo = makeTestRepo('AGT-1');
    const sandbox = testSandbox({ env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-ant-test-dummy' } });
    const session = await sandbox.open(repo.spec());
    try {
      await session.clone();
      await session.putFile('system.md', 'You are a scripted test agent.\n');
      model.enqueue([
        s.read('/work/repo/README.md'),
        s.edit('/work/repo/README.md', '# test repo', '# test repo, edited by the agent'),
        s.write('/work/repo/notes.md', 'a new file\n'),
        s.loopDone('1', 'edited the readme'),
      ]);
      const r = await agent.call('continue', 'edit the readme', {
        where: session,
        systemPromptFile: '/chalk/system.md',
      });
      expect(r.status).toBe('ok');
      expect(r.answer).toMatchObject({ status: 'done', checkpoint: '1' });
      const committed = await session.commitAll('chalk(AGT-1): continue, loop 1');
      expect(committed).toMatch(/^[0-9a-f]{40}$/);
      const head = await bringHomeForTest(session, repo, repo.base);
      expect(head).toBe(committed);
      expect(repo.git('rev-parse', 'HEAD')).toBe(committed);
      expect(repo.git('rev-parse', 'HEAD^')).toBe(repo.base);
      expect(repo.git('show', 'HEAD:README.md')).toBe('# test repo, edited by the agent');
      expect(repo.git('show', 'HEAD:notes.md')).toBe('a new file');
      expect(repo.git('status', '--porcelain')).toBe('');
      expect(model.violations).toEqual([]);
    } finally {
      await session.stop();
      repo.dispose();
    }
  });

  it('exits 143 on SIGTERM during a slow agent call and leaves no container', async () => {
    const repo = makeTestRepo('AGT-2');
    const spec = repo.spec();
    model.enqueue([s.say('too late', { sleepMs: 120_000 })]);
    const before = model.requests.length;
    const child = spawn(process.execPath, [join(import.meta.dirname, 'agent-sigterm-child.mjs')], {
      env: { ...process.env, CHALK_TEST_CHILD: JSON.stringify({ spec, image: TEST_IMAGE, baseUrl: model.url }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      // Wait until the CLI in the container is waiting on the scripted model.
      const deadline = Date.now() + 60_000;
      while (!model.requests.slice(before).some((q) => q.step === 0)) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`the agent call never reached the model:\n${out}`);
        await delay(100);
      }
      expect(await labelledContainers({ repo: spec.repo, ticket: spec.ticket })).toHaveLength(1);
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
      expect(out).not.toContain('returned');
      expect(out).toContain('aborted: SIGTERM');
      expect(await labelledContainers({ repo: spec.repo, ticket: spec.ticket })).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      repo.dispose();
    }
  });
});
