import { existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../errors.js';
import { writeHostFile } from '../fs/host-file.js';
import { planPath, runPaths } from '../layout.js';
import type { AgentResult, PlanAnswer } from '../ports/agent.js';
import type { HostGit } from '../ports/host-git.js';
import { buildBreakdownPrompt } from '../run/index.js';
import { type Plan, validatePlan } from './plan.js';

/** A plan file bigger than this is refused (a plan is a few kilobytes). */
export const PLAN_MAX_BYTES = 1024 * 1024;

export type PlanOrigin = 'file' | 'saved' | 'claude';

export interface LoadedPlan {
  plan: Plan;
  origin: PlanOrigin;
  /** Where it is saved. */
  path: string;
  /** What the plan call cost, when Claude was asked. */
  costUsd?: number;
}

export interface PlanSourceOptions {
  repo: string;
  /** The main checkout (branches are looked up there). */
  root: string;
  epic: string;
  /** `--plan FILE`: replaces the saved plan. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  git: HostGit;
  /** Asks Claude for the plan (in a sandbox: core/fleet/plan-call.ts); only when there is neither a file nor a saved plan. */
  ask: (prompt: string) => Promise<AgentResult<PlanAnswer>>;
  /** Told before Claude is asked (it may take a while). */
  onAsk?: () => void;
}

function readPlanFile(path: string, what: string): unknown {
  let text: string;
  try {
    const st = lstatSync(path);
    if (!st.isFile()) throw new UserError(`${what} ${path} is not a regular file; pass a JSON file`);
    if (st.size > PLAN_MAX_BYTES)
      throw new UserError(`${what} ${path} is larger than 1 MiB; a plan is a short JSON file`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UserError(`${what} ${path} is not JSON (${err instanceof Error ? err.message : String(err)}); fix it`);
  }
}

/** The epic whose fleet made each existing `chalk/TICKET` branch among `tickets` (null: not a fleet's). */
async function existingBranches(o: PlanSourceOptions, raw: unknown): Promise<Map<string, string | null>> {
  const found = new Map<string, string | null>();
  const list = (raw as { workstreams?: unknown })?.workstreams;
  if (!Array.isArray(list)) return found;
  for (const w of list) {
    const ticket = (w as { ticket?: unknown })?.ticket;
    if (typeof ticket !== 'string' || !/^[A-Z][A-Z0-9]+-[0-9]+$/.test(ticket)) continue;
    if (!(await o.git.refExists(o.root, `refs/heads/chalk/${ticket}`))) continue;
    found.set(ticket, fleetOfTicket(o.repo, ticket, o.env));
  }
  return found;
}

/** The epic recorded in a ticket's run directory by the fleet that made it, or null. */
export function fleetOfTicket(repo: string, ticket: string, env?: NodeJS.ProcessEnv): string | null {
  try {
    const epic = readFileSync(runPaths(repo, ticket, env).fleet, 'utf8').trim();
    return /^[A-Z][A-Z0-9]+-[0-9]+$/.test(epic) ? epic : null;
  } catch {
    return null;
  }
}

/** The saved plan of an epic, or null when there is none (or it no longer reads as a plan). */
export function savedPlan(repo: string, epic: string, env?: NodeJS.ProcessEnv): Plan | null {
  const path = planPath(repo, epic, env);
  if (!existsSync(path)) return null;
  try {
    const r = validatePlan(JSON.parse(readFileSync(path, 'utf8')), { epic, branches: new Map() });
    return 'plan' in r ? r.plan : null;
  } catch {
    return null;
  }
}

/**
 * The epic's plan: from `--plan FILE` (which replaces the saved one), else the saved plan,
 * else Claude in a read-only sandbox of the base branch with the breakdown prompt (under
 * CHALK_BUDGET_USD). Validated, one line per problem, and saved.
 */
export async function loadPlan(o: PlanSourceOptions): Promise<LoadedPlan> {
  const path = planPath(o.repo, o.epic, o.env);
  let raw: unknown;
  let origin: PlanOrigin;
  let costUsd: number | undefined;
  if (o.file) {
    raw = readPlanFile(o.file, 'the plan');
    origin = 'file';
  } else if (existsSync(path)) {
    raw = readPlanFile(path, 'the saved plan');
    origin = 'saved';
  } else {
    o.onAsk?.();
    const r = await o.ask(buildBreakdownPrompt({ root: o.root }, o.epic));
    costUsd = r.costUsd;
    if (r.answer === 'none') {
      const why = r.status === 'ok' ? 'no plan in its answer' : `claude ended with ${r.status}`;
      throw new UserError(`could not get a plan from Claude (${why}); write one by hand and pass --plan FILE`);
    }
    raw = r.answer;
    origin = 'claude';
  }
  const checked = validatePlan(raw, { epic: o.epic, branches: await existingBranches(o, raw) });
  if ('problems' in checked) {
    if (origin === 'claude') {
      // Claude's draft is kept to edit: it cost money, and the person fixes it faster than a re-ask.
      const draft = path.replace(/\.json$/, '.draft.json');
      mkdirSync(dirname(draft), { recursive: true });
      writeHostFile(draft, `${JSON.stringify(raw, null, 2)}\n`);
      throw new PlanError(`Claude's plan, kept in ${draft}: edit it and pass it with --plan`, checked.problems);
    }
    throw new PlanError(origin === 'saved' ? path : (o.file ?? ''), checked.problems);
  }
  mkdirSync(dirname(path), { recursive: true });
  writeHostFile(path, `${JSON.stringify(checked.plan, null, 2)}\n`);
  return { plan: checked.plan, origin, path, ...(costUsd !== undefined ? { costUsd } : {}) };
}

/** An invalid plan: one line per problem. */
export class PlanError extends UserError {
  constructor(
    readonly where: string,
    readonly problems: string[],
  ) {
    super(`invalid plan (${where}):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}
