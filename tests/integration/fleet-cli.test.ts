import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planPath, runPaths } from '../../core/layout.js';
import { repoKey } from '../../core/repo/git.js';
import { CHALK_BIN, chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * `chalk fleet`'s refusals with the real CLI (no engine needed: each is refused before
 * anything starts): one line each, a non-zero exit, and nothing made.
 */
function setup() {
  const root = scratchRepo();
  const state = tempDir('chalk-fleet-state-');
  const dir = tempDir('chalk-fleet-plan-');
  const env = { XDG_STATE_HOME: state, CHALK_DATABASE_URL: '' };
  const planFile = (plan: unknown) => {
    const p = join(dir, `plan-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(p, typeof plan === 'string' ? plan : JSON.stringify(plan));
    return p;
  };
  const branches = () =>
    spawnSync('git', ['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { cwd: root, encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
  return { root, state, dir, env, planFile, branches, repo: repoKey(root) };
}

const good = {
  workstreams: [
    { ticket: 'SHOP-2', title: 'Add the limiter', context: 'core/limit.ts', checkpoints: ['a token bucket, tested'] },
    { ticket: 'SHOP-3', title: 'Wire it in', checkpoints: ['the router uses it, tested'] },
  ],
};

describe('chalk fleet refusals', () => {
  it('refuses an epic that is not a ticket key, and mixed modes, with exit 2', () => {
    const t = setup();
    const bad = chalk(['fleet', 'shop'], { cwd: t.root, env: t.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')[0]).toMatch(
      /^chalk: 'shop' is not an epic's ticket key; use one like PROJ-100/,
    );
    const mixed = chalk(['fleet', 'SHOP-1', '--status', '--stop'], { cwd: t.root, env: t.env });
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/^chalk: choose one of --status, --stop/);
  });

  it('refuses an invalid plan one line per problem, saves nothing and makes no branch', () => {
    const t = setup();
    const file = t.planFile({ workstreams: [{ ticket: 'SHOP-2', title: '', checkpoints: [] }, good.workstreams[0]] });
    const r = chalk(['fleet', 'SHOP-1', '--plan', file, '--yes'], { cwd: t.root, env: t.env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `chalk: invalid plan (${file}): workstream 1 (SHOP-2): needs a title`,
      `chalk: invalid plan (${file}): workstream 1 (SHOP-2): needs at least one checkpoint`,
      `chalk: invalid plan (${file}): workstream 2 (SHOP-2): the ticket is also workstream 1; give each its own`,
    ]);
    expect(existsSync(planPath(t.repo, 'SHOP-1', { XDG_STATE_HOME: t.state }))).toBe(false);
    expect(t.branches()).toEqual(['main']);
  });

  it('refuses a plan that is not JSON, not a regular file, or names a branch another made', () => {
    const t = setup();
    const notJson = chalk(['fleet', 'SHOP-1', '--plan', t.planFile('{nope'), '--yes'], { cwd: t.root, env: t.env });
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/^chalk: the plan .* is not JSON \(.*\); fix it\n$/);
    const fifo = join(t.dir, 'fifo');
    spawnSync('mkfifo', [fifo]);
    const r = chalk(['fleet', 'SHOP-1', '--plan', fifo, '--yes'], { cwd: t.root, env: t.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`chalk: the plan ${fifo} is not a regular file; pass a JSON file\n`);
    const link = join(t.dir, 'link.json');
    symlinkSync('/etc/passwd', link);
    expect(chalk(['fleet', 'SHOP-1', '--plan', link, '--yes'], { cwd: t.root, env: t.env }).stderr).toBe(
      `chalk: the plan ${link} is not a regular file; pass a JSON file\n`,
    );
    spawnSync('git', ['branch', 'chalk/SHOP-3'], { cwd: t.root });
    const taken = chalk(['fleet', 'SHOP-1', '--plan', t.planFile(good), '--yes'], { cwd: t.root, env: t.env });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(
      /^chalk: invalid plan \(.*\): workstream 2 \(SHOP-3\): branch chalk\/SHOP-3 already exists; pick another ticket or remove it \(chalk cleanup\)\n$/,
    );
  });

  it('accepts a branch this epic made, refuses one another epic made', () => {
    const t = setup();
    spawnSync('git', ['branch', 'chalk/SHOP-3'], { cwd: t.root });
    const mark = runPaths(t.repo, 'SHOP-3', { XDG_STATE_HOME: t.state });
    mkdirSync(mark.dir, { recursive: true });
    writeFileSync(mark.fleet, 'SHOP-9\n');
    const other = chalk(['fleet', 'SHOP-1', '--plan', t.planFile(good)], { cwd: t.root, env: t.env });
    expect(other.stderr).toMatch(/branch chalk\/SHOP-3 already exists \(made by fleet SHOP-9\)/);
    writeFileSync(mark.fleet, 'SHOP-1\n');
    // Valid now: it stops at the confirmation (no terminal), with the table shown and nothing made.
    const mine = chalk(['fleet', 'SHOP-1', '--plan', t.planFile(good)], { cwd: t.root, env: t.env });
    expect(mine.code).toBe(1);
    expect(mine.stdout).toMatch(
      /^plan for SHOP-1 \(.*SHOP-1\.json\):\nTICKET +TITLE +CHECKPOINTS\nSHOP-2 +Add the limiter +1\nSHOP-3 +Wire it in +1\n$/,
    );
    expect(mine.stderr).toBe('chalk: no terminal to confirm the plan on; read it above and pass --yes to launch it\n');
    expect(t.branches()).toEqual(['chalk/SHOP-3', 'main']);
    // The plan is saved: the next time needs no file.
    expect(chalk(['fleet', 'SHOP-1'], { cwd: t.root, env: t.env }).stdout).toMatch(/, saved earlier\):/);
  });

  it('--status and --stop need a saved plan', () => {
    const t = setup();
    for (const flag of ['--status', '--stop']) {
      const r = chalk(['fleet', 'SHOP-1', flag], { cwd: t.root, env: t.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('chalk: no plan saved for SHOP-1; start it with: chalk fleet SHOP-1 --plan FILE\n');
    }
  });

  it('asks on a terminal, and an answer other than y or yes launches nothing', () => {
    const t = setup();
    const file = t.planFile(good);
    const cmd = [process.execPath, CHALK_BIN, 'fleet', 'SHOP-1', '--plan', file].map((a) => `'${a}'`).join(' ');
    // `script` gives the command a terminal; the answer goes in on it.
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
      cwd: t.root,
      env: { ...process.env, ...t.env, NO_COLOR: '1' },
      input: 'n\n',
      encoding: 'utf8',
    });
    expect(r.stdout).toContain('Launch these 2 workstreams? [y/N] ');
    expect(r.stdout).toMatch(/chalk: not launched; edit .*SHOP-1\.json and pass it with --plan, or run again/);
    expect(r.status).toBe(1);
    expect(t.branches()).toEqual(['main']);
  });

  it('refuses a fleet ceiling below one run at its worst before anything is made', () => {
    const t = setup();
    const r = chalk(['fleet', 'SHOP-1', '--plan', t.planFile(good), '--yes'], {
      cwd: t.root,
      env: { ...t.env, CHALK_FLEET_BUDGET_USD: '5', CHALK_BUDGET_USD: '1.00', CHALK_MAX_LOOPS: '20' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'chalk: CHALK_FLEET_BUDGET_USD=5 is below one run at its worst ($23.00: CHALK_BUDGET_USD=1.00 x 23 calls), so nothing could start; raise it, or lower CHALK_BUDGET_USD or CHALK_MAX_LOOPS\n',
    );
    expect(t.branches()).toEqual(['main']);
  });
});
