import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { tempDir } from '../helpers/cli.js';
import {
  branchesHold,
  chalk,
  controlChars,
  databaseText,
  doCheckpoint,
  e2eAvailable,
  expectDetainedWith,
  explain,
  makeScenario,
  makeSentinel,
  modelText,
  type Rig,
  secretValue,
  startRig,
  stateText,
  tick,
  watchPeakRss,
} from './harness.js';

/**
 * The hostile-agent suite, part 1: what comes out of the sandbox. The agent
 * plants symlinks, FIFOs and directories where the host reads or writes
 * (`/chalk/*`, the rubric's report), swaps the export bundle from a process it
 * leaves behind, and writes terminal escapes into its answers. Each attack
 * must leave the host's sentinel file untouched and the run in a clear state.
 */
const available = await e2eAvailable();

/** Every file the host has written to or read from the run's io directory. */
const IO_NAMES = [
  'rubric.log',
  'rubric-rerun.log',
  'loop.json',
  'loop.err',
  'prompt.md',
  'detention.json',
  'decisions.jsonl',
  'system.md',
  'out.bundle',
  'setup.log',
  'report',
];

/** Plants `how` (a shell snippet using $f) at every io name, ignoring refusals (a read-only /chalk is the fix). */
const plantAll = (how: string): s.Step =>
  s.bash(`for f in ${IO_NAMES.join(' ')}; do ( ${how} ) 2>/dev/null; done; true`);

/** Loop 1 does checkpoint 1 after planting; loop 2 plants again and ticks nothing, so the run detains after a host write of every kind. */
function plantingLoops(ticket: string, plant: s.Step): s.Script[] {
  return [
    [plant, ...doCheckpoint(ticket, 1)],
    [plant, s.loopDone('2', 'nothing this time')],
  ];
}

const NO_TICK = /rubric passed but no checkpoint was ticked/;

