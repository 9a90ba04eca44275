/** Escaping for the report card: nothing stored may close a tag or a script, or add markup. */

const HTML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content or a quoted attribute value. */
export function escapeHtml(s: unknown): string {
  return String(s ?? '').replace(/[&<>"']/g, (c) => HTML[c] as string);
}

/**
 * JSON for the inside of a `<script type="application/json">`: `<`, `>`, `&` and the line
 * separators U+2028/U+2029 as \u escapes, so no stored text can end the script element.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
