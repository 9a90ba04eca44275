import type { Answer, ChoiceAnswer } from '../../protocol/codec.js';
import { choice, type DecisionRequest, decisionRequest, noul, type Question } from '../../protocol/questions.js';
import type { CallOptions } from '../call.js';
import type { Decision } from '../reading.js';
import {
  type Artifact,
  type DecisionTool,
  isArtifact,
  ListArtifact,
  type ReadableToolError,
  readableIn,
} from './artifacts.js';
import { digestLine, FormatterRegistry } from './digest.js';
import { World } from './world.js';

export const DEFAULT_MAX_TURNS = 32;
export const DEFAULT_SELECTION_THRESHOLD = 0.5;
export const FINISH = 'finish';

/** What a thinker asks through: a DecisionRuntime's `decide`, so admission and the record apply to every turn. */
export interface Asker {
  decide(request: DecisionRequest, opts?: CallOptions): Promise<Decision>;
}

/**
 * One turn of a run: the move and every distribution the model gave for it.
 * `next` and `argument` are null when the move was forced (one legal option,
 * which a choice cannot ask) or not asked (the selection-only last turn).
 */
export interface DecisionTurn {
  turn: number;
  next: ChoiceAnswer | null;
  tool: string;
  argument: ChoiceAnswer | null;
  artifact: string | null;
  result: string | null;
  failure: string | null;
  /** P(belongs in the answer) per output candidate, in world order; null when the decider left it unknown. */
  selection: Record<string, number | null>;
}

export interface ThinkerOptions<O extends Artifact> {
  asker: Asker;
  objective: string;
  /** The answer's artifact type. */
  outputType: string;
  /** The tool whose output is a list of the answer type, so an answer can always be assembled. */
  keyTool: DecisionTool<Artifact, ListArtifact<O>>;
  palette: ReadonlyArray<DecisionTool<Artifact, Artifact>>;
  formatters?: FormatterRegistry;
  maxTurns?: number;
  threshold?: number;
  /** Options for every decision (retries, deadline, tags). */
  call?: CallOptions;
  /** Told after every turn (progress, the record so far). */
  onTurn?: (turn: DecisionTurn, turns: readonly DecisionTurn[]) => void;
  /** Told of a readable tool failure: correctable as the tool's verdict, uncorrectable with its stack. */
  onToolFailure?: (tool: string, error: ReadableToolError) => void;
}

export interface ThinkerAnswer<O extends Artifact> {
  /** The outputs selected at or above the threshold, in world order, as a list whose instruction is the objective. */
  answer: ListArtifact<O>;
  selected: Array<{ ref: string; artifact: O; p: number }>;
  turns: readonly DecisionTurn[];
  /** Every artifact's digest line at the end of the run, in world order. */
  digests: string[];
}

export class ThinkerError extends Error {
  override name = 'ThinkerError';
}

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

/**
 * An agent whose every move is chosen by a decision model. Each turn is one
 * request carrying every question at once: `next` (which tool, or finish once
 * an output exists), `<tool>_input` per offered tool, and `select_<ref>` per
 * output candidate. A (tool, artifact) pair runs at most once, so a run ends;
 * the turn budget is the belt.
 */
export class DecisionThinker<I extends Artifact, O extends Artifact> {
  private readonly palette: ReadonlyArray<DecisionTool<Artifact, Artifact>>;
  private readonly formatters: FormatterRegistry;
  readonly maxTurns: number;
  readonly threshold: number;
  private record: DecisionTurn[] = [];

