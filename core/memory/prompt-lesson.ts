import type { PromptLesson } from '../kernel/hooks.js';
import type { RecalledLesson } from '../ports/store.js';

/**
 * A recalled lesson as the prompt gives it: what was seen (its signature) and the fix (the
 * distilled lesson; the person's note when there is none, or when its scope is `none`).
 */
export function promptLesson(l: RecalledLesson): PromptLesson {
  const lesson = l.scope === 'none' ? '' : (l.lesson ?? '').trim();
  return {
    id: l.id,
    seenBefore: l.signature,
    fix: lesson || (l.resolution ?? '').trim(),
    how: l.how ?? 'lexical',
  };
}
