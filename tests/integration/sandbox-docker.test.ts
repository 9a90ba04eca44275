import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxSession } from '../../core/ports/sandbox.js';
import { CREDENTIAL_NAMES } from '../../plugins/sandbox-docker/env.js';
import { dockerReachable, labelledContainers, makeTestRepo, type TestRepo, testSandbox } from './sandbox-helpers.js';

/**
 * The Sandbox port on the real Docker engine: one container per run, the git
 * store read-only, work coming home only as a fast-forward.
 */
const available = await dockerReachable();

/** Counts live (not zombie) `sleep` processes in the container. */
const LIVE_SLEEPS =
  'for p in /proc/[0-9]*; do s=$(cut -d" " -f2,3 $p/stat 2>/dev/null); echo "$s"; done | grep -c "^(sleep) [^Z]" || true';

const SECRET = 'sk-ant-test-0123456789abcdef';
const FORGE = 'ghp_forge_token_must_not_leak';

// Docker steps are slow on a loaded 2-core machine: a generous per-test limit.
describe.skipIf(!available)('sandbox-docker on the real engine', { timeout: 180_000 }, () => {
  let repo: TestRepo;
  let session: SandboxSession;
  const sandbox = testSandbox({
    handleSignals: false,
    env: {
      ANTHROPIC_API_KEY: SECRET,
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/',
      GH_TOKEN: FORGE,
      GITHUB_TOKEN: FORGE,
      GITLAB_TOKEN: FORGE,
      PATH: '/usr/bin',
    },
  });

  beforeAll(async () => {
    await sandbox.ensureImage();
    repo = makeTestRepo('SBX-1');
    session = await sandbox.open(repo.spec({ env: { GH_TOKEN: FORGE, CHALK_EXTRA: 'fine' } }));
    expect(await session.clone()).toBe(repo.base);
  });

  afterAll(async () => {
    await session?.stop();
    repo?.dispose();
  });

  it('is one labelled container per run, named after repo and ticket', async () => {
    expect(session.name).toBe(`chalk-sandbox-${repo.spec().repo}-SBX-1`);
    expect(await labelledContainers({ repo: repo.spec().repo, ticket: 'SBX-1' })).toEqual([session.name]);
  });

  it('brings an edit made in the container home as a fast-forward', async () => {
    const edit = await session.exec('printf "hello\\n" >> README.md && mkdir -p src && echo "x = 1" > src/new.txt');
    expect(edit.exitCode).toBe(0);
    const head = await session.commitAll('chalk(SBX-1): continue, loop 1');
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(await session.commitAll('nothing to add')).toBeNull();
    const home = await session.bringHome(repo.base, repo.root);
    expect(home).toBe(head);
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.git('rev-parse', 'HEAD^')).toBe(repo.base);
    expect(repo.git('rev-list', '--merges', `${repo.base}..HEAD`)).toBe('');
    expect(readFileSync(`${repo.root}/src/new.txt`, 'utf8')).toBe('x = 1\n');
    expect(repo.git('log', '-1', '--format=%an <%ae>')).toBe('Host Person <host@example.com>');
    await expect(session.exportBundle('0123456789012345678901234567890123456789')).rejects.toThrow(
      /sandbox export failed/,
    );
    // Nothing new since: no bundle, HEAD unchanged.
    expect(await session.bringHome(head as string, repo.root)).toBeNull();
  });

  it('refuses to bring home work that is not a fast-forward', async () => {
    const before = repo.git('rev-parse', 'HEAD');
    repo.git('commit', '-q', '--allow-empty', '-m', 'host moved on');
    const moved = repo.git('rev-parse', 'HEAD');
    await session.exec('echo diverged > diverged.txt');
    await session.commitAll('sandbox diverges');
    await expect(session.bringHome(before, repo.root)).rejects.toThrow(/merge/);
    expect(repo.git('rev-parse', 'HEAD')).toBe(moved);
    repo.git('reset', '-q', '--hard', before);
    await session.exec(`git reset -q --hard ${before}`);
  });

  it('cannot write into the mounted git store', async () => {
    const touch = await session.exec('touch /src.git/evil');
    expect(touch.exitCode).not.toBe(0);
    const ref = await session.exec('git --git-dir=/src.git update-ref refs/heads/evil HEAD');
    expect(ref.exitCode).not.toBe(0);
    const push = await session.exec('git push -q origin HEAD:refs/heads/evil');
    expect(push.exitCode).not.toBe(0);
    expect(repo.git('branch', '--list', 'evil')).toBe('');
  });

  it('has no forge token, no Docker socket, no capabilities and no root', async () => {
    const r = await session.exec(
      'env; echo "---"; id -u; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; ls /var/run/docker.sock /run/docker.sock 2>&1 || true',
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain(FORGE);
    expect(r.stdout).not.toMatch(/^(GH_TOKEN|GITHUB_TOKEN|GITLAB_TOKEN)=/m);
    expect(r.stdout).toMatch(/^CapEff:\s+0+$/m);
    expect(r.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(r.stdout).toMatch(/No such file/);
    expect(r.stdout.split('---\n')[1]?.split('\n')[0]).not.toBe('0');
    expect(r.stdout).toMatch(/^CHALK_EXTRA=fine$/m);
    const sudo = await session.exec('apt-get install -y jq 2>&1');
    expect(sudo.exitCode).not.toBe(0);
  });

  it('holds credentials only by the allowed names, and never in any argv', async () => {
    const r = await session.exec('env -0');
    const entries = r.stdout.split('\0').filter(Boolean);
    const carrying = entries.filter((e) => e.includes(SECRET)).map((e) => e.slice(0, e.indexOf('=')));
    expect(carrying).toEqual(['ANTHROPIC_API_KEY']);
    for (const e of entries) {
      const name = e.slice(0, e.indexOf('='));
      if (/KEY|TOKEN|SECRET/.test(name)) expect(CREDENTIAL_NAMES as readonly string[]).toContain(name);
    }
    // A loopback gateway is rewritten to the host, and the name resolves.
    expect(entries).toContain('ANTHROPIC_BASE_URL=http://host.docker.internal:9/');
    expect((await session.exec('getent hosts host.docker.internal')).exitCode).toBe(0);
    const argv = await session.exec('cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " "');
    expect(argv.stdout).not.toContain(SECRET);
  });

  it('exec streams output, takes stdin and reports the exit code', async () => {
    const chunks: string[] = [];
    const r = await session.exec('cat; echo err >&2; for i in 1 2 3; do echo line$i; done; exit 7', {
      stdin: 'from stdin\n',
      env: { EXTRA: 'x' },
      onOutput: (c, s) => chunks.push(`${s}:${c}`),
    });
    expect(r.exitCode).toBe(7);
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toBe('from stdin\nline1\nline2\nline3\n');
    expect(r.stderr).toBe('err\n');
    expect(chunks.join('')).toContain('stdout:');
    expect(chunks.some((c) => c.startsWith('stderr:'))).toBe(true);
    expect((await session.exec('echo $EXTRA', { env: { EXTRA: 'x' } })).stdout).toBe('x\n');
    expect((await session.exec('pwd')).stdout).toBe('/work/repo\n');
  });

  it('a timeout kills the command and everything it started', async () => {
    const started = Date.now();
    const r = await session.exec('sleep 30 & sleep 30; echo never', { timeoutMs: 1000 });
    expect(r.timedOut).toBe(true);
    expect(r.stdout).not.toContain('never');
    expect(Date.now() - started).toBeLessThan(10_000);
    const sleeps = await session.exec(LIVE_SLEEPS);
    expect(sleeps.stdout.trim()).toBe('1'); // only the container's own `sleep infinity`
  });

  it('an aborted exec rejects and its command dies', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop now')), 500);
    const started = Date.now();
    await expect(session.exec('sleep 20 & sleep 20', { signal: ac.signal })).rejects.toThrow('stop now');
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 300));
    const sleeps = await session.exec(LIVE_SLEEPS);
    expect(sleeps.stdout.trim()).toBe('1');
  });

  it('tree id follows the working tree; reset discards uncommitted work', async () => {
    const clean = await session.treeId();
    expect(clean).toMatch(/^[0-9a-f]{40}$/);
    await session.exec(
      'echo change >> README.md && echo new > untracked.txt && mkdir -p specs && echo n > specs/SBX-1.notes.md',
    );
    const dirty = await session.treeId(['specs/*.notes.md']);
    expect(dirty).not.toBe(clean);
    await session.exec('rm specs/SBX-1.notes.md');
    expect(await session.treeId()).toBe(dirty);
    await session.reset();
    expect(await session.treeId()).toBe(clean);
    expect((await session.exec('git status --porcelain')).stdout).toBe('');
  });
});
