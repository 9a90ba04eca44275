import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../errors.js';
import { readRepoFile } from '../../fs/repo-file.js';
import type { PromptContext, PromptLesson } from '../../kernel/hooks.js';
import { SHARE_DIR } from '../../paths.js';
import { LOOP_KINDS } from '../../ports/agent.js';
import type { RecallKey } from '../../ports/lesson-memory.js';
import { PROMPT_NAMES, type PromptName } from '../../setup/prompts.js';
import { gitBlobHash } from '../../spec/git-blob.js';

export { type FeedbackInput, retryFeedback } from '../../fingerprint/feedback.js';
export { PROMPT_NAMES, type PromptName };

/**
 * Prompts: the shipped ones in `share/prompts/NAME.md`, each replaceable per
 * repository by `.chalk/prompts/NAME.md`. A prompt is sent as context blocks
 * first (paths, rubric, lessons, findings, failure: data) and the prompt's own
 * text last, after an empty line. `share/prompts/README.md` documents the
 * blocks and the `{{NAME}}` placeholders for people who write overrides.
 */

export type LoopMode = PromptContext['mode'];

/** Where prompts come from: the repository (for overrides) and the shipped directory. */
export interface PromptSource {
  /** The worktree root holding `.chalk/prompts/`; null outside a repository. */
  root: string | null;
  /** Defaults to the package's `share/prompts`. */
  shippedDir?: string;
  /** Every prompt as read when the run started (snapshotPrompts): later reads never touch the tree. */
  snapshot?: ReadonlyMap<PromptName, LoadedPrompt>;
}

export interface LoadedPrompt {
  name: PromptName;
  text: string;
  /** The file read: `.chalk/prompts/NAME.md` (relative) for an override, else the shipped file's path. */
  path: string;
  overridden: boolean;
}

export const specFile = (ticket: string) => `specs/${ticket}.md`;
export const notesFile = (ticket: string) => `specs/${ticket}.notes.md`;

/** The largest prompt override or textbook read from a repository. */
export const PROMPT_MAX_BYTES = 256 * 1024;

export function loadPrompt(name: PromptName, source: PromptSource): LoadedPrompt {
  const taken = source.snapshot?.get(name);
  if (taken) return taken;
  const override = join('.chalk', 'prompts', `${name}.md`);
  // Read as hostile input: no symlink anywhere on the way (`.chalk` included), a regular file, capped.
  const text = source.root
    ? readRepoFile(source.root, override, { maxBytes: PROMPT_MAX_BYTES, what: 'the prompt override' })
    : null;
  if (text !== null) return { name, text, path: override, overridden: true };
  const shipped = join(source.shippedDir ?? join(SHARE_DIR, 'prompts'), `${name}.md`);
  return { name, text: readFileSync(shipped, 'utf8'), path: shipped, overridden: false };
}

// --- placeholders --------------------------------------------------------------

const LOOP_AND_SYSTEM: readonly PromptName[] = ['system', ...LOOP_KINDS];

/** Every placeholder and the prompts that have a value for it. */
export const PLACEHOLDERS = {
  TICKET: [...LOOP_AND_SYSTEM, 'spec-check', 'review'],
  SPEC_FILE: [...LOOP_AND_SYSTEM, 'spec-check', 'review'],
  NOTES_FILE: [...LOOP_AND_SYSTEM, 'review'],
  RUBRIC_COMMAND: [...LOOP_AND_SYSTEM, 'review'],
  BASE_REF: ['review'],
  EPIC: ['breakdown'],
} as const satisfies Record<string, readonly PromptName[]>;
export type Placeholder = keyof typeof PLACEHOLDERS;

const PLACEHOLDER = /\{\{([A-Za-z0-9_]+)\}\}/g;

const available = (name: PromptName) =>
  (Object.keys(PLACEHOLDERS) as Placeholder[]).filter((p) => (PLACEHOLDERS[p] as readonly string[]).includes(name));

/** Throws a UserError naming the file when a prompt uses a placeholder it cannot have. */
export function checkPlaceholders(prompt: LoadedPrompt): void {
  const allowed = available(prompt.name);
  for (const [, key] of prompt.text.matchAll(PLACEHOLDER)) {
    if (allowed.includes(key as Placeholder)) continue;
    const what = key! in PLACEHOLDERS ? 'a placeholder this prompt does not have' : 'an unknown placeholder';
    const offer = allowed.length > 0 ? `use one of ${allowed.map((p) => `{{${p}}}`).join(', ')}` : 'it takes none';
    throw new UserError(`${prompt.path} uses {{${key}}}, ${what}; ${offer}`);
  }
}

