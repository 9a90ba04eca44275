import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { expect } from 'vitest';
import { CREDENTIALS } from '../../core/agent/credentials.js';
import { runPaths } from '../../core/layout.js';
import { run } from '../../core/process/run.js';
import { repoKey } from '../../core/repo/git.js';
import { type CallKind, callKind, promptOf } from '../../demo/call-kind.js';
import * as s from '../fakes/model-script.js';
import { type ModelServer, startModelServer } from '../fakes/model-server.js';
import { CHALK_BIN, tempDir } from '../helpers/cli.js';
import { BACKENDS, type Backend, rawPool } from '../integration/store/backends.js';
import { type FakeForge, installFakeForge } from './fake-forge.js';

/**
 * The end-to-end rig: a real `chalk run` (the built CLI) in a scratch
 * repository with a local bare origin, the real `claude` CLI in the real
 * sandbox image against the scripted model server, recording fake `gh`/`glab`
 * on PATH, and a fresh database (Postgres when the CI exports one, else the
 * embedded server) shared by the scenarios of one test file.
 */

export const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';
export const CI = process.env.CI === 'true';

/** Whether the Docker engine and the sandbox image are there (in CI they must be). */
export async function e2eAvailable(): Promise<boolean> {
  const info = await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 10_000 });
  const ok = info.code === 0 && (await run('docker', ['image', 'inspect', IMAGE])).code === 0;
  if (CI && !ok) throw new Error(`CI needs the Docker engine and the image ${IMAGE} (.ci/setup.d/20-docker.sh)`);
  return ok;
}

/** The second, loopback-only engine address .ci/setup.d/20-docker.sh opens, for the remote-engine runs. */
export const REMOTE = process.env.CHALK_TEST_DOCKER_REMOTE || 'tcp://127.0.0.1:2375';

/** Whether the engine answers at REMOTE (in CI it must). */
export async function remoteEngineUp(): Promise<boolean> {
  const info = await run('docker', ['-H', REMOTE, 'info', '--format', '{{.ServerVersion}}'], { timeoutMs: 10_000 });
  if (CI && info.code !== 0) throw new Error(`CI needs dockerd listening on ${REMOTE} (.ci/setup.d/20-docker.sh)`);
  return info.code === 0;
}

// --- the scripted agent -------------------------------------------------------

export { type CallKind, callKind };

export interface Scripts {
  /** One script per loop call, in order. */
  loops?: s.Script[];
  /** Spec check calls (default: pass). */
  spec?: s.Script[];
  /** Final reviews (default: pass). */
  reviews?: s.Script[];
  /** Office hours' distillations (no default: a distillation nobody scripted says so and gives no answer). */
  lessons?: s.Script[];
}

export interface SessionSeen {
  kind: CallKind;
  prompt: string;
}

export const specPass = (): s.Script => [s.answer({ verdict: 'pass', problems: [] })];
export const reviewPass = (summary = 'The change does what the spec asks and the tests cover it.'): s.Script => [
  s.answer({ verdict: 'pass', summary, findings: [] }),
];
export const reviewFail = (issue: string, file = 'greet.sh'): s.Script => [
  s.answer({ verdict: 'fail', summary: 'One blocker remains.', findings: [{ severity: 'blocker', file, issue }] }),
];

/** Ticks the first open checkpoint of the spec, as the agent is told to. */
export const tick = (ticket: string): s.Step => s.bash(`sed -i '0,/- \\[ \\]/s//- [x]/' specs/${ticket}.md`);

/** A loop that makes checkpoint `n` of the sample spec true: a test, the code, the tick, `done`. */
export function doCheckpoint(ticket: string, n: 1 | 2): s.Script {
  const [name, word] = n === 1 ? ['greet', 'hello'] : ['bye', 'goodbye'];
  return [
    s.write(`/work/repo/tests/${name}_test.sh`, `[ "$(sh ${name}.sh)" = "${word}" ]\n`),
    s.write(`/work/repo/${name}.sh`, `echo ${word}\n`),
    tick(ticket),
    s.loopDone(String(n), `added ${name}.sh and its test`),
  ];
}

