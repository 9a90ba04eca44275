import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describeSetting, timedOutNote } from '../../config/limits.js';
import { allowLine } from '../../egress/report.js';
import { UserError } from '../../errors.js';
import { writeHostFile } from '../../fs/host-file.js';
import type { SandboxPurpose } from '../../kernel/hooks.js';
import type { HostGit } from '../../ports/host-git.js';
import type { Log } from '../../ports/log.js';
import type { Sandbox, SandboxSession } from '../../ports/sandbox.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import { noteEgress } from './egress.js';
import { cappedNote, runLogged } from './logged-exec.js';
import { chooseMirror } from './mirror.js';
import { buildSystemPrompt } from './prompt.js';

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * Starts the database and makes sure the sandbox image exists, side by side;
 * either failing stops the run before any sandbox starts.
 */
export async function startServices(deps: RunDeps, log: Log): Promise<void> {
  log.info('starting the database and the sandbox image');
  const [db, image] = await Promise.allSettled([deps.store.info(), deps.sandbox.ensureImage()]);
  const report = image.status === 'fulfilled' ? deps.sandbox.imageReport : undefined;
  if (report) {
    for (const note of report.notes) log.warn(note);
    log.info(`sandbox image ${report.image}: ${report.why}`);
  }
  const failed: string[] = [];
  if (db.status === 'rejected') failed.push(`database (${describe(db.reason)})`);
  if (image.status === 'rejected') {
    if (image.reason instanceof UserError && db.status === 'fulfilled') throw image.reason;
    failed.push(`sandbox image (${describe(image.reason)})`);
  }
  if (failed.length > 0) throw new UserError(`could not start: ${failed.join('; ')}`);
}

/** The limits of a run, in the order its first lines name them. */
export const RUN_LIMITS = [
  'CHALK_SETUP_TIMEOUT',
  'CHALK_RUBRIC_TIMEOUT',
  'CHALK_AGENT_TIMEOUT',
  'CHALK_OUTPUT_CAP_MB',
  'CHALK_BUDGET_USD',
  'CHALK_MAX_LOOPS',
  'CHALK_MAX_RETRIES',
  'CHALK_REVIEW_ROUNDS',
] as const;

/**
 * The run's first lines after the services are up: which image and limits
 * the sandbox gets (the Sandbox port says), then the run's own limits, each
 * with who chose it (core/config/limits.ts).
 */
export async function settingsLines(deps: RunDeps): Promise<string[]> {
  const sandbox = (await deps.sandbox.describe?.()) ?? [];
  return [...sandbox, `limits: ${RUN_LIMITS.map((k) => describeSetting(deps.config, k)).join(', ')}`];
}

/** The system prompt's name in the sandbox's `SANDBOX_PATHS.io`. */
export const SYSTEM_PROMPT = 'system.md';

export interface OpenedSandbox {
  session: SandboxSession;
  /** The host HEAD the sandbox was cloned at: the base of the first bundle. */
  base: string;
  /** Where the ticket branch left the base branch (`origin/<base>` in the clone); null when they share nothing. */
  forkPoint: string | null;
}

/** The host's git identity, for the sandbox's commits. */
export async function hostAuthor(git: HostGit, root: string): Promise<{ name: string; email: string }> {
  return {
    name: (await git.configGet(root, 'user.name')) || 'Chalk Agent',
    email: (await git.configGet(root, 'user.email')) || 'chalk@localhost',
  };
}

export interface OpenOptions {
  runId: string;
  /** A second sandbox of the ticket (the final review's, office hours' distillation), beside the run's. */
  suffix?: Exclude<SandboxPurpose, 'run'>;
}

/**
 * Opens a sandbox on the ticket branch as the host has it now: a bundle of the
 * branch made by host git (the sandbox never sees the user's git dir) is
 * streamed in and cloned, and the system prompt, built on the host, is put
 * where the agent can read it and not change it.
 */
export async function openSandbox(ctx: RunContext, deps: RunDeps, log: Log, o: OpenOptions): Promise<OpenedSandbox> {
  const system = buildSystemPrompt(ctx.prompts, {
    ticket: ctx.ticket,
    rubricCommand: ctx.rubricCommand,
    textbook: ctx.textbook,
  });
  writeHostFile(ctx.paths.systemPrompt, system);
  // Only `env` is taken from what the taps return (the hook's contract in core/kernel/hooks.ts).
  const started = await deps.hooks.beforeSandboxStart.promise({
    ticket: ctx.ticket,
    repo: ctx.repo,
    image: deps.sandbox.image ?? '',
    purpose: o.suffix ?? 'run',
    env: {},
  });
  return startSandbox({
    git: deps.git,
    sandbox: deps.sandbox,
    log,
    root: ctx.root,
    repo: ctx.repo,
    ticket: ctx.ticket,
    branch: ctx.branch,
    baseBranch: ctx.baseBranch,
    source: join(ctx.paths.dir, `${o.suffix || 'run'}.in.bundle`),
    depth: deps.config.num('CHALK_CLONE_DEPTH'),
    system,
    env: { ...started.env },
    runId: o.runId,
    ...(o.suffix ? { suffix: o.suffix } : {}),
  });
}

export interface StartOptions {
  git: HostGit;
  sandbox: Sandbox;
  log: Log;
  root: string;
  repo: string;
  ticket: string;
  branch: string;
  baseBranch: string;
  /** Where the bundle goes (a host path no sandbox reaches); removed once cloned. */
  source: string;
  /** CHALK_CLONE_DEPTH. */
  depth: number;
  system: string;
  env: Record<string, string>;
  runId: string;
  suffix?: Exclude<SandboxPurpose, 'run'>;
}

