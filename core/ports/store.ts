/**
 * The telemetry and lesson store: Postgres, either the embedded per-machine PGlite server
 * or any server named by CHALK_DATABASE_URL. The implementation lives in core/store.
 * Text is stored as given (a page that shows it escapes it); values never enter SQL text.
 */

/** One agent call (a `runs` row). Optional fields are NULL when absent or empty. */
export interface CallRecord {
  repo: string;
  ticket: string;
  branch: string;
  /** 0 for calls outside the loop. */
  loop: number;
  /** continue, retry, fix-review, spec-check, review, distill. */
  kind: string;
  /** Loops: ok, blocked or the CLI error subtype. Checks: pass, fail, none. */
  agentStatus: string;
  rubricExit: number;
  progressed: boolean;
  /** The model that actually answered. */
  model: string;
  /** The prompts' 8-character hash. */
  prompts: string;
  costUsd: number;
  budgetUsd: number;
  durationS: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  turns: number;
  denials: number;
  /** How many lessons the call was given. */
  lessons: number;
  runId?: string | null;
  testsHash?: string | null;
  failing?: number | null;
  /** Failing test IDs (only the first 100 are kept), or null when unknown. */
  failingTests?: string[] | null;
  firstError?: string | null;
  treeId?: string | null;
  verdict?: string | null;
  /** The CHALK_FP_RULES mode in force. */
  fpRules?: string | null;
  /** Failing tests that passed when the rubric ran again on the same tree (first 100 kept); null when none or not run again. */
  flakyTests?: string[] | null;
}

/** What one run id's rows add up to (a resumed run's spend and loops so far). */
export interface RunTotals {
  /** Cost of every call of the run, in US dollars. */
  spentUsd: number;
  /** The highest loop number of a finished loop call (continue, retry, fix-review; `interrupted` ones left out); 0 when none. */
  lastLoop: number;
  /** Whether that loop progressed; null when there is none. */
  lastLoopProgressed: boolean | null;
}

export type EventKind = 'detention' | 'submitted' | 'spec_blocked' | 'ready';

export interface LessonOpen {
  repo: string;
  ticket: string;
  signature: string;
  runId?: string | null;
  fingerprint?: string | null;
  firstError?: string | null;
}

/**
 * `general`: recalled in every repository; `repo`: only in its own; `none`: no rule was distilled,
 * the person's note is the fix, recalled only in its own repository. NULL (old rows, distillation
 * off) is treated as `repo`.
 */
export type LessonScope = 'general' | 'repo' | 'none';
export const LESSON_SCOPES: readonly LessonScope[] = ['general', 'repo', 'none'];

export interface LessonResolve {
  id: number;
  resolution: string;
  /** The distilled lesson; null when none was (the resolution is the fix then). */
  lesson: string | null;
  resolvedBy: string;
  scope?: LessonScope | null;
  /** 384 numbers, when an embedder made them. */
  embedding?: number[] | null;
}

export interface Lesson {
  id: number;
  repo: string;
  ticket: string;
  signature: string;
  resolution: string | null;
  lesson: string | null;
  resolvedBy: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
  runId: string | null;
  fingerprint: string | null;
  firstError: string | null;
  scope: string | null;
  /** When a person forgot it (`chalk lessons forget`): never recalled again. */
  forgottenAt: Date | null;
}

/** A lesson as `chalk lessons` lists it: how often loops were given it, and how often such a loop then passed. */
export interface LessonListed extends Lesson {
  recalled: number;
  /** Loops given it whose `runs` row progressed. */
  passed: number;
}

/** The exact rung: resolved, not forgotten lessons of this repository with this fingerprint. */
export interface ExactQuery {
  repo: string;
  fingerprint: string;
  limit: number;
}

/**
 * The lexical rung (pg_trgm), over resolved, not forgotten lessons within the scope rule:
 * - `failure`: a lesson with a first error when similarity(first_error, firstError) > 0.5, one
 *   without when similarity(signature, query) > 0.1;
 * - `spec`: word_similarity(coalesce(first_error, signature), query) > 0.6;
 * - `text`: similarity(signature, query) > 0.1.
 * Best score first, then newest id.
 */
export interface LexicalQuery {
  repo: string;
  mode: 'failure' | 'spec' | 'text';
  query: string;
  firstError: string | null;
  limit: number;
}

/** What the semantic rung asks before it embeds anything (core/memory: the semantic gate). */
export interface SemanticGate {
  /** lessons.embedding is a pgvector column (a Postgres without pgvector keeps real[]: no semantic recall). */
  vector: boolean;
  /** Resolved, not forgotten lessons, in every repository. */
  resolved: number;
}

/** The semantic rung: lessons within the scope rule whose embedding is at least `minCosine` near the query's. */
export interface SemanticQuery {
  repo: string;
  /** The current failure's embedding: 384 numbers of unit length. */
  embedding: number[];
  minCosine: number;
  limit: number;
}

/** A resolved lesson with no embedding yet, and what its embedding is made of. */
export interface UnembeddedLesson {
  id: number;
  lesson: string | null;
  resolution: string | null;
}

/** Which ladder rung found a recalled lesson. */
export type RecallHow = 'exact' | 'lexical' | 'semantic' | 'rerank';

/**
 * A resolved lesson found for a failure, and how near it is: the one shape of a
 * recalled lesson, returned by the store's recall rungs and by a LessonMemory.
 */
