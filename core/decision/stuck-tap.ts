import type { StopRequest, VerdictEvent } from '../kernel/hooks.js';
import type { Log } from '../ports/log.js';
import { decisionRequest } from '../protocol/questions.js';
import { LOOP_RETRIES } from './call.js';
import type { Decision } from './reading.js';
import { type DeciderSession, sayNoAnswer } from './session.js';
import { asksStuck, STUCK_ID, STUCK_QUESTION, type StuckOutcome, stuckOutcome, stuckState } from './stuck.js';

/**
 * The loop's stuck question, as the `core-decider` plugin's `onVerdict` tap.
 * After a failed loop whose verdict is `spinning` or `other`, it asks the bound
 * decider whether the agent is stuck on the same root cause as the loop
 * before, within the loop's host-service budget, with no retry. Every call,
 * answered or not, is one `decisions` row and one line of the run's
 * `io/decisions.jsonl` (the session's sinks). Under `on`, a yes at or above the
 * threshold from a model calibrated at this decider, with no hold from the
 * provider, asks the run to stop as `stuck`; anything else (`shadow`,
 * uncalibrated, held, no answer) leaves the loop exactly as with the decider
 * off. The tap never throws: `onVerdict` fails closed, and a decider's trouble
 * must never stop a run.
 */
export function stuckTap(session: DeciderSession, log: Log): (ev: VerdictEvent) => Promise<StopRequest | undefined> {
  return async (ev) => {
    const runLog = log.child(`[${ev.ticket}] `);
    try {
      return await ask(session, ev, runLog);
    } catch (err) {
      runLog.debug(`decider: the stuck question failed, going on as without it: ${describe(err)}`);
      return undefined;
    }
  };
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function ask(session: DeciderSession, ev: VerdictEvent, log: Log): Promise<StopRequest | undefined> {
  if (!session.mode()) return undefined;
  if (!asksStuck(ev)) return undefined;
  const a = await session.open(
    { runId: ev.runId, ticket: ev.ticket, repo: ev.repo, decisionsFile: ev.decisionsFile },
    log,
  );
  if (!a) return undefined;
  // Nothing is computed for an address that will be sent nothing.
  const diffstat = a.refused ? null : await ev.diffstat();
  const request = decisionRequest(stuckState({ previous: ev.previous, current: ev.current, diffstat }), {
    [STUCK_ID]: STUCK_QUESTION,
  });
  const { budget } = ev;
  let outcome: StuckOutcome | null = null;
  const judge = (d: Decision): StuckOutcome =>
    stuckOutcome(d.response ? { answer: d.response.answers[STUCK_ID], model: d.response.model } : null, a.policy);
  const decision = await a.runtime.decide(request, {
    deadline: budget.deadline(),
    minStartMs: budget.minCallMs,
    retries: LOOP_RETRIES,
    tags: {
      kind: 'stuck',
      run_id: ev.runId,
      ticket: ev.ticket,
      loop: String(ev.loop),
      ...(ev.callId !== null ? { call_id: String(ev.callId) } : {}),
    },
    annotate: (d) => {
      outcome = judge(d);
      return { mode: outcome.recordedMode, acted: String(outcome.act) };
    },
  });
  const result: StuckOutcome = outcome ?? judge(decision);
  if (decision.failure) {
    sayNoAnswer(a, decision.failure, { log, question: 'stuck question' });
    return undefined;
  }
  if (result.held) a.sayOnce(`CHALK_DECIDER=on acts as shadow: ${result.held}`, (l) => log.warn(l));
  const p = decision.response?.answers[STUCK_ID];
  log.debug(
    `decider: stuck? ${p?.type === 'noul' ? p.noul.toFixed(3) : 'unknown'} (${decision.model ?? 'no model'}, ${Math.round(decision.latencyMs)} ms, recorded as ${result.recordedMode})`,
  );
  if (!result.act) return undefined;
  return {
    stop: true,
    kind: 'stuck',
    reason: `stuck: ${ev.reason}`,
    next: `the decider judged the agent stuck on the same root cause as the loop before (confidence ${(result.confidence ?? 0).toFixed(2)}); fix that cause yourself, since a retry would likely fail the same way`,
  };
}
