/**
 * A spec (`specs/TICKET.md`) is markdown whose checkpoints are task-list
 * lines: `- [ ] open` and `- [x] ticked`, optionally indented. Only lines
 * that start that way count; a `- [ ]` in the middle of a line is prose.
 */

export interface Checkpoint {
  /** 1-based line number in the spec. */
  line: number;
  /** The text after the box, trimmed. */
  text: string;
  ticked: boolean;
}

const SPACE = '[ \\t\\n\\v\\f\\r]';
/** An open checkpoint line (the count the loop uses). */
export const OPEN_LINE = new RegExp(`^${SPACE}*- \\[ \\]`);
/** A ticked checkpoint line; the agent is asked for `- [x]`, an upper-case X counts too. */
export const TICKED_LINE = new RegExp(`^${SPACE}*- \\[[xX]\\]`);

const lines = (spec: string) => spec.split(/\r?\n/);

export function checkpoints(spec: string): Checkpoint[] {
  const found: Checkpoint[] = [];
  lines(spec).forEach((l, i) => {
    const open = OPEN_LINE.test(l);
    if (!open && !TICKED_LINE.test(l)) return;
    const text = l.replace(/^\s*- \[[ xX]\]/, '').trim();
    found.push({ line: i + 1, text, ticked: !open });
  });
  return found;
}

/** Checkpoints still to do. */
export function openCount(spec: string): number {
  return lines(spec).filter((l) => OPEN_LINE.test(l)).length;
}

export function tickedCount(spec: string): number {
  return lines(spec).filter((l) => TICKED_LINE.test(l)).length;
}

/** The text of the spec's first `# ` heading (the request's title), or null. */
export function specTitle(spec: string): string | null {
  for (const l of lines(spec)) {
    if (l.startsWith('# ')) return l.slice(2).trim();
  }
  return null;
}

/** Checkpoint text compared loosely: spacing does not matter. */
const key = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The checkpoints that were open in `before` and are ticked in `after`,
 * matched by their text (repeated texts pair up in order). A checkpoint whose
 * text was also reworded is matched by its position among the checkpoints
 * when both versions have the same number of them.
 */
export function newlyTicked(before: string, after: string): Checkpoint[] {
  const old = checkpoints(before);
  const now = checkpoints(after);
  const oldByText = new Map<string, Checkpoint[]>();
  for (const c of old) oldByText.set(key(c.text), [...(oldByText.get(key(c.text)) ?? []), c]);

  const ticked: Checkpoint[] = [];
  now.forEach((c, i) => {
    const prior = oldByText.get(key(c.text))?.shift() ?? (old.length === now.length ? old[i] : undefined);
    if (c.ticked && prior && !prior.ticked) ticked.push(c);
  });
  return ticked;
}
