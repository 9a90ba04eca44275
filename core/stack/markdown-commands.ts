/**
 * The test command an AGENTS.md or README states in its test section: the first heading that
 * speaks of tests (`## Testing`, `### Running the tests`, `Tests` underlined), then, inside that
 * section, a line of a code block that runs tests, else an inline code span that does, else the
 * first line of its first code block. Pure text, no Markdown library: only headings, fences
 * and code spans matter here.
 */

export interface SectionCommand {
  command: string;
  /** The section's heading text. */
  section: string;
}

const TEST_HEADING = /\btest(s|ing)?\b/i;
const RUNS_TESTS = /\b(test|tests|pytest|tox|nox|ctest|rspec|phpunit|vitest|jest|mocha)\b/;
const PROMPT = /^\s*[$>]\s+/;

interface Heading {
  line: number;
  level: number;
  text: string;
}

function headings(lines: readonly string[]): Heading[] {
  const out: Heading[] = [];
  let fence: string | null = null;
  for (const [i, line] of lines.entries()) {
    const f = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (f) {
      const mark = f[1] as string;
      if (fence === null) fence = mark[0] as string;
      else if (mark[0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      out.push({ line: i, level: (atx[1] as string).length, text: atx[2] as string });
      continue;
    }
    const under = /^\s{0,3}(=+|-+)\s*$/.exec(lines[i + 1] ?? '');
    if (under && line.trim() !== '' && !/^\s*([-*+]|\d+[.)])\s/.test(line)) {
      out.push({ line: i, level: (under[1] as string).startsWith('=') ? 1 : 2, text: line.trim() });
    }
  }
  return out;
}

/** The code lines (fenced or indented by four) and the inline code spans of a section. */
function codeOf(lines: readonly string[]): { blocks: string[][]; spans: string[] } {
  const blocks: string[][] = [];
  const spans: string[] = [];
  let block: string[] | null = null;
  let fence = '';
  for (const line of lines) {
    const f = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (block === null && f) {
      fence = (f[1] as string)[0] as string;
      block = [];
      continue;
    }
    if (block !== null) {
      if (f && (f[1] as string)[0] === fence) {
        blocks.push(block);
        block = null;
      } else block.push(line);
      continue;
    }
    for (const m of line.matchAll(/`([^`]+)`/g)) spans.push(m[1] as string);
  }
  return { blocks, spans };
}

const commandLines = (block: readonly string[]) =>
  block.map((l) => l.replace(PROMPT, '').trim()).filter((l) => l !== '' && !l.startsWith('#'));

export function testCommandIn(markdown: string): SectionCommand | null {
  const lines = markdown.split(/\r?\n/);
  const all = headings(lines);
  const start = all.find((h) => TEST_HEADING.test(h.text));
  if (!start) return null;
  const next = all.find((h) => h.line > start.line && h.level <= start.level);
  const body = lines.slice(start.line + 1, next?.line ?? lines.length);
  const { blocks, spans } = codeOf(body);
  const candidates = blocks.flatMap(commandLines);
  const command =
    candidates.find((l) => RUNS_TESTS.test(l)) ??
    spans.find((s) => RUNS_TESTS.test(s) && /\s/.test(s)) ??
    candidates[0] ??
    null;
  return command ? { command, section: start.text } : null;
}
