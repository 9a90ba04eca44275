import { type CallKind, callKind } from '../../demo/call-kind.js';
import type { MessagesRequest } from '../../demo/model-protocol.js';
import { answer, bash, edit, loopDone, read, type Script, say, write } from '../../demo/model-script.js';
import { DEMO_RUBRIC, DEMO_TICKET } from './example.js';

/**
 * What the scripted model does in the demo: the tool calls a good agent
 * would make for DEMO-1, through the real `claude` CLI's tools in the
 * sandbox. It really writes the code and the tests, runs the rubric and ticks
 * the checkpoints, so the harness's rubric, commits, review and push are real.
 */

const REPO = '/work/repo';
const SPEC = `specs/${DEMO_TICKET}.md`;
const NOTES = `specs/${DEMO_TICKET}.notes.md`;

/** Ticks the first open checkpoint, as the loop prompt asks. */
const tick = () => bash(`sed -i '0,/- \\[ \\]/s//- [x]/' ${SPEC}`);

const HEADER =
  "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert/strict');\nconst { slugify } = require('../src/slugify.js');\n";

const TEST_1 = `
test('slugify lowercases and joins words with dashes', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
  assert.equal(slugify('Many   spaces here'), 'many-spaces-here');
});
`;

const TEST_2 = `
test('slugify drops punctuation and trims dashes', () => {
  assert.equal(slugify('  Ship it! (v2) '), 'ship-it-v2');
  assert.equal(slugify('--Already-dashed--'), 'already-dashed');
});
`;

const SLUGIFY_1 = `'use strict';

/** A title as a URL slug: lower case, words joined by single dashes. */
function slugify(title) {
  return title.trim().toLowerCase().split(/\\s+/).join('-');
}

module.exports = { slugify };
`;

const loopOne = (): Script => [
  read(`${REPO}/${SPEC}`),
  write(`${REPO}/test/slugify.test.js`, HEADER + TEST_1),
  bash(`${DEMO_RUBRIC} 2>&1 | tail -n 3 || true`),
  write(`${REPO}/src/slugify.js`, SLUGIFY_1),
  bash(`${DEMO_RUBRIC} 2>&1 | tail -n 8`),
  tick(),
  write(
    `${REPO}/${NOTES}`,
    '# DEMO-1 notes\n\n- src/slugify.js: lowercases, splits on whitespace, joins with dashes.\n- Next: drop punctuation and trim dashes (checkpoint 2).\n',
  ),
  loopDone('1', 'Added slugify, which lowercases a title and joins its words with dashes, with its test.'),
];

const loopTwo = (): Script => [
  read(`${REPO}/${NOTES}`),
  read(`${REPO}/src/slugify.js`),
  read(`${REPO}/test/slugify.test.js`),
  write(`${REPO}/test/slugify.test.js`, HEADER + TEST_1 + TEST_2),
  edit(
    `${REPO}/src/slugify.js`,
    "  return title.trim().toLowerCase().split(/\\s+/).join('-');",
    "  return title\n    .toLowerCase()\n    .replace(/[^a-z0-9\\s-]/g, '')\n    .split(/[\\s-]+/)\n    .filter(Boolean)\n    .join('-');",
  ),
  bash(`${DEMO_RUBRIC} 2>&1 | tail -n 8`),
  tick(),
  write(
    `${REPO}/${NOTES}`,
    '# DEMO-1 notes\n\n- src/slugify.js: keeps letters, digits, spaces and dashes, then joins the words with single dashes.\n- Both checkpoints are done; the tests cover spacing, punctuation and leading or trailing dashes.\n',
  ),
  loopDone('2', 'slugify now drops punctuation and never starts or ends with a dash, with tests.'),
];

const specCheck = (): Script => [read(`${REPO}/${SPEC}`), answer({ verdict: 'pass', problems: [] })];

const review = (): Script => [
  bash('git log --oneline -4'),
  bash('git diff HEAD~2 --stat'),
  answer({
    verdict: 'pass',
    summary:
      'slugify does what both checkpoints ask and the tests cover spacing, punctuation and stray dashes. No stubs, no unrelated changes.',
    findings: [],
  }),
];

/** Hands each CLI session the script for its kind of call; loops in order. */
export function demoScriptPicker(): (req: MessagesRequest) => Script {
  const loops = [loopOne(), loopTwo()];
  const kinds: Partial<Record<CallKind, () => Script>> = { spec: specCheck, review };
  return (req) => {
    const kind = callKind(req);
    if (kind === 'loop') return loops.shift() ?? [say('The scripted demo agent has nothing more to do.')];
    return kinds[kind]?.() ?? [say('The scripted demo agent does not make this kind of call.')];
  };
}
