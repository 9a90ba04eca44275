import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../core/decision/record.js';
import { DecisionRuntime } from '../../core/decision/runtime.js';
import {
  type Artifact,
  type DecisionTool,
  ListArtifact,
  ReadableToolError,
} from '../../core/decision/thinker/artifacts.js';
import { DIGEST_CHARS, digestLine, FormatterRegistry } from '../../core/decision/thinker/digest.js';
import {
  DEFAULT_MAX_TURNS,
  DEFAULT_SELECTION_THRESHOLD,
  DecisionThinker,
  type DecisionTurn,
} from '../../core/decision/thinker/thinker.js';
import type { DecisionClient } from '../../core/ports/decider.js';
import { decodeResponse, encodeRequest } from '../../core/protocol/codec.js';
import { WireRequest } from '../fakes/decider-server.js';

interface Note extends Artifact {
  type: 'note';
  text: string;
}
interface Verdict extends Artifact {
  type: 'verdict';
  about: string;
  due: boolean;
}
const note = (text: string): Note => ({ type: 'note', text });

const splitNote: DecisionTool<Note, ListArtifact<Note>> = {
  name: 'split_note',
  description: 'Split a note into its parts at each ;',
  takes: 'note',
  run: (n) => {
    if (!n.text.includes(';')) throw new ReadableToolError('there is nothing to split in this note');
    return new ListArtifact(
      'note',
      n.text.split(';').map((s) => note(s.trim())),
    );
  },
};
const judgeNote: DecisionTool<Note, ListArtifact<Verdict>> = {
  name: 'judge_note',
  description: 'Judge whether a note says something is due',
  takes: 'note',
  run: (n) => new ListArtifact('verdict', [{ type: 'verdict', about: n.text, due: /\bis due\b/.test(n.text) }]),
};
const pickyJudge: DecisionTool<Note, ListArtifact<Verdict>> = {
  name: 'picky_judge',
  description: 'Judge a note of at most three characters',
  takes: 'note',
  run: (n) => {
    if (n.text.length > 3) throw new ReadableToolError('picky_judge only reads notes of three characters');
    return new ListArtifact('verdict', []);
  },
};
const brokenTool: DecisionTool<Note, Note> = {
  name: 'broken',
  description: 'A tool with a bug',
  takes: 'note',
  run: () => {
    throw new TypeError('cannot read properties of undefined');
  },
};

const formatters = () =>
  new FormatterRegistry()
    .register<Note>('note', (n) => n.text)
    .register<Verdict>('verdict', (v) => `${v.about}: ${v.due ? 'due' : 'not due'}`);

interface State {
  objective: string;
  artifacts: string[];
  done: string[];
}
type Policy = (w: WireRequest, state: State) => Record<string, unknown>;

/** The suite's fake decision model: checks each request against the protocol, answers from a policy. */
function fakeModel(policy: Policy) {
  const seen: WireRequest[] = [];
  const client: DecisionClient = {
    async decide(req) {
      const wire = WireRequest.parse(JSON.parse(encodeRequest(req)));
      seen.push(wire);
      const answers = policy(wire, JSON.parse(wire.state) as State);
      return { ok: true, response: decodeResponse(JSON.stringify({ model: 'fake-thinker-model', answers }), req) };
    },
  };
  const rt = new DecisionRuntime(
    {
      id: 'fake',
      url: 'http://127.0.0.1:1',
      maxContextTokens: 100_000,
      limit: { kind: 'concurrency', maxConcurrent: 1 },
    },
    client,
  );
  const records: DecisionRecord[] = [];
  rt.observe({ write: (r) => void records.push(r) });
  return { rt, seen, records };
}

const pick = (choice: string, options: string[]) => ({
  type: 'choice',
  choice,
  confidence: 0.7,
  probabilities: Object.fromEntries(options.map((o) => [o, o === choice ? 0.8 : 0.2 / (options.length - 1)])),
});

