import { writeFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import type { Log } from '../ports/log.js';
import type { SandboxSession } from '../ports/sandbox.js';
import { runOk } from '../process/run.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
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

export interface OpenedSandbox {
  session: SandboxSession;
  /** The host HEAD the sandbox was cloned at: the base of the first bundle. */
  base: string;
}

/** Writes the system prompt, opens the sandbox on the ticket branch and clones it. */
export async function openSandbox(ctx: RunContext, deps: RunDeps, log: Log, runId: string): Promise<OpenedSandbox> {
  writeFileSync(
    ctx.paths.systemPrompt,
    buildSystemPrompt(ctx.prompts, { ticket: ctx.ticket, rubricCommand: ctx.rubricCommand, textbook: ctx.textbook }),
  );
  const event = { ticket: ctx.ticket, image: deps.config.str('CHALK_IMAGE'), env: {} as Record<string, string> };
  await deps.hooks.beforeSandboxStart.promise(event);
  const base = await runOk('git', ['rev-parse', 'HEAD'], { cwd: ctx.root });
  log.info(`starting sandbox ${sandboxName(ctx)} on ${ctx.branch}`);
  const session = await deps.sandbox.open({
    repo: ctx.repo,
    gitDir: ctx.gitDir,
    ticket: ctx.ticket,
    runId,
    branch: ctx.branch,
    ioDir: ctx.paths.io,
    env: event.env,
  });
  try {
    log.info(`cloning ${ctx.branch} into the sandbox`);
    await session.clone();
  } catch (err) {
    await session.stop().catch(() => undefined);
    throw new UserError(`could not clone ${ctx.branch} into the sandbox: ${describe(err)}`);
  }
  return { session, base };
}

/** The container's name as the Docker sandbox forms it (for the log line only). */
export function sandboxName(ctx: Pick<RunContext, 'repo' | 'ticket'>): string {
  return `chalk-sandbox-${ctx.repo}-${ctx.ticket}`.replace(/[^A-Za-z0-9_.-]/g, '-');
}

/** `CHALK_SETUP_CMD` in the clone, output to `io/setup.log`; a failure stops the run. */
export async function runSetup(ctx: RunContext, session: SandboxSession, command: string, log: Log): Promise<void> {
  if (command.trim() === '') return;
  log.info(`running the setup command: ${command}`);
  const chunks: string[] = [];
  const quoted = `'${command.replace(/'/g, `'\\''`)}'`;
  const r = await session.exec(`bash -c ${quoted}`, { onOutput: (c) => chunks.push(c) });
  writeFileSync(ctx.paths.setupLog, chunks.length > 0 ? chunks.join('') : r.stdout + r.stderr);
  if (r.exitCode !== 0) {
    throw new UserError(`setup command failed in the sandbox (exit ${r.exitCode}); see ${ctx.paths.setupLog}`);
  }
}
