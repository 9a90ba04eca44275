import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dockerReachable,
  labelledContainers,
  makeTestRepo,
  TEST_IMAGE,
  type TestRepo,
  testSandbox,
} from './sandbox-helpers.js';

/**
 * A process holding a sandbox: SIGTERM/SIGINT remove the container and exit
 * 143/130; a SIGKILLed process leaves its container, which the next run of the
 * ticket (and cleanup) removes by label. The child imports dist/ (built by npm ci).
 */
const available = await dockerReachable();
const built = existsSync(new URL('../../dist/plugins/sandbox-docker/sandbox.js', import.meta.url));
if (available && !built) throw new Error('dist/ is missing: run npx tsc -p tsconfig.build.json first');

function hold(repo: TestRepo, ticket: string, handleSignals = true): Promise<{ child: ChildProcess; name: string }> {
  const child = spawn(process.execPath, [new URL('./sandbox-hold-child.mjs', import.meta.url).pathname], {
    env: {
      ...process.env,
      CHALK_TEST_CHILD: JSON.stringify({ spec: repo.spec({ ticket }), image: TEST_IMAGE, handleSignals }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      const m = /opened (\S+)/.exec(d);
      if (m?.[1]) resolve({ child, name: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`child exited ${code} before opening: ${err}`)));
  });
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.on('exit', (code, sig) => resolve(code ?? (sig ? -1 : null))));

// Docker steps are slow on a loaded 2-core machine: a generous per-test limit.
describe.skipIf(!available)('signals and leftovers', { timeout: 180_000 }, () => {
  let repo: TestRepo;
  beforeAll(() => {
    repo = makeTestRepo('SIG-1');
  });
  afterAll(async () => {
    await testSandbox().removeLeftovers({ repo: repo.spec().repo });
    repo.dispose();
  });

  it('SIGTERM removes the container and exits 143', async () => {
    const { child, name } = await hold(repo, 'SIG-1');
    expect(await labelledContainers({ repo: repo.spec().repo, ticket: 'SIG-1' })).toEqual([name]);
    const exited = exitOf(child);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(await labelledContainers({ repo: repo.spec().repo, ticket: 'SIG-1' })).toEqual([]);
  });

  it('SIGINT removes the container and exits 130', async () => {
    const { child } = await hold(repo, 'SIG-2');
    const exited = exitOf(child);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await labelledContainers({ repo: repo.spec().repo, ticket: 'SIG-2' })).toEqual([]);
  });

  it("a killed run's container is removed by the next run of the ticket and by removeLeftovers", async () => {
    const first = await hold(repo, 'SIG-3');
    const exited = exitOf(first.child);
    first.child.kill('SIGKILL');
    await exited;
    const repoName = repo.spec().repo;
    expect(await labelledContainers({ repo: repoName, ticket: 'SIG-3' })).toEqual([first.name]);
    // The next run of the same ticket starts clean.
    const sandbox = testSandbox({ handleSignals: false });
    const session = await sandbox.open(repo.spec({ ticket: 'SIG-3', runId: 'SIG-3-next' }));
    const list = await labelledContainers({ repo: repoName, ticket: 'SIG-3' });
    expect(list).toEqual([session.name]);
    // What a crash leaves behind, cleanup finds by label.
    expect(await sandbox.removeLeftovers({ repo: repoName })).toEqual([session.name]);
    expect(await labelledContainers({ repo: repoName })).toEqual([]);
  });

  it("a second sandbox of the ticket (distill) leaves the run's sandbox alone", async () => {
    const sandbox = testSandbox({ handleSignals: false });
    const repoName = repo.spec().repo;
    const runBox = await sandbox.open(repo.spec({ ticket: 'SIG-4' }));
    const distill = await sandbox.open(repo.spec({ ticket: 'SIG-4', suffix: 'distill' }));
    expect(distill.name).toBe(`${runBox.name}-distill`);
    const again = await sandbox.open(repo.spec({ ticket: 'SIG-4', runId: 'SIG-4-again' }));
    expect((await labelledContainers({ repo: repoName, ticket: 'SIG-4' })).sort()).toEqual(
      [again.name, distill.name].sort(),
    );
    await again.stop();
    await distill.stop();
    expect(await labelledContainers({ repo: repoName, ticket: 'SIG-4' })).toEqual([]);
  });
});
