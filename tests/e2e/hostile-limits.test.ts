import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupCacheDir } from '../../core/layout.js';
import { run } from '../../core/process/run.js';
import * as s from '../fakes/model-script.js';
import {
  branchesHold,
  type ChalkRun,
  chalk,
  databaseText,
  doCheckpoint,
  e2eAvailable,
  expectDetainedWith,
  explain,
  IMAGE,
  makeScenario,
  makeSentinel,
  modelText,
  pollFor,
  REMOTE,
  type Rig,
  RUBRIC,
  remoteEngineUp,
  SECRET_PREFIX,
  secretValue,
  startRig,
  stateFiles,
  stateText,
  ticketContainers,
  watchPeakRss,
} from './harness.js';

/**
 * The hostile-agent suite, part 3: limits and secrets. The run's container
 * has no bind mount and real limits; a rubric that prints without end is
 * stopped and capped; no credential reaches the setup, the rubric or anything
 * the agent can read; and the same run works against an engine reached only
 * through DOCKER_HOST.
 */
const available = await e2eAvailable();

const remoteUp = available && (await remoteEngineUp());

interface Inspect {
  Config: { User: string; Image: string; Labels: Record<string, string> | null };
  Mounts: { Type: string; Source: string; Destination: string }[];
  HostConfig: {
    Binds: string[] | null;
    Memory: number;
    NanoCpus: number;
    CpuQuota: number;
    PidsLimit: number | null;
    ReadonlyRootfs: boolean;
    CapDrop: string[] | null;
    CapAdd: string[] | null;
    Privileged: boolean;
    Tmpfs: Record<string, string> | null;
    LogConfig: { Type: string };
  };
}

