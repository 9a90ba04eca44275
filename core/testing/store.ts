import { LOOP_KINDS as LOOP_KIND_LIST } from '../ports/agent.js';
import type { Clock } from '../ports/clock.js';
import type {
  CallRecord,
  DecisionRecord,
  EventKind,
  ExactQuery,
  Lesson,
  LessonListed,
  LessonOpen,
  LessonResolve,
  LessonScope,
  LexicalQuery,
  RecalledLesson,
  RecallsRecord,
  RunTotals,
  SemanticGate,
  SemanticQuery,
  Store,
  StoreInfo,
  StuckAnswerFacts,
  TicketSummary,
  UnembeddedLesson,
} from '../ports/store.js';
import { cleanUrl } from '../store/decisions.js';
import { deriveState } from '../store/tickets.js';
import { similarity, wordSimilarity } from './trigram.js';

export interface CallRow extends CallRecord {
  id: number;
  createdAt: Date;
}
export interface EventRow {
  id: number;
  repo: string;
  ticket: string;
  kind: EventKind;
  createdAt: Date;
}
export interface DecisionRow extends DecisionRecord {
  id: number;
}
/** A `lesson_recalls` row. */
export interface RecallRow {
  id: number;
  callId: number;
  runId: string | null;
  loop: number;
  lessonId: number;
  how: string;
}

const LOOP_KINDS: ReadonlySet<string> = new Set(LOOP_KIND_LIST);

/** The lexical rung's rule for one lesson (LexicalQuery): its score, or null when it is not recalled. */
function lexicalScore(q: LexicalQuery, l: Lesson): number | null {
  const above = (v: number, t: number) => (v > t ? v : null);
  if (q.mode === 'spec') return above(wordSimilarity(l.firstError ?? l.signature, q.query), 0.6);
  if (q.mode === 'failure' && l.firstError !== null) {
    return q.firstError ? above(similarity(l.firstError, q.firstError), 0.5) : null;
  }
  return above(similarity(l.signature, q.query), 0.1);
}

/**
 * The Store port in memory: the same tables (`runs` as `calls`, events,
 * lessons, decisions) as arrays a test can read, and ticket summaries derived
 * by the same rule as the database's (deriveState). Ids and times come in
 * order (times from the clock given), so nothing ties.
 */
export class MemoryStore implements Store {
  readonly kind = 'embedded' as const;
  readonly tables = {
    calls: [] as CallRow[],
    events: [] as EventRow[],
    lessons: [] as Lesson[],
    decisions: [] as DecisionRow[],
    recalls: [] as RecallRow[],
    /** lessons.embedding, by lesson id. */
    embeddings: new Map<number, number[]>(),
  };
  /**
   * Whether lessons.embedding behaves as a pgvector column (semantic recall) or as real[] (none):
   * a test sets it to play either database.
   */
  vector = true;
  private seq = 0;
  closed = false;

  constructor(private readonly clock: Pick<Clock, 'now'> = { now: () => new Date() }) {}

  private next(): { id: number; at: Date } {
    this.seq += 1;
    // Each row a millisecond after the one before, even under a clock that stands still.
    return { id: this.seq, at: new Date(this.clock.now().getTime() + this.seq) };
  }

  calls = {
    record: async (call: CallRecord): Promise<number> => {
      const { id, at } = this.next();
      this.tables.calls.push({ ...call, id, createdAt: at });
      return id;
    },
    ofRun: async (repo: string, runId: string): Promise<RunTotals> => {
      const rows = this.tables.calls.filter((c) => c.repo === repo && c.runId === runId);
      const loops = rows.filter((c) => LOOP_KINDS.has(c.kind) && c.agentStatus !== 'interrupted');
      // The highest loop number, the newest row of it (as the database orders them).
      const last = loops.reduce<CallRow | null>((best, c) => (!best || c.loop >= best.loop ? c : best), null);
      return {
        spentUsd: Math.round(rows.reduce((sum, c) => sum + c.costUsd, 0) * 10_000) / 10_000,
        lastLoop: last?.loop ?? 0,
        lastLoopProgressed: last ? last.progressed : null,
      };
    },
  };

  events = {
    record: async (repo: string, ticket: string, kind: EventKind): Promise<void> => {
      const { id, at } = this.next();
      this.tables.events.push({ id, repo, ticket, kind, createdAt: at });
    },
  };

