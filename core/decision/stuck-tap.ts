import type { Config } from '../config/config.js';
import type { StopRequest, VerdictEvent } from '../kernel/hooks.js';
import { runPaths } from '../layout.js';
import type { Decider } from '../ports/decider.js';
import type { Log } from '../ports/log.js';
import type { Store, StuckAnswerFacts } from '../ports/store.js';
import { decisionRequest } from '../protocol/questions.js';
import { LoopBudget } from './budget.js';
import { calibrationOf, calibrationsAt } from './calibration.js';
import { LOOP_RETRIES } from './call.js';
import { JsonlDecisionSink } from './jsonl-sink.js';
import type { Decision } from './reading.js';
import type { DecisionRecord, DecisionSink } from './record.js';
import { runtimeFor } from './runtime.js';
import { StoreDecisionSink } from './store-sink.js';
import { asksStuck, STUCK_ID, STUCK_QUESTION, type StuckOutcome, stuckOutcome, stuckState } from './stuck.js';
import { sayOnce } from './trust.js';

export interface StuckTapDeps {
  config: Config;
  /** The bound decider, or null when no plugin provides one. */
  decider: () => Decider | null;
  store: () => Store;
  log: Log;
  env: NodeJS.ProcessEnv;
}

/** What one run remembers between its loops: what it said, its sinks, the calibration evidence. */
interface RunMemory {
  said: Set<string>;
  sinks: boolean;
  /** Under `on`: every stuck answer of all history (read once per run); null when the store could not be read. */
  facts: Promise<StuckAnswerFacts[] | null> | null;
}

/** A sink that takes only the records of one run (the runtime is the process's, shared by every run in it). */
const ofRun = (runId: string, sink: DecisionSink): DecisionSink => ({
  write: (r: DecisionRecord) => (r.tags.run_id === runId ? sink.write(r) : undefined),
});

/**
 * The loop's stuck question, as the `core-decider` plugin's `onVerdict` tap.
 * After a failed loop whose verdict is `spinning` or `other`, it asks the bound
 * decider whether the agent is stuck on the same root cause as the loop
 * before, within the loop's host-service budget, with no retry. Every call,
 * answered or not, is one `decisions` row and one line of the run's
 * `io/decisions.jsonl`. Under `on`, a yes at or above the threshold from a
 * model calibrated at this decider asks the run to stop as `stuck`; anything
 * else (`shadow`, uncalibrated, no answer) leaves the loop exactly as with the
 * decider off. The tap never throws: `onVerdict` fails closed, and a decider's
 * trouble must never stop a run.
 */