/**
 * A loop that adds a test, code that fails it, and claims success. A retry
 * (`ticks: false`) finds the first loop's work still there and the tick made.
 */
export const failingLoop = (ticket: string, opts: { body?: string; ticks?: boolean } = {}): s.Script => [
  s.write('/work/repo/tests/greet_test.sh', '[ "$(sh greet.sh)" = "hello" ]\n'),
  s.write('/work/repo/greet.sh', `${opts.body ?? 'echo nope'}\n`),
  ...(opts.ticks === false ? [] : [tick(ticket)]),
  s.loopDone('1', 'added greet.sh'),
];

// --- the repository -----------------------------------------------------------

/** The sample project: a rubric that runs every tests/*_test.sh. */
export const RUBRIC = 'sh check.sh';
const CHECK_SH = `#!/bin/sh
# The rubric: every tests/*_test.sh must pass. Writes a JUnit report to .test-report.xml.
status=0
cases=''
failures=0
count=0
for t in tests/*_test.sh; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  count=$((count + 1))
  if out=$(sh "$t" 2>&1); then
    echo "ok $t"
    cases="$cases<testcase classname='tests' name='$name'/>"
  else
    echo "FAIL $t: $out"
    status=1
    failures=$((failures + 1))
    cases="$cases<testcase classname='tests' name='$name'><failure message='$name failed'/></testcase>"
  fi
done
printf '<?xml version="1.0"?>\\n<testsuites><testsuite name="shop" tests="%s" failures="%s">%s</testsuite></testsuites>\\n' "$count" "$failures" "$cases" > .test-report.xml
exit $status
`;

/** Where the sample rubric writes its JUnit report. */
export const REPORT = '.test-report.xml';

export function sampleSpec(ticket: string, opts: { title?: string; checkpoints?: 1 | 2 } = {}): string {
  const second = opts.checkpoints === 1 ? '' : '- [ ] bye.sh prints goodbye, with a test in tests/bye_test.sh\n';
  return `# ${ticket}: ${opts.title ?? 'Greetings'}

## Context
Shell scripts that print a greeting${opts.checkpoints === 1 ? '' : ' and a farewell'}.

## Checkpoints
- [ ] greet.sh prints hello, with a test in tests/greet_test.sh
${second}`;
}

export interface ScenarioOptions {
  ticket?: string;
  spec?: string;
  /** Checkpoints of the sample spec (default 2). */
  checkpoints?: 1 | 2;
  /** Extra files committed on main. */
  files?: Record<string, string>;
  /** A pre-receive hook for the bare origin (refuses pushes when it exits non-zero). */
  preReceive?: string;
  /**
   * The worktree is a shallow clone of the origin (`git clone --depth 1`, as CI checkouts
   * are), made after `history` more commits on main, so the boundary hides real history.
   */
  shallow?: { history: number };
}

let counter = 0;

