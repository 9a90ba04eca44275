import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { buildSandboxImage, inspectImage, prepareContext } from '../../plugins/sandbox-docker/image.js';
import { dockerReachable, labelledContainers, makeTestRepo, TEST_IMAGE, testSandbox } from './sandbox-helpers.js';

/**
 * `chalk sandbox build` and `chalk cleanup` as a user runs them (the built CLI),
 * and the image build through the Docker API.
 */
const available = await dockerReachable();
const cli = new URL('../../dist/cli/chalk.cjs', import.meta.url).pathname;
if (available && !existsSync(cli)) throw new Error('dist/ is missing: run npx tsc -p tsconfig.build.json first');

/** The base the local image was built on (CI exports it; the debootstrapped base otherwise). */
const base = process.env.CHALK_SANDBOX_BASE || 'chalk-debian-base:bookworm';
const baseThere = available && (await inspectImage(base)) !== null;

function chalk(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [cli, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CHALK_SANDBOX_BASE: base, ...env },
    timeout: 600_000,
  });
}

// Docker steps are slow on a loaded 2-core machine: a generous per-test limit.
describe.skipIf(!available)('sandbox commands', { timeout: 180_000 }, () => {
  const state = mkdtempSync(join(tmpdir(), 'chalk-state-'));
  afterAll(() => rmSync(state, { recursive: true, force: true }));

  it.skipIf(!baseThere)(
    'builds through the Docker API with the same inputs hash as share/sandbox/build-image.sh',
    async () => {
      const tag = 'chalk-sandbox:api-build-test';
      const env = { ...process.env, CHALK_SANDBOX_BASE: base };
      try {
        // Layers come from the cache of the image CI (or a developer) built, so this is quick.
        expect(await buildSandboxImage({ tag, env, force: true })).toBe(true);
        const ctx = prepareContext(env);
        ctx.dispose();
        const built = await inspectImage(tag);
        expect(built?.contextHash).toBe(ctx.hash);
        expect(built?.base).toBe(base);
        // Unchanged inputs: nothing to do.
        expect(await buildSandboxImage({ tag, env })).toBe(false);
        const local = await inspectImage(TEST_IMAGE);
        if (local?.contextHash) expect(local.contextHash).toBe(ctx.hash);
        const r = await testSandbox({ image: tag }).runOnce(['claude', '--version']);
        expect(r.stdout).toMatch(/\(Claude Code\)/);
      } finally {
        await (await docker())
          .getImage(tag)
          .remove()
          .catch(() => undefined);
      }
    },
  );

  it('a base image that cannot be had fails in one line that names CHALK_SANDBOX_BASE', async () => {
    const env = { ...process.env, CHALK_SANDBOX_BASE: 'chalk-no-such-base:missing' };
    await expect(buildSandboxImage({ tag: 'chalk-sandbox:never-built', env })).rejects.toThrow(
      /base image chalk-no-such-base:missing could not be pulled .*set CHALK_SANDBOX_BASE/,
    );
    expect(await inspectImage('chalk-sandbox:never-built')).toBeNull();
  });

  it.skipIf(!baseThere)(
    'chalk sandbox build keeps the base the image was made on and skips an unchanged build',
    async () => {
      const local = await inspectImage(TEST_IMAGE);
      // No CHALK_SANDBOX_BASE: the base recorded on the existing image is used.
      const r = chalk(['sandbox', 'build'], tmpdir(), { CHALK_SANDBOX_BASE: '' });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`building chalk-sandbox:local on ${local?.base ?? base}`);
      expect(r.stdout).toMatch(/chalk-sandbox:local is up to date|built chalk-sandbox:local/);
    },
  );

  it('chalk cleanup removes sandboxes by label, clean worktrees, merged branches and pushed tutoring/ ones; --all the rest', async () => {
    const repo = makeTestRepo('CLN-1');
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo.root, encoding: 'utf8' }).trim();
    try {
      git('checkout', '-q', 'main');
      git('branch', 'chalk/CLN-2'); // merged: deleted without --all
      git('branch', 'detention/CLN-3-1'); // merged too
      git('branch', 'tutoring/CLN-7'); // merged: deleted without --all
      git('checkout', '-q', '-b', 'tutoring/CLN-4');
      writeFileSync(join(repo.root, 'x.txt'), 'unmerged\n');
      git('add', 'x.txt');
      git('commit', '-q', '-m', 'unmerged work');
      // Pushed, not merged: what `git push -u origin` leaves is a remote-tracking ref holding it.
      git('checkout', '-q', '-b', 'tutoring/CLN-6', 'main');
      git('commit', '-q', '--allow-empty', '-m', 'pushed work');
      git('update-ref', 'refs/remotes/origin/tutoring/CLN-6', 'HEAD');
      git('checkout', '-q', 'main');
      const wt = `${repo.root}.worktrees`;
      mkdirSync(wt);
      git('worktree', 'add', '-q', join(wt, 'CLEAN'), 'chalk/CLN-1');
      git('worktree', 'add', '-q', '-b', 'chalk/CLN-5', join(wt, 'DIRTY'));
      writeFileSync(join(wt, 'DIRTY', 'wip.txt'), 'uncommitted\n');
      const session = await testSandbox({ handleSignals: false }).open(repo.spec({ ticket: 'CLN-1' }));
      const name = repo.spec().repo;
      expect(await labelledContainers({ repo: name })).toEqual([session.name]);

      const env = { XDG_STATE_HOME: state };
      mkdirSync(join(state, 'chalk', name, 'runs', 'CLN-1', 'io'), { recursive: true });
      const r = chalk(['cleanup'], repo.root, env);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`stopped runs and removed sandboxes (${session.name})`);
      expect(r.stderr).toContain(`kept worktree with uncommitted changes: ${join(wt, 'DIRTY')}`);
      expect(r.stdout).toContain("kept 1 branch(es) that are neither merged nor pushed; 'chalk cleanup --all'");
      expect(r.stdout.split('\n').filter((l) => l.startsWith('kept tutoring/'))).toEqual([
        'kept tutoring/CLN-4: not merged into main and not pushed',
      ]);
      expect(r.stdout).toContain('cleanup complete (telemetry database untouched)');
      expect(await labelledContainers({ repo: name })).toEqual([]);
      expect(existsSync(join(wt, 'CLEAN'))).toBe(false);
      expect(existsSync(join(wt, 'DIRTY', 'wip.txt'))).toBe(true);
      expect(git('branch', '--format=%(refname:short)').split('\n').sort()).toEqual([
        'chalk/CLN-5',
        'main',
        'tutoring/CLN-4',
      ]);
      expect(existsSync(join(state, 'chalk', name, 'runs'))).toBe(false);

      const all = chalk(['cleanup', '--all'], repo.root, env);
      expect(all.status).toBe(0);
      expect(all.stdout).not.toContain('kept');
      expect(existsSync(join(wt, 'DIRTY'))).toBe(false);
      expect(git('branch', '--format=%(refname:short)')).toBe('main');
    } finally {
      await testSandbox().removeLeftovers({ repo: repo.spec().repo });
      rmSync(`${repo.root}.worktrees`, { recursive: true, force: true });
      repo.dispose();
    }
  });

  it('chalk cleanup outside a repository says so in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chalk-norepo-'));
    const r = chalk(['cleanup'], dir);
    rmSync(dir, { recursive: true, force: true });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toBe('chalk: chalk cleanup runs inside a git repository\n');
  });
});