/** Split what has ';', judge the parts, finish when nothing is left; select verdicts that are due. */
const splitThenJudge: Policy = (w, state) => {
  const answers: Record<string, unknown> = {};
  const digestOf = (ref: string) => state.artifacts.find((l) => l.startsWith(`${ref} `)) ?? '';
  const candidates = (tool: string): string[] => {
    const q = w.questions[`${tool}_input`];
    if (q?.type === 'choice') return Object.keys(q.criteria);
    // One candidate: the note this tool has not run on yet.
    return state.artifacts
      .map((l) => l.split(' ')[0] as string)
      .filter((r) => r.startsWith('note') && !state.done.some((d) => d.startsWith(`${tool} on ${r} `)));
  };
  const next = w.questions.next;
  const offered = next?.type === 'choice' ? Object.keys(next.criteria) : [];
  let chosen = 'finish';
  let arg: string | undefined;
  const splittable = offered.includes('split_note')
    ? candidates('split_note').filter((r) => digestOf(r).includes(';'))
    : [];
  const judgeable = offered.includes('judge_note')
    ? candidates('judge_note').filter((r) => !digestOf(r).includes(';'))
    : [];
  if (splittable.length > 0) [chosen, arg] = ['split_note', splittable[0]];
  else if (judgeable.length > 0) [chosen, arg] = ['judge_note', judgeable[0]];
  else if (!offered.includes('finish')) chosen = offered[0] as string;
  if (next) answers.next = pick(chosen, offered);
  const input = w.questions[`${chosen}_input`];
  if (input?.type === 'choice' && arg) answers[`${chosen}_input`] = pick(arg, Object.keys(input.criteria));
  for (const id of Object.keys(w.questions).filter((q) => q.startsWith('select_'))) {
    answers[id] = { type: 'noul', noul: / is due: due/.test(digestOf(id.slice(7))) ? 0.9 : 0.1 };
  }
  return answers;
};

const OBJECTIVE = 'Find the verdicts about what is due.';
const thinker = (rt: DecisionRuntime, extra: Partial<ConstructorParameters<typeof DecisionThinker>[0]> = {}) =>
  new DecisionThinker<Note, Verdict>({
    asker: rt,
    objective: OBJECTIVE,
    outputType: 'verdict',
    keyTool: judgeNote,
    palette: [splitNote],
    formatters: formatters(),
    ...extra,
  } as ConstructorParameters<typeof DecisionThinker<Note, Verdict>>[0]);

const tools = (turns: readonly DecisionTurn[]) => turns.map((t) => t.tool);
const optionsOf = (w: WireRequest | undefined, id: string) => {
  const q = w?.questions[id];
  return q?.type === 'choice' ? Object.keys(q.criteria) : undefined;
};

