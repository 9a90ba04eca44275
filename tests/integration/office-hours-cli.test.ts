import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHALK_BIN, chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * `chalk office-hours` and `chalk submit` refusing, as a user meets them (the
 * built CLI): one line naming what to do, a non-zero exit, nothing changed.
 */
if (!existsSync(CHALK_BIN)) throw new Error('dist/ is missing: run npx tsc -p tsconfig.build.json first');

const TICKET = 'OH-1';
let root: string;
let state: string;
const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
const env = () => ({ XDG_STATE_HOME: state, ANTHROPIC_API_KEY: 'sk-ant-cli-test', CHALK_TEST_CMD: 'true' });
const run = (args: string[]) => chalk(args, { cwd: root, env: env() });
const branches = () => git('for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').sort();

/** The refusal: exit 1, nothing on stdout, one `chalk: ...` line on stderr. */
function refused(args: string[]): string {
  const r = run(args);
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(1);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

beforeAll(() => {
  root = scratchRepo('ohshop');
  state = tempDir('chalk-oh-state-');
  git('switch', '-q', '-c', `chalk/${TICKET}`);
  mkdirSync(join(root, 'specs'));
  writeFileSync(join(root, 'specs', `${TICKET}.md`), `# ${TICKET}: x\n\n- [x] one\n- [ ] two\n- [ ] three\n`);
  git('add', '-A');
  git('commit', '-q', '-m', 'spec');
  git('branch', `detention/${TICKET}-1`);
});
afterAll(() => {
  rmSync(dirname(root), { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});

describe('chalk office-hours and chalk submit refusals, with the real CLI', { timeout: 60_000 }, () => {
  it('office hours needs a note', () => {
    git('switch', '-q', `detention/${TICKET}-1`);
    const want = 'chalk: a note is required: chalk office-hours -m "what was wrong and how you fixed it"';
    expect(refused(['office-hours'])).toBe(want);
    expect(refused(['office-hours', '-m', '   '])).toBe(want);
  });

  it('office hours runs only on a detention branch', () => {
    git('switch', '-q', `chalk/${TICKET}`);
    expect(refused(['office-hours', '-m', 'fixed it'])).toBe(
      `chalk: chalk office-hours runs on a detention/* branch (this is 'chalk/${TICKET}'): git switch to the detention branch the run named, commit your fix, then run it again`,
    );
    expect(branches()).toEqual(['chalk/OH-1', 'detention/OH-1-1', 'main']);
  });

  it('office hours refuses an uncommitted change like run does', () => {
    git('switch', '-q', `detention/${TICKET}-1`);
    writeFileSync(join(root, 'wip.txt'), 'x');
    try {
      expect(refused(['office-hours', '-m', 'fixed it'])).toMatch(
        /^chalk: uncommitted changes in .*; commit them first/,
      );
    } finally {
      rmSync(join(root, 'wip.txt'));
    }
    expect(branches()).toEqual(['chalk/OH-1', 'detention/OH-1-1', 'main']);
  });

  it('submit counts the open checkpoints, and refuses a detention branch', () => {
    git('switch', '-q', `chalk/${TICKET}`);
    expect(refused(['submit'])).toBe(
      `chalk: specs/${TICKET}.md has 2 open checkpoints; finish them (chalk run) or tick them, commit, then chalk submit`,
    );
    git('switch', '-q', `detention/${TICKET}-1`);
    expect(refused(['submit'])).toBe(
      `chalk: detention/${TICKET}-1 holds a detained attempt: fix it, commit, then chalk office-hours -m "what was wrong"`,
    );
  });

  it('submit refuses work no green rubric and review saw: every box ticked by hand, nothing pushed', () => {
    const origin = tempDir('chalk-oh-origin-');
    execFileSync('git', ['init', '-q', '--bare', origin]);
    git('switch', '-q', '-c', 'chalk/OH-2', 'main');
    mkdirSync(join(root, 'specs'), { recursive: true });
    writeFileSync(join(root, 'specs', 'OH-2.md'), '# OH-2: y\n\n- [x] one\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'ticked by hand');
    git('remote', 'add', 'origin', origin);
    try {
      const head = git('rev-parse', 'HEAD').slice(0, 12);
      expect(refused(['submit'])).toBe(
        `chalk: no green rubric and review saw chalk/OH-2 as it is (${head}); run chalk run: with every checkpoint ticked it runs them, then opens the request (or, with CHALK_AUTO_MR=false, stops for chalk submit)`,
      );
      expect(execFileSync('git', ['for-each-ref', 'refs/heads/'], { cwd: origin, encoding: 'utf8' })).toBe('');
    } finally {
      git('remote', 'remove', 'origin');
      git('switch', '-q', `chalk/${TICKET}`);
      rmSync(origin, { recursive: true, force: true });
    }
  });

  it('both name themselves outside a repository', () => {
    const out = tempDir('chalk-oh-none-');
    try {
      for (const cmd of ['office-hours', 'submit']) {
        const r = chalk(cmd === 'submit' ? [cmd] : [cmd, '-m', 'x'], { cwd: out, env: env() });
        expect(r.code).toBe(1);
        expect(r.stderr).toBe(`chalk: chalk ${cmd} works inside a git worktree: cd into the ticket worktree\n`);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('lists both commands in help', () => {
    const r = run(['help']);
    expect(r.stdout).toContain('chalk office-hours -m NOTE [--detach]');
    expect(r.stdout).toContain('chalk submit');
  });
});