  constructor(private readonly opts: ThinkerOptions<O>) {
    if (!opts.asker || !opts.keyTool || !opts.palette || !opts.outputType) {
      throw new Error('a decision thinker needs an asker, an output type, a key tool and a palette');
    }
    if (!opts.objective || opts.objective.trim() === '') throw new Error('a decision thinker needs an objective');
    const maxTurns = opts.maxTurns ?? DEFAULT_MAX_TURNS;
    if (!Number.isInteger(maxTurns) || maxTurns < 1)
      throw new Error(`the turn budget must be at least 1 (got ${maxTurns})`);
    const threshold = opts.threshold ?? DEFAULT_SELECTION_THRESHOLD;
    if (!(threshold >= 0 && threshold <= 1))
      throw new Error(`the selection threshold is a probability (got ${threshold})`);
    this.maxTurns = maxTurns;
    this.threshold = threshold;
    const names = new Set<string>();
    const palette = [...opts.palette];
    if (!palette.includes(opts.keyTool)) palette.push(opts.keyTool);
    for (const t of palette) {
      if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(t.name) || t.name === FINISH) {
        throw new Error(`a tool name is a word of letters, digits and _ and not '${FINISH}' (got '${t.name}')`);
      }
      if (names.has(t.name)) throw new Error(`two tools are named '${t.name}'`);
      names.add(t.name);
    }
    this.palette = palette;
    this.formatters = opts.formatters ?? new FormatterRegistry();
  }

  /** Tool names in the order they are offered (the key tool last unless the palette named it). */
  paletteNames(): string[] {
    return this.palette.map((t) => t.name);
  }

  /** The run's record: every turn, complete once `run` returns. */
  turns(): readonly DecisionTurn[] {
    return this.record;
  }

  async run(input: I, ctx: { signal?: AbortSignal } = {}): Promise<ThinkerAnswer<O>> {
    this.record = [];
    const world = new World();
    world.adopt(input);
    const done: string[] = [];
    for (let t = 1; t <= this.maxTurns; t++) {
      if (ctx.signal?.aborted) throw new ThinkerError('the run was cancelled');
      const moves = this.palette
        .map((tool) => ({ tool, candidates: world.candidates(tool) }))
        .filter((m) => m.candidates.length > 0);
      const outputs = world.outputs(this.opts.outputType, input);
      if (moves.length === 0 && outputs.length === 0) return this.finish(t, null, {}, world, outputs);
      const questions: Record<string, Question> = {};
      const nextOptions: Record<string, string> = {};
      for (const m of moves) {
        nextOptions[m.tool.name] = `${m.tool.description} (${plural(m.candidates.length, 'artifact')} it could take)`;
      }
      if (outputs.length > 0) {
        nextOptions[FINISH] = 'Finish: the artifacts already produced answer the objective, nothing more needs to run';
      }
      const nextKeys = Object.keys(nextOptions);
      if (nextKeys.length >= 2) {
        questions.next = choice(
          'Which tool should run next toward the objective, or is it time to finish? A tool that already ran on an artifact is not offered for it again.',
          nextOptions,
        );
      }
      for (const m of moves) {
        if (m.candidates.length < 2) continue;
        const options = Object.fromEntries(
          m.candidates.map((ref) => [ref, digestLine(ref, world.get(ref) as Artifact, this.formatters)]),
        );
        questions[`${m.tool.name}_input`] = choice(
          `If ${m.tool.name} runs next, which artifact should it take as its input?`,
          options,
        );
      }
      for (const ref of outputs)
        questions[`select_${ref}`] = noul(`Does ${ref} belong in the answer to the objective?`);
      let decision: Decision | null = null;
      if (Object.keys(questions).length > 0) decision = await this.ask(t, world, done, questions);
      const selection = this.selection(decision, outputs);
      const nextAnswer = decision && questions.next ? this.winner(decision, 'next', t) : null;
      const chosen = nextAnswer ? nextAnswer.choice : (nextKeys[0] as string);
      if (chosen === FINISH) return this.finish(t, nextAnswer, selection, world, outputs);
      const move = moves.find((m) => m.tool.name === chosen);
      if (!move) throw new ThinkerError(`turn ${t}: '${chosen}' is not a tool of this thinker`);
      const argument = move.candidates.length >= 2 && decision ? this.winner(decision, `${chosen}_input`, t) : null;
      const ref = argument ? argument.choice : (move.candidates[0] as string);
      const artifact = world.get(ref) as Artifact;
      world.markApplied(move.tool.name, ref);
      let result: string | null = null;
      let failure: string | null = null;
      try {
        const produced: unknown = await move.tool.run(artifact, ctx);
        if (!isArtifact(produced)) {
          throw new ThinkerError(
            `${move.tool.name} produced ${typeof produced} in place of the artifact its type declares`,
          );
        }
        result = world.adopt(produced);
        done.push(`${move.tool.name} on ${ref} produced ${result}`);
      } catch (err) {
        const readable = readableIn(err);
        if (!readable) throw err;
        failure = readable.message;
        done.push(`${move.tool.name} on ${ref} failed: ${readable.message}`);
        this.opts.onToolFailure?.(move.tool.name, readable);
      }
      this.push({
        turn: t,
        next: nextAnswer,
        tool: move.tool.name,
        argument,
        artifact: ref,
        result,
        failure,
        selection,
      });
    }
    // The budget is spent: ask the selection alone, then finish with what the model selects.
    const outputs = world.outputs(this.opts.outputType, input);
    if (outputs.length === 0) return this.finish(this.maxTurns + 1, null, {}, world, outputs);
    const questions = Object.fromEntries(
      outputs.map((ref) => [`select_${ref}`, noul(`Does ${ref} belong in the answer to the objective?`)]),
    );
    const decision = await this.ask(this.maxTurns + 1, world, done, questions);
    return this.finish(this.maxTurns + 1, null, this.selection(decision, outputs), world, outputs);
  }

  /** The state the model reads: the objective, one digest line per artifact, the moves so far. */
  private state(world: World, done: string[]): string {
    return JSON.stringify({
      objective: this.opts.objective,
      artifacts: world.entries().map((e) => digestLine(e.ref, e.artifact, this.formatters)),
      done: done.length > 0 ? done : ['nothing yet'],
    });
  }

  private async ask(t: number, world: World, done: string[], questions: Record<string, Question>): Promise<Decision> {
    const request = decisionRequest(this.state(world, done), questions);
    const decision = await this.opts.asker.decide(request, {
      ...(this.opts.call ?? {}),
      tags: { ...(this.opts.call?.tags ?? {}), turn: String(t) },
    });
    if (!decision.ok) {
      throw new ThinkerError(`turn ${t}: the decision failed: ${decision.failure?.describe() ?? 'no answer'}`, {
        cause: decision.failure,
      });
    }
    return decision;
  }

  private winner(decision: Decision, id: string, t: number): ChoiceAnswer {
    const a = decision.raw(id) as Answer | undefined;
    if (a?.type !== 'choice') throw new ThinkerError(`turn ${t}: the decider left '${id}' unanswered`);
    return a;
  }

  private selection(decision: Decision | null, outputs: string[]): Record<string, number | null> {
    const s: Record<string, number | null> = {};
    for (const ref of outputs) {
      const a = decision?.raw(`select_${ref}`);
      s[ref] = a?.type === 'noul' ? a.noul : null;
    }
    return Object.freeze(s);
  }

  private push(turn: DecisionTurn): void {
    this.record.push(Object.freeze(turn));
    this.opts.onTurn?.(turn, this.record);
  }

  private finish(
    t: number,
    next: ChoiceAnswer | null,
    selection: Record<string, number | null>,
    world: World,
    outputs: string[],
  ): ThinkerAnswer<O> {
    this.push({ turn: t, next, tool: FINISH, argument: null, artifact: null, result: null, failure: null, selection });
    const selected = outputs
      .map((ref) => ({ ref, artifact: world.get(ref) as O, p: selection[ref] ?? null }))
      .filter((s): s is { ref: string; artifact: O; p: number } => s.p !== null && s.p >= this.threshold);
    return {
      answer: new ListArtifact<O>(
        this.opts.outputType,
        selected.map((s) => s.artifact),
        this.opts.objective,
      ),
      selected,
      turns: this.record,
      digests: world.entries().map((e) => digestLine(e.ref, e.artifact, this.formatters)),
    };
  }
}
