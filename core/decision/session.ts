import type { Config } from '../config/config.js';
import type { PluginHost } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { runPaths } from '../layout.js';
import type { Decider } from '../ports/decider.js';
import type { Log } from '../ports/log.js';
import type { Store, StuckAnswerFacts } from '../ports/store.js';
import { calibrationOf, calibrationsAt } from './calibration.js';
import { JsonlDecisionSink } from './jsonl-sink.js';
import type { DecisionRecord, DecisionSink } from './record.js';
import { type DecisionRuntime, runtimeFor } from './runtime.js';
import { StoreDecisionSink } from './store-sink.js';
import type { StuckPolicy } from './stuck.js';
import { sayOnce } from './trust.js';

export interface SessionDeps {
  config: Config;
  /** The bound decider, or null when no plugin provides one. */
  decider: () => Decider | null;
  store: () => Store;
  log: Log;
  env: NodeJS.ProcessEnv;
}

/** The run a question belongs to. */
export interface RunRef {
  runId: string;
  ticket: string;
  repo: string;
  /** The run's `io/decisions.jsonl`; default: the run layout's. */
  decisionsFile?: string | undefined;
}

/** What one run remembers between its loops: what it said, its sinks, the calibration evidence. */
interface RunMemory {
  said: Set<string>;
  sinks: boolean;
  /** Under `on`: every stuck answer of all history (read once per run); null when the store could not be read. */
  facts: Promise<StuckAnswerFacts[] | null> | null;
}

/** Everything one question of a run needs: the runtime recording it, the policy judging its answer. */
export interface Asking {
  decider: Decider;
  runtime: DecisionRuntime;
  url: string;
  mode: 'shadow' | 'on';
  threshold: number;
  /** Why the decider must be sent nothing (the call is still recorded), or null. */
  refused: string | null;
  policy: StuckPolicy;
  /** Says a line once per run (e.g. why `on` acts as shadow). */
  sayOnce(line: string, say: (l: string) => void): void;
}

/** A sink that takes only the records of one run (the runtime is the process's, shared by every run in it). */
const ofRun = (runId: string, sink: DecisionSink): DecisionSink => ({
  write: (r: DecisionRecord) => (r.tags.run_id === runId ? sink.write(r) : undefined),
});

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The loop's questions' shared side (the stuck question and the lesson rerank): one decider per
 * kernel, one runtime for it (admission sees every call), per run the sinks (the `decisions`
 * table and `io/decisions.jsonl`), the calibration evidence read once, and the lines said once:
 * no plugin provides a decider, it may be sent nothing, `on` is held to shadow (uncalibrated, or
 * the provider's own `holdReason`), credentials refused, another protocol version.
 */
export class DeciderSession {
  private readonly runs = new Map<string, RunMemory>();

  constructor(private readonly deps: SessionDeps) {}

  private memory(runId: string): RunMemory {
    let m = this.runs.get(runId);
    if (!m) {
      m = { said: new Set(), sinks: false, facts: null };
      this.runs.set(runId, m);
    }
    return m;
  }

  /** CHALK_DECIDER as the questions read it: null when off. */
  mode(): 'shadow' | 'on' | null {
    const mode = this.deps.config.str('CHALK_DECIDER');
    return mode === 'shadow' || mode === 'on' ? mode : null;
  }

  /** Ready to ask for a run: null when the decider is off or no plugin provides one (said once per run). */
  async open(run: RunRef, log: Log): Promise<Asking | null> {
    const mode = this.mode();
    if (!mode) return null;
    const m = this.memory(run.runId);
    const once = (line: string, say: (l: string) => void) => {
      if (m.said.has(line)) return;
      m.said.add(line);
      say(line);
    };
    let decider: Decider | null;
    try {
      decider = this.deps.decider();
    } catch (err) {
      decider = null;
      log.debug(`decider: ${describe(err)}`);
    }
    if (!decider) {
      once('going on with the decider off: no plugin provides a decider', (l) => log.warn(l));
      return null;
    }
    const threshold = this.deps.config.num('CHALK_DECIDER_THRESHOLD');
    // A record that cannot be written never fails the call, but is worth saying (once per process).
    const runtime = runtimeFor(decider, (err) =>
      sayOnce(`decider: a decision could not be recorded: ${describe(err)}`, (l) => this.deps.log.warn(l)),
    );
    if (!m.sinks) {
      m.sinks = true;
      const file = run.decisionsFile ?? runPaths(run.repo, run.ticket, this.deps.env).decisions;
      runtime.observe(ofRun(run.runId, new JsonlDecisionSink(file)));
      runtime.observe(ofRun(run.runId, new StoreDecisionSink(this.deps.store().decisions, { threshold, mode })));
    }
    const refused = decider.unavailable();
    if (refused) once(`going on with the decider off: ${refused}`, (l) => log.warn(l));
    // Under `on`, the evidence is read once per run, before the question (never while it waits for an answer).
    if (mode === 'on' && !refused) {
      m.facts ??= this.deps
        .store()
        .decisions.stuckAnswers()
        .catch((err) => {
          log.debug(`decider: the calibration could not be read: ${describe(err)}`);
          return null;
        });
    }
    const facts = mode === 'on' && m.facts ? await m.facts : null;
    const url = decider.entry.url;
    let hold: string | null = null;
    try {
      hold = decider.holdReason?.() ?? null;
    } catch (err) {
      log.debug(`decider: ${describe(err)}`);
    }
    const policy: StuckPolicy = {
      mode,
      threshold,
      hold,
      calibration: (model: string) => (facts ? calibrationOf(facts, { url, model, threshold }) : null),
      anyCalibrated: facts ? calibrationsAt(facts, url, threshold).some((c) => c.passes) : false,
    };
    return { decider, runtime, url, mode, threshold, refused, policy, sayOnce: once };
  }
}

const sessions = new WeakMap<object, DeciderSession>();

/**
 * The one session of a kernel: the `core-decider` plugin's stuck tap and the lesson ladder's
 * rerank rung share it (the same decider instance, so the same runtime and sinks).
 */
export function sessionFor(kernel: Pick<PluginHost, 'config' | 'log' | 'has' | 'resolve'>): DeciderSession {
  let s = sessions.get(kernel);
  if (!s) {
    let decider: Decider | null | undefined;
    s = new DeciderSession({
      config: kernel.config,
      decider: () => {
        decider ??= kernel.has(Tokens.Decider) ? kernel.resolve(Tokens.Decider) : null;
        return decider;
      },
      store: () => kernel.resolve(Tokens.Store),
      log: kernel.log,
      env: process.env,
    });
    sessions.set(kernel, s);
  }
  return s;
}

/**
 * Says why a question got no answer: refused credentials and another protocol version once per
 * run (every later question would fail the same way), anything else only in the debug log.
 */
export function sayNoAnswer(
  a: Pick<Asking, 'url' | 'sayOnce'>,
  f: { kind: string; message: string },
  o: { log: Log; question: string },
): void {
  if (f.kind === 'auth') {
    a.sayOnce(
      `the decider at ${a.url} refused the credentials (${f.message}); check CHALK_DECIDER_TOKEN. Loops go on without its answers`,
      (l) => o.log.warn(l),
    );
  } else if (f.kind === 'version') {
    a.sayOnce(`the decider at ${a.url} gave no usable answer: ${f.message}. Loops go on without its answers`, (l) =>
      o.log.warn(l),
    );
  } else {
    o.log.debug(`decider: no answer to the ${o.question} (${f.kind}: ${f.message})`);
  }
}
