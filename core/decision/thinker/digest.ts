import { type Artifact, isList } from './artifacts.js';

/** How many characters of words a digest line carries (the ref and alias prefix not counted). */
export const DIGEST_CHARS = 160;

export type Formatter = (artifact: Artifact) => string;

/**
 * One formatter per artifact type: the digest is all the model sees of an
 * artifact, so the application says here what a file, a test or a statement
 * reads as.
 */
export class FormatterRegistry {
  private readonly byType = new Map<string, Formatter>();

  register<T extends Artifact>(type: string, format: (artifact: T) => string): this {
    this.byType.set(type, format as Formatter);
    return this;
  }

  get(type: string): Formatter | undefined {
    return this.byType.get(type);
  }
}

function summarizedJson(a: Artifact): string {
  return JSON.stringify(a, (_k, v) => (typeof v === 'string' && v.length > 80 ? `${v.slice(0, 80)}...` : v));
}

/** The words of an artifact: a list's count and item type, else its formatter, else a link's title, else its JSON. */
export function digestWords(a: Artifact, formatters: FormatterRegistry): string {
  if (isList(a)) return `a list of ${a.items.length} ${a.itemType}`;
  const f = formatters.get(a.type);
  let words: string;
  if (f) words = f(a);
  else if (typeof a.title === 'string' && a.title.trim() !== '') words = a.title;
  else words = summarizedJson(a);
  words = words.replace(/\s+/g, ' ').trim();
  return words.length > DIGEST_CHARS ? `${words.slice(0, DIGEST_CHARS)}...` : words;
}

/** `<ref> (<alias>): <words>`. */
export function digestLine(ref: string, a: Artifact, formatters: FormatterRegistry): string {
  return `${ref} (${a.type}): ${digestWords(a, formatters)}`;
}
