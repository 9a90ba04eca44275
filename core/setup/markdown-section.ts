/**
 * Chalk's section in a Markdown file someone else owns (CLAUDE.md, AGENTS.md), written in that
 * file's own style so its linters keep passing: the list marker it uses, its heading style (ATX,
 * closed ATX or setext), its line endings, and one blank line between its end and the section.
 * The shipped templates are written in one style (ATX headings, `-` lists, LF, at most 80
 * columns: what prettier and markdownlint's defaults accept); `restyle` turns them into the
 * file's. Pure text in, text out.
 */

export interface MarkdownStyle {
  marker: '-' | '*' | '+';
  heading: 'atx' | 'atx_closed' | 'setext';
  eol: '\n' | '\r\n';
}

export const DEFAULT_STYLE: MarkdownStyle = { marker: '-', heading: 'atx', eol: '\n' };

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/** The lines of `text` outside fenced code blocks, with their index. */
function proseLines(lines: readonly string[]): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fence: string | null = null;
  for (const [i, line] of lines.entries()) {
    const f = FENCE.exec(line);
    if (f) {
      const ch = (f[1] as string)[0] as string;
      if (fence === null) fence = ch;
      else if (ch === fence) fence = null;
      continue;
    }
    if (fence === null) out.push([i, line]);
  }
  return out;
}

/** The style an existing file is written in; what it does not show is the default. */
export function styleOf(text: string): MarkdownStyle {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  const prose = proseLines(lines);
  const item = prose
    .map(([, l]) => /^\s{0,3}([-*+])\s+\S/.exec(l))
    .find((m) => m && !/^\s{0,3}([-*+])(\s*\1){2,}\s*$/.test(m.input));
  let heading: MarkdownStyle['heading'] = 'atx';
  for (const [i, l] of prose) {
    const atx = /^\s{0,3}#{1,6}\s+.*?\s#+\s*$/.test(l);
    if (/^\s{0,3}#{1,6}(\s|$)/.test(l)) {
      heading = atx ? 'atx_closed' : 'atx';
      break;
    }
    const next = lines[i + 1] ?? '';
    if (l.trim() !== '' && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s{0,3}([-*+]|\d+[.)])\s/.test(l)) {
      heading = 'setext';
      break;
    }
  }
  return { marker: (item?.[1] as MarkdownStyle['marker']) ?? '-', heading, eol };
}

/**
 * A template (ATX headings, `-` lists, LF) in `style`. Setext has only two levels; a deeper
 * heading stays ATX, which markdownlint's `consistent` heading style allows for h3 and below
 * only when mixed as `setext_with_atx`, so the templates use h1 and h2 only.
 */
export function restyle(template: string, style: MarkdownStyle): string {
  const out: string[] = [];
  for (const line of template.replace(/\r\n/g, '\n').split('\n')) {
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const level = (h[1] as string).length;
      const text = h[2] as string;
      if (style.heading === 'setext' && level <= 2) {
        out.push(text, (level === 1 ? '=' : '-').repeat(Math.max(3, text.length)));
      } else if (style.heading === 'atx_closed') {
        out.push(`${h[1]} ${text} ${h[1]}`);
      } else out.push(line);
      continue;
    }
    out.push(line.replace(/^(\s*)- /, `$1${style.marker} `));
  }
  return out.join(style.eol);
}

/**
 * `existing` with `section` (a template, as shipped) appended in the file's style: its
 * trailing blank lines dropped, one blank line, the section, one line ending at the end.
 */
export function appendSection(existing: string, section: string): string {
  const style = styleOf(existing);
  const body = existing.replace(/(\r?\n|[ \t])*$/, '');
  const added = restyle(section.trim(), style);
  return body === '' ? `${added}${style.eol}` : `${body}${style.eol}${style.eol}${added}${style.eol}`;
}

/** The section as a new file's whole text: its headings one level up, so the file starts with an h1. */
export function sectionAsFile(section: string): string {
  return `${section.trim().replace(/^#(#+ )/gm, '$1')}\n`;
}
