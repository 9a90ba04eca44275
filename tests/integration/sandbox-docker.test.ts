import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxFileError, type SandboxSession } from '../../core/ports/sandbox.js';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import {
  bringHomeForTest,
  dockerReachable,
  labelledContainers,
  makeTestRepo,
  type TestRepo,
  testSandbox,
} from './sandbox-helpers.js';

/**
 * The Sandbox port on the real Docker engine: one container per run with
 * nothing of the host in it, work coming home only as a verified fast-forward.
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
    memoryMb: 512,
    cpus: 1,
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
    const home = await bringHomeForTest(session, repo, repo.base);
    expect(home).toBe(head);
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.git('rev-parse', 'HEAD^')).toBe(repo.base);
    expect(repo.git('rev-list', '--merges', `${repo.base}..HEAD`)).toBe('');
    expect(readFileSync(`${repo.root}/src/new.txt`, 'utf8')).toBe('x = 1\n');
    expect(repo.git('log', '-1', '--format=%an <%ae>')).toBe('Host Person <host@example.com>');
    await expect(
      session.exportBundle('0123456789012345678901234567890123456789', join(repo.ioDir, 'x.bundle')),
    ).rejects.toThrow(/sandbox export failed/);
    // Nothing new since: no bundle, HEAD unchanged.
    expect(await bringHomeForTest(session, repo, head as string)).toBeNull();
  });

  it('commits and exports in one call; a commit that fails says so, and nothing is exported', async () => {
    const base = (await session.head()).trim();
    expect((await session.exec('echo one-call > one-call.txt')).exitCode).toBe(0);
    const tree = await session.treeId();
    expect(tree).toMatch(/^[0-9a-f]{40}$/);
    const missing = '0123456789012345678901234567890123456789';
    const refused = join(repo.ioDir, 'refused.bundle');
    await expect(
      session.exportBundle(base, refused, { commit: { message: 'never made', tree: missing, parent: base } }),
    ).rejects.toThrow(/^sandbox commit failed \(exit 90\)/);
    expect(existsSync(refused)).toBe(false);
    expect((await session.head()).trim()).toBe(base);
    const dest = join(repo.ioDir, 'one-call.bundle');
    const head = await session.exportBundle(base, dest, {
      commit: { message: 'chalk(SBX-1): one call', tree: tree as string, parent: base },
    });
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    const shown = await session.exec(`git log -1 --format='%T %P %s' ${head}`);
    expect(shown.stdout.trim()).toBe(`${tree} ${base} chalk(SBX-1): one call`);
    expect(repo.git('bundle', 'list-heads', dest)).toBe(`${head} HEAD`);
    // Nothing to commit on top (the same tree): nothing new, no bundle.
    expect(
      await session.exportBundle(head as string, join(repo.ioDir, 'none.bundle'), {
        commit: { message: 'empty', tree: tree as string, parent: head as string },
      }),
    ).toBeNull();
    await session.exec(`git reset -q --hard ${base}`);
  });

  it('refuses to bring home work that is not a fast-forward', async () => {
    const before = repo.git('rev-parse', 'HEAD');
    repo.git('commit', '-q', '--allow-empty', '-m', 'host moved on');
    const moved = repo.git('rev-parse', 'HEAD');
    await session.exec('echo diverged > diverged.txt');
    await session.commitAll('sandbox diverges');
    await expect(bringHomeForTest(session, repo, before)).rejects.toThrow(/moved to/);
    expect(repo.git('rev-parse', 'HEAD')).toBe(moved);
    repo.git('reset', '-q', '--hard', before);
    await session.exec(`git reset -q --hard ${before}`);
  });

  it('has no host path in it: no bind mount, no host git dir, a read-only root, and limits', async () => {
    const info = await (await docker()).getContainer(session.name).inspect();
    expect(info.Mounts.filter((m) => m.Type === 'bind' || m.Type === 'volume')).toEqual([]);
    expect(info.HostConfig.Binds ?? []).toEqual([]);
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Memory).toBe(512 * 1024 * 1024);
    expect(info.HostConfig.MemorySwap).toBe(512 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(1e9);
    expect(info.HostConfig.PidsLimit).toBeGreaterThan(0);
    // Only the init and the keeper are root's, with these capabilities alone; every command is not (below).
    expect(info.Config.User).toBe('0:0');
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.CapAdd).toEqual(['KILL', 'SETUID', 'SETGID']);
    expect(info.HostConfig.LogConfig?.Type).toBe('none');
    const r = await session.exec(
      'ls -d /src.git 2>&1; touch /usr/evil 2>&1; git remote -v; cat .git/config; touch /chalk/evil 2>&1; true',
    );
    expect(r.stdout).toMatch(/'\/src\.git': No such file/);
    expect(r.stdout).toMatch(/'\/usr\/evil': Read-only file system/);
    expect(r.stdout).toMatch(/'\/chalk\/evil': Permission denied/);
    expect(r.stdout).not.toContain(repo.root);
    expect(r.stdout).not.toMatch(/\[remote/);
  });

  it('puts host files where the agent can read but not change them', async () => {
    await session.putFile('system.md', 'from the host\n');
    expect((await session.exec('cat /chalk/system.md')).stdout).toBe('from the host\n');
    const w = await session.exec(
      'echo evil > /chalk/system.md 2>&1; rm -f /chalk/system.md 2>&1; ln -sf /etc/passwd /chalk/x 2>&1; true',
    );
    expect(w.stdout).toMatch(/Permission denied/);
    expect((await session.exec('cat /chalk/system.md')).stdout).toBe('from the host\n');
    await expect(session.putFile('../etc/x', 'no')).rejects.toThrow(/not a file name/);
  });

  it('reads back only regular files under their cap', async () => {
    await session.exec(
      'printf data > plain.txt; ln -sf /etc/passwd link.txt; mkfifo fifo; mkdir -p dir; head -c 5000 /dev/zero > big.bin',
    );
    expect((await session.readFile('plain.txt', { maxBytes: 100 }))?.toString()).toBe('data');
    expect(await session.readFile('missing.txt', { maxBytes: 100 })).toBeNull();
    await expect(session.readFile('link.txt', { maxBytes: 100_000 })).rejects.toThrow(SandboxFileError);
    await expect(session.readFile('fifo', { maxBytes: 100 })).rejects.toThrow(/not a regular file/);
    await expect(session.readFile('dir', { maxBytes: 100 })).rejects.toThrow(/not a regular file/);
    await expect(session.readFile('big.bin', { maxBytes: 4096 })).rejects.toThrow(/over 4096/);
    await session.reset();
    await session.exec('rm -rf fifo dir big.bin link.txt plain.txt');
  });

  it('stops a command that prints past the output cap, keeping its head and tail', async () => {
    const started = Date.now();
    const r = await session.exec('yes chalk', { maxOutputBytes: 8 * 1024 * 1024 });
    expect(r.outputCapped).toBe(true);
    expect(r.exitCode).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(4 * 1024 * 1024 + 100);
    expect(r.stdout).toMatch(/bytes of output not kept/);
  });

  it('reaps what the agent left running in the background', async () => {
    await session.exec('(setsid sleep 300 >/dev/null 2>&1 &); (nohup sleep 301 >/dev/null 2>&1 &); true');
    expect((await session.exec(LIVE_SLEEPS)).stdout.trim()).toBe('2');
    await session.reapStrays();
    expect((await session.exec(LIVE_SLEEPS)).stdout.trim()).toBe('0');
    expect((await session.exec('echo alive')).stdout).toBe('alive\n');
  });

  it('reaps a fork bomb holding every pid, a process that stops itself and one that ignores signals', async () => {
    await session.exec(
      '(setsid bash -c \'trap "" TERM INT HUP USR1; while :; do sleep 1; done\' >/dev/null 2>&1 &); ' +
        "(setsid bash -c 'kill -STOP $$; sleep 600' >/dev/null 2>&1 &); " +
        "(setsid bash -c 'b() { b | b & }; b' >/dev/null 2>&1 &); true",
    );
    // The bomb reaches the pids limit: then an exec cannot even start, or its fork fails.
    const full = async () => {
      for (let i = 0; i < 100; i++) {
        const r = await session.exec('ls /proc | grep -c "^[0-9]"').catch(() => null);
        if (r?.exitCode !== 0 || Number(r.stdout) > 900) return true;
      }
      return false;
    };
    expect(await full()).toBe(true);
    await session.reapStrays();
    // Every process of the sandbox user but this shell and its `timeout`: none.
    const own = await session.exec(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash expansion, not a template
      'for p in /proc/[0-9]*; do [ -O "$p" ] && [ "${p#/proc/}" != $$ ] && [ "${p#/proc/}" != $PPID ] && echo "$p"; done; true',
    );
    expect(own.stdout).toBe('');
    expect((await session.exec('echo alive')).stdout).toBe('alive\n');
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
    // The init (and so the container's log, its stdout) is out of reach: no signal, no write, no read, no injection.
    const init = await session.exec(
      '{ kill -KILL 1; echo x >/proc/1/fd/1; cat /proc/1/environ; exec 3<>/proc/1/mem; } 2>&1; true',
    );
    expect(init.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/Operation not permitted/),
      expect.stringMatching(/Permission denied/),
      expect.stringMatching(/Permission denied/),
      expect.stringMatching(/Permission denied/),
    ]);
    expect((await session.exec('echo alive')).stdout).toBe('alive\n');
  });

  it('gives no credential to any exec: the agent exec gets the gateway and a run token, the container its proxy', async () => {
    const plain = await session.exec('env -0');
    expect(plain.stdout).not.toContain(SECRET);
    expect(plain.stdout).not.toContain('ANTHROPIC_');
    const proxy = plain.stdout.split('\0').find((e) => e.startsWith('HTTPS_PROXY='));
    expect(proxy).toMatch(/^HTTPS_PROXY=http:\/\/\d+\.\d+\.\d+\.\d+:3128$/);
    const r = await session.exec('env -0', { agent: true });
    const entries = r.stdout.split('\0').filter(Boolean);
    expect(r.stdout).not.toContain(SECRET);
    const named = (n: string) => entries.find((e) => e.startsWith(`${n}=`))?.slice(n.length + 1) ?? '';
    expect(named('ANTHROPIC_API_KEY')).toMatch(/^chalk-run-[A-Za-z0-9_-]{43}$/);
    expect(named('ANTHROPIC_BASE_URL')).toBe(`${proxy?.slice('HTTPS_PROXY='.length, -':3128'.length)}:8080`);
    for (const e of entries) {
      const name = e.slice(0, e.indexOf('='));
      if (/KEY|TOKEN|SECRET/.test(name)) expect(name).toBe('ANTHROPIC_API_KEY');
    }
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
    expect(sleeps.stdout.trim()).toBe('0');
  });

  it('an aborted exec rejects and its command dies', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop now')), 500);
    const started = Date.now();
    await expect(session.exec('sleep 20 & sleep 20', { signal: ac.signal })).rejects.toThrow('stop now');
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 300));
    const sleeps = await session.exec(LIVE_SLEEPS);
    expect(sleeps.stdout.trim()).toBe('0');
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

  it('gives both tree ids in one call: the whole tree, and the tree without the notes and a tracked report', async () => {
    await session.exec('mkdir -p specs out && echo n > specs/SBX-1.notes.md && echo r > out/report.xml');
    const exclude = ['specs/*.notes.md'];
    const tracked = await session.treeIds({ exclude, unlessIgnored: ['out/report.xml'] });
    expect(tracked.whole).toBe(await session.treeId());
    expect(tracked.without).toBe(await session.treeId([...exclude, 'out/report.xml']));
    expect(tracked.without).not.toBe(tracked.whole);
    // An ignored report is outside the tree anyway: left out without a pathspec git would refuse.
    await session.exec('echo out/ > .git/info/exclude');
    const ignored = await session.treeIds({ exclude, unlessIgnored: ['out/report.xml'] });
    expect(ignored.without).toBe(await session.treeId(exclude));
    expect(ignored.whole).toBe(await session.treeId());
    await session.exec('rm -rf out specs .git/info/exclude');
    await session.reset();
  });
});
