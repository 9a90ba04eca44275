import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tempDir } from '../helpers/cli.js';
import { PG_URL, postgres, ROOT } from './store/backends.js';

/**
 * The CI gate's audit job, as `chalk init` writes it: its own scripts, read from the templates
 * with a YAML parser, run by the shells the forges use against a real Postgres with the DDL
 * Chalk ships. Every value comes from CI variables a request can influence, so each is a
 * payload here and must arrive in its column as it was, with nothing else run.
 */
const template = (...p: string[]) => parse(readFileSync(join(ROOT, 'share', 'templates', ...p), 'utf8'));
const github = template('github', 'chalk.yml');
const gitlab = template('gitlab', 'chalk.gitlab-ci.yml');

const marker = join(tempDir('chalk-audit-'), 'pwned');
const HOSTILE = {
  branch: `chalk/PROJ-7'); DROP TABLE chalk_audit; --`,
  project: `acme/shop'); DROP TABLE chalk_audit; --`,
  request: `42' OR '1'='1`,
  commit: `:'forge' \\gexec $(touch ${marker}) "; DELETE FROM chalk_audit; --`,
  pipeline: `9001\nDROP TABLE chalk_audit;`,
};

interface Ran {
  code: number | null;
  out: string;
}

/** Runs a script as the forge would: GitHub's `shell: bash`, or GitLab's sh with `set -e`. */
function runScript(shell: string[], script: string, env: Record<string, string>): Ran {
  const file = join(tempDir('chalk-audit-script-'), 'script');
  writeFileSync(file, script);
  const r = spawnSync(shell[0] as string, [...shell.slice(1), file], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The GitHub audit step with its `${{ }}` expressions given the values a workflow run would have. */
function githubAudit(values: Record<string, string>, extra: Record<string, string> = {}): Ran {
  const step = github.jobs.audit.steps[0];
  expect(step.shell).toBe('bash');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(step.env as Record<string, string>)) {
    const expr = /^\$\{\{ (.+) \}\}$/.exec(v)?.[1] ?? '';
    if (!(expr in values)) throw new Error(`the audit step reads ${v}, which this test gives no value`);
    env[k] = values[expr] as string;
  }
  // GitHub runs `shell: bash` as `bash --noprofile --norc -eo pipefail {0}`.
  return runScript(['bash', '--noprofile', '--norc', '-eo', 'pipefail'], step.run, { ...env, ...extra });
}

/** A GitLab job with its `extends` chain merged as GitLab does (hashes deep, everything else replaced). */
function gitlabJob(name: string): Record<string, unknown> {
  const job = gitlab[name] as Record<string, unknown>;
  const parent = typeof job.extends === 'string' ? gitlabJob(job.extends) : {};
  const variables = { ...(parent.variables as object), ...(job.variables as object) };
  return { ...parent, ...job, variables };
}

/** Runs a GitLab job's before_script and script in one `sh -e`, as the runner's shell does. */
function gitlabAudit(name: string, ci: Record<string, string>): Ran {
  const job = gitlabJob(name);
  const lines = [...((job.before_script as string[]) ?? []), ...(job.script as string[])];
  const env = { ...(gitlab.variables as Record<string, string>), ...(job.variables as Record<string, string>), ...ci };
  return runScript(['sh', '-e'], lines.join('\n'), env);
}

describe('the gate templates, as written', () => {
  it('GitHub: the audit job follows spec and rubric whatever they did, and no step puts an expression into its script', () => {
    expect(github.jobs.audit.needs).toEqual(['spec', 'rubric']);
    expect(github.jobs.audit.if).toMatch(/^always\(\) && \(startsWith\(github\.head_ref, 'chalk\/'\)/);
    for (const [name, job] of Object.entries(
      github.jobs as Record<string, { steps: { run?: string; env?: object }[] }>,
    )) {
      for (const step of job.steps) {
        expect(step.run ?? '', name).not.toContain('${{');
        if (name !== 'audit') expect(JSON.stringify(step), name).not.toContain('secrets.');
      }
    }
  });

  it('GitLab: one audit job per outcome after every stage, never queued without the secret, in its own environment', () => {
    // A script line YAML reads as anything but a string (an unquoted `: ` makes a mapping) breaks the pipeline.
    for (const [name, job] of Object.entries(gitlab as Record<string, Record<string, unknown>>)) {
      for (const key of ['before_script', 'script']) {
        for (const line of (job[key] as unknown[]) ?? []) expect(typeof line, `${name} ${key}`).toBe('string');
      }
    }
    for (const [name, when] of [
      ['chalk:audit', 'on_success'],
      ['chalk:audit-failed', 'on_failure'],
    ] as const) {
      const job = gitlabJob(name);
      expect(job.stage).toBe('.post');
      expect(job.environment).toEqual({ name: 'chalk-audit', action: 'prepare' });
      const rules = job.rules as { if: string; when: string }[];
      expect(rules[0]).toEqual({ if: '$CHALK_AUDIT_DB_URL == null || $CHALK_AUDIT_DB_URL == ""', when: 'never' });
      expect(rules[1]?.when).toBe(when);
      expect(rules[1]?.if).toBe((gitlab['.chalk'].rules as { if: string }[])[0]?.if);
    }
  });
});

describe.skipIf(!PG_URL)('the gate writes its audit row into a real Postgres', () => {
  let db: Awaited<ReturnType<typeof postgres.fresh>>;
  let url: string;
  let client: pg.Client;
  const rows = async () =>
    (
      await client.query(
        'SELECT forge, project, ticket, request, commit_sha, pipeline, outcome FROM chalk_audit ORDER BY id',
      )
    ).rows;

  beforeAll(async () => {
    db = await postgres.fresh();
    url = db.target.kind === 'server' ? db.target.url : '';
    client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    await client.query(readFileSync(join(ROOT, 'share', 'ci-audit-schema.sql'), 'utf8'));
  });
  afterAll(async () => {
    await client?.end();
    await db?.dispose();
  });

  const githubValues = (over: Record<string, string>) => ({
    'secrets.CHALK_AUDIT_DB_URL': url,
    'github.head_ref': HOSTILE.branch,
    'github.repository': HOSTILE.project,
    'github.event.pull_request.number': HOSTILE.request,
    'github.event.pull_request.head.sha': HOSTILE.commit,
    'github.run_id': HOSTILE.pipeline,
    'needs.spec.result': 'success',
    'needs.rubric.result': 'success',
    ...over,
  });
  const gitlabValues = (over: Record<string, string>) => ({
    CHALK_AUDIT_DB_URL: url,
    CI_PIPELINE_SOURCE: 'merge_request_event',
    CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: HOSTILE.branch,
    CI_PROJECT_PATH: HOSTILE.project,
    CI_MERGE_REQUEST_IID: HOSTILE.request,
    CI_COMMIT_SHA: HOSTILE.commit,
    CI_PIPELINE_ID: HOSTILE.pipeline,
    ...over,
  });

  it('without the secret each audit script says so and adds nothing', async () => {
    const gh = githubAudit(githubValues({ 'secrets.CHALK_AUDIT_DB_URL': '' }));
    expect(gh).toEqual({ code: 0, out: 'CHALK_AUDIT_DB_URL is not set: no audit row\n' });
    for (const job of ['chalk:audit', 'chalk:audit-failed']) {
      const gl = gitlabAudit(job, gitlabValues({ CHALK_AUDIT_DB_URL: '' }));
      expect(gl).toEqual({ code: 0, out: 'CHALK_AUDIT_DB_URL is not set: no audit row\n' });
    }
    expect(await rows()).toEqual([]);
  });

  it('each script adds one row per run with every hostile value kept as it was and nothing else run', async () => {
    const runs = [
      githubAudit(githubValues({})),
      githubAudit(githubValues({ 'needs.rubric.result': 'failure' })),
      githubAudit(githubValues({ 'needs.spec.result': 'cancelled' })),
      gitlabAudit('chalk:audit', gitlabValues({})),
      gitlabAudit('chalk:audit-failed', gitlabValues({})),
    ];
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    expect(runs.map((r) => r.out.trim().split('\n').pop())).toEqual([
      'audit row recorded: passed',
      'audit row recorded: failed',
      'audit row recorded: cancelled',
      'audit row recorded: passed',
      'audit row recorded: failed',
    ]);
    const row = (forge: string, outcome: string) => ({
      forge,
      project: HOSTILE.project,
      ticket: 'PROJ-7',
      request: HOSTILE.request,
      commit_sha: HOSTILE.commit,
      pipeline: HOSTILE.pipeline,
      outcome,
    });
    expect(await rows()).toEqual([
      row('github', 'passed'),
      row('github', 'failed'),
      row('github', 'cancelled'),
      row('gitlab', 'passed'),
      row('gitlab', 'failed'),
    ]);
    expect(existsSync(marker)).toBe(false);
  });

  it('the password reaches psql in its environment, never on its command line, however the URL encodes it', async () => {
    const u = new URL(url);
    const password = decodeURIComponent(u.password);
    // Every character percent-encoded, in both cases, as a URL with a hostile password would be.
    const encoded = [...password].map((c, i) => {
      const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
      return `%${i % 2 ? hex.toUpperCase() : hex}`;
    });
    const hostile = `${u.protocol}//${u.username}:${encoded.join('')}@${u.host}${u.pathname}`;
    // A psql first on PATH that writes down its command line, then runs the real one.
    const real = spawnSync('sh', ['-c', 'command -v psql'], { encoding: 'utf8' }).stdout.trim();
    const bin = tempDir('chalk-audit-bin-');
    const argvLog = join(bin, 'argv');
    writeFileSync(join(bin, 'psql'), `#!/bin/sh\nprintf '%s\\n' "$@" >>'${argvLog}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, 'psql'), 0o755);
    const PATH = `${bin}:${process.env.PATH ?? ''}`;
    const before = (await rows()).length;
    const gh = githubAudit(githubValues({ 'secrets.CHALK_AUDIT_DB_URL': hostile }), { PATH });
    const gl = gitlabAudit('chalk:audit', { ...gitlabValues({ CHALK_AUDIT_DB_URL: hostile }), PATH });
    expect([gh.code, gl.code], `${gh.out}${gl.out}`).toEqual([0, 0]);
    expect((await rows()).length).toBe(before + 2);
    const argv = readFileSync(argvLog, 'utf8');
    expect(argv).toContain(`${u.username}@${u.host}`);
    expect(argv).not.toContain(password);
    expect(argv.toLowerCase()).not.toContain(encoded.join('').toLowerCase());
  });
});
