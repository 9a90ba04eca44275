import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../core/config/config.js';
import { alive, readPid } from '../../core/process/pid.js';
import { localDeciderPaths } from '../../plugins/decider-local/paths.js';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * `chalk decider up | down` as a user runs them, against a stand-in `uv` and `npm` on PATH
 * (tests/fakes/local-decider: this machine reaches neither PyPI nor a model hub). The stand-in
 * uv "installs" a stand-in strands-decider speaking the protocol, and "downloads" model snapshots;
 * the stand-in npm installs a stand-in transformers.js, so the embedding service's real loader
 * and server run. Real processes on loopback; every test stops what it started.
 */

const TOKEN = 'TOKEN-CANARY-7d41';
const FAKES = join(import.meta.dirname, '..', 'fakes', 'local-decider');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until<T>(what: string, probe: () => T | Promise<T>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

let repo: string;
let env: Record<string, string>;
let state: string;

function standins(withUv: boolean): string {
  const bin = join(tempDir(), 'bin');
  mkdirSync(bin);
  const wrap = (name: string, script: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec "${process.execPath}" "${join(FAKES, script)}" "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  };
  if (withUv) wrap('uv', 'uv.mjs');
  wrap('npm', 'npm.mjs');
  return bin;
}

beforeAll(async () => {
  repo = scratchRepo();
  const root = tempDir();
  state = join(root, 'state');
  const bin = standins(true);
  env = {
    XDG_STATE_HOME: state,
    PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
    STANDIN_UV_BIN: join(root, 'uv-bin'),
    STANDIN_LOG: join(root, 'standin.log'),
    STANDIN_OVERLAPS: join(root, 'overlaps'),
    CHALK_DECIDER_URL: `http://127.0.0.1:${await freePort()}`,
    CHALK_EMBED_URL: `http://127.0.0.1:${await freePort()}`,
    CHALK_DECIDER_TOKEN: TOKEN,
    ANTHROPIC_API_KEY: TOKEN,
  };
});

afterAll(() => {
  chalk(['decider', 'down'], { cwd: repo, env });
});

const paths = () => localDeciderPaths({ XDG_STATE_HOME: state });
const pidOf = (file: string) => readPid(file);

describe('chalk decider up', () => {
  it('without uv is one line with an install hint, and exit 1', () => {
    const r = chalk(['decider', 'up'], {
      cwd: repo,
      env: { ...env, PATH: `${standins(false)}:${dirname(process.execPath)}:/usr/bin:/bin` },
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/needs uv.*install.*astral\.sh\/uv/);
    expect(existsSync(paths().installed)).toBe(false);
  });

  it('refuses a decider URL on another machine, naming the setting', () => {
    const r = chalk(['decider', 'up'], {
      cwd: repo,
      env: { ...env, CHALK_DECIDER_URL: 'https://decider.example.com' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/CHALK_DECIDER_URL is https:\/\/decider\.example\.com/);
  });

  it('installs with uv, downloads both models, starts both services, records revisions and the median', async () => {
    const r = chalk(['decider', 'up'], { cwd: repo, env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/the local decider is up/);
    expect(r.stdout).toMatch(/median +\d+ ms per question/);
    const log = readFileSync(env.STANDIN_LOG as string, 'utf8');
    expect(log).toMatch(/^uv tool install --upgrade strands-decider$/m);
    expect(log).toMatch(
      /^uv tool run --from huggingface_hub hf download StrandsAgents\/strands-decider-2B-hobson-v19$/m,
    );
    expect(log).toMatch(/^uv tool run --from huggingface_hub hf download Qwen\/Qwen3\.5-2B-Base --revision b45e$/m);
    expect(log).toMatch(/^uv tool run --from huggingface_hub hf download BAAI\/bge-small-en-v1\.5 --include/m);
    expect(log).toMatch(/^npm install --prefix .*@huggingface\/transformers@\d/m);

    const installed = JSON.parse(readFileSync(paths().installed, 'utf8'));
    expect(installed.decider).toMatchObject({
      model: 'StrandsAgents/strands-decider-2B-hobson-v19',
      revision: `standin${'0'.repeat(33)}`,
    });
    expect(installed.base).toEqual({ model: 'Qwen/Qwen3.5-2B-Base', revision: `b45e${'0'.repeat(36)}` });
    expect(installed.embed.model).toBe('BAAI/bge-small-en-v1.5');
    expect(installed.packageVersion).toBe('0.1.0');
    expect(typeof installed.benchMs).toBe('number');
    expect(installed.benchMs).toBeGreaterThanOrEqual(0);

    // Both answer on loopback: the decider the protocol, the embedding service 384-d unit vectors.
    const health = (await (await fetch(`${env.CHALK_DECIDER_URL}/health`)).json()) as { model?: string };
    expect(health.model).toBe('strands-decider-2B-hobson-v19');
    const emb = await fetch(`${env.CHALK_EMBED_URL}/v1/embeddings`, {
      method: 'POST',
      body: JSON.stringify({ input: ['a', 'b'], model: 'BAAI/bge-small-en-v1.5' }),
    });
    const body = (await emb.json()) as { data: Array<{ embedding: number[] }> };
    expect(body.data).toHaveLength(2);
    expect(body.data[0]?.embedding).toHaveLength(384);
    expect(Math.hypot(...(body.data[0]?.embedding ?? []))).toBeCloseTo(1, 3);
    for (const f of [paths().deciderPid, paths().embedPid, paths().watchPid])
      expect(alive(pidOf(f) as number)).toBe(true);
    // The services get nothing of Chalk's: no token, no key, in their environment or arguments.
    for (const f of [paths().deciderPid, paths().embedPid, paths().watchPid]) {
      const pid = pidOf(f) as number;
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain(TOKEN);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(TOKEN);
    }
    expect(r.stdout).not.toContain(TOKEN);
    for (const log of [paths().deciderLog, paths().embedLog, paths().installed])
      expect(readFileSync(log, 'utf8')).not.toContain(TOKEN);
    // Nothing off this machine (a sandbox on a bridge network included) can reach them: both bind 127.0.0.1 only.
    expect(readFileSync(`/proc/${pidOf(paths().deciderPid)}/cmdline`, 'utf8').split('\0')).toEqual(
      expect.arrayContaining(['serve', '--host', '127.0.0.1']),
    );
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (outside) {
      const port = new URL(env.CHALK_EMBED_URL as string).port;
      await expect(fetch(`http://${outside}:${port}/health`)).rejects.toThrow();
    }
    // The benchmark's 6 questions took turns.
    expect(existsSync(env.STANDIN_OVERLAPS as string)).toBe(false);
  });

  it('a second up finds the running copy and installs nothing', () => {
    const before = readFileSync(env.STANDIN_LOG as string, 'utf8');
    const pid = pidOf(paths().deciderPid);
    const r = chalk(['decider', 'up'], { cwd: repo, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/already running/);
    expect(pidOf(paths().deciderPid)).toBe(pid);
    expect(readFileSync(env.STANDIN_LOG as string, 'utf8').slice(before.length)).toBe('uv --version\n');
  });

  it('decider status shows the install: revisions, device, the measured median, that the services run', () => {
    const installed = JSON.parse(readFileSync(paths().installed, 'utf8'));
    const r = chalk(['decider', 'status', '--json'], { cwd: repo, env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.provider).toBe('local');
    expect(s.parts.local).toEqual({
      installedAt: installed.installedAt,
      package: 'strands-decider',
      packageVersion: '0.1.0',
      device: installed.device,
      decider: { model: 'StrandsAgents/strands-decider-2B-hobson-v19', revision: `standin${'0'.repeat(33)}` },
      base: { model: 'Qwen/Qwen3.5-2B-Base', revision: `b45e${'0'.repeat(36)}` },
      embed: { model: 'BAAI/bge-small-en-v1.5', revision: installed.embed.revision },
      medianMs: installed.benchMs,
      measuredAt: installed.benchedAt,
      slow: installed.benchMs >= 1000,
      running: { decider: true, embed: true, watcher: true },
      used: true,
    });
    const text = chalk(['decider', 'status'], { cwd: repo, env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^local install \(chalk decider up\):$/m);
    expect(text.stdout).toMatch(/^ {2}decider +strands-decider-2B-hobson-v19@standin \(strands-decider 0\.1\.0/m);
    expect(text.stdout).toMatch(new RegExp(`^ {2}median +${installed.benchMs} ms per question`, 'm'));
    expect(text.stdout).toMatch(/^ {2}services +running$/m);
    for (const out of [r.stdout, text.stdout]) expect(out).not.toContain(TOKEN);
  });

  it("doctor's local decider line names both revisions and the median, and that it runs", () => {
    const installed = JSON.parse(readFileSync(paths().installed, 'utf8'));
    const doctor = chalk(['doctor', '--json'], { cwd: repo, env });
    const line = JSON.parse(doctor.stdout).checks.find((c: { label: string }) => c.label === 'local decider');
    expect(line.detail).toMatch(
      new RegExp(
        `^strands-decider-2B-hobson-v19@standin, bge-small-en-v1\\.5@\\w{7}, .*median ${installed.benchMs} ms.*, running$`,
      ),
    );
  }, 120_000); // chalk doctor checks Docker, the image and the store too: tens of seconds on a loaded machine

  it('down stops both services and the watcher', async () => {
    const pids = [paths().deciderPid, paths().embedPid, paths().watchPid].map((f) => pidOf(f) as number);
    const r = chalk(['decider', 'down'], { cwd: repo, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/stopped: idle watcher, decider, embedding service/);
    await until('the services to exit', () => pids.every((p) => !alive(p)));
    expect(chalk(['decider', 'down'], { cwd: repo, env }).stdout).toMatch(/was not running/);
  });

  it('a run starts the installed services in the background, without waiting or downloading', async () => {
    const before = readFileSync(env.STANDIN_LOG as string, 'utf8');
    // The built module: it starts start-main.js beside itself.
    const built = join(import.meta.dirname, '..', '..', 'dist', 'plugins', 'decider-local', 'background.js');
    const { startInBackground } = (await import(built)) as typeof import('../../plugins/decider-local/background.js');
    const values: Record<string, string> = {
      CHALK_DECIDER: 'shadow',
      CHALK_DECIDER_URL: env.CHALK_DECIDER_URL as string,
      CHALK_EMBED_URL: env.CHALK_EMBED_URL as string,
      CHALK_DECIDER_IDLE_MINUTES: '30',
      CHALK_DECIDER_TIMEOUT: 'auto',
    };
    const config = { str: (k: string) => values[k] ?? '', num: (k: string) => Number(values[k]) } as unknown as Config;
    const runEnv = { ...process.env, ...env };
    const t0 = Date.now();
    expect(startInBackground(config, runEnv)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1_000);
    await until('the decider to answer /health', async () =>
      fetch(`${env.CHALK_DECIDER_URL}/health`)
        .then((r) => r.ok)
        .catch(() => false),
    );
    await until('the embedding service to answer /health', async () =>
      fetch(`${env.CHALK_EMBED_URL}/health`)
        .then((r) => r.ok)
        .catch(() => false),
    );
    // Started once: a second start finds it running.
    await until('the pid files', () => alive(pidOf(paths().embedPid) ?? 0));
    expect(startInBackground(config, runEnv)).toBe(false);
    expect(readFileSync(env.STANDIN_LOG as string, 'utf8').slice(before.length)).toBe('');
    expect(
      startInBackground(
        { ...config, str: (k: string) => (k === 'CHALK_DECIDER' ? 'off' : (values[k] ?? '')) } as Config,
        runEnv,
      ),
    ).toBe(false);
    chalk(['decider', 'down'], { cwd: repo, env });
  });
});
