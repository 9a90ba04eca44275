import type { DetentionFacts, RunPaths } from '../../layout.js';
import type { CallOptions } from '../call.js';
import { type Artifact, type DecisionTool, ListArtifact, ReadableToolError } from '../thinker/artifacts.js';
import { FormatterRegistry } from '../thinker/digest.js';
import { type Asker, DecisionThinker, type ThinkerAnswer } from '../thinker/thinker.js';
import { changedFiles, failingTests, readDetention, readRubricLog, rubricStatements } from './run-reader.js';

/** The detained run a `chalk why` thinker starts from. */
export interface RunArtifact extends Artifact {
  type: 'run';
  ticket: string;
  paths: RunPaths;
  repoRoot: string | null;
  facts: DetentionFacts | null;
}

export type StatementSource = 'rubric' | 'test' | 'change' | 'lesson';

/** One statement about the run: what the answer is made of. */
export interface Statement extends Artifact {
  type: 'statement';
  source: StatementSource;
  text: string;
}

export const WHY_OBJECTIVE =
  'Find the statements that explain why this run stopped in detention: the root cause of the failure, not its echoes. Read the rubric log, the failing tests, the files changed since the last green loop and the open lesson as needed, then finish with the statements that explain the stop.';

const statements = (source: StatementSource, texts: string[]) =>
  new ListArtifact<Statement>(
    'statement',
    texts.map((text) => ({ type: 'statement', source, text })),
  );

const tool = (
  name: string,
  description: string,
  run: (r: RunArtifact) => Promise<ListArtifact<Statement>>,
): DecisionTool<RunArtifact, ListArtifact<Statement>> => ({ name, description, takes: 'run', run });

/** Splits the last rubric log into statements: the key tool, so an answer can always be assembled. */
export const splitRubricLog = tool('split_rubric_log', 'Split the last rubric log into its statements', async (r) => {
  const log = await readRubricLog(r.paths);
  if (log === null) throw new ReadableToolError('this run has no rubric log');
  const s = rubricStatements(log);
  if (s.length === 0) throw new ReadableToolError('the rubric log is empty');
  return statements('rubric', s);
});

export const listFailingTests = tool('list_failing_tests', 'List the tests the last rubric run failed', async (r) => {
  const ids = await failingTests(r.paths);
  if (ids.length === 0) throw new ReadableToolError('no failing test could be read from the report or the rubric log');
  return statements(
    'test',
    ids.map((id) => `test ${id} failed`),
  );
});

export const listChangedFiles = tool(
  'list_changed_files',
  'List the files changed since the last green loop, with line counts',
  async (r) => {
    if (!r.repoRoot || !r.facts) throw new ReadableToolError('the run left no detention facts to compare with');
    const files = await changedFiles(r.repoRoot, r.facts);
    if (typeof files === 'string') throw new ReadableToolError(files);
    if (files.length === 0) throw new ReadableToolError('no file changed since the last green loop');
    return statements(
      'change',
      files.map((f) => `changed since the last green loop: ${f}`),
    );
  },
);

export const readOpenLesson = tool('read_open_lesson', 'Read the open lesson this detention recorded', async (r) => {
  const lesson = r.facts?.lesson?.trim();
  if (!lesson) throw new ReadableToolError('this detention recorded no open lesson');
  const parts = lesson
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '')
    .slice(0, 4);
  return statements('lesson', parts);
});

export function whyFormatters(): FormatterRegistry {
  return new FormatterRegistry()
    .register<Statement>('statement', (s) => `${s.source}: ${s.text}`)
    .register<RunArtifact>(
      'run',
      (r) => `the detained run of ${r.ticket}${r.facts?.reason ? `, stopped because: ${r.facts.reason}` : ''}`,
    );
}

export interface ExplainOptions {
  ticket: string;
  paths: RunPaths;
  repoRoot: string | null;
  asker: Asker;
  threshold?: number;
  maxTurns?: number;
  call?: CallOptions;
}

export interface Explanation {
  facts: DetentionFacts | null;
  result: ThinkerAnswer<Statement>;
}

/** Explains a detention with a decision thinker over the run's artifacts; no tool calls a model. */
export async function explainDetention(opts: ExplainOptions): Promise<Explanation> {
  const facts = await readDetention(opts.paths);
  const thinker = new DecisionThinker<RunArtifact, Statement>({
    asker: opts.asker,
    objective: WHY_OBJECTIVE,
    outputType: 'statement',
    keyTool: splitRubricLog,
    palette: [listFailingTests, listChangedFiles, readOpenLesson],
    formatters: whyFormatters(),
    ...(opts.threshold !== undefined ? { threshold: opts.threshold } : {}),
    ...(opts.maxTurns !== undefined ? { maxTurns: opts.maxTurns } : {}),
    call: { ...(opts.call ?? {}), tags: { kind: 'why', ticket: opts.ticket, ...(opts.call?.tags ?? {}) } },
  });
  const input: RunArtifact = { type: 'run', ticket: opts.ticket, paths: opts.paths, repoRoot: opts.repoRoot, facts };
  return { facts, result: await thinker.run(input) };
}
