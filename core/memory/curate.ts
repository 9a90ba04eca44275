import { UserError } from '../errors.js';
import { LESSON_SCOPES, type LessonListed, type LessonScope } from '../ports/store.js';
import { markedBlock, oneLine } from '../text/model.js';

/** How many characters of a lesson `chalk lessons` shows in its table. */
export const LESSON_SHORT = 60;

/** A lesson id as the user typed it: a positive whole number, else one line naming what to change. */
export function parseLessonId(text: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text))
    throw new UserError(`'${text}' is not a lesson id: give the number chalk lessons shows`);
  return Number(text);
}

export function parseScope(text: string): LessonScope {
  if ((LESSON_SCOPES as readonly string[]).includes(text)) return text as LessonScope;
  throw new UserError(`'${text}' is not a lesson scope: use one of ${LESSON_SCOPES.join(', ')}`);
}

export const noSuchLesson = (id: number) => new UserError(`there is no lesson ${id}: chalk lessons --all lists them`);

/** The fix a lesson teaches: the distilled lesson, or the person's note. */
export const lessonFix = (l: LessonListed) =>
  (l.scope === 'none' ? '' : (l.lesson ?? '').trim()) || (l.resolution ?? '').trim();

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : '-');

/** `chalk lessons`'s table rows, a header first. */
export function lessonRows(lessons: readonly LessonListed[]): string[][] {
  return [
    ['ID', 'SCOPE', 'REPOSITORY', 'RECALLED', 'PASSED', 'RESOLVED', 'LESSON'],
    ...lessons.map((l) => [
      String(l.id),
      (l.scope ?? 'repo') + (l.forgottenAt ? ' (forgotten)' : ''),
      l.repo,
      String(l.recalled),
      String(l.passed),
      day(l.resolvedAt),
      oneLine(lessonFix(l) || (l.resolvedAt ? '' : '(open)'), LESSON_SHORT),
    ]),
  ];
}

/** `chalk lessons show`: every field, one per line. */
export function lessonDetail(l: LessonListed): string {
  const rows: Array<[string, string]> = [
    ['id', String(l.id)],
    ['repository', l.repo],
    ['ticket', l.ticket],
    ['scope', l.scope ?? 'repo (unscoped)'],
    ['opened', l.createdAt.toISOString()],
    ['resolved', l.resolvedAt ? `${l.resolvedAt.toISOString()} by ${l.resolvedBy ?? '?'}` : 'not yet (open)'],
    ['forgotten', l.forgottenAt ? l.forgottenAt.toISOString() : 'no'],
    ['recalled', `${l.recalled} time(s); the loop then passed ${l.passed} time(s)`],
    ['fingerprint', l.fingerprint ?? '-'],
    ['first error', l.firstError ?? '-'],
    ['lesson', l.lesson ?? '-'],
    ['note', l.resolution ?? '-'],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  // Every value but Chalk's own is someone else's text: its further lines, and the signature (the
  // sandbox's output), are a marked block, so none of it passes for a field of this listing.
  const field = ([k, v]: [string, string]) => {
    const [first, ...rest] = v.split('\n');
    return [`${k.padEnd(w)}  ${first}`, ...rest.flatMap((r) => markedBlock(r))].join('\n');
  };
  return `${rows.map(field).join('\n')}\nsignature:\n${markedBlock(l.signature).join('\n')}\n`;
}
