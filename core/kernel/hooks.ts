import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, type Tap } from 'tapable';
import type { RulesMode } from '../fingerprint/streak.js';
import type { LoopEnd, Verdict } from '../fingerprint/verdict.js';
import type { LoopKind } from '../ports/agent.js';
import type { HostBudget } from '../ports/decider.js';
import type { RecallKey } from '../ports/lesson-memory.js';
import type { Log } from '../ports/log.js';

/**
 * The loop's hooks: the contract a plugin taps, declared in one place with its argument types.
 * Every tap is named after its plugin (`hook.tapPromise(plugin.name, fn)`); taps run in the order
 * the plugins registered (built-ins first, then CHALK_PLUGINS in order), one after another.
 *
 * Three kinds of hook, each with its failure rule (a tap that throws or rejects):
 * - observe: the tap is told; what it returns is ignored. A failing tap is logged with its
 *   plugin's name and skipped; the run goes on and the other taps still run.
 * - transform: a waterfall; each tap returns the value the next one gets. A failing tap is logged
 *   and skipped: the next tap gets its input unchanged. Core reads only the fields named under
 *   "may change"; anything else a tap changes is ignored.
 * - decide: a bail hook; the first tap that answers a StopRequest ends the call, and the run
 *   stops in detention. A failing tap fails closed: it answers "stop" (kind `other`).
 *
 * The hooks object is frozen and each hook is a readonly property: a plugin taps, it never
 * replaces a hook. The table in docs/architecture.md ("Hooks") lists the same facts.
 */

/** What kind a hook is; the failure rule follows from it (see above). */
export type HookKind = 'observe' | 'transform' | 'decide';

/** How a run stopped in detention: the one list (core/run/base/detention-reasons.ts names each one's reason). */
export const DETENTION_KINDS = [
  'blocked',
  'failed',
  'agent_error',
  'passed',
  'loop_limit',
  'review',
  'deja_vu',
  'repeat',
  'no_change',
  'stuck',
  'guard',
  'refused',
  'fleet_budget',
  'environment',
  'other',
] as const;
export type DetentionKind = (typeof DETENTION_KINDS)[number];

/** What a green run ended with: a request `opened`, the branch `pushed` (a forge that opens none), or `ready` (CHALK_AUTO_MR=false). */
export type GraduateOutcome = 'opened' | 'pushed' | 'ready';

/** Which sandbox is starting: the run's (chalk run, chalk check), the final review's, or office hours' distillation. */
export type SandboxPurpose = 'run' | 'review' | 'distill';

/** One lesson in a loop's `<lessons>` block. */
export interface PromptLesson {
  /** The lesson's id in the store: recorded with the loop's `runs` row (lesson_recalls). */
  id?: number;
  /** The failure it was learnt from (shown whitespace-collapsed, first 240 characters). */
  seenBefore: string;
  /** What fixed it. */
  fix: string;
  /** Which recall rung found it (`exact`, `lexical`, ...), recorded with the id. */
  how?: string;
}

/**
 * `beforePrompt`'s value. May change: `prompt`, `lessons`, `sections` (the rest is what the
 * loop is; changing it changes nothing).
 */
export interface PromptContext {
  readonly ticket: string;
  readonly loop: number;
  readonly mode: LoopKind;
  /** The repository and the run (`<TICKET>-<epoch>`) the loop belongs to. */
  readonly repo: string;
  readonly runId: string;
  /** What the loop asks the LessonMemory (computed by the loop: core/memory/key.ts). */
  readonly recall: RecallKey;
  /** The prompt text as built so far. */
  prompt: string;
  /**
   * The lessons given to this loop. The built-in `lesson-memory` tap puts the LessonMemory's
   * lessons here first; later taps may add, drop or reorder.
   */
  lessons: PromptLesson[];
  /** Extra named sections appended to the prompt, in order. */
  sections: Array<{ title: string; body: string }>;
  /**
   * The loop's one budget for the host services (the same object `onVerdict` gets): the lesson
   * ladder's embedding and rerank calls take their time from it.
   */
  readonly budget?: HostBudget;
  /** The run's `io/decisions.jsonl`. */
  readonly decisionsFile?: string;
}

