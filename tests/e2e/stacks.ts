import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  type ChalkRun,
  calls,
  chalkProject,
  containers,
  explain,
  type ProjectScenario,
  projectScenario,
  type Rig,
  tick,
} from './harness.js';

/**
 * One real public project's story, end to end with no hand-written image (the real CLI, the
 * real `claude` CLI in the image Chalk builds from what `chalk init` wrote, the scripted
 * model, the fake forge): init finds the stack; the agent's first loop adds a function with
 * its test and a bug, the project's own test command fails and the run is detained naming the
 * failing test and its assertion; the person fixes the bug on the detention branch and runs
 * office hours; the next loop is green in the same image, is reviewed, and becomes a request.
 */
export interface StackStory {
  bundle: string;
  ticket: string;
  /** What the checkpoint asks for. */
  checkpoint: string;
  /** Lines `chalk init` must print (the stack, the test command, the toolchain, the base branch). */
  initSays: string[];
  /** The agent's first loop: the function, with a bug, and its test. */
  broken: s.Step[];
  /** The failing test's id and its assertion, as the fingerprint records them. */
  failingTest: string;
  assertion: RegExp;
  /** The person's fix: in `file` (in the worktree), `from` becomes `to`. */
  fix: { file: string; from: string; to: string };
  /** The image the run says it uses. */
  image: RegExp;
  /** More to check on the first run's output. */
  firstRun?: (r: ChalkRun) => void;
}

export interface StoryTimes {
  detainedMs: number;
  requestMs: number;
}

const spec = (ticket: string, checkpoint: string) =>
  `# ${ticket}: The ticket\n\n## Context\n\nA small addition to the library.\n\n## Checkpoints\n\n- [ ] ${checkpoint}\n`;

const requests = (sc: ProjectScenario) => sc.forge.calls().filter((c) => c.argv[0] === 'pr' && c.argv[1] === 'create');

/** Runs the story and checks every step; returns how long the two runs took. */
export async function stackStory(rig: Rig, story: StackStory): Promise<StoryTimes> {
  const sc = await projectScenario(rig, story.bundle, {
    ticket: story.ticket,
    spec: spec(story.ticket, story.checkpoint),
  });
  try {
    for (const line of story.initSays) expect(sc.init.stdout, explain(sc.init)).toContain(line);

    rig.script({ loops: [[...story.broken, s.loopDone('1', 'added it with a test')]] });
    // The flaky rerun would run the same tree again: nothing it shows here, and CI time.
    const env = { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0', CHALK_RERUN_FAILED: 'off' };
    const first = await chalkProject(rig, sc, ['run'], { env, timeoutMs: 600_000 });
    expect(first.code, explain(first)).toBe(3);
    expect(
      first.lines.find((l) => l.startsWith('sandbox image ')),
      explain(first),
    ).toMatch(story.image);
    const [row] = (await calls(rig, sc)).filter((c) => c.kind !== 'review');
    expect(row?.failing_tests, explain(first)).toBe(story.failingTest);
    // The detention names the failing test and its assertion, as the rubric printed them.
    expect(first.lines, explain(first)).toContain(`  failing test: ${story.failingTest}`);
    expect(
      first.lines.find((l) => l.startsWith('  first error: ')),
      explain(first),
    ).toMatch(story.assertion);
    const [detention] = sc.branches('detention/');
    if (!detention) throw new Error(`no detention branch\n${explain(first)}`);

    sc.git('switch', '--quiet', detention);
    const file = join(sc.root, story.fix.file);
    const before = readFileSync(file, 'utf8');
    if (!before.includes(story.fix.from)) throw new Error(`${story.fix.file} has no ${story.fix.from}`);
    writeFileSync(file, before.replace(story.fix.from, story.fix.to));
    sc.git('commit', '--quiet', '-am', 'fix the bug the agent left');
    rig.script({ loops: [[tick(sc.ticket), s.loopDone('1', 'the fix makes the test pass')]] });
    const second = await chalkProject(rig, sc, ['office-hours', '-m', 'the new function had a bug; fixed it'], {
      env: { CHALK_SPEC_CHECK: 'false' },
      timeoutMs: 600_000,
    });
    expect(second.code, explain(second)).toBe(0);
    const [request] = requests(sc);
    expect(request?.argv, explain(second)).toEqual(expect.arrayContaining(['--base', sc.base]));
    expect(rig.seen.map((x) => x.kind)).toEqual(['loop', 'review']);
    expect(await containers(sc)).toEqual([]);
    return { detainedMs: first.ms, requestMs: second.ms };
  } finally {
    sc.dispose();
  }
}

export type { ChalkRun };