describe.skipIf(!available)('hostile agent: limits and secrets', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  const quick = { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0', CHALK_MAX_LOOPS: '1' };

  it("the run container has no bind mount, real limits, a read-only root, and the machine's image and ceilings, whatever the repository asks", async () => {
    // The repository asks for more of everything, for a local image of its choosing, and for a ceiling of its own.
    const chosen = `chalk-e2e-repo-choice:${process.pid}`;
    await run('docker', ['tag', IMAGE, chosen]);
    const greedy = [
      `CHALK_IMAGE=${chosen}`,
      'CHALK_SANDBOX_MEM_MB=12000',
      'CHALK_TMPFS_SIZE=12g',
      'CHALK_SANDBOX_CPUS=64',
      'CHALK_CEILING_SANDBOX_MEM_MB=99999',
      'CHALK_RUBRIC_TIMEOUT=86400',
      'CHALK_OUTPUT_CAP_MB=4096',
      'CHALK_BUDGET_USD=500',
    ];
    const sc = makeScenario({ ticket: 'LIM-1', files: { '.chalk/config': `${greedy.join('\n')}\n` } });
    // The loop waits (bounded) until the test has looked at its container.
    const wait = 'for i in $(seq 1 600); do [ -e /work/.inspected ] && break; sleep 0.1; done';
    rig.script({ loops: [[s.bash(wait), ...doCheckpoint(sc.ticket, 1)]] });
    // This machine's choice: the default image (no CHALK_IMAGE in the environment) and one ceiling of its own.
    const running = chalk(rig, sc, ['run'], {
      env: { ...quick, CHALK_IMAGE: undefined, CHALK_RUBRIC_TIMEOUT: undefined, CHALK_CEILING_SANDBOX_MEM_MB: '1536' },
    });
    let ended: ChalkRun | undefined;
    running.then((r) => {
      ended = r;
    });
    try {
      const found = await pollFor(
        async () => {
          if (ended) throw new Error(`the run ended before its container was seen: ${explain(ended)}`);
          const ids = await ticketContainers(sc.ticket);
          if (ids.length === 0) return undefined;
          // The loop's container is the one whose clone exists.
          for (const id of ids)
            if ((await run('docker', ['exec', id, 'test', '-d', '/work/repo/.git'])).code === 0) return id;
          return undefined;
        },
        { deadlineMs: 60_000, what: `a running container labelled chalk.ticket=${sc.ticket}` },
      );
      const inspected = JSON.parse((await run('docker', ['inspect', found])).stdout) as Inspect[];
      // Who runs in it while the agent works: the init and the keeper as root; the agent's CLI not.
      const procs = await pollFor(
        async () => {
          const top = await run('docker', ['top', found, '-o', 'pid,user,comm']);
          const rows = top.stdout
            .trim()
            .split('\n')
            .slice(1)
            .map((l) => {
              const [, user, comm = ''] = l.trim().split(/\s+/);
              return { user, comm };
            });
          return rows.some((p) => p.comm === 'claude') ? rows : undefined;
        },
        { deadlineMs: 60_000, what: 'the agent CLI in the container' },
      );
      await run('docker', ['exec', found, 'touch', '/work/.inspected']);
      const r = await running;
      const c = inspected[0] as Inspect;
      expect(c.Mounts.filter((m) => m.Type === 'bind')).toEqual([]);
      expect(c.HostConfig.Binds ?? []).toEqual([]);
      // The machine's image: the repository's sandbox mirror is a layer on it, and says so.
      expect(c.Config.Image).toMatch(/^chalk-mirror:/);
      const machineImage = (await run('docker', ['image', 'inspect', '-f', '{{.Id}}', 'chalk-sandbox:local'])).stdout;
      expect(c.Config.Labels?.['chalk.mirror.from']).toBe(machineImage.trim());
      expect(c.HostConfig.Memory).toBe(1536 * 1024 * 1024);
      expect(c.HostConfig.Tmpfs?.['/work']).toMatch(/size=8g$/);
      const engineCpus = Number((await run('docker', ['info', '--format', '{{.NCPU}}'])).stdout.trim());
      expect(c.HostConfig.NanoCpus).toBe(Math.max(1, Math.floor(engineCpus / 2)) * 1e9);
      expect(c.HostConfig.PidsLimit ?? 0).toBeGreaterThan(0);
      expect(c.HostConfig.ReadonlyRootfs).toBe(true);
      expect(c.HostConfig.CapDrop).toEqual(['ALL']);
      expect(c.HostConfig.CapAdd).toEqual(['KILL', 'SETUID', 'SETGID']);
      expect(c.HostConfig.LogConfig.Type).toBe('none');
      expect(c.HostConfig.Privileged).toBe(false);
      const own = procs.filter((p) => p.comm === 'docker-init' || p.comm.startsWith('reaped-'));
      expect(own.map((p) => p.user)).toEqual(['root', 'root']);
      const agent = procs.filter((p) => p.comm === 'claude');
      expect(agent.length).toBeGreaterThan(0);
      expect(agent.map((p) => p.user)).not.toContain('root');
      expectDetainedWith(r, /loop limit of 1 reached/);
      // The first lines say which image and limits apply, and who chose each.
      expect(r.lines).toContain(
        'sandbox: memory 1536 MiB (the repository asked 12000 MiB, held to CHALK_CEILING_SANDBOX_MEM_MB (environment)), ' +
          `RAM disk 8g (the repository asked 12g, held to CHALK_CEILING_TMPFS_SIZE (default)), CPUs ${Math.max(1, Math.floor(engineCpus / 2))} (the repository asked 64, held to CHALK_CEILING_SANDBOX_CPUS (default)), 1024 pids (fixed)`,
      );
      expect(r.lines).toContain(
        'sandbox image chalk-sandbox:local: the default: no CHALK_IMAGE, dev container or CHALK_TOOLCHAIN',
      );
      expect(r.lines).toContain(
        `the repository's .chalk/config asks for CHALK_IMAGE=${chosen}, which only this machine's environment sets: not used`,
      );
      expect(r.lines).toContain(
        'limits: setup timeout 1800 s (default), rubric timeout 3600 s (the repository asked 86400 s, held to CHALK_CEILING_RUBRIC_TIMEOUT (default)), ' +
          'agent timeout 3600 s (default), output cap 256 MiB (the repository asked 4096 MiB, held to CHALK_CEILING_OUTPUT_CAP_MB (default)), ' +
          'budget $1.00 a call (the repository asked $500.00 a call, held to CHALK_CEILING_BUDGET_USD (default)), loops 1 (environment), retries 0 (environment), review rounds 1 (default)',
      );
      expect(r.stderr).toContain(
        "warning: ignoring CHALK_CEILING_SANDBOX_MEM_MB in .chalk/config: only this machine's environment sets it",
      );
      const budgets = await rig.sql<{ budget_usd: string }>(
        'SELECT budget_usd FROM runs WHERE repo = $1 AND ticket = $2',
        [sc.repo, sc.ticket],
      );
      expect(budgets.map((b) => Number(b.budget_usd))).toEqual([1]);
    } finally {
      await run('docker', ['rmi', chosen]);
      sc.dispose();
    }
  });

  it('a rubric that prints a gigabyte is stopped at the cap; chalk stays small and says why', async () => {
    const CAP_MB = 8;
    const sc = makeScenario({ ticket: 'LIM-2' });
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    let peak = () => 0;
    const r = await chalk(rig, sc, ['run'], {
      env: {
        ...quick,
        CHALK_TEST_CMD: `head -c 1073741824 /dev/zero | tr '\\0' a; ${RUBRIC}`,
        // It prints a gigabyte on the base too: this is about a loop's rubric, so no base check.
        CHALK_BASELINE: 'off',
        CHALK_RUBRIC_TIMEOUT: '120',
        CHALK_OUTPUT_CAP_MB: String(CAP_MB),
      },
      timeoutMs: 200_000,
      onStart: (child) => {
        peak = watchPeakRss(child).peakKb;
      },
    });
    expect(r.signal, explain(r)).toBeNull();
    expect(r.stderr, explain(r)).not.toMatch(/RangeError|\n\s+at /);
    expectDetainedWith(r, /output|print|cap|limit/i);
    expect(peak(), 'chalk peak resident memory (kB)').toBeLessThan(400 * 1024);
    const logs = stateFiles(rig, sc.ticket, 'rubric.log');
    expect(logs.length).toBeGreaterThan(0);
    for (const log of logs) expect(statSync(log).size, log).toBeLessThanOrEqual(CAP_MB * 1024 * 1024);
    // Nothing the host keeps of the run holds more than the cap (plus its own few lines).
    for (const f of stateFiles(rig, sc.ticket, 'detention.json'))
      expect(statSync(f).size, f).toBeLessThanOrEqual((CAP_MB + 1) * 1024 * 1024);
    sc.dispose();
  });

  it('no secret of the host reaches the setup, the rubric, the agent, the branches, the model or the database', async () => {
    const sc = makeScenario({ ticket: 'SEC-1' });
    const sentinel = makeSentinel();
    const secrets = {
      apiKey: `sk-ant-${secretValue('apikey')}`,
      otel: secretValue('otel'),
      urlPassword: secretValue('url'),
      extraHeader: secretValue('header'),
      gitFile: secretValue('gitfile'),
    };
    // Credentials in the host repository's git config and a file in its git dir.
    sc.git('remote', 'add', 'backup', `http://chalk:${secrets.urlPassword}@127.0.0.1:9/shop.git`);
    sc.git('config', 'http.extraheader', `AUTHORIZATION: bearer ${secrets.extraHeader}`);
    sc.git('config', 'chalk.note', secrets.gitFile);
    writeFileSync(join(sc.root, '.git', 'secret-note'), `${secrets.gitFile}\n`);

    const dump = (to: string) =>
      `env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; grep -r -I -h -a ${SECRET_PREFIX} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null; cat /src.git/config /work/repo/.git/config 2>/dev/null; true${to}`;
    // The agent's own credential never enters the sandbox (the model gateway holds it): the agent
    // dumps every environment it can read, its own included, and no secret may be in it.
    const agentDump =
      `mkdir -p leak && env > leak/env.txt; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done > leak/proc.txt; ` +
      `out=$(grep -r -I -h -a ${SECRET_PREFIX} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null); printf '%s' "$out" > leak/grep.txt; cat /src.git/config /src.git/secret-note 2>/dev/null > leak/git.txt; true`;
    rig.script({ loops: [[s.bash(agentDump), ...doCheckpoint(sc.ticket, 1)]] });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        ...quick,
        ANTHROPIC_API_KEY: secrets.apiKey,
        CHALK_OTEL_ENDPOINT: rig.model.url,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${secrets.otel}`,
        // Into the home directory too: the setup state saved from it is searched below.
        CHALK_SETUP_CMD: dump(' | tee ~/setup-dump.txt'),
        CHALK_TEST_CMD: dump(`; ${RUBRIC}`),
      },
    });
    expectDetainedWith(r, /loop limit of 1 reached/);
    // The agent did run its dump and the rubric its own.
    expect(sc.git('ls-tree', '--name-only', `${sc.branch}`, 'leak/')).toContain('leak/env.txt');
    expect(stateFiles(rig, sc.ticket, 'rubric.log').length).toBeGreaterThan(0);
    const state = stateText(rig, sc.ticket);
    expect(state).toContain('HOME=');
    const cached = readdirSync(setupCacheDir(sc.repo, { XDG_STATE_HOME: rig.state }))
      .filter((n) => n.endsWith('.tar'))
      .map((n) => readFileSync(join(setupCacheDir(sc.repo, { XDG_STATE_HOME: rig.state }), n), 'latin1'))
      .join('\n');
    expect(cached).toContain('home/chalk/setup-dump.txt');
    const db = await databaseText(rig);
    const model = modelText(rig);
    const leaks: string[] = [];
    for (const [name, secret] of Object.entries(secrets)) {
      if (state.includes(secret)) leaks.push(`${name} in the run's files (setup.log, rubric.log, ...)`);
      if (cached.includes(secret)) leaks.push(`${name} in the saved setup state`);
      if (branchesHold(sc, secret)) leaks.push(`${name} in a branch`);
      if (model.includes(secret)) leaks.push(`${name} sent to the model`);
      if (db.includes(secret)) leaks.push(`${name} in the database`);
      if (r.stdout.includes(secret) || r.stderr.includes(secret)) leaks.push(`${name} printed`);
    }
    expect(leaks).toEqual([]);
    expect(sentinel.intact(), sentinel.describe()).toBe(true);
    sentinel.dispose();
    sc.dispose();
  });

  it.skipIf(!remoteUp)('a happy run works against an engine reached only through DOCKER_HOST', async () => {
    const sc = makeScenario({ ticket: 'RMT-1', checkpoints: 1 });
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', DOCKER_HOST: REMOTE } });
    expect(r.code, explain(r)).toBe(0);
    expect(rig.model.violations).toEqual([]);
    expect(r.lines).toContain('request opened: https://github.com/acme/shop/pull/7');
    expect(sc.git('show', `${sc.branch}:greet.sh`)).toBe('echo hello');
    expect(sc.originBranches()).toContain(sc.branch);
    expect(await ticketContainers(sc.ticket)).toEqual([]);
    sc.dispose();
  });
});
