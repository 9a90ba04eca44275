import type { Config } from '../config/config.js';
import { LOOP_RETRIES } from '../decision/call.js';
import type { Decision } from '../decision/reading.js';
import { applyRerank, RERANK_MAX, rerankCandidates, rerankRequest } from '../decision/rerank.js';
import { type DeciderSession, sayNoAnswer } from '../decision/session.js';
import { type ActGate, actGate } from '../decision/stuck.js';
import type { HostBudget } from '../ports/decider.js';
import type { Embedder } from '../ports/embedder.js';
import { RECALL_QUERY_MAX, type RecallContext, type RecallKey } from '../ports/lesson-memory.js';
import type { Log } from '../ports/log.js';
import type { RecalledLesson, SemanticGate, Store } from '../ports/store.js';
import type { LadderRung } from './ladder.js';

/**
 * The ladder's two rungs that call the host services (original Chalk section 5.4 step 3): the
 * semantic rung adds candidates near the current failure by embedding, and the rerank rung asks
 * the decider which candidates apply. Both run only with CHALK_DECIDER shadow or on, at least
 * CHALK_DECIDER_MIN_LESSONS resolved lessons, and the loop's host-service budget (the one the
 * stuck question shares). Semantic candidates are only candidates: unless the rerank may act
 * (`on`, calibrated, not held, answered), the loop gets the plain ladder (exact, then lexical).
 */

/** The least cosine similarity a semantic candidate has to the current failure. */
export const SEMANTIC_MIN_COSINE = 0.7;

export interface DeciderRungDeps {
  store: Store;
  config: Config;
  /** The bound Embedder, or null when none is (then there is no semantic rung). */
  embedder: () => Embedder | null;
  session: DeciderSession;
  log: Log;
}

/**
 * Why the semantic rung asks nothing this loop, or null when it embeds the failure. Pure: the
 * gate's order is the cheapest check first, and nothing is embedded that cannot be searched.
 */
export function semanticSkip(o: {
  mode: string;
  gate: SemanticGate | null;
  minLessons: number;
  embedder: boolean;
  budget: Pick<HostBudget, 'left' | 'minCallMs'> | undefined;
  query: string;
}): string | null {
  if (o.mode !== 'shadow' && o.mode !== 'on') return 'the decider is off';
  if (!o.budget) return 'no host-service budget';
  if (!o.gate) return 'the lessons could not be counted';
  if (o.gate.resolved < o.minLessons)
    return `${o.gate.resolved} resolved lessons, fewer than CHALK_DECIDER_MIN_LESSONS`;
  if (!o.gate.vector) return 'the database has no pgvector (lessons.embedding is real[])';
  if (!o.embedder) return 'no plugin provides an embedder';
  if (o.query.trim() === '') return 'nothing to embed';
  if (o.budget.left() < o.budget.minCallMs) return 'the loop has no host-service time left';
  return null;
}

/** The plain ladder: what the exact and lexical rungs found (semantic candidates dropped). */
export const plainLadder = (found: readonly RecalledLesson[]): RecalledLesson[] =>
  found.filter((l) => l.how !== 'semantic');

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The semantic gate of one loop's recall, read once for both rungs. */
function gateOf(deps: DeciderRungDeps) {
  const gates = new WeakMap<RecallContext, Promise<SemanticGate | null>>();
  return (context: RecallContext): Promise<SemanticGate | null> => {
    let g = gates.get(context);
    if (!g) {
      g = deps.store.lessons.semanticGate().catch(() => null);
      gates.set(context, g);
    }
    return g;
  };
}

/** The two rungs, after exact and lexical: semantic candidates, then the decider's rerank. */
export function deciderRungs(deps: DeciderRungDeps): LadderRung[] {
  const gate = gateOf(deps);
  return [semanticRung(deps, gate), rerankRung(deps, gate)];
}