export function stuckTap(deps: StuckTapDeps): (ev: VerdictEvent) => Promise<StopRequest | undefined> {
  const runs = new Map<string, RunMemory>();
  const memory = (runId: string): RunMemory => {
    let m = runs.get(runId);
    if (!m) {
      m = { said: new Set(), sinks: false, facts: null };
      runs.set(runId, m);
    }
    return m;
  };
  return async (ev) => {
    const log = deps.log.child(`[${ev.ticket}] `);
    try {
      return await ask(deps, ev, memory(ev.runId ?? ev.ticket), log);
    } catch (err) {
      log.debug(`decider: the stuck question failed, going on as without it: ${describe(err)}`);
      return undefined;
    }
  };
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

function sayOncePerRun(m: RunMemory, line: string, say: (l: string) => void): void {
  if (m.said.has(line)) return;
  m.said.add(line);
  say(line);
}

async function ask(deps: StuckTapDeps, ev: VerdictEvent, m: RunMemory, log: Log): Promise<StopRequest | undefined> {
  const { config } = deps;
  const mode = config.str('CHALK_DECIDER');
  if (mode !== 'shadow' && mode !== 'on') return undefined;
  if (!asksStuck(ev) || !ev.runId) return undefined;
  let decider: Decider | null;
  try {
    decider = deps.decider();
  } catch (err) {
    decider = null;
    log.debug(`decider: ${describe(err)}`);
  }
  if (!decider) {
    sayOncePerRun(m, 'going on with the decider off: no plugin provides a decider', (l) => log.warn(l));
    return undefined;
  }
  const threshold = config.num('CHALK_DECIDER_THRESHOLD');
  // A record that cannot be written never fails the call, but is worth saying (once per process).
  const runtime = runtimeFor(decider, (err) =>
    sayOnce(`decider: a decision could not be recorded: ${describe(err)}`, (l) => deps.log.warn(l)),
  );
  if (!m.sinks) {
    m.sinks = true;
    const file = ev.decisionsFile ?? runPaths(ev.repo ?? '', ev.ticket, deps.env).decisions;
    runtime.observe(ofRun(ev.runId, new JsonlDecisionSink(file)));
    runtime.observe(ofRun(ev.runId, new StoreDecisionSink(deps.store().decisions, { threshold, mode })));
  }
  const refused = decider.unavailable();
  if (refused) sayOncePerRun(m, `going on with the decider off: ${refused}`, (l) => log.warn(l));
  // Under `on`, the evidence is read once per run, before the question (never while it waits for an answer).
  if (mode === 'on' && !refused) {
    m.facts ??= deps
      .store()
      .decisions.stuckAnswers()
      .catch((err) => {
        log.debug(`decider: the calibration could not be read: ${describe(err)}`);
        return null;
      });
  }
  const facts = mode === 'on' && m.facts ? await m.facts : null;
  const url = decider.entry.url;
  const policy = {
    mode,
    threshold,
    calibration: (model: string) => (facts ? calibrationOf(facts, { url, model, threshold }) : null),
    anyCalibrated: facts ? calibrationsAt(facts, url, threshold).some((c) => c.passes) : false,
  } as const;
  // Nothing is computed for an address that will be sent nothing.
  const diffstat = refused ? null : ((await ev.diffstat?.()) ?? null);
  const request = decisionRequest(stuckState({ previous: ev.previous, current: ev.current, diffstat }), {
    [STUCK_ID]: STUCK_QUESTION,
  });
  const budget = ev.budget ?? new LoopBudget();
  let outcome: StuckOutcome | null = null;
  const judge = (d: Decision): StuckOutcome =>
    stuckOutcome(d.response ? { answer: d.response.answers[STUCK_ID], model: d.response.model } : null, policy);
  const decision = await runtime.decide(request, {
    deadline: budget.deadline(),
    minStartMs: budget.minCallMs,
    retries: LOOP_RETRIES,
    tags: {
      kind: 'stuck',
      run_id: ev.runId,
      ticket: ev.ticket,
      loop: String(ev.loop),
      ...(ev.callId !== undefined && ev.callId !== null ? { call_id: String(ev.callId) } : {}),
    },
    annotate: (d) => {
      outcome = judge(d);
      return { mode: outcome.recordedMode, acted: String(outcome.act) };
    },
  });
  const result: StuckOutcome = outcome ?? judge(decision);
  const f = decision.failure;
  if (f) {
    if (f.kind === 'auth') {
      sayOncePerRun(
        m,
        `the decider at ${url} refused the credentials (${f.message}); check CHALK_DECIDER_TOKEN. Loops go on without its answers`,
        (l) => log.warn(l),
      );
    } else if (f.kind === 'version') {
      sayOncePerRun(
        m,
        `the decider at ${url} gave no usable answer: ${f.message}. Loops go on without its answers`,
        (l) => log.warn(l),
      );
    } else {
      log.debug(`decider: no answer to the stuck question (${f.kind}: ${f.message})`);
    }
    return undefined;
  }
  if (result.held) sayOncePerRun(m, `CHALK_DECIDER=on acts as shadow: ${result.held}`, (l) => log.warn(l));
  const p = decision.response?.answers[STUCK_ID];
  log.debug(
    `decider: stuck? ${p?.type === 'noul' ? p.noul.toFixed(3) : 'unknown'} (${decision.model ?? 'no model'}, ${Math.round(decision.latencyMs)} ms, recorded as ${result.recordedMode})`,
  );
  if (!result.act) return undefined;
  return {
    stop: true,
    kind: 'stuck',
    reason: `the decider judged the agent stuck on the same root cause as the loop before (confidence ${(result.confidence ?? 0).toFixed(2)})`,
    ...(result.confidence !== null ? { confidence: result.confidence } : {}),
  };
}