/** The prompt's text with its placeholders filled in. */
export function fillPlaceholders(prompt: LoadedPrompt, values: Partial<Record<Placeholder, string>>): string {
  checkPlaceholders(prompt);
  return prompt.text.replace(PLACEHOLDER, (whole, key: Placeholder) => values[key] ?? whole);
}

/** Loads and checks all eight prompts, so a broken override stops a run before any sandbox starts. */
export function checkPrompts(source: PromptSource): void {
  for (const name of PROMPT_NAMES) checkPlaceholders(loadPrompt(name, source));
}

/**
 * Every prompt read and checked once, as the run starts: whatever a loop's
 * commits later do to `.chalk/prompts/`, the run keeps asking with these.
 */
export function snapshotPrompts(source: PromptSource): PromptSource {
  const snapshot = new Map<PromptName, LoadedPrompt>();
  for (const name of PROMPT_NAMES) {
    const p = loadPrompt(name, source);
    checkPlaceholders(p);
    snapshot.set(name, p);
  }
  return { ...source, snapshot };
}

// --- assembly --------------------------------------------------------------------

const block = (tag: string, body: string) => `<${tag}>\n${body.replace(/\n+$/, '')}\n</${tag}>\n`;
const inline = (tag: string, value: string) => `<${tag}>${value}</${tag}>\n`;
const withBody = (context: string, body: string) => `${context}\n${body}`;

/** How much of a lesson's failure the prompt shows. */
export const SEEN_BEFORE_MAX = 240;

/** A lesson as one list item: its failure (whitespace collapsed, cut) and its fix, further lines indented. */
const lessonItem = (l: PromptLesson) => {
  const seen = l.seenBefore.replace(/\s+/g, ' ').trim().slice(0, SEEN_BEFORE_MAX);
  const fix = l.fix
    .trim()
    .split('\n')
    .map((line, i) => (i === 0 ? line : `    ${line}`))
    .join('\n');
  return `- Seen before: ${seen}\n  Fix: ${fix}`;
};

/** A section title as a tag name: lower case, anything else becomes `_`. */
const tagName = (title: string) => title.toLowerCase().replace(/[^a-z0-9_]+/g, '_') || 'section';

/** The section that names the base's failing tests (CHALK_BASELINE=known), in loop and review prompts. */
export const FAILING_BEFORE = 'failing_before';

/** How many of the base's failing tests a prompt names. */
const FAILING_BEFORE_SHOWN = 200;

/** The base's failing tests for a prompt: there before the change, not the agent's to answer for. */
export function failingBefore(tests: readonly string[]): string {
  const shown = tests.slice(0, FAILING_BEFORE_SHOWN).join('\n');
  const more = tests.length > FAILING_BEFORE_SHOWN ? `\n(and ${tests.length - FAILING_BEFORE_SHOWN} more)` : '';
  return `These tests failed on the base branch before this ticket's work (CHALK_BASELINE=known). The rubric is judged to pass when it adds no failing test to them; they are not this change's to fix or to answer for:\n${shown}${more}`;
}

export interface LoopPromptInput {
  ticket: string;
  loop: number;
  mode: LoopMode;
  /** `CHALK_TEST_CMD`. */
  rubricCommand: string;
  repo: string;
  runId: string;
  /** What the loop asks the LessonMemory (the `lesson-memory` tap answers it). */
  recall: RecallKey;
  /** The review findings (fix-review), one `- [severity] file: issue` line each; '' when none. */
  findings: string;
  /** Retry feedback (see retryFeedback); '' when none. */
  failure: string;
}

const loopValues = (ticket: string, rubricCommand: string) => ({
  TICKET: ticket,
  SPEC_FILE: specFile(ticket),
  NOTES_FILE: notesFile(ticket),
  RUBRIC_COMMAND: rubricCommand,
});

/**
 * What the `beforePrompt` hook receives: `prompt` is the mode prompt's text
 * (placeholders filled), `recall` the key the `lesson-memory` tap answers with
 * `lessons`, and `lessons` and `sections` the data to put before it.
 * Taps may change any of them; renderLoopPrompt turns the result into text.
 */
export function loopPromptContext(input: LoopPromptInput, source: PromptSource): PromptContext {
  const prompt = fillPlaceholders(loadPrompt(input.mode, source), loopValues(input.ticket, input.rubricCommand));
  return {
    ticket: input.ticket,
    loop: input.loop,
    mode: input.mode,
    repo: input.repo,
    runId: input.runId,
    recall: input.recall,
    prompt,
    lessons: [],
    sections: [],
  };
}