export interface Scenario {
  dir: string;
  repo: string;
  root: string;
  origin: string;
  ticket: string;
  branch: string;
  forge: FakeForge;
  git(...args: string[]): string;
  /** Commit ids of `git rev-list <ref>` (newest first); [] when the ref is missing. */
  commits(ref: string, where?: string): string[];
  /** Commit subjects of `base..ref` in `where` (the work repo by default). */
  subjects(ref: string, base?: string, where?: string): string[];
  branches(pattern: string): string[];
  /** Branches of the bare origin. */
  originBranches(): string[];
  dispose(): void;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * Removes the sandbox mirror images runs made for repositories under `dir` (a scenario's, about
 * to be removed): a mirror is the engine's, kept for the next run, which a test's never is.
 */
export function removeMirrorsUnder(dir: string): void {
  const ls = spawnSync('docker', ['image', 'ls', '-q', '--no-trunc', '--filter', 'label=chalk.mirror.root'], {
    encoding: 'utf8',
  });
  const ids = [...new Set((ls.stdout ?? '').split('\n').filter(Boolean))];
  if (ids.length === 0) return;
  const inspect = spawnSync(
    'docker',
    ['image', 'inspect', '--format', '{{.Id}} {{index .Config.Labels "chalk.mirror.root"}}', ...ids],
    { encoding: 'utf8' },
  );
  const mine = (inspect.stdout ?? '')
    .split('\n')
    .map((l) => l.split(' '))
    .filter(([, root]) => root?.startsWith(`${dir}/`))
    .map(([id]) => id as string);
  if (mine.length > 0) spawnSync('docker', ['rmi', ...mine], { stdio: 'ignore' });
}

/**
 * A repository `shop-<n>` with main pushed to a bare origin, and the ticket
 * branch `chalk/<TICKET>` checked out, carrying one commit: the spec.
 */
export function makeScenario(opts: ScenarioOptions = {}): Scenario {
  const ticket = opts.ticket ?? 'SHOP-1';
  const dir = tempDir('chalk-e2e-');
  const root = join(dir, `shop${process.pid}n${counter++}`);
  const origin = join(dir, 'origin.git');
  mkdirSync(root);
  // The key Chalk files the repository under (state paths, labels, rows): core's one rule.
  const repo = repoKey(root);
  git(dir, 'init', '-q', '--bare', '-b', 'main', origin);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Sam Person');
  git(root, 'config', 'user.email', 'sam@example.com');
  const files: Record<string, string> = {
    'README.md': '# shop\n',
    'check.sh': CHECK_SH,
    'tests/.keep': '',
    '.gitignore': 'node_modules/\n.test-report.xml\n',
    ...opts.files,
  };
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), content);
  }
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
  for (let i = 1; i <= (opts.shallow?.history ?? 0); i++) {
    writeFileSync(join(root, 'HISTORY'), `${i}\n`);
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', `history ${i}`);
  }
  git(root, 'remote', 'add', 'origin', origin);
  git(root, 'push', '-q', 'origin', 'main');
  if (opts.shallow) {
    rmSync(root, { recursive: true, force: true });
    git(dir, 'clone', '-q', '--depth', '1', `file://${origin}`, root);
    git(root, 'config', 'user.name', 'Sam Person');
    git(root, 'config', 'user.email', 'sam@example.com');
  }
  git(root, 'fetch', '-q', 'origin');
  if (opts.preReceive) {
    const hook = join(origin, 'hooks', 'pre-receive');
    writeFileSync(hook, opts.preReceive);
    chmodSync(hook, 0o755);
  }
  const branch = `chalk/${ticket}`;
  git(root, 'checkout', '-q', '-b', branch);
  mkdirSync(join(root, 'specs'), { recursive: true });
  writeFileSync(
    join(root, 'specs', `${ticket}.md`),
    opts.spec ?? sampleSpec(ticket, { checkpoints: opts.checkpoints }),
  );
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', `chalk(${ticket}): spec`);
  const forge = installFakeForge(dir);
  const revs = (ref: string, where = root) => {
    try {
      return git(where, 'rev-list', ref).split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    dir,
    repo,
    root,
    origin,
    ticket,
    branch,
    forge,
    git: (...args) => git(root, ...args),
    commits: revs,
    subjects: (ref, base = 'main', where = root) =>
      git(where, 'log', '--format=%s', `${base}..${ref}`).split('\n').filter(Boolean),
    branches: (pattern) =>
      git(root, 'for-each-ref', '--format=%(refname:short)', `refs/heads/${pattern}`).split('\n').filter(Boolean),
    originBranches: () =>
      git(origin, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean),
    dispose: () => {
      removeMirrorsUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- the machine: database, state directory, model server --------------------

export interface Rig {
  model: ModelServer;
  /** XDG_STATE_HOME and the database settings for every chalk process. */
  env: NodeJS.ProcessEnv;
  state: string;
  /** Sessions the model served, in order, with their kind and first prompt. */
  seen: SessionSeen[];
  /** Replaces the scripts the model gives to the next calls. */
  script(scripts: Scripts): void;
  sql<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * One per test file: the database backend (Postgres in CI, which is quicker,
 * else the embedded server), a state directory, and the model server that
 * hands each CLI session the next script of its kind.
 */
export async function startRig(): Promise<Rig> {
  const backend: Backend = BACKENDS.find((b) => b.name === 'postgres') ?? (BACKENDS[0] as Backend);
  const db = await backend.fresh();
  const state = db.env.XDG_STATE_HOME ?? tempDir('chalk-e2e-state-');
  const queues: Record<'loop' | 'spec' | 'review' | 'lesson', s.Script[]> = {
    loop: [],
    spec: [],
    review: [],
    lesson: [],
  };
  const seen: SessionSeen[] = [];
  const defaults = { spec: specPass, review: reviewPass };
  const model = await startModelServer({
    pick: (req) => {
      const kind = callKind(req);
      seen.push({ kind, prompt: promptOf(req) });
      if (kind === 'loop') return queues.loop.shift() ?? [s.say('the scripted model has no loop script left')];
      if (kind === 'spec' || kind === 'review') return queues[kind].shift() ?? defaults[kind]();
      if (kind === 'lesson') return queues.lesson.shift() ?? [s.say('the scripted model has no lesson script left')];
      return [s.say(`the scripted model has no script for a ${kind} call`)];
    },
  });
  if (!model.bridgeAddress) throw new Error('no docker bridge address for the sandbox to reach the fake model');
  let pool: pg.Pool | undefined;
  return {
    model,
    env: { XDG_STATE_HOME: state, CHALK_DATABASE_URL: db.env.CHALK_DATABASE_URL ?? '' },
    state,
    seen,
    script(scripts) {
      queues.loop = [...(scripts.loops ?? [])];
      queues.spec = [...(scripts.spec ?? [])];
      queues.review = [...(scripts.reviews ?? [])];
      queues.lesson = [...(scripts.lessons ?? [])];
      seen.length = 0;
    },
    async sql(text, values) {
      pool ??= await rawPool(db.target);
      return (await pool.query(text, values)).rows;
    },
    async close() {
      await pool?.end();
      await model.close();
      await db.dispose();
    },
  };
}

// --- running chalk ------------------------------------------------------------

export interface ChalkRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout lines that start with `[TICKET] ` (prefix removed). */
  lines: string[];
  ms: number;
}

export interface ChalkOptions {
  env?: Record<string, string | undefined>;
  /** Called once the process has started (e.g. to signal it later). */
  onStart?: (child: ChildProcess) => void;
  timeoutMs?: number;
  /** Close chalk's stdout before it writes anything, as a reader that went away (`| head -0`) would. */
  closedStdout?: boolean;
}

const CREDENTIAL_NAMES: ReadonlySet<string> = new Set(CREDENTIALS);

/** This process's environment without any CHALK_* or ANTHROPIC_* setting or agent credential. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('CHALK_') && !k.startsWith('ANTHROPIC_') && !CREDENTIAL_NAMES.has(k)) base[k] = v;
  return base;
}

/** The environment of a scenario's chalk: the rig's, the fakes on PATH, and settings for speed. */
export function chalkEnv(rig: Rig, sc: Scenario, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    ...cleanEnv(),
    ...rig.env,
    NO_COLOR: '1',
    PATH: `${sc.forge.binDir}:${process.env.PATH ?? ''}`,
    ANTHROPIC_API_KEY: 'sk-ant-e2e-dummy',
    ANTHROPIC_BASE_URL: rig.model.url,
    CHALK_PERMISSION_MODE: 'bypass',
    CHALK_IMAGE: IMAGE,
    CHALK_TEST_CMD: RUBRIC,
    CHALK_FORGE: 'github',
    CHALK_DECIDER: 'off',
    CHALK_DISTILL: 'false',
    CHALK_RUBRIC_TIMEOUT: '60',
    ...extra,
  };
}

/** Runs the built `chalk` with `args` in the scenario's repository. */
export function chalk(rig: Rig, sc: Scenario, args: string[], opts: ChalkOptions = {}): Promise<ChalkRun> {
  return runCli(args, { ...opts, cwd: sc.root, env: chalkEnv(rig, sc, opts.env), ticket: sc.ticket });
}

/** Runs the built `chalk` in `cwd` with exactly `env`; `lines` are those prefixed `[ticket] `. */
export function runCli(
  args: string[],
  opts: Omit<ChalkOptions, 'env'> & { cwd: string; env: NodeJS.ProcessEnv; ticket: string },
): Promise<ChalkRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHALK_BIN, ...args], {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (opts.closedStdout) child.stdout.destroy();
    let stdout = '';
    let stderr = '';
    // E2E_DEBUG=1 shows every run's output as it happens.
    const echo = process.env.E2E_DEBUG ? (d: string) => process.stderr.write(d) : () => {};
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      echo(d);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      echo(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const prefix = `[${opts.ticket}] `;
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith(prefix))
        .map((l) => l.slice(prefix.length));
      resolve({ code, signal, stdout, stderr, lines, ms: Date.now() - started });
    });
    opts.onStart?.(child);
  });
}

