import { release } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../core/process/run.js';
import * as s from '../fakes/model-script.js';
import { CI, chalk, doCheckpoint, e2eAvailable, explain, makeScenario, type Rig, startRig } from './harness.js';
import { type Listeners, startListeners } from './network-probe.js';

/**
 * CHALK_SANDBOX_RUNTIME=runsc: a whole run under gVisor, when the engine has it registered (CI
 * registers Debian's runsc: .ci/setup.d/25-runsc.sh). The agent's kernel is gVisor's, not the
 * host's, and the sandbox's way out is the same egress proxy. That a missing runtime is refused,
 * never replaced, is tests/unit/sandbox-env.test.ts's.
 */
const available = await e2eAvailable();
const runtimes = available ? (await run('docker', ['info', '--format', '{{json .Runtimes}}'])).stdout : '';
const gvisor = runtimes.includes('"runsc"');
if (available && CI && !gvisor)
  throw new Error('CI needs the runsc runtime registered with dockerd (.ci/setup.d/25-runsc.sh)');

describe.skipIf(!gvisor)('a run under gVisor (CHALK_SANDBOX_RUNTIME=runsc)', { timeout: 300_000 }, () => {
  let rig: Rig;
  let l: Listeners;
  beforeAll(async () => {
    rig = await startRig();
    l = await startListeners(rig.model.bridgeAddress as string);
  });
  afterAll(async () => {
    await l?.close();
    await rig?.close();
  });

  it('runs the agent and the rubric on gVisor’s kernel, through the same egress proxy, the setup’s leftovers reaped', async () => {
    const sc = makeScenario({ ticket: 'GVS-1', checkpoints: 1 });
    const allowed = `${l.bridge}:${l.httpPort}`;
    rig.script({
      loops: [
        [
          s.bash(
            `echo "kernel $(uname -r)"; n=0; for f in /proc/[0-9]*/cmdline; do [ "$(tr '\\0' ' ' <$f 2>/dev/null)" = 'sleep 4242 ' ] && n=$((n + 1)); done; echo "strays $n"; node -e "fetch('http://${allowed}/gvisor').then(r => r.text()).then(t => console.log('fetched', t.trim()))"`,
          ),
          ...doCheckpoint(sc.ticket, 1),
        ],
      ],
    });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        CHALK_SPEC_CHECK: 'false',
        CHALK_REVIEW: 'false',
        CHALK_SANDBOX_RUNTIME: 'runsc',
        // Left running by the setup: the keeper's reap must end it before the agent call, where
        // `docker top` cannot see gVisor's processes (session.ts lists them from inside).
        CHALK_SETUP_CMD: 'setsid sleep 4242 </dev/null >/dev/null 2>&1 &',
        CHALK_EGRESS_ALLOW: allowed,
      },
    });
    expect(r.code, explain(r)).toBe(0);
    const said = rig.model.toolResults.map((t) => t.content).join('\n');
    const kernel = /kernel (\S+)/.exec(said)?.[1];
    expect(kernel, said).toBeDefined();
    expect(kernel).not.toBe(release());
    expect(said).toContain('strays 0');
    expect(said).toContain('fetched hello-from-the-allowed-host');
    expect(l.seen.http).toEqual(['/gvisor']);
    expect(sc.git('show', `${sc.branch}:greet.sh`)).toBe('echo hello');
    sc.dispose();
  });
});
