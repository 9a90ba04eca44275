import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../../core/ports/store.js';
import { run, runOk } from '../../../core/process/run.js';
import { repoKey } from '../../../core/repo/git.js';
import { PgStore } from '../../../core/store/index.js';
import { BACKENDS, ROOT } from './backends.js';

const call = (repo: string, ticket: string, kind: string, costUsd: number, agentStatus = 'ok'): CallRecord => ({
  repo,
  ticket,
  branch: ticket,
  loop: 1,
  kind,
  agentStatus,
  rubricExit: 0,
  progressed: true,
  model: 'm',
  prompts: 'p',
  costUsd,
  budgetUsd: 1,
  durationS: 1,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  turns: 1,
  denials: 0,
  lessons: 0,
});

async function gitRepo(): Promise<string> {
  const repo = join(mkdtempSync(join(tmpdir(), 'chalk-status-')), 'shop');
  mkdirSync(repo);
  const git = (...a: string[]) => runOk('git', a, { cwd: repo });
  await git('init', '-q', '-b', 'main');
  await git('-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'init');
  await git('branch', 'detention/PROJ-2-1700000000');
  await git('branch', 'detention/PROJ-2-1700000100');
  await git('branch', 'detention/PROJ-3-1700000200');
  return repo;
}

/**
 * The binary, where `chalk status` runs from its bundle (dist/cli/light.cjs, with a code cache),
 * and main.js run itself, which runs it from the module graph: both must answer alike.
 */
const ENTRIES = [{ entry: 'chalk.cjs' }, { entry: 'main.js' }];

const chalkAt = (entry: string, cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
  run(process.execPath, [join(ROOT, 'dist', 'cli', entry), ...args], { cwd, env });

describe.each(BACKENDS)('chalk status on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let repo: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    db = await backend.fresh();
    repo = await gitRepo();
    // What chalk status files the repository's rows and run directories under.
    const key = repoKey(repo);
    env = { ...db.env, XDG_STATE_HOME: db.env.XDG_STATE_HOME ?? mkdtempSync(join(tmpdir(), 'chalk-state-')) };
    const store = await PgStore.open(db.target, 120_000);
    try {
      await store.calls.record(call(key, 'PROJ-1', 'continue', 0.5));
      await store.calls.record(call(key, 'PROJ-1', 'review', 0.25, 'pass'));
      await store.events.record(key, 'PROJ-1', 'submitted');
      await store.calls.record(call(key, 'PROJ-2', 'continue', 1));
      await store.calls.record(call(key, 'PROJ-2', 'retry', 1));
      await store.events.record(key, 'PROJ-2', 'detention');
      const l = await store.lessons.open({ repo: key, ticket: 'PROJ-2', signature: 's' });
      await store.lessons.resolve({ id: l, resolution: 'r', lesson: 'l', resolvedBy: 'me' });
      await store.calls.record(call(key, 'PROJ-8', 'continue', 0.1));
    } finally {
      await store.close();
    }
    // PROJ-8 runs now: its recorded pid (this test process) is alive.
    const run8 = join(env.XDG_STATE_HOME as string, 'chalk', key, 'runs', 'PROJ-8');
    mkdirSync(run8, { recursive: true });
    writeFileSync(join(run8, 'pid'), `${process.pid}\n`);
    // Its run directory is the newest activity by construction, not by the clocks: a directory's
    // mtime comes from the kernel's coarse clock and the rows' times from the database's, and the
    // rows above land within the same millisecond or two, so "made after" is not "newer than".
    const later = new Date(Date.now() + 3_600_000);
    utimesSync(run8, later, later);
  });
  afterAll(async () => {
    await db?.dispose();
  });

  describe.each(ENTRIES)('through $entry', ({ entry }) => {
    const chalk = (cwd: string, e: NodeJS.ProcessEnv, ...args: string[]) => chalkAt(entry, cwd, e, ...args);

    it('lists tickets with state, loops, cost, fixes and detention branches', async () => {
      const r = await chalk(repo, env, 'status', '--json');
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report.databaseError).toBeNull();
      const by = Object.fromEntries(report.tickets.map((t: { ticket: string }) => [t.ticket, t]));
      expect(by['PROJ-1']).toMatchObject({ state: 'submitted', loops: 1, costUsd: 0.75, fixes: 0, detentions: 0 });
      expect(by['PROJ-2']).toMatchObject({ state: 'detained', loops: 2, costUsd: 2, fixes: 1, detentions: 2 });
      expect(by['PROJ-3']).toMatchObject({ state: 'new', loops: 0, detentions: 1 });
      expect(by['PROJ-8']).toMatchObject({ state: 'running', loops: 1 });
      expect(report.tickets[0].ticket).toBe('PROJ-8'); // its run directory is the newest activity

      const text = await chalk(repo, env, 'status');
      expect(text.stdout.split('\n')[0]).toMatch(/^TICKET\s+STATE\s+LOOPS\s+COST\s+FIXES\s+DETENTIONS$/);
      expect(text.stdout).toMatch(/PROJ-2\s+detained\s+2\s+\$2\.00\s+1\s+2/);
    });

    it('shows - for the numbers and says why once when the database cannot be read', async () => {
      const broken = { ...env, CHALK_DATABASE_URL: 'postgresql://u:hunter2@127.0.0.1:1/x', CHALK_DB_TIMEOUT: '5' };
      const r = await chalk(repo, broken, 'status');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/PROJ-8\s+running\s+-\s+-\s+-\s+0/);
      expect(r.stdout).toMatch(/PROJ-2\s+-\s+-\s+-\s+-\s+2/);
      const why = r.stderr.trim().split('\n');
      expect(why).toHaveLength(1);
      expect(why[0]).toMatch(/127\.0\.0\.1:1/);
      expect(r.stderr).not.toContain('hunter2');
    });
  });
});