describe.skipIf(!available)('hostile agent: what comes out of the sandbox', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  const settings = { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0', CHALK_MAX_LOOPS: '2' };

  it('symlinks planted at /chalk/* do not make the host write through them', async () => {
    const sc = makeScenario({ ticket: 'SYM-1' });
    const sentinel = makeSentinel();
    rig.script({ loops: plantingLoops(sc.ticket, plantAll(`rm -rf /chalk/$f; ln -sfn ${sentinel.path} /chalk/$f`)) });
    const r = await chalk(rig, sc, ['run'], { env: settings, timeoutMs: 120_000 });
    expect(sentinel.intact(), sentinel.describe()).toBe(true);
    expectDetainedWith(r, NO_TICK);
    sentinel.dispose();
    sc.dispose();
  });

  it('FIFOs planted at /chalk/* do not hang the host', async () => {
    const sc = makeScenario({ ticket: 'FIFO-1' });
    const sentinel = makeSentinel();
    rig.script({ loops: plantingLoops(sc.ticket, plantAll('rm -rf /chalk/$f; mkfifo /chalk/$f')) });
    // A host that opens a FIFO blocks for ever: the bound turns that into a failure.
    const r = await chalk(rig, sc, ['run'], { env: settings, timeoutMs: 90_000 });
    expect(r.signal, explain(r)).toBeNull();
    expect(sentinel.intact(), sentinel.describe()).toBe(true);
    expectDetainedWith(r, NO_TICK);
    sentinel.dispose();
    sc.dispose();
  });

  it('directories planted at /chalk/* do not crash the host', async () => {
    const sc = makeScenario({ ticket: 'DIR-1' });
    const sentinel = makeSentinel();
    rig.script({ loops: plantingLoops(sc.ticket, plantAll('rm -rf /chalk/$f; mkdir -p /chalk/$f/inside')) });
    const r = await chalk(rig, sc, ['run'], { env: settings, timeoutMs: 120_000 });
    expect(r.stderr, explain(r)).not.toMatch(/\n\s+at /);
    expect(sentinel.intact(), sentinel.describe()).toBe(true);
    expectDetainedWith(r, NO_TICK);
    sentinel.dispose();
    sc.dispose();
  });

  /**
   * The rubric is repository code the agent writes: here it leaves something
   * other than a report at CHALK_TEST_REPORT and fails, twice. The host must
   * read no host file through it, hang on nothing, hold no huge string, and
   * see no secret of the host's git config through it.
   */
  const reportAttacks: { name: string; plant: (sentinel: string) => string }[] = [
    { name: 'a symlink to a host file', plant: (p) => `ln -s ${p} .test-report.xml` },
    { name: 'a symlink into the git store', plant: () => 'ln -s /src.git/config .test-report.xml' },
    { name: 'a FIFO', plant: () => 'mkfifo .test-report.xml' },
    { name: 'a directory', plant: () => 'mkdir -p .test-report.xml/x' },
    { name: 'a 600 MB file', plant: () => "head -c 629145600 /dev/zero | tr '\\0' '<' > .test-report.xml" },
  ];

  it.each(reportAttacks)('a rubric report that is $name is refused without harm', async ({ name, plant }) => {
    const sc = makeScenario({ ticket: `REP-${reportAttacks.findIndex((a) => a.name === name) + 1}` });
    const sentinel = makeSentinel();
    const secret = secretValue('origin');
    sc.git('remote', 'add', 'backup', `http://chalk:${secret}@127.0.0.1:9/shop.git`);
    const rubric = `#!/bin/sh\nsh tests/greet_test.sh; rm -rf .test-report.xml; ${plant(sentinel.path)}\nexit 1\n`;
    const attack: s.Script = [
      s.write('/work/repo/tests/greet_test.sh', '[ "$(sh greet.sh)" = "hello" ]\n'),
      s.write('/work/repo/greet.sh', 'echo nope\n'),
      s.write('/work/repo/check.sh', rubric),
      tick(sc.ticket),
      s.loopDone('1', 'added greet.sh'),
    ];
    rig.script({ loops: [attack, [s.loopDone('1', 'still there')]] });
    let peak = () => 0;
    const r = await chalk(rig, sc, ['run'], {
      env: { ...settings, CHALK_MAX_RETRIES: '1', CHALK_TEST_REPORT: '.test-report.xml' },
      timeoutMs: 120_000,
      onStart: (child) => {
        peak = watchPeakRss(child).peakKb;
      },
    });
    expect(r.signal, explain(r)).toBeNull();
    expect(r.stderr, explain(r)).not.toMatch(/\n\s+at /);
    expect(sentinel.intact(), sentinel.describe()).toBe(true);
    expectDetainedWith(r, /./);
    expect(peak(), 'chalk held the report in memory').toBeLessThan(400 * 1024);
    expect(modelText(rig)).not.toContain(secret);
    expect(stateText(rig, sc.ticket)).not.toContain(secret);
    expect(stateText(rig, sc.ticket)).not.toContain(sentinel.content.trim());
    expect(await databaseText(rig)).not.toContain(secret);
    expect(branchesHold(sc, secret)).toBe(false);
    sentinel.dispose();
    sc.dispose();
  });

  /** Paths an export bundle may pass through inside the sandbox (/chalk before the rework, /tmp/.chalk-out after it: share/sandbox/scripts/export.sh). */
  const BUNDLE_PATHS = ['/chalk/out.bundle', '/tmp/.chalk-out/out.bundle', '/work/out.bundle', '/tmp/out.bundle'];

  /**
   * A process the agent leaves behind that keeps replacing the export bundle
   * with `replace` (a shell snippet writing $t.new) as soon as a real one appears.
   */
  const bundleSwapper = (replace: string): s.Step =>
    s.bash(
      `nohup setsid sh -c 'while :; do for t in ${BUNDLE_PATHS.join(' ')}; do if [ -f "$t" ] && [ ! -L "$t" ] && ! cmp -s "$t" /work/evil.bundle; then ${replace} && mv -Tf "$t.new" "$t"; fi; done; done' >/dev/null 2>&1 < /dev/null & true`,
    );

  /** A deterministic unrelated history (fixed identity and dates): the same commit id on the host and in the sandbox. */
  const UNRELATED = (dir: string, branch: string) =>
    `rm -rf ${dir} && git init -q ${dir} && cd ${dir} && printf 'unrelated history\\n' > evil.txt && git add evil.txt && GIT_AUTHOR_NAME=E GIT_AUTHOR_EMAIL=e@example.com GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_NAME=E GIT_COMMITTER_EMAIL=e@example.com GIT_COMMITTER_DATE=2000-01-01T00:00:00Z git -c commit.gpgsign=false commit -q -m unrelated && git branch -f ${branch} && git rev-parse HEAD`;

  it("a bundle swapped for a symlink to another repository's bundle on the host brings none of its objects home", async () => {
    const sc = makeScenario({ ticket: 'BUN-1' });
    const other = makeScenario({ ticket: 'OTH-1', files: { 'other.txt': `${randomUUID()}\n` } });
    const otherHead = other.git('rev-parse', 'HEAD');
    const otherBlob = other.git('rev-parse', 'HEAD:other.txt');
    // Another repository's history as it sits on the host (git reads a path named *.bundle as a bundle file).
    const otherBundle = join(other.dir, 'other.bundle');
    other.git('bundle', 'create', '-q', otherBundle, '--all');
    const sentinel = makeSentinel();
    rig.script({
      loops: [[bundleSwapper(`ln -sfn ${otherBundle} "$t.new"`), ...doCheckpoint(sc.ticket, 1)]],
    });
    // A user who trusts every directory (safe.directory=*, common on shared machines) gets no ownership check to hide behind.
    const globalConfig = join(other.dir, 'gitconfig');
    writeFileSync(globalConfig, '[safe]\n\tdirectory = *\n');
    const r = await chalk(rig, sc, ['run'], {
      env: { ...settings, CHALK_MAX_LOOPS: '1', GIT_CONFIG_GLOBAL: globalConfig },
      timeoutMs: 120_000,
    });
    for (const sha of [otherHead, otherBlob])
      expect(spawnSync('git', ['cat-file', '-e', sha], { cwd: sc.root }).status, `${sha} reached the repo`).not.toBe(0);
    expect(sentinel.intact(), sentinel.describe()).toBe(true);
    expectDetainedWith(r, /loop limit of 1 reached/);
    expect(sc.subjects(sc.branch)[0]).toBe(`chalk(${sc.ticket}): continue, loop 1`);
    sentinel.dispose();
    other.dispose();
    sc.dispose();
  });

  it('a bundle swapped for one of unrelated history is refused before anything is fetched', async () => {
    const sc = makeScenario({ ticket: 'BUN-2' });
    const scratch = tempDir('chalk-e2e-unrelated-');
    const unrelated = execFileSync('sh', ['-c', UNRELATED(`${scratch}/u`, sc.branch)], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: scratch },
    }).trim();
    rig.script({
      loops: [
        [
          s.bash(
            `(${UNRELATED('/work/unrelated', sc.branch)}) && git -C /work/unrelated bundle create -q /work/evil.bundle --all`,
          ),
          bundleSwapper('cp /work/evil.bundle "$t.new"'),
          ...doCheckpoint(sc.ticket, 1),
        ],
      ],
    });
    const r = await chalk(rig, sc, ['run'], { env: { ...settings, CHALK_MAX_LOOPS: '1' }, timeoutMs: 120_000 });
    expect(spawnSync('git', ['cat-file', '-e', unrelated], { cwd: sc.root }).status, explain(r)).not.toBe(0);
    expect(sc.branches('*').every((b) => !sc.commits(b).includes(unrelated))).toBe(true);
    expectDetainedWith(r, /loop limit of 1 reached/);
    sc.dispose();
  });

  it('terminal escapes in the agent summary and blocker never reach chalk output', async () => {
    const sc = makeScenario({ ticket: 'ESC-1' });
    const evil =
      '\u001b[2J\u001b]0;pwned\u0007\u001b[31mred\rrequest opened: https://evil.example/\u001b[0m\u009b1m\u0008';
    const first = doCheckpoint(sc.ticket, 1).slice(0, -1);
    rig.script({ loops: [[...first, s.loopDone('1', `summary ${evil}`)], [s.loopBlocked(`blocker ${evil}`)]] });
    const r = await chalk(rig, sc, ['run'], { env: settings });
    expect(controlChars(r.stdout), explain(r)).toEqual([]);
    expect(controlChars(r.stderr), explain(r)).toEqual([]);
    expectDetainedWith(r, /agent reported a blocker/);
    expect(r.lines.some((l) => l.includes('blocker') && l.includes('red'))).toBe(true);
    sc.dispose();
  });
});