  lessons = {
    open: async (l: LessonOpen): Promise<number> => {
      const { id, at } = this.next();
      this.tables.lessons.push({
        id,
        repo: l.repo,
        ticket: l.ticket,
        signature: l.signature,
        resolution: null,
        lesson: null,
        resolvedBy: null,
        createdAt: at,
        resolvedAt: null,
        runId: l.runId || null,
        fingerprint: l.fingerprint || null,
        firstError: l.firstError || null,
        scope: null,
        forgottenAt: null,
      });
      return id;
    },
    resolve: async (r: LessonResolve): Promise<void> => {
      const l = this.tables.lessons.find((x) => x.id === r.id);
      if (!l) return;
      Object.assign(l, {
        resolution: r.resolution,
        lesson: r.lesson,
        resolvedBy: r.resolvedBy,
        scope: r.scope ?? null,
        resolvedAt: this.next().at,
      });
      if (r.embedding) this.tables.embeddings.set(l.id, [...r.embedding]);
    },
    openByFingerprint: async (repo: string, fingerprint: string, exceptTicket?: string): Promise<Lesson[]> =>
      this.tables.lessons
        .filter(
          (l) =>
            l.repo === repo &&
            l.fingerprint === fingerprint &&
            l.resolvedAt === null &&
            (!exceptTicket || l.ticket !== exceptTicket),
        )
        .sort((a, b) => b.id - a.id),
    exact: async (q: ExactQuery): Promise<RecalledLesson[]> =>
      q.fingerprint === ''
        ? []
        : this.recallable()
            .filter((l) => l.repo === q.repo && l.fingerprint === q.fingerprint)
            .sort((a, b) => b.id - a.id)
            .slice(0, q.limit)
            .map((l) => ({ ...l, similarity: 1, cosine: null })),
    lexical: async (q: LexicalQuery): Promise<RecalledLesson[]> =>
      q.query.trim() === ''
        ? []
        : this.recallable()
            .filter((l) => l.repo === q.repo || l.scope === 'general')
            .map((l) => ({ ...l, similarity: lexicalScore(q, l) ?? -1, cosine: null }))
            .filter((l) => l.similarity >= 0)
            .sort((a, b) => b.similarity - a.similarity || b.id - a.id)
            .slice(0, q.limit),
    semanticGate: async (): Promise<SemanticGate> => ({ vector: this.vector, resolved: this.recallable().length }),
    semantic: async (q: SemanticQuery): Promise<RecalledLesson[]> =>
      !this.vector
        ? []
        : this.recallable()
            .filter((l) => (l.repo === q.repo || l.scope === 'general') && this.tables.embeddings.has(l.id))
            .map((l) => {
              const e = this.tables.embeddings.get(l.id) as number[];
              const cosine = e.reduce((sum, x, i) => sum + x * (q.embedding[i] ?? 0), 0);
              return { ...l, similarity: cosine, cosine };
            })
            .filter((l) => l.cosine >= q.minCosine)
            .sort((a, b) => b.cosine - a.cosine || b.id - a.id)
            .slice(0, q.limit),
    unembedded: async (limit: number): Promise<UnembeddedLesson[]> =>
      this.recallable()
        .filter((l) => !this.tables.embeddings.has(l.id))
        .sort((a, b) => (a.resolvedAt?.getTime() ?? 0) - (b.resolvedAt?.getTime() ?? 0) || a.id - b.id)
        .slice(0, limit)
        .map((l) => ({ id: l.id, lesson: l.lesson, resolution: l.resolution })),
    setEmbedding: async (id: number, embedding: number[]): Promise<void> => {
      if (!this.tables.lessons.some((l) => l.id === id)) throw new Error(`no lesson ${id}`);
      this.tables.embeddings.set(id, [...embedding]);
    },
    recordRecalls: async (r: RecallsRecord): Promise<void> => {
      for (const l of r.lessons) {
        if (!this.tables.calls.some((c) => c.id === r.callId)) throw new Error(`no runs row ${r.callId}`);
        if (!this.tables.lessons.some((x) => x.id === l.lessonId)) throw new Error(`no lesson ${l.lessonId}`);
        this.tables.recalls.push({
          id: this.next().id,
          callId: r.callId,
          runId: r.runId,
          loop: r.loop,
          lessonId: l.lessonId,
          how: l.how,
        });
      }
    },
    list: async (q: { repo?: string | null }): Promise<LessonListed[]> =>
      this.tables.lessons
        .filter(
          (l) =>
            !q.repo ||
            ((l.repo === q.repo || l.scope === 'general') && l.resolvedAt !== null && l.forgottenAt === null),
        )
        .sort((a, b) => b.id - a.id)
        .map((l) => this.listed(l)),
    get: async (id: number): Promise<LessonListed | null> => {
      const l = this.tables.lessons.find((x) => x.id === id);
      return l ? this.listed(l) : null;
    },
    setScope: async (id: number, scope: LessonScope): Promise<boolean> => {
      const l = this.tables.lessons.find((x) => x.id === id);
      if (l) l.scope = scope;
      return l !== undefined;
    },
    forget: async (id: number): Promise<boolean> => {
      const l = this.tables.lessons.find((x) => x.id === id);
      if (l) l.forgottenAt ??= this.next().at;
      return l !== undefined;
    },
  };

