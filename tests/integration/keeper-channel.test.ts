import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxSession } from '../../core/ports/sandbox.js';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { KeeperChannel } from '../../plugins/sandbox-docker/keeper-channel.js';
import { dockerReachable, makeTestRepo, type TestRepo, testSandbox } from './sandbox-helpers.js';

/**
 * The keeper's channel (keeper.sh, keeper-channel.ts) on a real sandbox, played by the attacker:
 * a command run through it is the sandbox user's, so it may print anything, leave processes
 * behind that write later, and try the keeper's own descriptors; none of it may become an answer.
 * The session here never attaches its own channel (open and clone use the engine), so the test's
 * channel is the only one.
 */
const available = await dockerReachable();
const USER = '10001:10001';

describe.skipIf(!available)('the keeper channel on the real engine', { timeout: 180_000 }, () => {
  let repo: TestRepo;
  let session: SandboxSession;
  let channel: KeeperChannel;
  const sandbox = testSandbox({ handleSignals: false, memoryMb: 512, cpus: 1 });
  const run = (
    text: string,
    o: { name?: string; mode?: 'text' | 'bytes'; timeoutMs?: number; reapAfter?: boolean } = {},
  ) =>
    channel.run({
      script: { name: o.name ?? 'probe', text },
      user: USER,
      cwd: '/work/repo',
      mode: o.mode ?? 'text',
      cap: 1 << 20,
      timeoutMs: o.timeoutMs ?? 60_000,
      ...(o.reapAfter ? { reapAfter: true } : {}),
    });

  beforeAll(async () => {
    await sandbox.ensureImage();
    repo = makeTestRepo('KCH-1');
    session = await sandbox.open(repo.spec());
    await session.clone();
    channel = await KeeperChannel.attach((await docker()).getContainer(session.name));
  });

  afterAll(async () => {
    channel?.close();
    await session?.stop();
    repo?.dispose();
  });

  it('runs a script as the sandbox user with its arguments, environment and stdin, and says how it ended', async () => {
    const r = await channel.run({
      script: { name: 'echo', text: 'echo "$0:$1:$FOO:$(id -u)"; cat; echo oops >&2; exit 3' },
      user: USER,
      cwd: '/work/repo',
      env: { FOO: 'a\nb' },
      args: ['one'],
      stdin: 'in\n',
      mode: 'text',
      cap: 1024,
      timeoutMs: 60_000,
    });
    expect(r).toMatchObject({ exitCode: 3, stdout: 'echo:one:a\nb:10001\nin\n', stderr: 'oops\n', capped: false });
  });

  it('sends bytes as they are, NULs included, and nothing of stdout past the cap', async () => {
    const bytes = await run(`printf 'a\\0b\\377'`, { name: 'nul', mode: 'bytes' });
    expect([...bytes.bytes]).toEqual([0x61, 0, 0x62, 0xff]);
    const big = await channel.run({
      script: { name: 'big', text: 'head -c 5000 /dev/zero' },
      user: USER,
      cwd: '/',
      mode: 'bytes',
      cap: 4096,
      timeoutMs: 60_000,
    });
    expect(big.capped).toBe(true);
    expect(big.bytes.length).toBe(0);
  });

  it('forged answers, late writes and the keeper descriptors are never answers', async () => {
    // What a hostile script (or a hook git runs for the harness) can try: print text shaped like
    // an answer, write to every process's stdout it can reach, and leave a writer behind.
    const hostile = [
      `printf '99 0 5 0 -\\nforge'`,
      'for f in /proc/[0-9]*/fd/1 /proc/[0-9]*/fd/0; do printf "7 0 5 0 -\\nforge" >"$f" 2>/dev/null; done',
      `(sleep 0.5; printf '8 0 5 0 -\\nforge'; printf forge >&2) &`,
      'echo done',
    ].join('\n');
    const first = await run(hostile, { name: 'hostile' });
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toBe('99 0 5 0 -\nforgedone\n');
    // The leftover writes after its answer was taken: the next answers are whole and in turn.
    await new Promise((r) => setTimeout(r, 800));
    const answers = await Promise.all([1, 2, 3].map((i) => run(`echo ${i}`, { name: `n${i}` })));
    expect(answers.map((a) => a.stdout)).toEqual(['1\n', '2\n', '3\n']);
    expect(await channel.reap(30_000)).toBe(0);
  });

  it('ends a script that outlives its time (the keeper ends every process) and goes on', async () => {
    const t0 = Date.now();
    const slow = await run('sleep 60 & sleep 60; echo never', { name: 'slow', timeoutMs: 1_500 });
    expect(slow.timedOut).toBe(true);
    expect(slow.stdout).toBe('');
    expect(Date.now() - t0).toBeLessThan(30_000);
    // Nothing of it is left, and the channel answers again.
    const left = await run('ls /proc | grep -c "^[0-9]" || true', { name: 'count', reapAfter: false });
    // The init, the keeper, the subshell's bash and ls (grep reads the pipe): nothing else.
    expect(Number(left.stdout)).toBeLessThanOrEqual(5);
    expect((await run('echo again', { name: 'again' })).stdout).toBe('again\n');
  });

  it('reaps after a script when asked, before its output is read', async () => {
    const r = await run('(sleep 30; echo late) & echo now', { name: 'bg', mode: 'bytes', reapAfter: true });
    expect(r.bytes.toString()).toBe('now\n');
    const sleeps = await run('for p in /proc/[0-9]*; do cat $p/comm 2>/dev/null; done | grep -c "^sleep$" || true', {
      name: 'sleeps',
    });
    expect(sleeps.stdout.trim()).toBe('0');
  });

  it('cannot be signalled, traced or written by the sandbox user', async () => {
    const r = await run(
      [
        'k=$(cat /chalk/.keeper-round 2>/dev/null | cut -d" " -f1)',
        '[ -n "$k" ] && echo round:yes',
        'kill -USR1 "$k" 2>/dev/null && echo signalled',
        'kill -KILL "$k" 2>/dev/null && echo killed',
        'ls /chalk/.k >/dev/null 2>&1 && echo listed',
        'timeout 5 sh -c "exec 3</proc/$k/fd/0" 2>/dev/null && echo opened-stdin',
        'timeout 5 sh -c "exec 3>/proc/$k/fd/1" 2>/dev/null && echo opened-stdout',
        'echo end',
      ].join('\n'),
      { name: 'attack' },
    );
    expect(r.stdout).toBe('round:yes\nend\n');
    expect((await run('echo alive', { name: 'alive' })).stdout).toBe('alive\n');
  });
});
