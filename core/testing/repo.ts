import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoKey } from '../repo/git.js';

export interface TicketRepoOptions {
  /** The ticket, e.g. `SHOP-7`: the spec is `specs/<ticket>.md` on `chalk/<ticket>`; none: the checkout stays on main. */
  ticket?: string;
  /** The spec's text, committed on the ticket branch. */
  spec?: string;
  /** The rubric, committed on main as `test.sh`, with `CHALK_TEST_CMD=bash test.sh` in `.chalk/config`. */
  rubric?: string;
  /** Files committed on main (paths relative to the root), beside or instead of the rubric. */
  files?: Record<string, string>;
  /** More `.chalk/config` lines after `CHALK_TEST_CMD` (with a rubric). */
  configLines?: string[];
  /** The state directory (default one inside `base`): two repositories on one machine may share one. */
  state?: string;
  /** Keys over the run's environment defaults (an undefined value removes a default). */
  env?: Record<string, string | undefined>;
  /** The committer in the repository's own git config (default `Test <test@example.com>`). */
  user?: { name: string; email: string };
  /** Prefix of the temporary directory (default `chalk-repo-`). */
  prefix?: string;
  /** The checkout's folder name (default `shop`). */
  name?: string;
}

export interface TicketRepo {
  /** The temporary directory holding the checkout, the bare origin and the state directory. */
  base: string;
  /** The main checkout, on `chalk/<ticket>`. */
  root: string;
  /** The bare repository `origin` points at (main pushed). */
  origin: string;
  /** The spec's path relative to the root (`specs/<ticket>.md`; empty without a ticket). */
  spec: string;
  /** The environment a run of this repository reads: PATH, HOME and XDG_STATE_HOME in `base`, a fake key, no spec check. */
  env: NodeJS.ProcessEnv;
  /** The repository key Chalk files its state under. */
  repo: string;
  /** Runs git in the checkout (no global or system configuration); its trimmed stdout. */
  git(...args: string[]): string;
  /** Starts `chalk/<key>` from main with its spec committed, as `chalk new` does; the spec's path. */
  ticket(key: string, spec: string): string;
  /** Removes `base`. */
  remove(): void;
}

const made = new Set<string>();

/** Git with no global or system configuration, so a person's settings never change a test. */
export function isolatedGit(cwd: string): (...args: string[]) => string {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  return (...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
}

/**
 * A repository as a run meets it: `main` with the rubric and `.chalk/config` (or the given files),
 * pushed to a bare origin, and the ticket branch `chalk/<ticket>` checked out with its spec
 * committed. Real git, in a temporary directory that `removeTicketRepos` (or the repository's
 * `remove`) deletes.
 */
export function makeTicketRepo(o: TicketRepoOptions): TicketRepo {
  const base = realpathSync(mkdtempSync(join(tmpdir(), o.prefix ?? 'chalk-repo-')));
  made.add(base);
  const root = join(base, o.name ?? 'shop');
  const origin = join(base, 'origin.git');
  mkdirSync(root);
  const git = isolatedGit(root);
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  execFileSync('git', ['init', '--quiet', '--bare', origin]);
  git('init', '--quiet', '-b', 'main');
  git('config', 'user.name', o.user?.name ?? 'Test');
  git('config', 'user.email', o.user?.email ?? 'test@example.com');
  if (o.rubric !== undefined) {
    write('test.sh', o.rubric);
    write('.chalk/config', ['CHALK_TEST_CMD=bash test.sh', ...(o.configLines ?? [])].join('\n') + '\n');
  }
  for (const [rel, text] of Object.entries(o.files ?? {})) write(rel, text);
  git('add', '-A');
  git('commit', '--quiet', '-m', 'init');
  git('remote', 'add', 'origin', origin);
  git('push', '--quiet', 'origin', 'main');
  git('fetch', '--quiet', 'origin');
  const ticket = (key: string, text: string) => {
    const rel = `specs/${key}.md`;
    git('checkout', '--quiet', '-b', `chalk/${key}`, 'main');
    write(rel, text);
    git('add', '-A');
    git('commit', '--quiet', '-m', `chalk(${key}): spec`);
    return rel;
  };
  const spec = o.ticket ? ticket(o.ticket, o.spec ?? `# ${o.ticket}\n\n- [ ] step 1\n`) : '';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: base,
    XDG_STATE_HOME: o.state ?? join(base, 'state'),
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
    CHALK_SPEC_CHECK: 'false',
  };
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const remove = () => {
    made.delete(base);
    rmSync(base, { recursive: true, force: true });
  };
  return { base, root, origin, spec, env, repo: repoKey(root), git, ticket, remove };
}

/** Removes every repository `makeTicketRepo` made in this process (for an `afterAll`). */
export function removeTicketRepos(): void {
  for (const base of [...made]) {
    made.delete(base);
    rmSync(base, { recursive: true, force: true });
  }
}
