import { lessonAnswer } from '../../agent/schemas.js';
import { oneLine } from '../../text/model.js';

/**
 * Office hours' pure rules: how what the person changed is described to the
 * distiller, what the distiller's answer means, and what the person is told.
 * The I/O is core/run/office-hours/office-hours.ts.
 */

/** Lines of the fix's diff the distiller is shown. */
export const FIX_DIFF_LINES = 300;

/** Commits searched back from HEAD for the detention commit. */
export const DETENTION_SEARCH_DEPTH = 1000;

/** The longest lesson kept (characters); a longer one is cut. */
export const LESSON_MAX_CHARS = 1000;

/** The subject every detention commit starts with (core/run/base/detention-reasons.ts detentionCommitMessage). */
const DETENTION_SUBJECT = 'detention(';

/** The newest commit whose subject starts `detention(` and how many commits came after it, or null. */
export function findDetentionCommit(newestFirst: readonly { sha: string; subject: string }[]): {
  sha: string;
  since: number;
} | null {
  const i = newestFirst.findIndex((c) => c.subject.startsWith(DETENTION_SUBJECT));
  const found = newestFirst[i];
  return i < 0 || !found ? null : { sha: found.sha, since: i };
}

/**
 * The grading files office hours puts back as the run had them: those the parked attempt changed
 * (what the guard refuses, and the spec, ticks included), less those the person changed since.
 */
export function gradingToRestore(o: { attempt: readonly string[]; person: readonly string[] }): {
  restore: string[];
  kept: string[];
} {
  const mine = new Set(o.person);
  const attempt = [...new Set(o.attempt)];
  return { restore: attempt.filter((p) => !mine.has(p)), kept: attempt.filter((p) => mine.has(p)) };
}

/** What changed in the repository since the detention, as host git saw it. */
export type FixFacts =
  | { kind: 'not-found' }
  | { kind: 'unchanged' }
  | { kind: 'changed'; commits: number; stat: string; diff: string; lines: number };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The `<fix_diff>` text: a plain statement when nothing (or nothing known) changed, else the diffstat and the diff's head. */
export function describeFix(f: FixFacts, maxLines = FIX_DIFF_LINES): string {
  switch (f.kind) {
    case 'not-found':
      return 'The detention commit is not on this branch, so what changed in the repository since the detention is not known. Go by the engineer note.';
    case 'unchanged':
      return [
        'Nothing in the repository changed since the detention: the engineer committed nothing after it.',
        'The fix was made outside the repository (for example the sandbox image, the environment, a credential or an access right),',
        'and the engineer note is the only record of it. Do not guess at changes to the code.',
      ].join(' ');
    case 'changed': {
      const shown = Math.min(f.lines, maxLines);
      const head =
        shown < f.lines
          ? `The first ${shown} of its ${f.lines} lines:`
          : `The whole diff (${plural(f.lines, 'line')}):`;
      return [
        `${plural(f.commits, 'commit')} since the detention. They show only what changed inside the repository; the engineer note says whether anything outside it changed as well.`,
        '',
        'Diffstat:',
        f.stat.trimEnd() || '(no file changed)',
        '',
        head,
        f.diff.trimEnd(),
      ].join('\n');
    }
  }
}

/** Where a lesson is recalled: every repository, its own, or (no rule, the note kept) its own. */
export type LessonScope = 'general' | 'repo' | 'none';

/** What office hours records as the fix, and how it came about. */
export type Distilled =
  | { source: 'distilled'; lesson: string; scope: 'general' | 'repo' }
  /** The distiller found no rule: the note is the fix, for this repository only. */
  | { source: 'none'; lesson: null; scope: 'none' }
  /** Distillation off, or it gave no usable answer: the note is the fix, for this repository only. */
  | { source: 'off' | 'failed'; lesson: null; scope: 'repo'; why: string };

/** One line of text a sandbox wrote, safe to print and to put in later prompts (core/text/model.ts), cut at `max`. */
export const cleanLesson = (text: string, max = LESSON_MAX_CHARS): string => oneLine(text, max);

/**
 * The distiller's answer (from a sandbox: hostile) as what is recorded. It must
 * match the lesson schema; `none`, or an empty (or "none") lesson, is no rule;
 * a lesson with any other scope than `general` is this repository's.
 */
export function interpretDistill(answer: unknown): Distilled {
  const parsed = lessonAnswer.safeParse(answer);
  if (!parsed.success)
    return { source: 'failed', lesson: null, scope: 'repo', why: 'the distiller gave no usable answer' };
  const lesson = cleanLesson(parsed.data.lesson);
  if (parsed.data.scope === 'none' || lesson === '' || /^none\.?$/i.test(lesson)) {
    return { source: 'none', lesson: null, scope: 'none' };
  }
  return { source: 'distilled', lesson, scope: parsed.data.scope === 'general' ? 'general' : 'repo' };
}

/** The line the person sees about what was recorded. */
export function lessonLine(d: Distilled): string {
  switch (d.source) {
    case 'distilled':
      return d.scope === 'general' ? `lesson: ${d.lesson}` : `lesson, recalled in this repository only: ${d.lesson}`;
    case 'none':
      return 'no lesson distilled: the fix does not support a rule for other tickets; your note is kept as the fix and recalled in this repository only';
    default:
      return `no lesson distilled (${d.why}): your note is kept as the fix and recalled in this repository only`;
  }
}

/** The `agent_status` of the recorded distill call: `ok` when it gave a lesson, else `none`. */
export const distillStatus = (d: Distilled): 'ok' | 'none' => (d.source === 'distilled' ? 'ok' : 'none');

/** Why office hours refuses a branch, or null on a `detention/*` branch. */
export function officeHoursBranchRefusal(branch: string | null): string | null {
  if (branch?.startsWith('detention/')) return null;
  return `chalk office-hours runs on a detention/* branch (this is '${branch ?? 'a detached HEAD'}'): git switch to the detention branch the run named, commit your fix, then run it again`;
}

/** The refusal for a missing or empty note, or null when there is one. */
export function noteRefusal(note: string | undefined): string | null {
  if (note !== undefined && note.trim() !== '') return null;
  return 'a note is required: chalk office-hours -m "what was wrong and how you fixed it"';
}
