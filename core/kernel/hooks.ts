import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, type Tap } from 'tapable';
import type { LoopKind } from '../ports/agent.js';
import type { HostBudget } from '../ports/decider.js';
import type { RecallKey } from '../ports/lesson-memory.js';
import type { Log } from '../ports/log.js';

/**
 * The loop's hooks, declared in one place with their argument types.
 * Every tap is named after its plugin (`hook.tapPromise(plugin.name, fn)`).
 *
 * Two kinds of hook:
 * - observer hooks (`afterRubric`, `onDetain`, `afterGraduate`, `beforeSandboxStart`) and
 *   transforming hooks (`beforePrompt`, `prBody`): a tap that throws is logged with its plugin's
 *   name and skipped (a transforming tap passes its input through unchanged); it never fails a run.
 * - deciding hooks (`onVerdict`): a tap that throws fails closed, i.e. it answers "stop".
 */

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

/** What a loop's prompt is built from; taps may add lessons or sections. */
export interface PromptContext {
  ticket: string;
  loop: number;
  mode: LoopKind;
  /** The repository and the run (`<TICKET>-<epoch>`) the loop belongs to. */
  repo: string;
  runId: string;
  /** What the loop asks the LessonMemory (computed by the loop: core/memory/key.ts). */
  recall: RecallKey;
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
  budget?: HostBudget;
  /** The run's `io/decisions.jsonl`. */
  decisionsFile?: string;
}

export interface RubricEvent {
  ticket: string;
  loop: number;
  exitCode: number;
  passed: boolean;
  /** The loop's fingerprint, when computed. */
  fingerprint?: {
    /** Empty both when none failed and when no test IDs were found: see `testsKnown`. */
    failingTests: string[];
    firstError: string | null;
    treeId: string | null;
    hash: string | null;
    /** False when the failing tests are UNKNOWN (no report or runner output named any). */
    testsKnown?: boolean;
  };
}

export interface VerdictEvent {
  ticket: string;
  loop: number;
  verdict: string;
  /** `off`, `shadow` or `on`. */
  rulesMode: string;
  previous?: RubricEvent['fingerprint'];
  current?: RubricEvent['fingerprint'];
  /** How the loop ended: `failed`, `passed`, `agent_error`. */
  ended?: string;
  /** Why the loop did not progress, e.g. `rubric failed (exit 1)`. */
  reason?: string;
  repo?: string;
  runId?: string;
  /** The loop's `runs` row, already recorded (decision records attach to it). */
  callId?: number | null;
  /** The loop's mode: `continue`, `retry` or `fix-review`. */
  mode?: string;
  /**
   * The loop's one budget for the host services (decider, embeddings): every
   * tap that calls one takes its deadline from here, so a loop waits at most
   * 2 seconds for all of them together.
   */
  budget?: HostBudget;
  /**
   * `git diff --stat` between the previous and this loop's trees (file names and
   * line counts, from the sandbox, where the trees are), or null when unknown.
   * Computed on demand, once.
   */
  diffstat?: () => Promise<string | null>;
  /** The run's `io/decisions.jsonl`: where a tap that asks a decider leaves one line per call. */
  decisionsFile?: string;
}

/** A deciding tap's answer: stop the run (never extend it). */
export interface StopRequest {
  stop: true;
  reason: string;
  /** Which plugin asked. Filled in by the kernel. */
  by?: string;
  /** The detention kind that picks the `next:` line (e.g. `stuck`); default `other`. */
  kind?: string;
  /** `stuck`: the decider's confidence (0..1), shown in the `next:` line. */
  confidence?: number;
}

export interface DetainEvent {
  ticket: string;
  reason: string;
  branch: string | null;
  lessonId: number | null;
  next: string;
}

export interface PrBodyContext {
  ticket: string;
  loops: number;
  costUsd: number;
}

export interface GraduateEvent {
  ticket: string;
  branch: string;
  requestUrl: string | null;
}

export interface SandboxStartEvent {
  ticket: string;
  /** The repository (`<repo>`, as the store keys it) the run belongs to. */
  repo: string;
  image: string;
  /** Extra environment a tap wants in the container (never secrets from the host log). */
  env: Record<string, string>;
}

export interface LoopHooks {
  beforePrompt: AsyncSeriesWaterfallHook<[PromptContext]>;
  afterRubric: AsyncSeriesHook<[RubricEvent]>;
  onVerdict: AsyncSeriesBailHook<[VerdictEvent], StopRequest | undefined>;
  onDetain: AsyncSeriesHook<[DetainEvent]>;
  prBody: AsyncSeriesWaterfallHook<[string, PrBodyContext]>;
  afterGraduate: AsyncSeriesHook<[GraduateEvent]>;
  beforeSandboxStart: AsyncSeriesHook<[SandboxStartEvent]>;
}

export const OBSERVER_HOOKS = ['afterRubric', 'onDetain', 'afterGraduate', 'beforeSandboxStart'] as const;
export const TRANSFORM_HOOKS = ['beforePrompt', 'prBody'] as const;
export const DECIDING_HOOKS = ['onVerdict'] as const;

type Outcome = { kind: 'observe' } | { kind: 'transform' } | { kind: 'decide' };

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Wraps a tap so that its failure follows the hook's rule. Works for `tap`,
 * `tapPromise` and `tapAsync`, so plugin authors may use any of them.
 */
function guard(hookName: string, outcome: Outcome, log: Log) {
  const onError = (tapName: string, err: unknown, args: unknown[]) => {
    if (outcome.kind === 'decide') {
      log.warn(`plugin ${tapName}: ${hookName} tap failed, stopping the run to be safe: ${describe(err)}`);
      return {
        stop: true,
        reason: `${hookName} tap of plugin ${tapName} failed: ${describe(err)}`,
        by: tapName,
      } satisfies StopRequest;
    }
    log.warn(`plugin ${tapName}: ${hookName} tap failed and was skipped: ${describe(err)}`);
    return outcome.kind === 'transform' ? args[0] : undefined;
  };
  const mark = (tapName: string, result: unknown) =>
    outcome.kind === 'decide' && result && typeof result === 'object'
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

export function createHooks(log: Log): LoopHooks {
  const hooks: LoopHooks = {
    beforePrompt: new AsyncSeriesWaterfallHook(['context']),
    afterRubric: new AsyncSeriesHook(['rubric']),
    onVerdict: new AsyncSeriesBailHook(['verdict']),
    onDetain: new AsyncSeriesHook(['detention']),
    prBody: new AsyncSeriesWaterfallHook(['body', 'context']),
    afterGraduate: new AsyncSeriesHook(['graduation']),
    beforeSandboxStart: new AsyncSeriesHook(['sandbox']),
  };
  const kinds: Record<keyof LoopHooks, Outcome> = {
    beforePrompt: { kind: 'transform' },
    prBody: { kind: 'transform' },
    afterRubric: { kind: 'observe' },
    onDetain: { kind: 'observe' },
    afterGraduate: { kind: 'observe' },
    beforeSandboxStart: { kind: 'observe' },
    onVerdict: { kind: 'decide' },
  };
  for (const name of Object.keys(hooks) as Array<keyof LoopHooks>) {
    // biome-ignore lint/suspicious/noExplicitAny: tapable's interceptor types are per-hook generic.
    (hooks[name] as any).intercept({ register: guard(name, kinds[name], log) });
  }
  return hooks;
}
