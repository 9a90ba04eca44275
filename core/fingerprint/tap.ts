import { logLines } from './log.js';
import { anyLine } from './runners/detect.js';

/**
 * Failing tests in a TAP stream (TAP 13 and 14, as mocha, `node --test`, ava
 * and node-tap write it), for reports and rubric output alike.
 *
 * - A test point is `ok N - name` or `not ok N - name` (the number and the
 *   dash are optional; `# SKIP` and `# TODO` points are not failures).
 * - YAML diagnostics (`---` to `...`) are skipped whole: they quote source.
 * - Subtests are indented and open with `# Subtest: name`. In a stream with
 *   subtest headers, only points that close a subtest are tests; the other
 *   points are assertions (node-tap's `not ok 1 - should be equal`) and fail
 *   their enclosing test, whose name they never join. In a stream without
 *   (mocha's, ava's), every point is a test.
 * - A failing test with failing subtests is not itself an ID: its failing
 *   subtests are, named by the path from the top, joined with ` > `.
 */
// Greedy tails, trimmed in code: a lazy tail before `\s*$` is quadratic on a hostile line of spaces.
const POINT = /^(\s*)(not ok|ok)\b(?:\s+\d+)?(?:\s+-(?=\s|$))?(.*)$/;
const SUBTEST = /^(\s*)# Subtest: (.*)$/;
const DIRECTIVE = /\s#\s*(SKIP|TODO)\b.*$/i;
const TIME = /\s#\s*time=.*$/;

interface Level {
  indent: number;
  /** The `# Subtest:` names seen at this level, waiting for their points. */
  subtests: string[];
  /** Failing IDs, relative to this level, gathered so far. */
  failing: string[];
}

/** True when the stream has TAP test points (a `TAP version` line or an `ok`/`not ok` at the start of a line). */
export const looksLikeTap = anyLine(/^TAP version \d+\s*$/m, /^(not )?ok\b( \d+)?( - |\s*$| \S)/m);

export function tapFailingTests(text: string): string[] {
  const hasSubtests = /^\s*# Subtest: /m.test(text);
  const levels: Level[] = [{ indent: -1, subtests: [], failing: [] }];
  let yamlIndent: number | null = null;
  const top = () => levels[levels.length - 1] as Level;
  const levelFor = (indent: number): Level => {
    while (levels.length > 1 && top().indent > indent) levels.pop();
    if (top().indent < indent) levels.push({ indent, subtests: [], failing: [] });
    return top();
  };
  for (const line of logLines(text)) {
    const indent = line.length - line.trimStart().length;
    if (yamlIndent !== null) {
      if (indent <= yamlIndent + 2 && /^\s*\.\.\.\s*$/.test(line)) yamlIndent = null;
      continue;
    }
    if (/^\s*---\s*$/.test(line)) {
      yamlIndent = indent;
      continue;
    }
    const sub = SUBTEST.exec(line);
    if (sub) {
      levelFor(indent).subtests.push((sub[2] ?? '').trim());
      continue;
    }
    const point = POINT.exec(line);
    if (!point) continue;
    // The children of this point are the deeper levels, now complete.
    const children: string[] = [];
    while (levels.length > 1 && top().indent > indent) children.push(...(levels.pop() as Level).failing);
    const level = levelFor(indent);
    const raw = (point[3] ?? '').replace(TIME, '');
    if (DIRECTIVE.test(raw)) continue;
    const name = raw.trim();
    const closesSubtest = level.subtests[0] === name;
    if (closesSubtest) level.subtests.shift();
    if (point[2] !== 'not ok' || (hasSubtests && !closesSubtest)) continue;
    if (children.length > 0) level.failing.push(...children.map((c) => `${name} > ${c}`));
    else if (name !== '') level.failing.push(name);
  }
  const ids: string[] = [];
  for (const l of levels) ids.push(...l.failing);
  return ids;
}