function semanticRung(deps: DeciderRungDeps, gate: (c: RecallContext) => Promise<SemanticGate | null>): LadderRung {
  return {
    name: 'semantic',
    async climb(key: RecallKey, found, context) {
      const mode = deps.config.str('CHALK_DECIDER');
      if ((mode !== 'shadow' && mode !== 'on') || !context?.budget) return [...found];
      const budget = context.budget;
      const embedder = deps.embedder();
      const query = key.query.slice(0, RECALL_QUERY_MAX);
      const skip = semanticSkip({
        mode,
        gate: await gate(context),
        minLessons: deps.config.num('CHALK_DECIDER_MIN_LESSONS'),
        embedder: embedder !== null,
        budget,
        query,
      });
      const log = deps.log.child(`[${context.ticket}] `);
      if (skip || !embedder) {
        log.debug(`lesson recall: no semantic candidates (${skip})`);
        return [...found];
      }
      const deadline = budget.deadline();
      let vector: number[] | undefined;
      try {
        [vector] = await embedder.embed([query], {
          deadline,
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
        });
      } catch (err) {
        log.debug(`lesson recall: the failure could not be embedded, no semantic candidates: ${describe(err)}`);
        return [...found];
      }
      if (!vector) return [...found];
      let near: RecalledLesson[];
      try {
        near = await deps.store.lessons.semantic({
          repo: key.repo,
          embedding: vector,
          minCosine: SEMANTIC_MIN_COSINE,
          limit: RERANK_MAX,
        });
      } catch (err) {
        log.debug(`lesson recall: the semantic search failed, no semantic candidates: ${describe(err)}`);
        return [...found];
      }
      return [...found, ...near.map((l) => ({ ...l, how: 'semantic' as const }))];
    },
  };
}

function rerankRung(deps: DeciderRungDeps, gate: (c: RecallContext) => Promise<SemanticGate | null>): LadderRung {
  return {
    name: 'rerank',
    async climb(key: RecallKey, found, context) {
      const plain = plainLadder(found);
      if (!deps.session.mode() || !context?.budget) return plain;
      const g = await gate(context);
      if (!g || g.resolved < deps.config.num('CHALK_DECIDER_MIN_LESSONS')) return plain;
      const { exact, sent } = rerankCandidates(found);
      const request = rerankRequest({ failure: key.query, lessons: sent });
      if (!request) return plain;
      const log = deps.log.child(`[${context.ticket}] `);
      const a = await deps.session.open(
        { runId: context.runId, ticket: context.ticket, repo: key.repo, decisionsFile: context.decisionsFile },
        log,
      );
      if (!a) return plain;
      let judged: ActGate | null = null;
      const judge = (d: Decision): ActGate =>
        actGate(
          d.response ? { model: d.response.model, answered: Object.keys(d.response.answers).length > 0 } : null,
          a.policy,
        );
      const decision = await a.runtime.decide(request, {
        deadline: context.budget.deadline(),
        minStartMs: context.budget.minCallMs,
        retries: LOOP_RETRIES,
        tags: { kind: 'rerank', run_id: context.runId, ticket: context.ticket, loop: String(context.loop) },
        annotate: (d) => {
          judged = judge(d);
          return { mode: judged.recordedMode, acted: String(judged.may) };
        },
      });
      const result: ActGate = judged ?? judge(decision);
      if (decision.failure) {
        sayNoAnswer(a, decision.failure, { log, question: 'lesson rerank' });
        return plain;
      }
      if (result.held) a.sayOnce(`CHALK_DECIDER=on acts as shadow: ${result.held}`, (l) => log.warn(l));
      const applied = applyRerank({ exact, sent, answers: decision.response?.answers ?? null, threshold: a.threshold });
      log.debug(
        `decider: rerank of ${sent.length} lessons kept ${applied ? applied.length - exact.length : 'none (no answer)'} (${decision.model ?? 'no model'}, ${Math.round(decision.latencyMs)} ms, recorded as ${result.recordedMode})`,
      );
      if (!result.may || !applied) return plain;
      return applied;
    },
  };
}
