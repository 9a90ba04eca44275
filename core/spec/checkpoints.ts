/**
 * A spec (`specs/TICKET.md`) is markdown whose checkpoints are task-list
 * items: a line that starts (after optional indentation) with a list marker
 * (`-`, `*`, `+`, or a number of up to nine digits and `.` or `)`), spacing,
 * and a box: `[ ]` open, `[x]` or `[X]` ticked. A box in the middle of a line
 * is prose. So is every line inside a fenced code block (``` or ~~~; it closes
 * with a fence of the same character at least as long, CommonMark's rule, and
 * fences are recognised at any indentation so one inside a list item counts)
 * and everything inside an HTML comment (`<!-- ... -->`, across lines too).
 *
 * `scanSpec` is the one parser: every reader in core/spec (counts, titles,
 * ticks, the stamp) goes through it, so they always agree.
 */

export interface Checkpoint {
  /** 1-based line number in the spec. */
  line: number;
  /** The text after the box, trimmed. */
  text: string;
  ticked: boolean;
}

/** Where a checkpoint's box is, so it can be rewritten in place. */
interface Box extends Checkpoint {
  /** Offset in its line of the character between the brackets. */
  mark: number;
}

export interface SpecLine {
  /** The line without its line ending. */
  text: string;
  /** False inside a code fence or an HTML comment (and for the fence lines themselves). */
  visible: boolean;
}

const CHECKPOINT = /^([ \t]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+\[)([ xX])\]/;
const FENCE_OPEN = /^[ \t]*(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;
/** Inline code spans, whose `<!--` opens no comment. */
const CODE_SPAN = /(`+)[^`][\s\S]*?(?<!`)\1(?!`)/g;

const splitLines = (spec: string) => spec.split(/\r?\n/);

/**
 * Follows HTML comments through one line: true when the line ends inside a comment.
 * `inComment` says whether the line starts inside one.
 */
function endsInComment(line: string, inComment: boolean): boolean {
  let rest = inComment ? line : line.replace(CODE_SPAN, '');
  let open = inComment;
  for (;;) {
    if (open) {
      // `<!-->` and `<!--->` are whole comments (CommonMark): look for the end from the `--`.
      const end = rest.indexOf('-->');
      if (end < 0) return true;
      rest = rest.slice(end + 3);
      open = false;
    } else {
      const start = rest.indexOf('<!--');
      if (start < 0) return false;
      rest = rest.slice(start + 2);
      open = true;
    }
  }
}

/** Every line of the spec, marked visible or not (inside a fence or a comment). */
export function specLines(spec: string): SpecLine[] {
  const out: SpecLine[] = [];
  let fence: { char: string; length: number } | null = null;
  let comment = false;
  for (const text of splitLines(spec)) {
    if (fence) {
      const close = FENCE_CLOSE.exec(text);
      if (close?.[1]?.[0] === fence.char && close[1].length >= fence.length) fence = null;
      out.push({ text, visible: false });
      continue;
    }
    if (comment) {
      comment = endsInComment(text, true);
      out.push({ text, visible: false });
      continue;
    }
    const open = FENCE_OPEN.exec(text);
    // A backtick fence's info string holds no backtick (else it is inline code).
    if (open?.[1] && !(open[1][0] === '`' && open[2]?.includes('`'))) {
      fence = { char: open[1][0] as string, length: open[1].length };
      out.push({ text, visible: false });
      continue;
    }
    comment = endsInComment(text, false);
    out.push({ text, visible: true });
  }
  return out;
}

function boxes(spec: string): Box[] {
  const found: Box[] = [];
  specLines(spec).forEach(({ text, visible }, i) => {
    const m = visible ? CHECKPOINT.exec(text) : null;
    if (!m?.[1] || !m[2]) return;
    const mark = m[1].length;
    found.push({ line: i + 1, text: text.slice(mark + 2).trim(), ticked: m[2] !== ' ', mark });
  });
  return found;
}

export function checkpoints(spec: string): Checkpoint[] {
  return boxes(spec).map(({ line, text, ticked }) => ({ line, text, ticked }));
}

/** Checkpoints still to do (the count the loop uses). */
export function openCount(spec: string): number {
  return boxes(spec).filter((b) => !b.ticked).length;
}

export function tickedCount(spec: string): number {
  return boxes(spec).filter((b) => b.ticked).length;
}

/** The spec as if no checkpoint were ticked: each checkpoint's box shown `[ ]`, nothing else changed. */
export function untickAll(spec: string): string {
  const ticked = new Map(boxes(spec).flatMap((b) => (b.ticked ? [[b.line, b.mark] as const] : [])));
  if (ticked.size === 0) return spec;
  // Split keeping each line's ending, so CRLF specs come back byte for byte.
  const parts = spec.split(/(\r?\n)/);
  for (const [line, mark] of ticked) {
    const i = (line - 1) * 2;
    const text = parts[i] as string;
    parts[i] = `${text.slice(0, mark)} ${text.slice(mark + 1)}`;
  }
  return parts.join('');
}

/** The text of the spec's first visible `# ` heading (the request's title), or null. */
export function specTitle(spec: string): string | null {
  for (const l of specLines(spec)) {
    if (l.visible && l.text.startsWith('# ')) return l.text.slice(2).trim();
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
