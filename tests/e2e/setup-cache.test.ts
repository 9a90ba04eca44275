import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPaths, setupCacheDir } from '../../core/layout.js';
import * as s from '../fakes/model-script.js';
import {
  chalk,
  chalkEnv,
  containers,
  doCheckpoint,
  e2eAvailable,
  explain,
  makeScenario,
  REMOTE,
  type Rig,
  RUBRIC,
  remoteEngineUp,
  runCli,
  sampleSpec,
  startRig,
} from './harness.js';

/**
 * Setup paid once, end to end: the real CLI, the real sandbox, the real claude CLI and
 * the scripted model. The first ticket of a repository runs the setup command and saves
 * what it left before any agent call; the second ticket starts from that state (the
 * command is not run again, the loop still green) and not from what the first ticket's
 * agent did to it, through an engine reached only by DOCKER_HOST when there is one; once
 * the base branch's lockfile moves, `chalk cleanup` removes the stale state.
 */
const available = await e2eAvailable();
const remoteUp = available && (await remoteEngineUp());

/** The setup: one dependency, a line per run of the command, a home cache. */
const SETUP = `mkdir -p node_modules/left "$HOME/.cache/tool"
echo orig > node_modules/left/index.js
echo ran >> node_modules/.setup-runs
echo cached > "$HOME/.cache/tool/blob"
`;
/** Part of the rubric: says what the setup left and needs the dependency. */
const DEPS = `echo "left: $(cat node_modules/left/index.js)"
echo "setup runs: $(wc -l < node_modules/.setup-runs)"
if [ -e node_modules/planted ]; then echo "planted: yes"; else echo "planted: no"; fi
echo "home cache: $(cat "$HOME/.cache/tool/blob")"
test -f node_modules/left/index.js
`;

describe.skipIf(!available)('setup paid once, end to end', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('restores the first ticket’s setup into the second, untampered and not rerun; cleanup removes it once stale', async () => {
    const sc = makeScenario({
      checkpoints: 1,
      files: { 'package-lock.json': '{"lockfileVersion": 3}\n', 'setup.sh': SETUP, 'deps.sh': DEPS },
    });
    const env = {
      CHALK_SETUP_CMD: 'sh setup.sh',
      CHALK_TEST_CMD: `sh deps.sh && ${RUBRIC}`,
      CHALK_SPEC_CHECK: 'false',
      CHALK_REVIEW: 'false',
    };
    const rubricLog = (ticket: string) =>
      readFileSync(join(runPaths(sc.repo, ticket, { XDG_STATE_HOME: rig.state }).io, 'rubric.log'), 'utf8');
    const saved = () =>
      readdirSync(setupCacheDir(sc.repo, { XDG_STATE_HOME: rig.state })).filter((n) => n.endsWith('.tar'));

    // Ticket 1: the setup runs and is saved; the agent then tampers with node_modules.
    const tamper = s.bash('echo evil > node_modules/left/index.js && touch node_modules/planted');
    rig.script({ loops: [[tamper, ...doCheckpoint(sc.ticket, 1)]] });
    const first = await chalk(rig, sc, ['run'], { env });
    expect(first.code, explain(first)).toBe(0);
    expect(first.lines).toContain('running the setup command: sh setup.sh');
    expect(first.lines.some((l) => /^setup state saved for this repository's next sandboxes \(/.test(l))).toBe(true);
    expect(rubricLog(sc.ticket)).toContain('left: evil\nsetup runs: 1\nplanted: yes\nhome cache: cached\n');
    expect(saved()).toHaveLength(1);

    // Ticket 2 from main, through the remote engine when there is one.
    const second = 'SHOP-2';
    sc.git('checkout', '-q', '-b', `chalk/${second}`, 'main');
    mkdirSync(join(sc.root, 'specs'), { recursive: true });
    writeFileSync(join(sc.root, 'specs', `${second}.md`), sampleSpec(second, { checkpoints: 1 }));
    sc.git('add', '-A');
    sc.git('commit', '-q', '-m', `chalk(${second}): spec`);
    rig.script({ loops: [doCheckpoint(second, 1)] });
    const r = await runCli(['run'], {
      cwd: sc.root,
      env: chalkEnv(rig, sc, { ...env, ...(remoteUp ? { DOCKER_HOST: REMOTE } : {}) }),
      ticket: second,
    });
    expect(r.code, explain(r)).toBe(0);
    expect(rig.model.violations).toEqual([]);
    expect(r.lines).not.toContain('running the setup command: sh setup.sh');
    expect(r.lines.some((l) => /^setup restored from the state saved .*; the setup command was not run$/.test(l))).toBe(
      true,
    );
    // What the setup left, from its one run: not what the first ticket's agent made of it.
    expect(rubricLog(second)).toContain('left: orig\nsetup runs: 1\nplanted: no\nhome cache: cached\n');
    expect(r.lines).toContain('request opened: https://github.com/acme/shop/pull/7');
    expect(saved()).toHaveLength(1);

    // Cleanup keeps the state main restores; once main's lockfile moves, it is stale and goes.
    const kept = await chalk(rig, sc, ['cleanup'], { env });
    expect(kept.code, explain(kept)).toBe(0);
    expect(kept.stdout).toMatch(
      /removed 0 saved setup state\(s\) \(0\.0 MiB\); kept 1: the one a sandbox of main restores now/,
    );
    expect(saved()).toHaveLength(1);
    sc.git('checkout', '-q', 'main');
    writeFileSync(join(sc.root, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {}}\n');
    sc.git('commit', '-q', '-am', 'lockfile moved');
    sc.git('push', '-q', 'origin', 'main');
    const stale = await chalk(rig, sc, ['cleanup'], { env });
    expect(stale.code, explain(stale)).toBe(0);
    expect(stale.stdout).toMatch(/removed 1 saved setup state\(s\) \(\d+\.\d MiB\)\n/);
    expect(saved()).toEqual([]);
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });
});