/** A loop's fingerprint as the hooks see it. */
export interface HookFingerprint {
  /** Empty both when none failed and when no test IDs were found: see `testsKnown`. */
  readonly failingTests: readonly string[];
  readonly firstError: string | null;
  readonly treeId: string | null;
  readonly hash: string | null;
  /** False when the failing tests are UNKNOWN (no report or runner output named any). */
  readonly testsKnown: boolean;
}

/** `afterRubric`: the harness's own rubric run of one loop. */
export interface RubricEvent {
  readonly ticket: string;
  readonly loop: number;
  readonly exitCode: number;
  readonly passed: boolean;
  /** The loop's fingerprint; absent under CHALK_FP_RULES=off or when the agent did not finish. */
  readonly fingerprint?: HookFingerprint;
}

/** `onVerdict`: a loop that did not progress, with its verdict against the run's streak. */
export interface VerdictEvent {
  readonly ticket: string;
  readonly loop: number;
  readonly verdict: Verdict;
  /** CHALK_FP_RULES: `shadow` or `on` (under `off` no verdict is made and the hook does not fire). */
  readonly rulesMode: Exclude<RulesMode, 'off'>;
  /** The streak's baseline before this loop, when it had one. */
  readonly previous?: HookFingerprint;
  /** This loop's fingerprint, when computed. */
  readonly current?: HookFingerprint;
  /** How the loop ended (never `progressed`, never `blocked`). */
  readonly ended: Exclude<LoopEnd, 'progressed' | 'blocked'>;
  /** Why the loop did not progress, e.g. `rubric failed (exit 1)`. */
  readonly reason: string;
  readonly repo: string;
  readonly runId: string;
  /** The loop's `runs` row, already recorded (decision records attach to it); null when it could not be. */
  readonly callId: number | null;
  readonly mode: LoopKind;
  /**
   * The loop's one budget for the host services (decider, embeddings): every
   * tap that calls one takes its deadline from here, so a loop waits at most
   * 2 seconds for all of them together.
   */
  readonly budget: HostBudget;
  /**
   * `git diff --stat` between the previous and this loop's trees (file names and
   * line counts, from the sandbox, where the trees are), or null when unknown.
   * Computed on demand, once.
   */
  readonly diffstat: () => Promise<string | null>;
  /** The run's `io/decisions.jsonl`: where a tap that asks a decider leaves one line per call. */
  readonly decisionsFile: string;
}

/**
 * A deciding tap's answer: stop the run in detention (a tap can never extend a run). The
 * request carries its own detention: the core asks nothing of a plugin's kind.
 */
export interface StopRequest {
  readonly stop: true;
  /**
   * Why. With a `kind`, this is the detention's reason as printed (`DETENTION: <reason>`);
   * without one the core prints `stopped by <plugin>: <reason>`.
   */
  readonly reason: string;
  /** Which plugin asked. Filled in by the kernel. */
  readonly by?: string;
  /** The detention kind recorded with the run's outcome; default `other`. */
  readonly kind?: DetentionKind;
  /** The text of the detention's `next:` line (one line); default that of the kind. */
  readonly next?: string;
}

/** `onDetain`: a run stopped in detention. */
export interface DetainEvent {
  readonly ticket: string;
  readonly kind: DetentionKind;
  readonly reason: string;
  /** The detention branch the attempt is parked on. */
  readonly branch: string;
  /** The open lesson the detention recorded; null when the store could not record it. */
  readonly lessonId: number | null;
  /** The text of the printed `next:` line. */
  readonly next: string;
}

/**
 * `prBody`'s second argument: what the body was built from, except the review's summary (model
 * text: a tap gets it only as the body shows it, inert). Read-only; the body is what taps change.
 */
export interface PrBodyContext {
  readonly ticket: string;
  readonly loops: number;
  readonly costUsd: number;
  /** The spec's path in the repository, `specs/T.md`. */
  readonly specPath: string;
  /** Checkpoints in the spec (all ticked by now). */
  readonly checkpoints: number;
  /** Office-hours fixes a person made on this ticket. */
  readonly humanInterventions: number;
  /** `CHALK_TEST_CMD`. */
  readonly rubricCommand: string;
}