/** What a failed expectation should show: the run's whole output. */
export const explain = (r: ChalkRun) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

// --- reading the state --------------------------------------------------------

/** The ticket's state as `chalk status --json` reports it. */
export async function ticketState(rig: Rig, sc: Scenario): Promise<string | null> {
  const r = await chalk(rig, sc, ['status', '--json']);
  if (r.code !== 0) throw new Error(`chalk status failed: ${explain(r)}`);
  const report = JSON.parse(r.stdout) as { tickets: { ticket: string; state: string | null }[] };
  return report.tickets.find((t) => t.ticket === sc.ticket)?.state ?? null;
}

export interface CallRow {
  loop: number;
  kind: string;
  agent_status: string;
  rubric_exit: number;
  progressed: boolean;
  verdict: string | null;
  fp_rules: string | null;
  failing_tests: string | null;
  tree_id: string | null;
}

export const calls = (rig: Rig, sc: Scenario) =>
  rig.sql<CallRow>(
    'SELECT loop, kind, agent_status, rubric_exit, progressed, verdict, fp_rules, failing_tests, tree_id FROM runs WHERE repo = $1 AND ticket = $2 ORDER BY id',
    [sc.repo, sc.ticket],
  );

export const events = async (rig: Rig, sc: Scenario) =>
  (
    await rig.sql<{ kind: string }>('SELECT kind FROM events WHERE repo = $1 AND ticket = $2 ORDER BY id', [
      sc.repo,
      sc.ticket,
    ])
  ).map((e) => e.kind);

