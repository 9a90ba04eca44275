import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { writeHostFile } from '../fs/host-file.js';
import type { HostGit } from '../ports/host-git.js';
import type { Log } from '../ports/log.js';
import type { SandboxSession } from '../ports/sandbox.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import { cappedNote, runLogged } from './logged-exec.js';
import { buildSystemPrompt } from './prompt.js';

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * Starts the database and makes sure the sandbox image exists, side by side;
 * either failing stops the run before any sandbox starts.
 */
export async function startServices(deps: RunDeps, log: Log): Promise<void> {
  log.info('starting the database and the sandbox image');
  const [db, image] = await Promise.allSettled([deps.store.info(), deps.sandbox.ensureImage()]);
  const failed: string[] = [];
  if (db.status === 'rejected') failed.push(`database (${describe(db.reason)})`);
  if (image.status === 'rejected') {
    if (image.reason instanceof UserError && db.status === 'fulfilled') throw image.reason;
    failed.push(`sandbox image (${describe(image.reason)})`);
  }
  if (failed.length > 0) throw new UserError(`could not start: ${failed.join('; ')}`);
}

/** The system prompt's name in the sandbox's `SANDBOX_PATHS.io`. */
export const SYSTEM_PROMPT = 'system.md';

export interface OpenedSandbox {
  session: SandboxSession;
  /** The host HEAD the sandbox was cloned at: the base of the first bundle. */
  base: string;
}

/** The host's git identity, for the sandbox's commits. */
async function hostAuthor(git: HostGit, root: string): Promise<{ name: string; email: string }> {
  return {
    name: (await git.configGet(root, 'user.name')) || 'Chalk Agent',
    email: (await git.configGet(root, 'user.email')) || 'chalk@localhost',
  };
}

export interface OpenOptions {
  runId: string;
  /** A second sandbox of the ticket (e.g. `review`), beside the run's. */
  suffix?: string;
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
  const event = {
    ticket: ctx.ticket,
    repo: ctx.repo,
    image: deps.sandbox.image ?? '',
    env: {} as Record<string, string>,
  };
  await deps.hooks.beforeSandboxStart.promise(event);
  const { git } = deps;
  const base = await git.revParse(ctx.root, 'HEAD');
  const baseCommit =
    (await git.mergeBase(ctx.root, { a: `origin/${ctx.baseBranch}`, b: base })) ??
    (await git.mergeBase(ctx.root, { a: ctx.baseBranch, b: base }));
  const source = join(ctx.paths.dir, `${o.suffix || 'run'}.in.bundle`);
  rmSync(source, { force: true });
  await git.createBundle({ cwd: ctx.root, ref: `refs/heads/${ctx.branch}`, out: source });
  if (!o.suffix) log.info(`starting a sandbox on ${ctx.branch}`);
  let session: SandboxSession | undefined;
  try {
    session = await deps.sandbox.open({
      repo: ctx.repo,
      source,
      ticket: ctx.ticket,
      runId: o.runId,
      branch: ctx.branch,
      ...(baseCommit ? { baseBranch: { name: ctx.baseBranch, commit: baseCommit } } : {}),
      author: await hostAuthor(git, ctx.root),
      env: event.env,
      ...(o.suffix ? { suffix: o.suffix } : {}),
    });
    // The name is the provider's (the session says it), never formed here.
    if (!o.suffix) log.info(`cloning ${ctx.branch} into sandbox ${session.name}`);
    await session.clone();
    await session.putFile(SYSTEM_PROMPT, system);
  } catch (err) {
    await session?.stop().catch(() => undefined);
    if (err instanceof UserError && !session) throw err;
    throw new UserError(`could not clone ${ctx.branch} into the sandbox: ${describe(err)}`);
  } finally {
    rmSync(source, { force: true });
  }
  return { session, base };
}

/** `CHALK_SETUP_CMD` in the clone (no credentials), output to `io/setup.log` (capped); a failure stops the run. */
export async function runSetup(ctx: RunContext, session: SandboxSession, deps: RunDeps, log: Log): Promise<void> {
  const command = deps.config.str('CHALK_SETUP_CMD');
  if (command.trim() === '') return;
  log.info(`running the setup command: ${command}`);
  const capMb = deps.config.num('CHALK_OUTPUT_CAP_MB');
  const r = await runLogged(session, command, { logPath: ctx.paths.setupLog, capMb });
  if (r.outputCapped) throw new UserError(`setup command ${cappedNote(capMb)}; see ${ctx.paths.setupLog}`);
  if (r.exitCode !== 0) {
    throw new UserError(`setup command failed in the sandbox (exit ${r.exitCode}); see ${ctx.paths.setupLog}`);
  }
}