/** `afterGraduate`: a green ticket's end. */
export interface GraduateEvent {
  readonly ticket: string;
  readonly branch: string;
  readonly outcome: GraduateOutcome;
  /** The request's address (`opened` by a forge that gave one); null otherwise. */
  readonly url: string | null;
}

/**
 * `beforeSandboxStart`'s value. May change: `env` (extra environment for the container; never
 * a host secret: the agent and the rubric read it). The rest is fixed.
 */
export interface SandboxStartEvent {
  readonly ticket: string;
  /** The repository (`<repo>`, as the store keys it) the run belongs to. */
  readonly repo: string;
  readonly image: string;
  readonly purpose: SandboxPurpose;
  env: Record<string, string>;
}

/** `runStart`: a `chalk run` (or office hours' continuation) has its claim and its run id. */
export interface RunStartEvent {
  readonly ticket: string;
  readonly repo: string;
  /** `<TICKET>-<epoch>`: the id every record of the run carries. */
  readonly runId: string;
  /** True when this continues a run that ended without an ending (killed, interrupted). */
  readonly resumed: boolean;
}

/** How a run ended, as `runEnd` says it (`base-red`: the base failed its rubric before any agent call). */
export type RunEnding = 'graduated' | 'detained' | 'spec-blocked' | 'base-red' | 'error';

/** `runEnd`: the run that fired `runStart` is over (its sandbox stopped, before its claim is released). */
export interface RunEndEvent extends RunStartEvent {
  readonly ending: RunEnding;
  /** `error`: the one line that stopped it (an interrupt included). */
  readonly error?: string;
}

/** The hooks, in the order a run meets them. Each entry: kind, when it fires, how often, what a tap may change. */
export interface LoopHooks {
  /**
   * observe. When: a run has claimed its ticket and has its id (new or resumed), before the
   * database, the image or any sandbox starts. How often: once per run (`chalk run`, and each
   * run office hours continues). Changes nothing. `runEnd` fires for every run this fired for.
   */
  readonly runStart: AsyncSeriesHook<[RunStartEvent]>;
  /**
   * transform. When: before a sandbox is created (the run's, the final review's, office hours'
   * distillation; `purpose` says which). How often: once per sandbox. May change: `env`.
   */
  readonly beforeSandboxStart: AsyncSeriesWaterfallHook<[SandboxStartEvent]>;
  /**
   * transform. When: each loop, before the agent call. How often: once per loop. May change:
   * `prompt`, `lessons`, `sections`.
   */
  readonly beforePrompt: AsyncSeriesWaterfallHook<[PromptContext]>;
  /**
   * observe. When: after the harness's own rubric run of a loop (and its landing), before the
   * loop's record. How often: once per loop whose agent did not report a blocker.
   */
  readonly afterRubric: AsyncSeriesHook<[RubricEvent]>;
  /**
   * decide. When: after a loop that did not progress was recorded with a verdict: it ended
   * `failed`, `passed` (nothing ticked) or `agent_error`, with CHALK_FP_RULES `shadow` or `on`.
   * How often: at most once per loop; never for a loop that progressed, a loop whose agent
   * reported a blocker (the run detains as `blocked`), or any loop under CHALK_FP_RULES=off, where
   * no verdict is made (so no decider is asked either). May answer a StopRequest: the run detains.
   * It fires before a stopping verdict under `on` detains the run, so every verdict is seen.
   */
  readonly onVerdict: AsyncSeriesBailHook<[VerdictEvent], StopRequest | undefined>;
  /**
   * observe. When: a run stopped in detention, after the attempt was parked and the lines
   * printed. How often: once per detention (at most once per run).
   */
  readonly onDetain: AsyncSeriesHook<[DetainEvent]>;
  /**
   * transform. When: a green ticket is about to open its request (not under CHALK_AUTO_MR=false
   * unless forced). How often: once per graduation that builds a body. May change: the body (the
   * first argument); the context is read-only.
   */
  readonly prBody: AsyncSeriesWaterfallHook<[string, PrBodyContext]>;
  /**
   * observe. When: a green ticket graduated (`outcome` opened, pushed or ready), at the end of
   * `chalk run` or in `chalk submit`. How often: once per graduation; never when the push or the
   * request failed.
   */
  readonly afterGraduate: AsyncSeriesHook<[GraduateEvent]>;
  /**
   * observe. When: the run that fired `runStart` is over, on every way out (graduated,
   * detained, spec-blocked, an error or an interrupt), after its sandbox stopped and before its
   * claim is released. How often: once per run.
   */
  readonly runEnd: AsyncSeriesHook<[RunEndEvent]>;
}

