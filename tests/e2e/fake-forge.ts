import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Recording fakes of the `gh` and `glab` CLIs, written as executables into a
 * test's bin directory (put first on PATH). Each invocation appends one JSON
 * line {cli, argv, stdin, cwd, problems} to the record file. `pr create` /
 * `mr create` accept only the flags the real CLIs accept (unknown flags fail
 * as the real ones do), need a title and a body, read `--body-file -` from
 * stdin, check that the head branch exists on `origin` (the real CLIs refuse
 * otherwise) and print the request URL.
 */

export interface ForgeCall {
  cli: 'gh' | 'glab';
  argv: string[];
  stdin: string;
  cwd: string;
  /** Why the fake refused the call (it then exits non-zero); empty when accepted. */
  problems: string[];
}

/** Flags of `gh pr create` (gh 2.x) and whether each takes a value. */
const GH_PR_CREATE: Record<string, boolean> = {
  '--head': true,
  '-H': true,
  '--base': true,
  '-B': true,
  '--title': true,
  '-t': true,
  '--body': true,
  '-b': true,
  '--body-file': true,
  '-F': true,
  '--draft': false,
  '-d': false,
  '--fill': false,
  '-f': false,
  '--fill-first': false,
  '--fill-verbose': false,
  '--label': true,
  '-l': true,
  '--assignee': true,
  '-a': true,
  '--reviewer': true,
  '-r': true,
  '--milestone': true,
  '-m': true,
  '--project': true,
  '-p': true,
  '--repo': true,
  '-R': true,
  '--no-maintainer-edit': false,
  '--dry-run': false,
  '--template': true,
  '-T': true,
  '--web': false,
  '-w': false,
};

/** Flags of `glab mr create` (glab 1.x). */
const GLAB_MR_CREATE: Record<string, boolean> = {
  '--source-branch': true,
  '-s': true,
  '--target-branch': true,
  '-b': true,
  '--title': true,
  '-t': true,
  '--description': true,
  '-d': true,
  '--yes': false,
  '-y': false,
  '--fill': false,
  '-f': false,
  '--draft': false,
  '--label': true,
  '-l': true,
  '--assignee': true,
  '-a': true,
  '--reviewer': true,
  '--milestone': true,
  '-m': true,
  '--remove-source-branch': false,
  '--squash-before-merge': false,
  '--push': false,
  '--repo': true,
  '-R': true,
  '--no-editor': false,
  '--web': false,
  '-w': false,
};

/** The fake's program text: a Node script with the flag tables and record path baked in. */
function program(cli: 'gh' | 'glab', record: string): string {
  const flags = cli === 'gh' ? GH_PR_CREATE : GLAB_MR_CREATE;
  return `#!/usr/bin/env node
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const cli = ${JSON.stringify(cli)};
const FLAGS = ${JSON.stringify(flags)};
const argv = process.argv.slice(2);
const problems = [];
let stdin = '';
const out = (s) => process.stdout.write(s + '\\n');
function finish(code) {
  fs.appendFileSync(${JSON.stringify(record)}, JSON.stringify({ cli, argv, stdin, cwd: process.cwd(), problems }) + '\\n');
  if (problems.length) process.stderr.write(problems.join('\\n') + '\\n');
  process.exit(problems.length ? 1 : code);
}
if (argv[0] === '--version') { out(cli === 'gh' ? 'gh version 2.63.0 (fake)' : 'glab 1.48.0 (fake)'); finish(0); }
if (argv[0] === 'auth' && argv[1] === 'status') { out('Logged in (fake)'); finish(0); }
const sub = cli === 'gh' ? ['pr', 'create'] : ['mr', 'create'];
if (argv[0] !== sub[0] || argv[1] !== sub[1]) { problems.push('the fake ' + cli + ' knows no command ' + argv.slice(0, 2).join(' ')); finish(1); }
const opts = {};
for (let i = 2; i < argv.length; i++) {
  let a = argv[i];
  let value;
  const eq = a.indexOf('=');
  if (a.startsWith('--') && eq > 0) { value = a.slice(eq + 1); a = a.slice(0, eq); }
  if (!(a in FLAGS)) { problems.push('unknown flag: ' + a); continue; }
  if (FLAGS[a]) {
    if (value === undefined) { value = argv[++i]; }
    if (value === undefined) { problems.push('flag needs an argument: ' + a); continue; }
    opts[a.replace(/^-+/, '')] = value;
  } else opts[a.replace(/^-+/, '')] = true;
}
const pick = (...names) => names.map((n) => opts[n]).find((v) => v !== undefined);
let head, base, title, body;
if (cli === 'gh') {
  head = pick('head', 'H'); base = pick('base', 'B'); title = pick('title', 't');
  body = pick('body', 'b');
  const file = pick('body-file', 'F');
  if (file !== undefined) {
    if (body !== undefined) problems.push('specify only one of --body or --body-file');
    body = file === '-' ? (stdin = fs.readFileSync(0, 'utf8')) : fs.readFileSync(file, 'utf8');
  }
  if (title === undefined || body === undefined) problems.push('must provide --title and --body (or --fill) when not running interactively');
} else {
  head = pick('source-branch', 's'); base = pick('target-branch', 'b'); title = pick('title', 't');
  body = pick('description', 'd');
  if (!pick('yes', 'y')) problems.push('--yes is needed when not running interactively');
  if (title === undefined) problems.push('--title required when not running interactively');
}
if (!head) problems.push('the fake needs the head branch named explicitly');
if (!base) problems.push('the fake needs the base branch named explicitly');
if (head) {
  try {
    const ls = execFileSync('git', ['ls-remote', '--heads', 'origin', 'refs/heads/' + head], { encoding: 'utf8' });
    if (!ls.trim()) problems.push('head branch ' + head + ' was not pushed to origin');
  } catch (e) { problems.push('git ls-remote origin failed: ' + e.message); }
}
if (problems.length) finish(1);
out(cli === 'gh' ? 'https://github.com/acme/shop/pull/7' : 'https://gitlab.example.com/acme/shop/-/merge_requests/7');
finish(0);
`;
}

export interface FakeForge {
  /** Directory to put first on PATH. */
  binDir: string;
  calls(): ForgeCall[];
  /** The `pr create` / `mr create` calls. */
  requests(): ForgeCall[];
}

export function installFakeForge(dir: string): FakeForge {
  const binDir = join(dir, 'bin');
  mkdirSync(binDir, { recursive: true });
  const record = join(dir, 'forge-calls.jsonl');
  for (const cli of ['gh', 'glab'] as const) {
    const p = join(binDir, cli);
    writeFileSync(p, program(cli, record));
    chmodSync(p, 0o755);
  }
  const calls = (): ForgeCall[] =>
    existsSync(record)
      ? readFileSync(record, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as ForgeCall)
      : [];
  return { binDir, calls, requests: () => calls().filter((c) => c.argv[1] === 'create') };
}

/** The value of a flag in a recorded argv (`--title X` or `--title=X`). */
export function flag(argv: string[], ...names: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    for (const n of names) {
      if (a === n) return argv[i + 1];
      if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
    }
  }
  return undefined;
}
