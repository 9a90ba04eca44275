import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../core/process/run.js';
import * as s from '../fakes/model-script.js';
import {
  branchesHold,
  type ChalkRun,
  CI,
  chalk,
  databaseText,
  doCheckpoint,
  e2eAvailable,
  expectDetainedWith,
  explain,
  makeScenario,
  makeSentinel,
  modelText,
  pollFor,
  type Rig,
  RUBRIC,
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

/** The second, loopback-only engine address .ci/setup.d/20-docker.sh opens. */
const REMOTE = process.env.CHALK_TEST_DOCKER_REMOTE || 'tcp://127.0.0.1:2375';
const remoteUp =
  available &&
  (await run('docker', ['-H', REMOTE, 'info', '--format', '{{.ServerVersion}}'], { timeoutMs: 10_000 })).code === 0;
if (available && CI && !remoteUp) throw new Error(`CI needs dockerd listening on ${REMOTE} (.ci/setup.d/20-docker.sh)`);

interface Inspect {
  Config: { User: string };
  Mounts: { Type: string; Source: string; Destination: string }[];
  HostConfig: {
    Binds: string[] | null;
    Memory: number;
    NanoCpus: number;
    CpuQuota: number;
    PidsLimit: number | null;
    ReadonlyRootfs: boolean;
    CapDrop: string[] | null;
    Privileged: boolean;
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

  it('the run container has no bind mount, memory, CPU and pids limits, a read-only root and no root user', async () => {
    const sc = makeScenario({ ticket: 'LIM-1' });
    // The loop waits (bounded) until the test has looked at its container.
    const wait = 'for i in $(seq 1 600); do [ -e /work/.inspected ] && break; sleep 0.1; done';
    rig.script({ loops: [[s.bash(wait), ...doCheckpoint(sc.ticket, 1)]] });
    const running = chalk(rig, sc, ['run'], { env: { ...quick, CHALK_SANDBOX_MEM_MB: '1536' } });
    let ended: ChalkRun | undefined;
    running.then((r) => {
      ended = r;
    });
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
    await run('docker', ['exec', found, 'touch', '/work/.inspected']);
    const r = await running;
    const c = inspected[0] as Inspect;
    expect(c.Mounts.filter((m) => m.Type === 'bind')).toEqual([]);
    expect(c.HostConfig.Binds ?? []).toEqual([]);
    expect(c.HostConfig.Memory).toBe(1536 * 1024 * 1024);
    expect(c.HostConfig.NanoCpus > 0 || c.HostConfig.CpuQuota > 0).toBe(true);
    expect(c.HostConfig.PidsLimit ?? 0).toBeGreaterThan(0);
    expect(c.HostConfig.ReadonlyRootfs).toBe(true);
    expect(c.HostConfig.CapDrop).toContain('ALL');
    expect(c.HostConfig.Privileged).toBe(false);
    expect(c.Config.User).not.toMatch(/^(|0|root)(:.*)?$/);
    expectDetainedWith(r, /loop limit of 1 reached/);
    sc.dispose();
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
    // The agent's own credential is its to hold (docs/threat-model.md: not promised), so the agent
    // leaves lines naming it out of what it dumps; every other secret, and that one wherever else
    // it turns up (the setup's and the rubric's environments), must be absent.
    const own = 'grep -v ANTHROPIC_API_KEY';
    const agentDump =
      `mkdir -p leak && env | ${own} > leak/env.txt; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done | ${own} > leak/proc.txt; ` +
      `out=$(grep -r -I -h -a ${SECRET_PREFIX} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null | ${own}); printf '%s' "$out" > leak/grep.txt; cat /src.git/config /src.git/secret-note 2>/dev/null > leak/git.txt; true`;
    rig.script({ loops: [[s.bash(agentDump), ...doCheckpoint(sc.ticket, 1)]] });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        ...quick,
        ANTHROPIC_API_KEY: secrets.apiKey,
        CHALK_OTEL_ENDPOINT: rig.model.url,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${secrets.otel}`,
        CHALK_SETUP_CMD: dump(''),
        CHALK_TEST_CMD: dump(`; ${RUBRIC}`),
      },
    });
    expectDetainedWith(r, /loop limit of 1 reached/);
    // The agent did run its dump and the rubric its own.
    expect(sc.git('ls-tree', '--name-only', `${sc.branch}`, 'leak/')).toContain('leak/env.txt');
    expect(stateFiles(rig, sc.ticket, 'rubric.log').length).toBeGreaterThan(0);
    const state = stateText(rig, sc.ticket);
    expect(state).toContain('HOME=');
    const db = await databaseText(rig);
    const model = modelText(rig);
    const leaks: string[] = [];
    for (const [name, secret] of Object.entries(secrets)) {
      if (state.includes(secret)) leaks.push(`${name} in the run's files (setup.log, rubric.log, ...)`);
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