describe('DecisionThinker', () => {
  it('splits then judges, offering only legal moves, and answers what it selected', async () => {
    const { rt, seen, records } = fakeModel(splitThenJudge);
    const turnsSeen: number[] = [];
    const t = thinker(rt, { onTurn: (turn: DecisionTurn) => turnsSeen.push(turn.turn) });
    const r = await t.run(note('alpha is due; beta can wait'));
    expect(tools(r.turns)).toEqual(['split_note', 'judge_note', 'judge_note', 'finish']);
    expect(records).toHaveLength(4);
    expect(seen).toHaveLength(4);
    // Turn 1: two tools, no finish (nothing of the output type yet), no selection.
    expect(optionsOf(seen[0], 'next')).toEqual(['split_note', 'judge_note']);
    expect(Object.keys(seen[0]?.questions ?? {}).some((q) => q.startsWith('select_'))).toBe(false);
    // Turn 2: judge may take the whole note and both parts, in world order; split only the parts.
    expect(optionsOf(seen[1], 'judge_note_input')).toEqual(['note1', 'note3', 'note4']);
    expect(optionsOf(seen[1], 'split_note_input')).toEqual(['note3', 'note4']);
    const judgeOptions = seen[1]?.questions.judge_note_input;
    expect(judgeOptions?.type === 'choice' && judgeOptions.criteria.note3).toBe('note3 (note): alpha is due');
    // The last turn offers finish and puts both verdicts to the model; one reaches 0.5.
    expect(optionsOf(seen[3], 'next')).toContain('finish');
    expect(Object.keys(seen[3]?.questions ?? {}).filter((q) => q.startsWith('select_'))).toEqual([
      'select_verdict6',
      'select_verdict8',
    ]);
    expect(r.selected.map((s) => [s.ref, s.p])).toEqual([['verdict6', 0.9]]);
    expect(r.answer.items).toEqual([{ type: 'verdict', about: 'alpha is due', due: true }]);
    expect(r.answer.itemType).toBe('verdict');
    expect(r.answer.instruction).toBe(OBJECTIVE);
    // The record: distributions of every turn, the argument equal to the artifact it ran on.
    expect(Object.keys(r.turns[0]?.next?.probabilities ?? {})).toEqual(['split_note', 'judge_note']);
    expect(r.turns[0]?.argument).toBeNull(); // one candidate: a forced argument, nothing asked
    expect(r.turns[1]?.argument?.choice).toBe(r.turns[1]?.artifact);
    expect(r.turns[1]?.result).toBe('list5');
    expect(r.turns[3]?.selection).toEqual({ verdict6: 0.9, verdict8: 0.1 });
    expect(turnsSeen).toEqual([1, 2, 3, 4]);
    expect(t.turns()).toEqual(r.turns);
    const first = JSON.parse(seen[0]?.state ?? '{}') as State;
    expect(first).toEqual({
      objective: OBJECTIVE,
      artifacts: ['note1 (note): alpha is due; beta can wait'],
      done: ['nothing yet'],
    });
    expect((JSON.parse(seen[1]?.state ?? '{}') as State).done).toEqual(['split_note on note1 produced list2']);
    expect(records.map((x) => x.tags.turn)).toEqual(['1', '2', '3', '4']);
  });

  it('never runs a (tool, artifact) pair twice', async () => {
    const { rt, seen } = fakeModel(splitThenJudge);
    const r = await thinker(rt).run(note('alpha is due; beta can wait; gamma is due'));
    const pairs = r.turns.filter((t) => t.artifact).map((t) => `${t.tool}:${t.artifact}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    for (const [i, w] of seen.entries()) {
      for (const t of r.turns.slice(0, i)) {
        if (!t.artifact) continue;
        expect(optionsOf(w, `${t.tool}_input`) ?? []).not.toContain(t.artifact);
      }
    }
    expect(r.answer.items.map((v) => v.about)).toEqual(['alpha is due', 'gamma is due']);
  });

  it('never answers with the input, even when it is of the output type', async () => {
    const { rt, seen } = fakeModel((w) => {
      const answers: Record<string, unknown> = {};
      if (w.questions.next) answers.next = pick('finish', optionsOf(w, 'next') ?? []);
      for (const id of Object.keys(w.questions).filter((q) => q.startsWith('select_'))) answers[id] = { noul: 0.95 };
      return answers;
    });
    const t = new DecisionThinker<Note, Note>({
      asker: rt,
      objective: 'The parts of the note.',
      outputType: 'note',
      keyTool: splitNote,
      palette: [],
    });
    const r = await t.run(note('alpha; beta'));
    // Turn 1 asks nothing (one forced move; the input is no candidate answer, so nothing is selectable).
    // Turn 2 offers finish and selects among the parts only, never the input.
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0]?.questions ?? {})).toEqual(['next', 'split_note_input', 'select_note3', 'select_note4']);
    expect(optionsOf(seen[0], 'next')).toEqual(['split_note', 'finish']);
    expect(r.turns.map((x) => x.tool)).toEqual(['split_note', 'finish']);
    expect(r.turns[0]?.selection).toEqual({});
    expect(r.answer.items.map((n) => n.text)).toEqual(['alpha', 'beta']);
  });

  it('feeds a readable tool failure into the next state and never offers that pair again', async () => {
    const failures: string[] = [];
    const { rt, seen } = fakeModel((w) => {
      const offered = optionsOf(w, 'next') ?? [];
      const chosen = offered.includes('picky_judge')
        ? 'picky_judge'
        : offered.includes('judge_note')
          ? 'judge_note'
          : 'finish';
      const answers: Record<string, unknown> = { next: pick(chosen, offered) };
      for (const id of Object.keys(w.questions).filter((q) => q.startsWith('select_'))) answers[id] = { noul: 0.8 };
      return answers;
    });
    const t = thinker(rt, {
      keyTool: judgeNote,
      palette: [pickyJudge],
      onToolFailure: (tool: string) => failures.push(tool),
    });
    const r = await t.run(note('alpha is due'));
    expect(tools(r.turns)).toEqual(['picky_judge', 'judge_note', 'finish']);
    expect(r.turns[0]?.failure).toBe('picky_judge only reads notes of three characters');
    expect(r.turns[0]?.result).toBeNull();
    expect(failures).toEqual(['picky_judge']);
    const second = JSON.parse(seen[1]?.state ?? '{}') as State;
    expect(second.done[0]).toBe('picky_judge on note1 failed: picky_judge only reads notes of three characters');
    expect(optionsOf(seen[0], 'next')).toEqual(['picky_judge', 'judge_note']);
    // Turn 2 had one legal move left (judge_note on note1), forced without a question; turn 3 selects only.
    expect(seen).toHaveLength(2);
    expect(seen[1]?.questions.next).toBeUndefined();
    expect(Object.keys(seen[1]?.questions ?? {})).toEqual(['select_verdict3']);
  });

  it('fails the run on an unreadable tool failure, with its message', async () => {
    const { rt } = fakeModel((w) => ({ next: pick('broken', optionsOf(w, 'next') ?? []) }));
    const t = thinker(rt, { palette: [brokenTool] });
    await expect(t.run(note('alpha is due'))).rejects.toThrow('cannot read properties of undefined');
    expect(t.turns()).toEqual([]);
  });

  it('ends on the turn budget with a selection-only question', async () => {
    const { rt, seen } = fakeModel(splitThenJudge);
    const r = await thinker(rt, { maxTurns: 2 }).run(note('alpha is due; beta can wait'));
    expect(tools(r.turns)).toEqual(['split_note', 'judge_note', 'finish']);
    const last = r.turns[2];
    expect(last?.turn).toBe(3);
    expect(last?.next).toBeNull();
    expect(last?.selection).toEqual({ verdict6: 0.9 });
    expect(Object.keys(seen[2]?.questions ?? {})).toEqual(['select_verdict6']);
    expect(r.answer.items.map((v) => v.about)).toEqual(['alpha is due']);
  });

  it('answers an empty list without asking when nothing of the output type was produced', async () => {
    const { rt, records } = fakeModel(() => ({}));
    const t = thinker(rt, { keyTool: pickyJudge, palette: [] });
    const r = await t.run(note('alpha is due'));
    expect(tools(r.turns)).toEqual(['picky_judge', 'finish']);
    expect(r.turns[1]?.selection).toEqual({});
    expect(r.answer.items).toEqual([]);
    expect(records).toHaveLength(0); // one forced move, then nothing to ask
  });

  it('fails the run when a decision fails, naming the retry budget', async () => {
    const client: DecisionClient = {
      decide: async () => ({
        ok: false,
        failure: new (await import('../../core/protocol/failure.js')).DecisionFailure('server', 'HTTP 503'),
      }),
    };
    const rt = new DecisionRuntime(
      {
        id: 'x',
        url: 'http://127.0.0.1:1',
        maxContextTokens: 100_000,
        limit: { kind: 'concurrency', maxConcurrent: 1 },
      },
      client,
    );
    const t = thinker(rt, { call: { retries: 0 } });
    await expect(t.run(note('alpha is due; beta'))).rejects.toThrow(/retry budget \(0\)/);
  });

  it('folds the key tool into the palette once and checks its arguments', () => {
    const { rt } = fakeModel(() => ({}));
    expect(thinker(rt).paletteNames()).toEqual(['split_note', 'judge_note']);
    expect(thinker(rt, { palette: [judgeNote, splitNote] }).paletteNames()).toEqual(['judge_note', 'split_note']);
    expect(thinker(rt, { palette: [] }).paletteNames()).toEqual(['judge_note']);
    expect(() => thinker(rt, { objective: ' ' })).toThrow(/objective/);
    expect(() => thinker(rt, { maxTurns: 0 })).toThrow(/turn budget/);
    expect(() => thinker(rt, { threshold: 1.5 })).toThrow(/probability/);
    expect(() => thinker(rt, { keyTool: undefined })).toThrow(/key tool/);
    expect(DEFAULT_MAX_TURNS).toBe(32);
    expect(DEFAULT_SELECTION_THRESHOLD).toBe(0.5);
  });
});

describe('digests', () => {
  const f = formatters();
  it('cuts words at 160 characters with an ellipsis, the prefix not counted', () => {
    const line = digestLine('note1', note('w'.repeat(300)), f);
    expect(line).toBe(`note1 (note): ${'w'.repeat(DIGEST_CHARS)}...`);
    expect(line.length).toBe('note1 (note): '.length + 160 + 3);
  });
  it('reads a list as its count and item type, a link as its title, a formatter on one line', () => {
    expect(digestLine('list2', new ListArtifact('note', [note('a')]), f)).toBe('list2 (list): a list of 1 note');
    expect(digestLine('link3', { type: 'link', title: 'The price list' } as Artifact, f)).toBe(
      'link3 (link): The price list',
    );
    expect(digestLine('note4', note('first line\n\n  second\tline '), f)).toBe('note4 (note): first line second line');
    expect(digestLine('thing5', { type: 'thing', n: 1 } as Artifact, f)).toBe('thing5 (thing): {"type":"thing","n":1}');
  });
});
