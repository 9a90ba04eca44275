import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import { UserError } from '../../errors.js';
import { hostGitPort } from '../../git/port.js';
import { type RunPaths, runPaths } from '../../layout.js';
import type { Agent } from '../../ports/agent.js';
import type { HostGit } from '../../ports/host-git.js';
import { checkoutOf, repoKey, ticketFromBranch } from '../../repo/git.js';
import { checkpoints } from '../../spec/checkpoints.js';
import { type PromptSource, promptSetHash, readTextbook, snapshotPrompts, specFile } from './prompt.js';

/** Everything a run knows before it starts anything: where, which ticket, which files. */
export interface RunContext {
  /** The worktree root (the ticket branch is checked out here). */
  root: string;
  /** `<repo>`: the main checkout's name. */
  repo: string;
  branch: string;
  ticket: string;
  /** `specs/T.md`, relative to the root. */
  spec: string;
  specPath: string;
  paths: RunPaths;
  /** `CHALK_BASE_BRANCH`. */
  baseBranch: string;
  prompts: PromptSource;
  textbook: string | null;
  /** The prompt-set hash recorded with every call. */
  promptHash: string;
  /** `CHALK_TEST_CMD`. */
  rubricCommand: string;
}

export interface ContextOptions {
  root: string | null;
  config: Config;
  env?: NodeJS.ProcessEnv;
  /** `chalk check` needs no rubric command. */
  needRubric?: boolean;
  /**
   * The agent the run will call, asked whether it can run (Agent.cannotRun) with `env`; absent
   * for a command that makes no agent call (`chalk submit`).
   */
  agent?: Pick<Agent, 'cannotRun'>;
  /** Host git (default: core/git). */
  git?: HostGit;
}

/**
 * Resolves the run's context and refuses, with one line each, what would make
 * the run pointless: no ticket in the branch, no spec, uncommitted changes, no
 * rubric, an agent that says it cannot run. Nothing is started or written.
 */
export async function resolveContext(opts: ContextOptions): Promise<RunContext> {
  const env = opts.env ?? process.env;
  const { root, config } = opts;
  const git = opts.git ?? hostGitPort;
  if (!root) throw new UserError('chalk run works inside a git worktree: cd into the ticket worktree');
  const branch = (await git.currentBranchName(root)) ?? '(detached HEAD)';
  const ticket = ticketFromBranch(branch);
  if (!ticket) throw new UserError(`branch '${branch}' has no ticket key (expected e.g. chalk/PROJ-123)`);
  const spec = specFile(ticket);
  const specPath = join(root, spec);
  if (!existsSync(specPath)) throw new UserError(`missing spec: ${spec} (create one with: chalk new ${ticket})`);
  if (checkpoints(readFileSync(specPath, 'utf8')).length === 0) {
    throw new UserError(`${spec} has no checkpoints: add '- [ ] ...' lines, one per step, and commit it`);
  }
  const status = await git.statusPorcelain(root);
  if (status === null || status.length > 0) {
    throw new UserError(`uncommitted changes in ${root}; commit them first (the sandbox only sees commits)`);
  }
  const rubricCommand = config.str('CHALK_TEST_CMD');
  if ((opts.needRubric ?? true) && rubricCommand.trim() === '') {
    throw new UserError('CHALK_TEST_CMD is not set in .chalk/config (run: chalk init)');
  }
  const cannot = opts.agent?.cannotRun(env) ?? null;
  if (cannot !== null) throw new UserError(cannot);
  const repo = repoKey(checkoutOf(await git.commonDir(root)));
  // The grading setup is fixed here: prompts, textbook and rubric as the run starts.
  const prompts: PromptSource = snapshotPrompts({ root });
  const textbook = readTextbook(root, config.str('CHALK_TEXTBOOK'));
  return {
    root,
    repo,
    branch,
    ticket,
    spec,
    specPath,
    paths: runPaths(repo, ticket, env),
    baseBranch: config.str('CHALK_BASE_BRANCH'),
    prompts,
    textbook,
    promptHash: promptSetHash(prompts, { textbook, fpFeedback: config.bool('CHALK_FP_FEEDBACK') }),
    rubricCommand,
  };
}