export interface RecalledLesson extends Lesson {
  /** The rung's score: pg_trgm similarity or word similarity (0..1); 1 for an exact fingerprint. */
  similarity: number;
  /** Cosine similarity of the embeddings (-1..1), null when no rung compared embeddings. */
  cosine: number | null;
  /** Which rung of a recall ladder found it. */
  how?: RecallHow;
}

/** The lessons one loop's prompt was given, recorded with the loop's `runs` row. */
export interface RecallsRecord {
  callId: number;
  runId: string | null;
  loop: number;
  lessons: Array<{ lessonId: number; how: string }>;
}

export interface DecisionRecord {
  runId?: string | null;
  /** The `runs` row the question was asked about; when absent, found by run_id and loop. */
  callId?: number | null;
  loop?: number | null;
  kind: 'stuck' | 'rerank';
  question: string;
  answer?: 'yes' | 'no' | null;
  confidence?: number | null;
  threshold?: number | null;
  mode: 'shadow' | 'on';
  latencyMs?: number | null;
  acted?: boolean;
  lessonId?: number | null;
  model?: string | null;
  error?: string | null;
  /** The decider's URL, without credentials (stripped again on write). */
  url?: string | null;
}

/**
 * A recorded stuck answer with a confidence, and the facts of what its run did
 * afterwards, read from the store when asked (the judgement is computed at read
 * time by core/decision/calibration.ts, never stored, so it follows what
 * happened after the run too).
 */
export interface StuckAnswerFacts {
  /** The decider's URL as recorded (no credentials). */
  url: string;
  /** The answering model, revision included (the decider's word). */
  model: string;
  run: string;
  /** The mode it was recorded under: `shadow` (also `on` held to shadow) or `on`. */
  mode: string;
  answer: 'yes' | 'no';
  confidence: number;
  /** A later loop of the run ticked a checkpoint. */
  laterProgress: boolean;
  /** The run was detained (it opened a lesson). */
  detained: boolean;
}

export type TicketState = 'submitted' | 'detained' | 'spec-blocked' | 'done' | 'stopped' | 'new';

export interface TicketSummary {
  ticket: string;
  /** From the database only; `running` is the caller's (it knows the pids). */
  state: TicketState;
  /** continue, retry and fix-review calls. */
  loops: number;
  /** All calls, in US dollars. */
  costUsd: number;
  /** Resolved lessons. */
  fixes: number;
  /** The newest call, event or lesson. */
  lastActiveAt: Date | null;
}

export interface StoreInfo {
  /** `embedded` (PGlite server) or `server` (CHALK_DATABASE_URL). */
  kind: 'embedded' | 'server';
  /** Where it is, never with a password. */
  where: string;
  serverVersion: string;
  extensions: string[];
  schemaVersion: number | null;
  /** Whether lessons.embedding is a pgvector column (semantic recall possible). */
  semanticRecall: boolean;
  rows: Record<'runs' | 'events' | 'lessons' | 'decisions', number>;
}

export interface Store {
  readonly kind: 'embedded' | 'server';
  calls: {
    /** Returns the new row's id. */
    record(call: CallRecord): Promise<number>;
    /** The totals of one run id's rows in a repository. */
    ofRun(repo: string, runId: string): Promise<RunTotals>;
  };
  events: {
    record(repo: string, ticket: string, kind: EventKind): Promise<void>;
  };
  lessons: {
    open(lesson: LessonOpen): Promise<number>;
    resolve(r: LessonResolve): Promise<void>;
    /** Open lessons with this fingerprint in a repository, newest first, optionally other tickets only. */
    openByFingerprint(repo: string, fingerprint: string, exceptTicket?: string): Promise<Lesson[]>;
    /** The exact-fingerprint rung of recall (similarity 1), newest first. */
    exact(q: ExactQuery): Promise<RecalledLesson[]>;
    /** The lexical rung of recall (see LexicalQuery), best first. */
    lexical(q: LexicalQuery): Promise<RecalledLesson[]>;
    /** Whether semantic recall is possible (pgvector) and how many lessons are resolved. */
    semanticGate(): Promise<SemanticGate>;
    /** The semantic rung of recall (see SemanticQuery), nearest first; [] without pgvector. */
    semantic(q: SemanticQuery): Promise<RecalledLesson[]>;
    /** Resolved, not forgotten lessons with no embedding, oldest first. */
    unembedded(limit: number): Promise<UnembeddedLesson[]>;
    /** Writes one lesson's embedding (384 numbers). */
    setEmbedding(id: number, embedding: number[]): Promise<void>;
    /** Records which lessons a loop was given, against its `runs` row. */
    recordRecalls(r: RecallsRecord): Promise<void>;
    /**
     * Lessons, newest first, with their recall counts. With `repo`: that repository's and
     * `general` ones, resolved and not forgotten; without: every lesson.
     */
    list(q: { repo?: string | null }): Promise<LessonListed[]>;
    get(id: number): Promise<LessonListed | null>;
    /** False when there is no such lesson. */
    setScope(id: number, scope: LessonScope): Promise<boolean>;
    /** Marks it forgotten (keeps the first time); false when there is no such lesson. */
    forget(id: number): Promise<boolean>;
  };
  decisions: {
    /** Returns how many rows were recorded. */
    record(rows: DecisionRecord[]): Promise<number>;
    /** Every stuck answer with a confidence, of all history, oldest first, with what its run did next. */
    stuckAnswers(): Promise<StuckAnswerFacts[]>;
  };
  tickets: {
    /** This repository's tickets, most recently active first. */
    summaries(repo: string): Promise<TicketSummary[]>;
  };
  info(): Promise<StoreInfo>;
  close(): Promise<void>;
}
