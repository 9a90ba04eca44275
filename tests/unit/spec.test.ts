import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkpoints,
  clearStamp,
  gitBlobHash,
  newlyTicked,
  openCount,
  readStamp,
  STAMP_FILE,
  specStamp,
  specTitle,
  stampMatches,
  tickedCount,
  untickAll,
  writeStamp,
} from '../../core/spec/index.js';

const SPEC = `# SHOP-7: Add rate limiting

## Context
Requests to /api should be limited. Write \`- [ ]\` for a new checkpoint.

## Checkpoints
- [ ] Add a limiter module with a test
- [x] Wire it into the router
  - [ ] Indented checkpoints count too
\t- [X] Upper-case ticks count
-[ ] no space after the dash is prose
* [ ] other bullets are prose
 text - [ ] in the middle is prose
- [ ]no space after the box still counts
`;

describe('checkpoints', () => {
  it('counts open and ticked checkpoint lines only', () => {
    expect(openCount(SPEC)).toBe(3);
    expect(tickedCount(SPEC)).toBe(2);
    expect(checkpoints(SPEC)).toEqual([
      { line: 7, text: 'Add a limiter module with a test', ticked: false },
      { line: 8, text: 'Wire it into the router', ticked: true },
      { line: 9, text: 'Indented checkpoints count too', ticked: false },
      { line: 10, text: 'Upper-case ticks count', ticked: true },
      { line: 14, text: 'no space after the box still counts', ticked: false },
    ]);
  });

  it('reads CRLF specs the same', () => {
    const crlf = SPEC.replace(/\n/g, '\r\n');
    expect(openCount(crlf)).toBe(3);
    expect(checkpoints(crlf).map((c) => c.text)).toEqual(checkpoints(SPEC).map((c) => c.text));
  });

  it('counts nothing in a spec without checkpoints', () => {
    expect(openCount('# T-1: x\n\nno list\n')).toBe(0);
    expect(checkpoints('')).toEqual([]);
  });

  it('takes the title from the first "# " heading', () => {
    expect(specTitle(SPEC)).toBe('SHOP-7: Add rate limiting');
    expect(specTitle('## Context\n#no space\n# Second: real\n# Third')).toBe('Second: real');
    expect(specTitle('no heading')).toBeNull();
  });
});

describe('which checkpoints got ticked', () => {
  const before = '- [ ] one\n- [ ] two\n- [x] three\n- [ ] two\n';

  it.each([
    ['nothing changed', before, []],
    ['one ticked', '- [x] one\n- [ ] two\n- [x] three\n- [ ] two\n', ['one']],
    ['ticked in another case and spacing', '- [X]   one \n- [ ] two\n- [x] three\n- [ ] two\n', ['one']],
    ['an already ticked one is not new', '- [ ] one\n- [ ] two\n- [x] three\n- [ ] two\n', []],
    ['repeated texts pair up in order', '- [ ] one\n- [x] two\n- [x] three\n- [x] two\n', ['two', 'two']],
    [
      'reworded while ticked: matched by position',
      '- [x] one, done\n- [ ] two\n- [x] three\n- [ ] two\n',
      ['one, done'],
    ],
    ['a new ticked checkpoint is not a tick', '- [ ] one\n- [ ] two\n- [x] three\n- [ ] two\n- [x] added\n', []],
    ['unticked again is not a tick', '- [ ] one\n- [ ] two\n- [ ] three\n- [ ] two\n', []],
  ])('%s', (_name, after, expected) => {
    expect(newlyTicked(before, after).map((c) => c.text)).toEqual(expected);
  });
});

describe('the spec-check stamp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-stamp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const stamp = join(dir, 'runs', 'SHOP-7', STAMP_FILE);

  it('is the git blob hash, as git computes it', () => {
    for (const text of ['', 'hello\n', 'é – ünïcode\n', SPEC]) {
      expect(gitBlobHash(text)).toBe(
        execFileSync('git', ['hash-object', '--stdin'], { input: text, encoding: 'utf8' }).trim(),
      );
    }
  });

  it('shows every checkpoint open, so ticking keeps it valid', () => {
    expect(untickAll('- [x] a\n  - [X] b - [x] kept\ntext - [x] prose\n- [ ] c\n')).toBe(
      '- [ ] a\n  - [ ] b - [x] kept\ntext - [x] prose\n- [ ] c\n',
    );
    const ticked = SPEC.replace('- [ ] Add a limiter', '- [x] Add a limiter');
    expect(specStamp(ticked)).toBe(specStamp(SPEC));
  });

  it('changes when a checkpoint or the context is edited', () => {
    expect(specStamp(SPEC.replace('Wire it into', 'Wire it to'))).not.toBe(specStamp(SPEC));
    expect(specStamp(SPEC.replace('should be limited', 'must be limited'))).not.toBe(specStamp(SPEC));
    expect(specStamp(`${SPEC}- [ ] one more\n`)).not.toBe(specStamp(SPEC));
  });

  it('is written, matched, and cleared in the run directory', () => {
    expect(readStamp(stamp)).toBeNull();
    expect(stampMatches(stamp, SPEC)).toBe(false);
    writeStamp(stamp, SPEC);
    expect(readFileSync(stamp, 'utf8')).toBe(`${specStamp(SPEC)}\n`);
    expect(stampMatches(stamp, SPEC.replace('- [ ] Add', '- [x] Add'))).toBe(true);
    expect(stampMatches(stamp, SPEC.replace('limiter', 'throttle'))).toBe(false);
    clearStamp(stamp);
    expect(stampMatches(stamp, SPEC)).toBe(false);
    clearStamp(stamp);
  });
});

describe('the ticket spec template', () => {
  const template = readFileSync(join(import.meta.dirname, '..', '..', 'share', 'templates', 'spec.md'), 'utf8');
  const filled = template.replaceAll('{{TICKET}}', 'SHOP-7').replaceAll('{{TITLE}}', 'Add rate limiting');

  it('has a title, a Context and a Checkpoints section, and two open checkpoints', () => {
    expect(specTitle(filled)).toBe('SHOP-7: Add rate limiting');
    const headings = filled.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual(['## Context', '## Checkpoints']);
    expect(openCount(filled)).toBe(2);
    expect(tickedCount(filled)).toBe(0);
    expect(filled).not.toMatch(/\{\{/);
  });
});