export const openLessons = (rig: Rig, sc: Scenario) =>
  rig.sql<{ signature: string }>(
    'SELECT signature FROM lessons WHERE repo = $1 AND ticket = $2 AND resolved_at IS NULL',
    [sc.repo, sc.ticket],
  );

/** Containers of the scenario's ticket still present (running or not). */
export async function containers(sc: Scenario): Promise<string[]> {
  const r = await run('docker', [
    'ps',
    '-a',
    '--filter',
    `label=chalk.repo=${sc.repo}`,
    '--filter',
    `label=chalk.ticket=${sc.ticket}`,
    '--format',
    '{{.Names}}',
  ]);
  return r.stdout.split('\n').filter(Boolean);
}

export const runDir = (rig: Rig, sc: Scenario) => runPaths(sc.repo, sc.ticket, { XDG_STATE_HOME: rig.state });

export const readIo = (rig: Rig, sc: Scenario, name: string) => readFileSync(join(runDir(rig, sc).io, name), 'utf8');

/** The `next:` lines of a run. */
export const nextLines = (r: ChalkRun) => r.lines.filter((l) => l.startsWith('next: '));

// --- the hostile-agent suite: sentinels, secrets, clear states ---------------

/**
 * A root-owned (the test's user) 0600 file with unique content in a fresh
 * temp dir: the host path an attacker aims its symlinks at. `intact()` says
 * whether it is still the same regular file with the same bytes and mtime.
 */
