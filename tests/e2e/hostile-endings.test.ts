import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../core/process/run.js';
import * as s from '../fakes/model-script.js';
import { cuttableRelay } from '../helpers/relay.js';
import {
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  expectDetainedWith,
  explain,
  makeScenario,
  nextLines,
  pollFor,
  type Rig,
  RUBRIC,
  startRig,
} from './harness.js';

/**
 * The hostile repository as the person reads the ending: a run a limit or
 * the sandbox stopped says which, after how long and the key that sets it
 * (a rubric, a setup command or an agent call past its timeout, a rubric the
 * sandbox's memory killed, the engine going away), never only an exit code or
 * a socket error; and a reader that closes the pipe early ends any command
 * quietly, a run included, with nothing left.
 */
const available = await e2eAvailable();

/** The loopback-only engine address .ci/setup.d/20-docker.sh opens (hostile-limits runs a whole run through it). */
const REMOTE = new URL((process.env.CHALK_TEST_DOCKER_REMOTE || 'tcp://127.0.0.1:2375').replace(/^tcp:/, 'http:'));
const remoteUp =
  available &&
  (await run('docker', ['-H', `tcp://${REMOTE.host}`, 'info', '--format', '{{.ServerVersion}}'], { timeoutMs: 10_000 }))
    .code === 0;

const quick = { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0', CHALK_MAX_LOOPS: '1' };
/** The rubric's ending after a loop: the same rubric on the base would stop the run before any agent call. */
const afterLoop = { ...quick, CHALK_BASELINE: 'off' };

describe.skipIf(!available)('hostile repository: how a run ends is said plainly', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('a rubric past CHALK_RUBRIC_TIMEOUT timed out, after how long and by which key', async () => {
    const sc = makeScenario({ ticket: 'END-1' });
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    const r = await chalk(rig, sc, ['run'], {
      env: { ...afterLoop, CHALK_RUBRIC_TIMEOUT: '2', CHALK_TEST_CMD: 'sleep 60' },
    });
    expectDetainedWith(r, /^DETENTION: rubric timed out after 2 s \(CHALK_RUBRIC_TIMEOUT\)$/);
    expect(r.lines).toContainEqual(
      expect.stringMatching(/^loop 1 \(continue\): agent ok .*, rubric timed out after 2 s/),
    );
    expect(nextLines(r)[0]).toMatch(
      /^next: the rubric timed out after 2 s \(CHALK_RUBRIC_TIMEOUT\); read .*rubric\.log/,
    );
    expect(r.stdout).not.toMatch(/exit 124/);
    sc.dispose();
  });

  it('a rubric the sandbox ran out of memory for was killed, and says so with the key', async () => {
    const sc = makeScenario({ ticket: 'END-2' });
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    const hog = `node -e 'const a = []; for (;;) a.push(Buffer.alloc(64 << 20, 1))'`;
    const r = await chalk(rig, sc, ['run'], {
      env: { ...afterLoop, CHALK_SANDBOX_MEM_MB: '512', CHALK_TEST_CMD: `${hog} && ${RUBRIC}` },
    });
    expectDetainedWith(r, /^DETENTION: rubric was killed: the sandbox ran out of memory \(CHALK_SANDBOX_MEM_MB=512\)$/);
    expect(r.stdout).not.toMatch(/exit 137/);
    sc.dispose();
  });

  it('a setup command past CHALK_SETUP_TIMEOUT stops the run with one line saying so', async () => {
    const sc = makeScenario({ ticket: 'END-3' });
    const r = await chalk(rig, sc, ['run'], {
      env: { ...quick, CHALK_SETUP_TIMEOUT: '2', CHALK_SETUP_CMD: 'sleep 600' },
      timeoutMs: 120_000,
    });
    expect(r.signal, explain(r)).toBeNull();
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr.trim(), explain(r)).toMatch(
      /^chalk: setup command timed out after 2 s \(CHALK_SETUP_TIMEOUT\); see .*setup\.log$/,
    );
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });

  it('an agent call past CHALK_AGENT_TIMEOUT is stopped, said so, and counted at its cap', async () => {
    const sc = makeScenario({ ticket: 'END-4' });
    // A model that does not answer for two minutes.
    rig.script({ loops: [[s.say('late', { sleepMs: 120_000 })]] });
    const r = await chalk(rig, sc, ['run'], { env: { ...quick, CHALK_AGENT_TIMEOUT: '5' }, timeoutMs: 120_000 });
    expectDetainedWith(r, /^DETENTION: agent timed out after 5 s \(CHALK_AGENT_TIMEOUT\)$/);
    expect(r.lines).toContainEqual(
      expect.stringMatching(
        /^loop 1 \(continue\): agent timed out after 5 s \(CHALK_AGENT_TIMEOUT\) \(no result: counted as \$1\.00, /,
      ),
    );
    expect(nextLines(r)[0]).toMatch(/^next: the agent timed out after 5 s \(CHALK_AGENT_TIMEOUT\); read .*loop\.err/);
    sc.dispose();
  });

  it.skipIf(!remoteUp)('an engine that goes away mid-call ends the run with one line saying so', async () => {
    const sc = makeScenario({ ticket: 'END-6' });
    const engine = await cuttableRelay({ host: REMOTE.hostname, port: Number(REMOTE.port) });
    rig.script({ loops: [[s.say('thinking', { sleepMs: 60_000 })]] });
    const running = chalk(rig, sc, ['run'], { env: { ...quick, DOCKER_HOST: engine.url }, timeoutMs: 120_000 });
    try {
      // Cut once the agent call is under way (the model has its request).
      await pollFor(() => (rig.seen.some((x) => x.kind === 'loop') ? true : undefined), {
        deadlineMs: 60_000,
        what: 'the loop call',
      });
      engine.cut();
      const r = await running;
      expect(r.signal, explain(r)).toBeNull();
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr.trim(), explain(r)).toMatch(
        /^chalk: the Docker engine went away \(.+\); the sandbox and what it held are lost: start Docker, then run the ticket again$/,
      );
    } finally {
      engine.cut();
      for (const name of await containers(sc)) await run('docker', ['rm', '-f', name]);
      sc.dispose();
    }
  });

  it('a reader that closes the pipe ends any command quietly with exit 0; a run is stopped and leaves nothing', async () => {
    const sc = makeScenario({ ticket: 'END-5' });
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    const run = await chalk(rig, sc, ['run'], { env: quick, closedStdout: true });
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 0, signal: null });
    expect(run.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(await containers(sc)).toEqual([]);
    for (const args of [['version'], ['decider', 'status'], ['status'], ['config'], ['--help'], ['why', sc.ticket]]) {
      const r = await chalk(rig, sc, args, { closedStdout: true });
      // Quiet: no stack trace, no EPIPE (a command's own warnings may still go to stderr).
      expect({ args, code: r.code, trace: /EPIPE|Unhandled|\n\s+at /.test(r.stderr) }).toEqual({
        args,
        code: 0,
        trace: false,
      });
    }
    // The claim went with the stopped run: the next one starts, and runs to its end.
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    expectDetainedWith(await chalk(rig, sc, ['run'], { env: quick }), /loop limit of 1 reached/);
    sc.dispose();
  });
});