/**
 * openSandbox's start, from the prompt on: host git reads the fork point and the mirror to
 * start from (core/run/base/mirror.ts, made when missing), the sandbox starts while host git
 * makes the thin bundle of what the ticket has beyond the mirror (a whole bundle is made first:
 * the sandbox needs its shallow boundary), then the clone and the system prompt go in side by
 * side. A bundle that fails stops the sandbox, which has run nothing.
 */
export async function startSandbox(o: StartOptions): Promise<OpenedSandbox> {
  // The sandbox's network (and what a killed run left) is seen to meanwhile; given up on a failure before open.
  const release = o.sandbox.prepare?.({
    repo: o.repo,
    ticket: o.ticket,
    runId: o.runId,
    ...(o.suffix ? { suffix: o.suffix } : {}),
  });
  try {
    return await hostThenOpen(o);
  } catch (err) {
    await release?.().catch(() => undefined);
    throw err;
  }
}

async function hostThenOpen(o: StartOptions): Promise<OpenedSandbox> {
  const { git, log, source } = o;
  const authored = hostAuthor(git, o.root);
  authored.catch(() => undefined);
  // HEAD and the fork point are read while the mirror's lookups go (chooseMirror).
  const head = git.revParse(o.root, 'HEAD');
  head.catch(() => undefined);
  const forkPoint = Promise.all([
    git.mergeBase(o.root, { a: `origin/${o.baseBranch}`, b: 'HEAD' }),
    git.mergeBase(o.root, { a: o.baseBranch, b: 'HEAD' }),
  ]).then(([fromOrigin, fromLocal]) => fromOrigin ?? fromLocal);
  forkPoint.catch(() => undefined);
  const chosen = await chooseMirror({ ...o, forkPoint });
  const base = await head;
  const baseCommit = await forkPoint;
  const mirror = chosen ? { repo: chosen.repo, base: chosen.base } : null;
  rmSync(source, { force: true });
  const bundling = git.createBundle({
    cwd: o.root,
    ref: `refs/heads/${o.branch}`,
    out: source,
    ...(mirror ? { since: mirror.base } : o.depth > 0 ? { depth: o.depth, keep: baseCommit } : {}),
  });
  bundling.catch(() => undefined);
  const shallow = mirror ? [] : (await bundling).shallow;
  if (!o.suffix) log.info(`starting a sandbox on ${o.branch}`);
  let session: SandboxSession | undefined;
  try {
    session = await o.sandbox.open({
      repo: o.repo,
      source,
      ticket: o.ticket,
      runId: o.runId,
      branch: o.branch,
      ...(baseCommit ? { baseBranch: { name: o.baseBranch, commit: baseCommit } } : {}),
      ...(shallow.length > 0 ? { shallow } : {}),
      ...(mirror ? { mirror } : {}),
      author: await authored,
      env: o.env,
      ...(o.suffix ? { suffix: o.suffix } : {}),
    });
    await bundling;
    // The name is the provider's (the session says it), never formed here.
    if (!o.suffix) log.info(`cloning ${o.branch} into sandbox ${session.name}`);
    if (!o.suffix && session.egress) log.info(session.egress.summary);
    // Side by side: the clone is the sandbox user's, the prompt a root exec's into /chalk.
    await Promise.all([session.clone(), session.putFile(SYSTEM_PROMPT, o.system)]);
  } catch (err) {
    await session?.stop().catch(() => undefined);
    if (err instanceof UserError && !session) throw err;
    throw new UserError(`could not clone ${o.branch} into the sandbox: ${describe(err)}`);
  } finally {
    await bundling.catch(() => undefined);
    rmSync(source, { force: true });
  }
  return { session, base, forkPoint: baseCommit };
}

/**
 * `CHALK_SETUP_CMD` in the clone (no credentials), output to `io/setup.log`
 * (capped), killed past CHALK_SETUP_TIMEOUT; a failure stops the run with one
 * line saying how it ended (timed out, out of memory, printed too much, its exit).
 */
export async function runSetup(ctx: RunContext, session: SandboxSession, deps: RunDeps, log: Log): Promise<void> {
  const command = deps.config.str('CHALK_SETUP_CMD');
  if (command.trim() === '') return;
  log.info(`running the setup command: ${command}`);
  const capMb = deps.config.num('CHALK_OUTPUT_CAP_MB');
  const timeoutS = deps.config.num('CHALK_SETUP_TIMEOUT');
  const r = await runLogged(session, command, { logPath: ctx.paths.setupLog, capMb, timeoutMs: timeoutS * 1000 });
  const blocked = await noteEgress({ session, path: ctx.paths.egress, log, phase: 'setup' });
  const see = `; see ${ctx.paths.setupLog}`;
  if (r.outputCapped) throw new UserError(`setup command ${cappedNote(capMb)}${see}`);
  if (r.timedOut) throw new UserError(`setup command ${timedOutNote('CHALK_SETUP_TIMEOUT', timeoutS)}${see}`);
  if (r.killedBy) throw new UserError(`setup command was killed: ${r.killedBy}${see}`);
  if (r.exitCode !== 0) {
    const allow = allowLine(blocked);
    const after =
      blocked.length === 0
        ? ''
        : ` after the egress proxy refused ${blocked.join(', ')}${allow ? ` (if setup needs it, allow it: ${allow}, or list it in CHALK_EGRESS_HOSTS in .chalk/config and run chalk egress trust)` : ''}`;
    throw new UserError(`setup command failed in the sandbox (exit ${r.exitCode})${after}${see}`);
  }
}
