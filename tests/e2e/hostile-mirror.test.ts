import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mirrorRepoOf } from '../../core/repo/git.js';
import { listMirrors } from '../../plugins/sandbox-docker/mirror.js';
import * as s from '../fakes/model-script.js';
import {
  chalk,
  doCheckpoint,
  e2eAvailable,
  explain,
  makeScenario,
  type Rig,
  type Scenario,
  sampleSpec,
  startRig,
} from './harness.js';

/**
 * The hostile-agent suite: the sandbox mirror. A sandbox starts from an image layer holding the
 * repository's history up to where the ticket left main, and the agent reads it: it must hold
 * nothing the ticket branch does not (another branch, a stash, a main rewritten since the mirror
 * was made), and the agent must not be able to write, replace or remove it. The agent reports
 * what it can reach in a file the loop brings home; the real CLI, the real sandbox.
 */
const available = await e2eAvailable();

const SECRET = 'SECRET-pushed-to-main-by-mistake';
const OTHER = 'SECRET-on-another-branch';
const STASHED = 'SECRET-in-a-stash';

/** The agent's probe: the mirror it borrows, every object it reaches, any secret text in the mirror, what it could write. */
const probe = s.bash(
  [
    'exec > probe.txt 2>&1',
    'echo "alternates $(cat .git/objects/info/alternates)"',
    "git cat-file --batch-all-objects --batch-check='object %(objectname)'",
    `grep -rlE '${SECRET}|${OTHER}|${STASHED}' /opt/chalk-mirror.git /work/repo/.git | sed 's/^/found /'`,
    'p=$(ls /opt/chalk-mirror.git/objects/pack/*.pack | head -1)',
    'for a in "touch /opt/chalk-mirror.git/objects/planted" "rm -f $p" "mv $p /tmp/" "cp /dev/null $p" ' +
      '"mkdir /opt/chalk-mirror.git/objects/00" "rm -rf /opt/chalk-mirror.git" "ln -s /tmp /opt/chalk-mirror.git/x"; do',
    '  if sh -c "$a" 2>/dev/null; then echo "wrote $a"; fi',
    'done',
    'ls /opt/chalk-mirror.git/objects/pack | sed "s/^/pack /"',
    'true',
  ].join('\n'),
);

const settings = { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0', CHALK_REVIEW: 'false' };

/** What the loop brought home of the probe: the mirror, the objects, the secrets found, the writes that worked. */
function probed(sc: Scenario) {
  const lines = sc.git('show', `${sc.branch}:probe.txt`).split('\n');
  const pick = (tag: string) => lines.filter((l) => l.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
  return { alternates: pick('alternates'), objects: pick('object'), found: pick('found'), wrote: pick('wrote') };
}

describe.skipIf(!available)('hostile agent: the sandbox mirror', { timeout: 600_000 }, () => {
  let rig: Rig;
  const made: Scenario[] = [];
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    // dispose() removes the mirrors the runs made.
    for (const sc of made) sc.dispose();
    await rig?.close();
  });

  it("holds no other branch, no stash and no rewritten main's commit, and the agent can neither write nor replace it", async () => {
    const sc = makeScenario({ ticket: 'MIR-1', checkpoints: 1 });
    made.push(sc);
    // Secrets the ticket branch never holds: a branch of the person's and a stash.
    sc.git('checkout', '-q', '-b', 'other', 'main');
    writeFileSync(join(sc.root, 'other.txt'), `${OTHER}\n`);
    sc.git('add', '-A');
    sc.git('commit', '-q', '-m', 'another branch');
    const otherBlob = sc.git('rev-parse', 'HEAD:other.txt');
    sc.git('checkout', '-q', sc.branch);
    writeFileSync(join(sc.root, 'README.md'), `${STASHED}\n`);
    sc.git('stash', '-q');
    const stash = sc.git('rev-parse', 'stash@{0}');
    // main gets a secret by mistake, pushed; the first ticket starts on it (its mirror holds it).
    sc.git('checkout', '-q', 'main');
    writeFileSync(join(sc.root, 'key.txt'), `${SECRET}\n`);
    sc.git('add', '-A');
    sc.git('commit', '-q', '-m', 'oops');
    const leaked = sc.git('rev-parse', 'HEAD');
    const leakedBlob = sc.git('rev-parse', 'HEAD:key.txt');
    sc.git('push', '-q', 'origin', 'main');
    sc.git('checkout', '-q', sc.branch);
    sc.git('rebase', '-q', 'main');
    const firstStart = sc.git('rev-parse', 'HEAD');

    rig.script({ loops: [[probe, ...doCheckpoint(sc.ticket, 1)]] });
    const first = await chalk(rig, sc, ['run'], { env: settings });
    expect(first.code, explain(first)).toBe(0);
    expect(
      first.lines.filter((l) => /sandbox mirror/.test(l)),
      explain(first),
    ).toHaveLength(1);
    const one = probed(sc);
    expect(one.alternates).toEqual(['/opt/chalk-mirror.git/objects']);
    // Everything the sandbox reached is the ticket's history (the secret on main was, then).
    const history = new Set(sc.git('rev-list', '--objects', '--no-object-names', firstStart).split('\n'));
    expect(one.objects.length).toBeGreaterThan(0);
    expect(one.objects.filter((o) => !history.has(o))).toEqual([]);
    expect(one.objects).not.toContain(otherBlob);
    expect(one.objects).not.toContain(stash);
    expect(one.found).toEqual([]);
    expect(one.wrote).toEqual([]);
    expect(await listMirrors({ repo: mirrorRepoOf(join(sc.root, '.git')).key })).toHaveLength(1);

    // The secret is taken out of main, which is force-pushed; a second ticket starts on the new main.
    sc.git('checkout', '-q', 'main');
    sc.git('reset', '-q', '--hard', `${leaked}~1`);
    writeFileSync(join(sc.root, 'README.md'), '# shop, rewritten\n');
    sc.git('commit', '-q', '-am', 'main without the secret');
    sc.git('push', '-q', '--force', 'origin', 'main');
    sc.git('reflog', 'expire', '--expire=now', '--all');
    const second = { ...sc, ticket: 'MIR-2', branch: 'chalk/MIR-2' };
    sc.git('checkout', '-q', '-b', second.branch);
    mkdirSync(join(sc.root, 'specs'), { recursive: true });
    writeFileSync(join(sc.root, 'specs', 'MIR-2.md'), sampleSpec('MIR-2', { checkpoints: 1 }));
    sc.git('add', '-A');
    sc.git('commit', '-q', '-m', 'chalk(MIR-2): spec');
    const secondStart = sc.git('rev-parse', 'HEAD');
    // The old mirror (holding the secret) is still on the engine, and must not be used.
    rig.script({ loops: [[probe, ...doCheckpoint('MIR-2', 1)]] });
    const again = await chalk(rig, second, ['run'], { env: settings });
    expect(again.code, explain(again)).toBe(0);
    const two = probed(second);
    expect(two.alternates).toEqual(['/opt/chalk-mirror.git/objects']);
    const history2 = new Set(sc.git('rev-list', '--objects', '--no-object-names', secondStart).split('\n'));
    expect(two.objects.filter((o) => !history2.has(o))).toEqual([]);
    for (const o of [leaked, leakedBlob, otherBlob, stash]) expect(two.objects).not.toContain(o);
    expect(two.found).toEqual([]);
    expect(two.wrote).toEqual([]);
    // A new mirror, at the new main.
    expect(
      again.lines.filter((l) => /sandbox mirror/.test(l)),
      explain(again),
    ).toHaveLength(1);
  });
});