/** The loop prompt (`io/prompt.md`): context blocks, an empty line, then the instructions. */
export function renderLoopPrompt(
  ctx: PromptContext,
  input: Pick<LoopPromptInput, 'rubricCommand' | 'findings' | 'failure'>,
): string {
  let context =
    inline('spec_file', specFile(ctx.ticket)) +
    inline('notes_file', notesFile(ctx.ticket)) +
    inline('rubric_command', input.rubricCommand);
  if (ctx.lessons.length > 0) context += block('lessons', ctx.lessons.map(lessonItem).join('\n'));
  if (input.findings.trim() !== '') context += block('review_findings', input.findings);
  if (input.failure.trim() !== '') context += block('failure', input.failure);
  for (const s of ctx.sections) context += block(tagName(s.title), s.body);
  return withBody(context, ctx.prompt);
}

/** The system prompt (`io/system.md`): the `system` prompt, then the textbook when there is one. */
export function buildSystemPrompt(
  source: PromptSource,
  opts: { ticket: string; rubricCommand: string; textbook: string | null },
): string {
  const system = fillPlaceholders(loadPrompt('system', source), loopValues(opts.ticket, opts.rubricCommand));
  if (opts.textbook === null) return system;
  const tb = opts.textbook.endsWith('\n') ? opts.textbook : `${opts.textbook}\n`;
  return `${system}\n<engineering_rules>\n${tb}</engineering_rules>\n`;
}

/** The spec check's prompt (`io/spec-check.prompt.md`). */
export function buildSpecCheckPrompt(source: PromptSource, ticket: string): string {
  const text = fillPlaceholders(loadPrompt('spec-check', source), { TICKET: ticket, SPEC_FILE: specFile(ticket) });
  return withBody(inline('spec_file', specFile(ticket)), text);
}

/** The final review's prompt (`io/review.prompt.md`); it diffs against `origin/<base branch>`. */
export function buildReviewPrompt(
  source: PromptSource,
  opts: { ticket: string; baseBranch: string; rubricCommand: string; baselineFailures?: readonly string[] },
): string {
  const baseRef = `origin/${opts.baseBranch}`;
  const text = fillPlaceholders(loadPrompt('review', source), {
    ...loopValues(opts.ticket, opts.rubricCommand),
    BASE_REF: baseRef,
  });
  // CHALK_BASELINE=known: the review is told which failures were there before the change.
  const before = opts.baselineFailures ?? [];
  const known = before.length === 0 ? '' : block(FAILING_BEFORE, failingBefore(before));
  return withBody(inline('spec_file', specFile(opts.ticket)) + inline('base_ref', baseRef) + known, text);
}

/** Office hours' distillation prompt. */
export function buildDistillPrompt(
  source: PromptSource,
  opts: { signature: string; note: string; fix: string },
): string {
  const text = fillPlaceholders(loadPrompt('distill', source), {});
  return withBody(
    block('failure', opts.signature) + block('engineer_note', opts.note) + block('fix_diff', opts.fix),
    text,
  );
}

/** `chalk fleet`'s plan prompt. */
export function buildBreakdownPrompt(source: PromptSource, epic: string): string {
  const text = fillPlaceholders(loadPrompt('breakdown', source), { EPIC: epic });
  return withBody(inline('epic', epic), text);
}

// --- the prompt set ----------------------------------------------------------------

/**
 * The textbook's text (`CHALK_TEXTBOOK`, a path inside the worktree), or null when there is none.
 * An absolute path, `..`, a symlink on the way or anything but a regular file is refused with one line.
 */
export function readTextbook(root: string | null, path: string): string | null {
  if (path === '' || !root) return null;
  return readRepoFile(root, path, { maxBytes: PROMPT_MAX_BYTES, what: 'CHALK_TEXTBOOK' });
}

/**
 * The prompt-set hash recorded with every call (`runs.prompts`): the first 8
 * hex digits of the git blob hash of all eight effective prompts (overrides
 * included), the textbook and the line `fp-feedback=<CHALK_FP_FEEDBACK>`.
 */
export function promptSetHash(source: PromptSource, opts: { textbook: string | null; fpFeedback: boolean }): string {
  const prompts = PROMPT_NAMES.map((name) => loadPrompt(name, source).text).join('');
  return gitBlobHash(`${prompts}${opts.textbook ?? ''}fp-feedback=${opts.fpFeedback}\n`).slice(0, 8);
}

/** The next loop's mode: review findings once every checkpoint is ticked, a retry after a loop without progress. */
export function loopMode(open: number, pendingFeedback: string): LoopMode {
  if (open === 0) return 'fix-review';
  return pendingFeedback !== '' ? 'retry' : 'continue';
}