export interface Sentinel {
  path: string;
  content: string;
  intact(): boolean;
  /** What differs, for a failed expectation. */
  describe(): string;
  dispose(): void;
}

export function makeSentinel(label = 'sentinel'): Sentinel {
  const dir = tempDir('chalk-e2e-sentinel-');
  chmodSync(dir, 0o700);
  const path = join(dir, label);
  const content = `${label}-${randomUUID()}\n`;
  writeFileSync(path, content, { mode: 0o600 });
  const before = lstatSync(path);
  const now = () => {
    try {
      const st = lstatSync(path);
      return { st, text: st.isFile() ? readFileSync(path, 'utf8') : null };
    } catch {
      return { st: null, text: null };
    }
  };
  return {
    path,
    content,
    intact() {
      const { st, text } = now();
      return !!st && st.isFile() && text === content && st.mtimeMs === before.mtimeMs && (st.mode & 0o777) === 0o600;
    },
    describe() {
      const { st, text } = now();
      if (!st) return `${path} is gone`;
      if (!st.isFile()) return `${path} is no longer a regular file`;
      return `${path}: mode ${(st.mode & 0o777).toString(8)}, mtime ${st.mtimeMs} (was ${before.mtimeMs}), content ${JSON.stringify((text ?? '').slice(0, 200))}`;
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A marker path host code would create if it ran (a hook, a plugin); `ran()` says whether it exists. */
export function makeMarker(label = 'ran'): { path: string; ran(): boolean; dispose(): void } {
  const dir = tempDir('chalk-e2e-marker-');
  const path = join(dir, label);
  return { path, ran: () => existsSync(path), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every secret starts with this, so one grep inside the sandbox finds them all. */
export const SECRET_PREFIX = 'zq9secret';
export const secretValue = (what: string) => `${SECRET_PREFIX}${what}${randomUUID().replace(/-/g, '')}`;

/** Every row of every table of the rig's database, as text (to search for secrets). */
export async function databaseText(rig: Rig): Promise<string> {
  const tables = await rig.sql<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await rig.sql<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/** Everything the model server received: request bodies and tool results (headers are not recorded). */
export const modelText = (rig: Rig) =>
  JSON.stringify(rig.model.requests.map((r) => r.body ?? null)) + JSON.stringify(rig.model.toolResults);

/** Whether any branch of the scenario's repository (contents or messages) holds `needle`, outside `exclude` pathspecs. */
export function branchesHold(sc: Scenario, needle: string, exclude: string[] = []): boolean {
  const refs = git(sc.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/').split('\n').filter(Boolean);
  const grep = spawnSync(
    'git',
    ['grep', '-q', '-a', '-F', '-e', needle, ...refs, '--', '.', ...exclude.map((p) => `:(exclude)${p}`)],
    {
      cwd: sc.root,
    },
  );
  if (grep.status === 0) return true;
  const log = spawnSync('git', ['log', '--all', '--format=%B'], { cwd: sc.root, encoding: 'utf8' });
  return log.stdout.includes(needle);
}

/** Every entry but a directory under the rig's state directory that belongs to `ticket` (logs, prompts, reports). */
function ticketStateFiles(rig: Rig, ticket: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.includes(`/${ticket}/`)) out.push(p);
    }
  };
  walk(rig.state);
  return out;
}

/** Files called `name` anywhere under the rig's state directory for `ticket` (logs, reports, whatever the layout). */
export function stateFiles(rig: Rig, ticket: string, name: string): string[] {
  return ticketStateFiles(rig, ticket).filter((p) => basename(p) === name);
}

/** All text of the run's files under the state directory (logs, prompts, reports), for secret searches. */
export function stateText(rig: Rig, ticket: string): string {
  return ticketStateFiles(rig, ticket)
    .filter((p) => {
      const st = lstatSync(p);
      return st.isFile() && st.size < 256 * 1024 * 1024;
    })
    .map((p) => readFileSync(p, 'latin1'))
    .join('\n');
}

/** A run that ended detained: exit 3, exactly one DETENTION line (matching `reason`) and one `next:` line. */
export function expectDetainedWith(r: ChalkRun, reason: RegExp): string {
  expect(r.code, explain(r)).toBe(3);
  const detention = r.lines.filter((l) => l.startsWith('DETENTION: '));
  expect(detention, explain(r)).toHaveLength(1);
  expect(detention[0], explain(r)).toMatch(reason);
  expect(nextLines(r), explain(r)).toHaveLength(1);
  return detention[0] as string;
}

/** A run refused before anything started: exit 1, one stderr line matching `line`, no ticket output. */
export function expectRefusedWith(r: ChalkRun, line: RegExp): void {
  expect(r.code, explain(r)).toBe(1);
  expect(r.stderr.trim().split('\n'), explain(r)).toHaveLength(1);
  expect(r.stderr.trim(), explain(r)).toMatch(line);
  expect(r.lines, explain(r)).toEqual([]);
}

/** Polls `check` every `everyMs` until it returns a value (not undefined) or `deadlineMs` passes. */
export async function pollFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  opts: { deadlineMs: number; everyMs?: number; what: string },
): Promise<T> {
  const end = Date.now() + opts.deadlineMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${opts.deadlineMs} ms waiting for ${opts.what}`);
    await delay(opts.everyMs ?? 100);
  }
}

/** Running containers labelled with `ticket` (whatever the repo label says). */
export async function ticketContainers(ticket: string): Promise<string[]> {
  const r = await run('docker', ['ps', '--filter', `label=chalk.ticket=${ticket}`, '--format', '{{.ID}}']);
  return r.stdout.split('\n').filter(Boolean);
}

/**
 * The peak resident memory (VmHWM, kB) of a child process, sampled until it
 * exits: the kernel's high-water mark only grows, so the last sample is the
 * peak up to that moment.
 */
export function watchPeakRss(child: ChildProcess): { peakKb(): number; stop(): void } {
  let peak = 0;
  const sample = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch {}
  };
  const timer = setInterval(sample, 50);
  child.once('exit', () => clearInterval(timer));
  return { peakKb: () => peak, stop: () => clearInterval(timer) };
}

/** The control characters in `text` other than newline and tab (C0, DEL, C1: ESC, BEL, CR...), as code points. */
export function controlChars(text: string): number[] {
  const found = new Set<number>();
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    if ((c < 0x20 && c !== 0x0a && c !== 0x09) || (c >= 0x7f && c <= 0x9f)) found.add(c);
  }
  return [...found];
}

// --- a real public project, as a new user meets it ----------------------------

/** The fixture projects (tests/fixtures/projects/README.md says where each comes from). */
export const PROJECTS = join(import.meta.dirname, '..', 'fixtures', 'projects');

export interface ProjectScenario extends Scenario {
  /** The person's clone (where `chalk init` ran); `root` is the ticket's worktree. */
  main: string;
  /** The base branch the clone checked out (the upstream's). */
  base: string;
  init: ChalkRun;
}

/**
 * A public project from its fixture bundle as a person has it: a bare origin cloned from the
 * bundle, their clone of it (origin's HEAD set, as `git clone` does), `chalk init` run there
 * and its files committed and pushed, then `chalk new TICKET` and the ticket's spec committed
 * in the worktree it made. Chalk's settings come from what init wrote (`projectEnv`).
 */
export async function projectScenario(
  rig: Rig,
  bundle: string,
  opts: {
    ticket: string;
    spec: string;
    env?: Record<string, string | undefined>;
    /** The person's own change to the clone before `chalk init` (committed with init's files). */
    prepare?: (main: string) => void;
  },
): Promise<ProjectScenario> {
  const dir = tempDir('chalk-e2e-project-');
  const name = basename(bundle, '.bundle');
  const origin = join(dir, 'origin.git');
  const main = join(dir, name);
  git(dir, 'clone', '-q', '--bare', join(PROJECTS, bundle), origin);
  git(dir, 'clone', '-q', origin, main);
  git(main, 'config', 'user.name', 'Sam Person');
  git(main, 'config', 'user.email', 'sam@example.com');
  const base = git(main, 'symbolic-ref', '--short', 'HEAD');
  const forge = installFakeForge(dir);
  const partial = {
    dir,
    repo: repoKey(main),
    root: main,
    origin,
    ticket: opts.ticket,
    branch: `chalk/${opts.ticket}`,
    forge,
  };
  const env = projectEnv(rig, partial as Scenario, opts.env);
  opts.prepare?.(main);
  const init = await runCli(['init'], { cwd: main, env, ticket: opts.ticket });
  if (init.code !== 0) throw new Error(`chalk init failed: ${explain(init)}`);
  git(main, 'add', '-A');
  git(main, 'commit', '-q', '-m', 'chalk init');
  git(main, 'push', '-q', 'origin', base);
  const created = await runCli(['new', opts.ticket, 'The ticket'], { cwd: main, env, ticket: opts.ticket });
  const worktree = /^created (.+) on branch /m.exec(created.stdout)?.[1];
  if (created.code !== 0 || !worktree) throw new Error(`chalk new failed: ${explain(created)}`);
  writeFileSync(join(worktree, 'specs', `${opts.ticket}.md`), opts.spec);
  git(worktree, 'add', '-A');
  git(worktree, 'commit', '-q', '-m', `chalk(${opts.ticket}): spec`);
  const revs = (ref: string, where = worktree) => {
    try {
      return git(where, 'rev-list', ref).split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    ...partial,
    root: worktree,
    main,
    base,
    init,
    git: (...args) => git(worktree, ...args),
    commits: revs,
    subjects: (ref, from = base, where = worktree) =>
      git(where, 'log', '--format=%s', `${from}..${ref}`).split('\n').filter(Boolean),
    branches: (pattern) =>
      git(worktree, 'for-each-ref', '--format=%(refname:short)', `refs/heads/${pattern}`).split('\n').filter(Boolean),
    originBranches: () =>
      git(origin, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean),
    dispose: () => {
      removeMirrorsUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A project scenario's chalk environment: the rig's, with nothing that would hide what
 * `chalk init` wrote (no CHALK_TEST_CMD, CHALK_IMAGE or base branch of the sample project's).
 */
export function projectEnv(rig: Rig, sc: Scenario, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env = chalkEnv(rig, sc, {
    CHALK_TEST_CMD: undefined,
    CHALK_IMAGE: undefined,
    CHALK_RUBRIC_TIMEOUT: '300',
    ...extra,
  });
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

/** Runs the built `chalk` in a project scenario's worktree with `projectEnv`. */
export function chalkProject(
  rig: Rig,
  sc: ProjectScenario,
  args: string[],
  opts: ChalkOptions = {},
): Promise<ChalkRun> {
  return runCli(args, { ...opts, cwd: sc.root, env: projectEnv(rig, sc, opts.env), ticket: sc.ticket });
}