export type HookName = keyof LoopHooks;

/** Each hook's kind (its failure rule): what createHooks wires and the architecture's table shows. */
export const HOOK_KINDS: Readonly<Record<HookName, HookKind>> = Object.freeze({
  runStart: 'observe',
  beforeSandboxStart: 'transform',
  beforePrompt: 'transform',
  afterRubric: 'observe',
  onVerdict: 'decide',
  onDetain: 'observe',
  prBody: 'transform',
  afterGraduate: 'observe',
  runEnd: 'observe',
});

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Wraps a tap so that its failure follows the hook's rule. Works for `tap`,
 * `tapPromise` and `tapAsync`, so plugin authors may use any of them.
 */
function guard(hookName: string, kind: HookKind, log: Log) {
  const onError = (tapName: string, err: unknown, args: unknown[]) => {
    if (kind === 'decide') {
      log.warn(`plugin ${tapName}: ${hookName} tap failed, stopping the run to be safe: ${describe(err)}`);
      return {
        stop: true,
        reason: `${hookName} tap of plugin ${tapName} failed: ${describe(err)}`,
        by: tapName,
      } satisfies StopRequest;
    }
    log.warn(`plugin ${tapName}: ${hookName} tap failed and was skipped: ${describe(err)}`);
    return kind === 'transform' ? args[0] : undefined;
  };
  const mark = (tapName: string, result: unknown) =>
    kind === 'decide' && result && typeof result === 'object'
      ? { ...(result as StopRequest), by: (result as StopRequest).by ?? tapName }
      : result;
  return (tap: Tap & { fn: (...a: unknown[]) => unknown; type: string }) => {
    const fn = tap.fn;
    const name = tap.name;
    if (tap.type === 'promise') {
      tap.fn = async (...args: unknown[]) => {
        try {
          return mark(name, await fn(...args));
        } catch (err) {
          return onError(name, err, args);
        }
      };
    } else if (tap.type === 'async') {
      tap.fn = (...args: unknown[]) => {
        const cb = args.pop() as (err: unknown, result?: unknown) => void;
        try {
          fn(...args, (err: unknown, result?: unknown) =>
            err ? cb(null, onError(name, err, args)) : cb(null, mark(name, result)),
          );
        } catch (err) {
          cb(null, onError(name, err, args));
        }
      };
    } else {
      tap.fn = (...args: unknown[]) => {
        try {
          return mark(name, fn(...args));
        } catch (err) {
          return onError(name, err, args);
        }
      };
    }
    return tap;
  };
}

/** The hooks of one kernel, each tap wrapped by its hook's failure rule; the object is frozen. */
export function createHooks(log: Log): LoopHooks {
  const hooks: LoopHooks = {
    runStart: new AsyncSeriesHook(['run']),
    beforeSandboxStart: new AsyncSeriesWaterfallHook(['sandbox']),
    beforePrompt: new AsyncSeriesWaterfallHook(['context']),
    afterRubric: new AsyncSeriesHook(['rubric']),
    onVerdict: new AsyncSeriesBailHook(['verdict']),
    onDetain: new AsyncSeriesHook(['detention']),
    prBody: new AsyncSeriesWaterfallHook(['body', 'context']),
    afterGraduate: new AsyncSeriesHook(['graduation']),
    runEnd: new AsyncSeriesHook(['run']),
  };
  for (const name of Object.keys(hooks) as HookName[]) {
    // biome-ignore lint/suspicious/noExplicitAny: tapable's interceptor types are per-hook generic.
    (hooks[name] as any).intercept({ register: guard(name, HOOK_KINDS[name], log) });
  }
  return Object.freeze(hooks);
}
