import { type RulesMode, VerdictStreak } from '../../fingerprint/streak.js';
import type { LoopFailure } from '../../memory/key.js';
import type { LoopKind } from '../../ports/agent.js';
import type { Log } from '../../ports/log.js';
import type { SandboxSession } from '../../ports/sandbox.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import type { CallTracker } from './interrupt.js';
import { type Limits, type LoopCounts, LoopState } from './policy.js';
import { CommittedSpecs } from './specs.js';
import { AgentWork } from './work.js';

/**
 * One run of one ticket, as the phases see it: built by runTicket once the
 * sandbox is open, and handed to every step instead of positional bags.
 */
export interface Run {
  readonly ctx: RunContext;
  /** The run's ports (the agent wrapped so the tracker knows the call in flight). */
  readonly deps: RunDeps;
  readonly session: SandboxSession;
  /** The run's log (`[TICKET] ` lines). */
  readonly log: Log;
  /** `<TICKET>-<epoch>`, recorded with every call. */
  readonly id: string;
  /** Aborted by the edge (SIGINT/SIGTERM in the CLI); passed to every agent call and command. */
  readonly signal: AbortSignal | undefined;
  readonly tracker: CallTracker;
  readonly streak: VerdictStreak;
  readonly limits: Limits;
  readonly rules: RulesMode;
  /** What the loop carries from one iteration to the next (policy.ts). */
  readonly state: LoopState;
  /** The host HEAD: the commit the sandbox's new work starts from (moves when green work comes home). */
  base: string;
  /** The agent's work apart from what the setup and the rubric made: what a commit holds (work.ts). */
  readonly work: AgentWork;
  /** The ticket's spec as each commit of the run stores it, read once per commit (specs.ts). */
  readonly specs: CommittedSpecs;
  /** What the last loop without progress left for the next loop's recall key; null at the start and after progress. */
  recallFrom: LoopFailure | null;
  /** The last failed review's summary, for the request body. */
  reviewSummary: string;
  /** Destinations the egress proxy refused during the last loop's rubric (`host:port`). */
  egressBlocked: string[];
  /** CHALK_BASELINE=known on a red base: the tests that failed there before any agent call; null otherwise. */
  baseline: string[] | null;
  /** The host HEAD the rubric last passed on in this run (null: none yet); the review needs it to be `base`. */
  greenAt: string | null;
}

/** One loop as planned before it starts. */
export interface LoopPlan {
  loop: number;
  mode: LoopKind;
  /** Open checkpoints at the start of the loop (host spec). */
  openBefore: number;
}

export const limitsFrom = (deps: RunDeps): Limits => ({
  maxLoops: deps.config.num('CHALK_MAX_LOOPS'),
  maxRetries: deps.config.num('CHALK_MAX_RETRIES'),
  reviewRounds: deps.config.num('CHALK_REVIEW_ROUNDS'),
});

export function newRun(o: {
  ctx: RunContext;
  deps: RunDeps;
  session: SandboxSession;
  log: Log;
  id: string;
  signal?: AbortSignal;
  tracker: CallTracker;
  base: string;
  /** A resumed run's counts so far (resume.ts): the loops go on from there and count against the limits. */
  counts?: LoopCounts;
}): Run {
  const { counts, ...rest } = o;
  const rules = o.deps.config.str('CHALK_FP_RULES') as RulesMode;
  const report = o.deps.config.str('CHALK_TEST_REPORT');
  return {
    ...rest,
    work: new AgentWork(o.session, { start: o.base, exclude: report === '' ? [] : [report], log: o.log }),
    specs: new CommittedSpecs(o.deps.git, o.ctx),
    signal: o.signal,
    streak: new VerdictStreak(rules),
    limits: limitsFrom(o.deps),
    rules,
    state: Object.assign(new LoopState(), counts ?? {}),
    recallFrom: null,
    reviewSummary: '',
    egressBlocked: [],
    baseline: null,
    greenAt: null,
  };
}
