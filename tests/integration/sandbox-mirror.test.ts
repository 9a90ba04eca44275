import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostGitPort } from '../../core/git/port.js';
import type { Log } from '../../core/ports/log.js';
import type { MirrorRepo } from '../../core/ports/sandbox.js';
import { mirrorRepoOf } from '../../core/repo/git.js';
import { MIRROR_STALE_BYTES } from '../../core/run/base/mirror.js';
import { startSandbox } from '../../core/run/base/session.js';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { listMirrors, MIRROR_LABELS } from '../../plugins/sandbox-docker/mirror.js';
import { labelFilter } from '../../plugins/sandbox-docker/names.js';
import { dockerReachable, makeTestRepo, type TestRepo, testSandbox } from './sandbox-helpers.js';

/**
 * Sandbox mirrors on the real engine: the start (core/run/base/session.ts startSandbox) over a
 * mirror image, what the sandbox can reach through it and what it cannot do to it, reuse, the
 * engine's mirrors kept to a few per repository, and `chalk cleanup`'s removal.
 */
const available = await dockerReachable();

const SECRET = 'SECRET-of-another-branch';

describe.skipIf(!available)('sandbox mirrors on the real engine', { timeout: 300_000 }, () => {
  const sandbox = testSandbox({ handleSignals: false, memoryMb: 512, cpus: 1 });
  const lines: string[] = [];
  const log: Log = {
    info: (m) => lines.push(m),
    warn: (m) => lines.push(`warning: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
    debug: () => {},
    child: () => log,
  };
  const repos: TestRepo[] = [];
  const mirrorsOf: MirrorRepo[] = [];

  beforeAll(async () => {
    await sandbox.ensureImage();
  });
  afterAll(async () => {
    await sandbox.closeAll();
    for (const m of mirrorsOf) await sandbox.removeMirrors({ repo: m, all: true });
    for (const r of repos) r.dispose();
  });

  /** A test repository with history on main, a secret on another branch, and the ticket branch one commit ahead. */
  function repo(ticket: string) {
    const r = makeTestRepo(ticket);
    repos.push(r);
    r.git('checkout', '-q', 'main');
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(r.root, `m${i}.txt`), `main ${i}\n`.repeat(50));
      r.git('add', '-A');
      r.git('commit', '-q', '-m', `main ${i}`);
    }
    r.git('checkout', '-q', '-b', 'other');
    writeFileSync(join(r.root, 'secret.txt'), `${SECRET}\n`);
    r.git('add', '-A');
    r.git('commit', '-q', '-m', 'secret');
    const secretBlob = r.git('rev-parse', 'HEAD:secret.txt');
    r.git('checkout', '-q', '-B', r.branch, 'main');
    writeFileSync(join(r.root, 'ticket.txt'), 'the ticket\n');
    r.git('add', '-A');
    r.git('commit', '-q', '-m', 'ticket');
    const key = mirrorRepoOf(r.git('rev-parse', '--path-format=absolute', '--git-common-dir'));
    mirrorsOf.push(key);
    return { r, secretBlob, key };
  }

  const start = (r: TestRepo, runId: string) =>
    startSandbox({
      git: hostGitPort,
      sandbox,
      log,
      root: r.root,
      repo: r.spec().repo,
      ticket: r.spec().ticket,
      branch: r.branch,
      baseBranch: 'main',
      source: join(r.ioDir, `${runId}.in.bundle`),
      depth: 0,
      system: 'the system prompt',
      env: {},
      runId,
    });

  it("starts over the mirror: the ticket's history and nothing else, the mirror root's and out of the agent's reach", async () => {
    const { r, secretBlob, key } = repo('MIR-1');
    lines.length = 0;
    const { session, forkPoint } = await start(r, 'mir-1');
    try {
      expect(lines.filter((l) => /sandbox mirror/.test(l))).toHaveLength(1);
      const sh = async (cmd: string) => {
        const e = await session.exec(cmd);
        return { code: e.exitCode, out: e.stdout.trim(), err: e.stderr.trim() };
      };
      expect((await sh('git rev-parse HEAD origin/main')).out).toBe(`${r.git('rev-parse', r.branch)}\n${forkPoint}`);
      expect((await sh('cat .git/objects/info/alternates')).out).toBe('/opt/chalk-mirror.git/objects');
      expect((await sh('cat /chalk/system.md')).out).toBe('the system prompt');
      // Every object the clone can reach, its own and borrowed, is in the ticket's history.
      const seen = (await sh('git cat-file --batch-all-objects --batch-check=%\\(objectname\\)')).out.split('\n');
      const history = new Set(r.git('rev-list', '--objects', '--no-object-names', r.branch).split('\n'));
      expect(seen.filter((o) => !history.has(o))).toEqual([]);
      expect(seen).not.toContain(secretBlob);
      // The tree's pack is stored uncompressed: a secret in it would be there as text.
      expect((await sh(`grep -rl ${SECRET} /opt/chalk-mirror.git || true`)).out).toBe('');
      expect(
        (await sh('git --git-dir=/opt/chalk-mirror.git for-each-ref --format="%(refname) %(objectname)"')).out,
      ).toBe(`refs/heads/base ${forkPoint}`);
      // Root's, read-only: the agent can neither write, replace nor remove it.
      expect((await sh('stat -c "%U %a" /opt/chalk-mirror.git /opt/chalk-mirror.git/objects/pack')).out).toBe(
        'root 755\nroot 755',
      );
      const pack = (await sh('ls /opt/chalk-mirror.git/objects/pack/*.pack | head -1')).out;
      for (const attempt of [
        'touch /opt/chalk-mirror.git/objects/planted',
        `rm -f ${pack}`,
        `mv ${pack} /tmp/`,
        `printf x >> ${pack}`,
        'mkdir /opt/chalk-mirror.git/objects/00',
        'rm -rf /opt/chalk-mirror.git',
      ]) {
        expect((await sh(`${attempt} 2>/dev/null`)).code, attempt).not.toBe(0);
      }
      expect((await sh('git --git-dir=/opt/chalk-mirror.git fsck --no-dangling 2>&1')).code).toBe(0);
      // The container is the mirror's image, made for this repository, commit and image.
      const d = await docker();
      const [c] = await d.listContainers({ filters: { label: labelFilter({ repo: r.spec().repo }) } });
      const image = (await d.getImage(c?.ImageID ?? '').inspect()) as { Config?: { Labels?: Record<string, string> } };
      expect(image.Config?.Labels?.[MIRROR_LABELS.repo]).toBe(key.key);
      expect(image.Config?.Labels?.[MIRROR_LABELS.base]).toBe(forkPoint);
      expect(image.Config?.Labels?.[MIRROR_LABELS.from]).toBe(await sandbox.imageId());
    } finally {
      await session.stop();
    }
    // The next start uses it as it is.
    lines.length = 0;
    const again = await start(r, 'mir-1b');
    await again.session.stop();
    expect(lines.filter((l) => /sandbox mirror/.test(l))).toEqual([]);
    expect(await listMirrors({ repo: key.key })).toHaveLength(1);
  });

  it('keeps two mirrors per repository as the base branch moves, and chalk cleanup keeps one (none with --all)', async () => {
    const { r, key } = repo('MIR-2');
    const far = () => {
      r.git('checkout', '-q', 'main');
      writeFileSync(join(r.root, 'big.bin'), randomBytes(MIRROR_STALE_BYTES + 65536));
      r.git('add', '-A');
      r.git('commit', '-q', '-m', 'far');
      r.git('checkout', '-q', r.branch);
      r.git('rebase', '-q', 'main');
    };
    for (let i = 0; i < 3; i++) {
      if (i > 0) far();
      const { session } = await start(r, `mir-2-${i}`);
      await session.stop();
    }
    const kept = await listMirrors({ repo: key.key });
    expect(kept.map((m) => m.base)).toEqual([r.git('rev-parse', 'main'), r.git('rev-parse', 'main~1')]);
    await sandbox.removeMirrors({ repo: key, all: false });
    expect((await listMirrors({ repo: key.key })).map((m) => m.base)).toEqual([r.git('rev-parse', 'main')]);
    await sandbox.removeMirrors({ repo: key, all: true });
    expect(await listMirrors({ repo: key.key })).toEqual([]);
  });

  it("cleanup removes the mirrors of a repository whose checkout is gone, and no other repository's", async () => {
    const a = repo('MIR-3');
    const b = repo('MIR-4');
    for (const x of [a, b]) await (await start(x.r, `mir-${x.r.spec().ticket}`)).session.stop();
    rmSync(a.r.root, { recursive: true, force: true });
    const c = repo('MIR-5');
    await sandbox.removeMirrors({ repo: c.key, all: false });
    expect(await listMirrors({ repo: a.key.key })).toEqual([]);
    expect(await listMirrors({ repo: b.key.key })).toHaveLength(1);
  });

  it('a start that fails before the sandbox opens leaves no network behind', async () => {
    const { r } = repo('MIR-6');
    // HEAD names no commit: host git fails while the network is being made.
    r.git('symbolic-ref', 'HEAD', 'refs/heads/unborn');
    await expect(start(r, 'mir-6')).rejects.toThrow();
    const nets = await (await docker()).listNetworks({ filters: { label: labelFilter({ repo: r.spec().repo }) } });
    expect(nets.map((n) => n.Name)).toEqual([]);
  });
});