  private recallable(): Lesson[] {
    return this.tables.lessons.filter((l) => l.resolvedAt !== null && l.forgottenAt === null);
  }

  private listed(l: Lesson): LessonListed {
    const given = this.tables.recalls.filter((r) => r.lessonId === l.id);
    const passed = given.filter((r) => this.tables.calls.find((c) => c.id === r.callId)?.progressed).length;
    return { ...l, recalled: given.length, passed };
  }

  decisions = {
    record: async (rows: DecisionRecord[]): Promise<number> => {
      for (const r of rows) this.tables.decisions.push({ ...r, id: this.next().id });
      return rows.length;
    },
    /** The same facts as share/dashboard/stuck-answers.sql, from the arrays. */
    stuckAnswers: async (): Promise<StuckAnswerFacts[]> => {
      const t = this.tables;
      return t.decisions
        .filter(
          (d) =>
            d.kind === 'stuck' &&
            (d.answer === 'yes' || d.answer === 'no') &&
            d.confidence !== null &&
            d.confidence !== undefined &&
            !!d.runId,
        )
        .map((d) => {
          const call = t.calls.find((c) => c.id === d.callId);
          const loop = call?.loop ?? d.loop ?? null;
          return {
            url: cleanUrl(d.url) ?? '',
            model: d.model ?? '',
            run: d.runId as string,
            mode: d.mode,
            answer: d.answer as 'yes' | 'no',
            confidence: Number(d.confidence),
            laterProgress: t.calls.some(
              (c) => c.runId === d.runId && c.progressed && (loop === null ? c.id > d.id : c.loop > loop),
            ),
            detained: t.lessons.some((l) => l.runId === d.runId),
          };
        });
    },
  };

  tickets = {
    summaries: async (repo: string): Promise<TicketSummary[]> => {
      const names = new Set<string>();
      const t = this.tables;
      for (const r of [...t.calls, ...t.events, ...t.lessons]) if (r.repo === repo) names.add(r.ticket);
      const out = [...names].map((ticket): TicketSummary => {
        const calls = t.calls.filter((c) => c.repo === repo && c.ticket === ticket);
        const events = t.events.filter((e) => e.repo === repo && e.ticket === ticket);
        const lessons = t.lessons.filter((l) => l.repo === repo && l.ticket === ticket);
        const lastEvent = events.at(-1);
        const lastCall = calls.filter((c) => c.kind !== 'distill').at(-1);
        const times = [
          ...calls.map((c) => c.createdAt),
          ...events.map((e) => e.createdAt),
          ...lessons.map((l) => l.resolvedAt ?? l.createdAt),
        ].map((d) => d.getTime());
        return {
          ticket,
          state: deriveState({
            lastEvent: lastEvent ? { kind: lastEvent.kind, at: lastEvent.createdAt } : null,
            lastCall: lastCall
              ? { kind: lastCall.kind, agentStatus: lastCall.agentStatus, at: lastCall.createdAt }
              : null,
          }),
          loops: calls.filter((c) => LOOP_KINDS.has(c.kind)).length,
          costUsd: calls.reduce((s, c) => s + c.costUsd, 0),
          fixes: lessons.filter((l) => l.resolvedAt !== null).length,
          lastActiveAt: times.length ? new Date(Math.max(...times)) : null,
        };
      });
      return out.sort(
        (a, b) =>
          (b.lastActiveAt?.getTime() ?? 0) - (a.lastActiveAt?.getTime() ?? 0) || a.ticket.localeCompare(b.ticket),
      );
    },
  };

  async info(): Promise<StoreInfo> {
    const t = this.tables;
    return {
      kind: 'embedded',
      where: 'memory',
      serverVersion: 'memory',
      extensions: [],
      schemaVersion: null,
      semanticRecall: this.vector,
      rows: { runs: t.calls.length, events: t.events.length, lessons: t.lessons.length, decisions: t.decisions.length },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** The `runs` rows of one ticket, in order. */
  callsOf(ticket: string): CallRow[] {
    return this.tables.calls.filter((c) => c.ticket === ticket);
  }
}
