import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  branchesHold,
  chalk,
  databaseText,
  doCheckpoint,
  e2eAvailable,
  expectDetainedWith,
  explain,
  makeScenario,
  modelText,
  nextLines,
  type Rig,
  RUBRIC,
  secretValue,
  startRig,
  stateFiles,
  stateText,
} from './harness.js';
import { type Listeners, probeResults, probeScript, startListeners } from './network-probe.js';

/**
 * The hostile-agent suite, part 5: the network and the agent's own credential. The setup, the
 * agent (in its shell and in a process it leaves running) and the rubric try every way out of
 * the sandbox; listeners on the host count what arrives, and nothing does but what the person
 * allowed. The real key is never in the sandbox (the agent scrapes every process's
 * environment for it), the gateway takes the run's token only from its network and only
 * during a call, forwards only the model's paths with the real key in place of whatever the
 * client sent, and forgets the token when the run ends.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('hostile agent: the network and the credential', { timeout: 400_000 }, () => {
  let rig: Rig;
  let l: Listeners;
  const apiKey = `sk-ant-${secretValue('netkey')}`;
  const foreignKey = `sk-ant-foreign-${randomUUID()}`;
  const leakName = `${randomUUID()}.leak.example.com`;
  let firstToken = '';

  beforeAll(async () => {
    rig = await startRig();
    l = await startListeners(rig.model.bridgeAddress as string);
  });
  afterAll(async () => {
    await l?.close();
    await rig?.close();
  });

  // The allowed host, and a TLS listener on the same address (allowed too, to show a wrong server name is cut off).
  const allowed = () => `${l.bridge}:${l.httpPort},${l.bridge}:${l.tlsPort}`;
  // The rubrics fail on the base by design (the agent's change is what they check): no base run.
  const quick = {
    CHALK_SPEC_CHECK: 'false',
    CHALK_MAX_RETRIES: '0',
    CHALK_MAX_LOOPS: '1',
    CHALK_DECIDER: 'off',
    CHALK_BASELINE: 'off',
  };

  it('every way out is refused with nothing sent, the key is nowhere the agent can read, and the person is told', async () => {
    const sc = makeScenario({ ticket: 'NET-1', files: { 'probe.cjs': probeScript(l, { leakName, foreignKey }) } });
    rig.script({
      loops: [
        [
          // A process the agent leaves running reads every environment while claude works.
          s.bash(
            "(while true; do for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done 2>/dev/null; sleep 0.2; done > /tmp/scrape.txt &) ; echo started",
          ),
          s.bash('node probe.cjs agent'),
          s.bash(
            'mkdir -p leak && sleep 0.5 && cp /tmp/scrape.txt leak/scrape.txt && for p in /proc/[0-9]*; do tr \'\\0\' \'\\n\' < $p/environ; done > leak/proc.txt 2>/dev/null; env > leak/env.txt; printf %s "$ANTHROPIC_API_KEY" > leak/token.txt; printf %s "$ANTHROPIC_API_KEY" > /tmp/token; true',
          ),
          ...doCheckpoint(sc.ticket, 1),
        ],
      ],
    });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        ...quick,
        ANTHROPIC_API_KEY: apiKey,
        CHALK_EGRESS_ALLOW: allowed(),
        CHALK_SETUP_CMD: 'node probe.cjs setup',
        // The rubric needs a host it may not reach, and fails.
        CHALK_TEST_CMD: `node probe.cjs rubric && node -e "fetch('https://blocked.example.com/').then(() => process.exit(0), () => process.exit(1))" && ${RUBRIC}`,
      },
    });
    expectDetainedWith(r, /rubric failed/);
    expect(rig.model.violations).toEqual([]);

    const setup = probeResults(readFileSync(stateFiles(rig, sc.ticket, 'setup.log')[0] as string, 'utf8'), 'setup');
    const agent = probeResults(rig.model.toolResults.map((t) => t.content).join('\n'), 'agent');
    const rubric = probeResults(readFileSync(stateFiles(rig, sc.ticket, 'rubric.log')[0] as string, 'utf8'), 'rubric');
    for (const [phase, p] of Object.entries({ setup, agent, rubric })) {
      const why = `${phase}: ${JSON.stringify(p)}`;
      expect(p.done, why).toBe('yes');
      // No raw TCP, UDP or IPv6 route out; no resolver of its own.
      for (const k of [
        'raw-tcp-bridge',
        'raw-tcp-network-gateway',
        'raw-tcp-internet',
        'raw-v6-loopback-host',
        'raw-v6-host',
      ])
        if (p[k] !== undefined) expect(p[k], `${why} ${k}`).not.toBe('CONNECTED');
      expect(p['dns-off-list'], why).not.toMatch(/^RESOLVED/);
      expect(p['dns-registry'], why).not.toMatch(/^RESOLVED/);
      // Through the proxy: a bare address, another spelling of one, a blocked name in any case, IPv6
      // and the model's host are refused; an allowed name in another case passes.
      for (const k of [
        'connect-bare-address',
        'connect-number-form',
        'connect-public-address',
        'connect-variant-blocked',
        'connect-v6',
        'connect-model-host',
      ])
        expect(p[k], `${why} ${k}`).toBe('403');
      expect(p['connect-variant-allowed'], why).toBe('200');
      // A TLS server name that differs from the CONNECT name (or any on an address) is cut off; the real one passes.
      expect(p['sni-differs'], why).toMatch(/^closed/);
      expect(p['sni-on-address'], why).toMatch(/^closed/);
      expect(p['tls-allowed'], why).toBe('HANDSHAKE');
      // The host the person allowed is reached, through Node's own fetch.
      expect(p['allowed-host'], why).toBe('200:hello-from-the-allowed-host');
    }
    // The gateway: a files upload and a foreign key are refused; the token with a foreign
    // credential beside it is forwarded with the real key only; outside a call, nothing.
    expect(agent['gateway-files']).toBe('403');
    expect(agent['gateway-foreign-key']).toBe('401');
    expect(agent['gateway-token-and-foreign']).toBe('200');
    expect(rubric['gateway-files']).toBe('403');
    expect(rubric['gateway-foreign-key']).toBe('401');
    expect(rubric['gateway-token-and-foreign']).toBe('403');

    // Nothing arrived anywhere but at the allowed host, which all three phases reached.
    expect(l.seen.tcp + l.seen.udp + l.seen.v6 + l.seen.tls, JSON.stringify(l.seen)).toBe(0);
    expect(l.seen.http.sort()).toEqual(['/agent', '/rubric', '/setup']);
    // The model saw only the real key, never the foreign one, and no upload or refused request.
    expect(new Set(rig.model.requests.map((q) => q.credential))).toEqual(new Set([apiKey]));
    expect(rig.model.requests.some((q) => q.path.startsWith('/v1/files'))).toBe(false);
    const sent = modelText(rig);
    for (const marker of ['FOREIGN-', 'FILES-', 'BOTH-rubric']) expect(sent).not.toContain(marker);
    expect(sent).toContain('BOTH-agent');

    // The agent's scrapes (its shell and the leftover process) found the run's token, never the key.
    const [parked] = sc.branches('detention/*');
    const leaked = (f: string) => sc.git('show', `${parked}:leak/${f}`);
    firstToken = leaked('token.txt');
    expect(firstToken).toMatch(/^chalk-run-/);
    expect(leaked('scrape.txt')).toContain(firstToken);
    expect(leaked('proc.txt')).toContain(`ANTHROPIC_API_KEY=${firstToken}`);
    const db = await databaseText(rig);
    const state = stateText(rig, sc.ticket);
    expect(branchesHold(sc, apiKey)).toBe(false);
    expect(state.includes(apiKey) || db.includes(apiKey) || sent.includes(apiKey)).toBe(false);
    expect(r.stdout + r.stderr).not.toContain(apiKey);

    // The person is told: each phase's refusals in io/egress.jsonl and the log, and why the rubric failed.
    const egress = readFileSync(stateFiles(rig, sc.ticket, 'egress.jsonl')[0] as string, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { phase: string; host: string; port: number; count: number });
    const refused = (phase: string) => egress.filter((e) => e.phase === phase).map((e) => `${e.host}:${e.port}`);
    for (const phase of ['setup', 'loop 1 (agent)', 'loop 1 (rubric)']) {
      expect(refused(phase)).toEqual(
        expect.arrayContaining([
          `${l.bridge}:${l.tcpPort}`,
          'blocked.example.com:443',
          'api.anthropic.com:443',
          `${leakName}:53`,
        ]),
      );
    }
    expect(r.lines.some((x) => x.startsWith('egress proxy refused') && x.includes('during setup'))).toBe(true);
    expect(nextLines(r)[0]).toMatch(
      /^next: the rubric failed after the egress proxy refused .*blocked\.example\.com:443.*CHALK_EGRESS_ALLOW=/,
    );
    const why = await chalk(rig, sc, ['why', sc.ticket], { env: quick });
    expect(why.stdout).toMatch(
      /egress: blocked\.example\.com:443 refused \d+ times? \(.*\); to allow: CHALK_EGRESS_ALLOW=blocked\.example\.com:443/,
    );
    sc.dispose();
  });

  it('npm install works in setup and rubric with the defaults; the first run’s token is dead; the request lists what was refused', async () => {
    const sc = makeScenario({
      ticket: 'NET-2',
      checkpoints: 1,
      files: {
        'package.json': JSON.stringify({
          name: 'shop',
          version: '1.0.0',
          private: true,
          dependencies: { 'is-number': '7.0.0' },
        }),
        'probe.cjs': probeScript(l, { leakName, foreignKey }),
      },
    });
    rig.script({
      loops: [
        [
          s.bash(
            `REPLAY_TOKEN='${firstToken}' node probe.cjs replay; node -e "fetch('https://blocked.example.com/').catch(() => {})"`,
          ),
          ...doCheckpoint(sc.ticket, 1),
        ],
      ],
    });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        CHALK_SPEC_CHECK: 'false',
        CHALK_DECIDER: 'off',
        CHALK_BASELINE: 'off',
        ANTHROPIC_API_KEY: apiKey,
        CHALK_EGRESS_ALLOW: allowed(),
        CHALK_SETUP_CMD: 'npm install --no-audit --no-fund',
        CHALK_TEST_CMD: `npm install --no-audit --no-fund && node -e "require('is-number')" && ${RUBRIC}`,
      },
    });
    expect(r.code, explain(r)).toBe(0);
    const setupLog = readFileSync(stateFiles(rig, sc.ticket, 'setup.log')[0] as string, 'utf8');
    expect(setupLog).toMatch(/added 1 package/);
    const replay = probeResults(rig.model.toolResults.map((t) => t.content).join('\n'), 'replay');
    expect(replay['gateway-replay']).toBe('401');
    expect(modelText(rig)).not.toContain('REPLAY-');
    const body = sc.forge.requests()[0]?.stdin ?? '';
    expect(body).toContain('### Network access the sandbox was refused');
    expect(body).toMatch(
      /- `blocked\.example\.com:443`: refused \d+ times? \(loop 1 \(agent\)\); to allow: `CHALK_EGRESS_ALLOW=blocked\.example\.com:443`/,
    );
    // What no setting allows says so: another server name, the proxy's own loopback, the gateway.
    expect(body).toMatch(
      /- `registry\.npmjs\.org:443`: refused 1 time \(loop 1 \(agent\)\); never allowed: the TLS server name evil\.example\.com differs/,
    );
    expect(body).toMatch(/- `\[::1\]:\d+`: refused 1 time \(loop 1 \(agent\)\); never allowed/);
    expect(body).not.toContain('CHALK_EGRESS_ALLOW=model-gateway');
    sc.dispose();
  });
});
