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
* [ ] other bullets count too
 text - [ ] in the middle is prose
- [ ]no space after the box still counts
`;

describe('checkpoints', () => {
  it('counts open and ticked checkpoint lines only', () => {
    expect(openCount(SPEC)).toBe(4);
    expect(tickedCount(SPEC)).toBe(2);
    expect(checkpoints(SPEC)).toEqual([
      { line: 7, text: 'Add a limiter module with a test', ticked: false },
      { line: 8, text: 'Wire it into the router', ticked: true },
      { line: 9, text: 'Indented checkpoints count too', ticked: false },
      { line: 10, text: 'Upper-case ticks count', ticked: true },
      { line: 12, text: 'other bullets count too', ticked: false },
      { line: 14, text: 'no space after the box still counts', ticked: false },
    ]);
  });

  it('reads CRLF specs the same', () => {
    const crlf = SPEC.replace(/\n/g, '\r\n');
    expect(openCount(crlf)).toBe(4);
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

describe('what is a checkpoint', () => {
  const box = (ticked: boolean, text = 'x') => ({ text, ticked });
  it.each<[string, string, { text: string; ticked: boolean }[]]>([
    ['a dash item', '- [ ] x', [box(false)]],
    ['a star item', '* [ ] x', [box(false)]],
    ['a plus item', '+ [x] x', [box(true)]],
    ['an ordered item with a dot', '1. [ ] x', [box(false)]],
    ['an ordered item with a parenthesis', '1) [X] x', [box(true)]],
    ['any number', '42. [ ] x\n007) [x] y', [box(false), box(true, 'y')]],
    ['more than nine digits is not a list item', '1234567890. [ ] x', []],
    ['indented by spaces or a tab', '    - [ ] x\n\t* [x] y', [box(false), box(true, 'y')]],
    ['several spaces after the marker', '-   [ ] x', [box(false)]],
    ['no space after the marker is prose', '-[ ] x\n1.[ ] x', []],
    ['a letter marker is prose', 'a. [ ] x', []],
    ['a box mid-line is prose', 'see - [ ] x', []],
    ['only the first box of a line', '- [ ] x - [x] y', [box(false, 'x - [x] y')]],
    ['an empty checkpoint still counts', '- [ ]', [box(false, '')]],
    ['other box letters are prose', '- [y] x\n- [-] x\n- [] x', []],
    ['in a backtick fence', '```\n- [ ] x\n```\n- [ ] y', [box(false, 'y')]],
    ['in a tilde fence with an info string', '~~~ markdown\n* [ ] x\n~~~\n+ [ ] y', [box(false, 'y')]],
    ['a fence closes only with the same character', '```\n~~~\n- [ ] x\n```\n- [ ] y', [box(false, 'y')]],
    ['a fence closes only with one at least as long', '````\n```\n- [ ] x\n`````\n- [ ] y', [box(false, 'y')]],
    ['a closing fence has nothing after it', '```\n``` not closed\n- [ ] x\n```\n- [ ] y', [box(false, 'y')]],
    ['an unclosed fence runs to the end', '- [ ] y\n```\n- [ ] x\n', [box(false, 'y')]],
    ['an indented fence inside a list item', '- [ ] y\n  ```\n  - [ ] x\n  ```\n', [box(false, 'y')]],
    ['inline backticks are not a fence', '``` inline ` code ```\n- [ ] y', [box(false, 'y')]],
    ['in a one-line HTML comment', '<!-- - [ ] x -->\n- [ ] y', [box(false, 'y')]],
    ['in an HTML comment across lines', '<!--\n- [ ] x\n* [x] x\n-->\n- [ ] y', [box(false, 'y')]],
    ['text after a comment ends on its line is prose', '<!--\n--> - [ ] x\n- [ ] y', [box(false, 'y')]],
    [
      'a comment opened after a box hides the lines below',
      '- [ ] y <!-- note\n- [ ] x\n-->',
      [box(false, 'y <!-- note')],
    ],
    ['<!--> is a whole comment', '<!-->\n- [ ] y', [box(false, 'y')]],
    ['<!-- in inline code opens no comment', 'write `<!--` to start one\n- [ ] y', [box(false, 'y')]],
    ['a fence inside a comment opens nothing', '<!--\n```\n-->\n- [ ] y\n```', [box(false, 'y')]],
    ['a comment inside a fence opens nothing', '```\n<!--\n```\n- [ ] y\n-->', [box(false, 'y')]],
  ])('%s', (_name, spec, expected) => {
    const found = checkpoints(spec).map(({ text, ticked }) => ({ text, ticked }));
    expect(found).toEqual(expected);
    // Every reader agrees with the one parser.
    expect(openCount(spec)).toBe(expected.filter((c) => !c.ticked).length);
    expect(tickedCount(spec)).toBe(expected.filter((c) => c.ticked).length);
    expect(checkpoints(untickAll(spec)).every((c) => !c.ticked)).toBe(true);
    expect(checkpoints(untickAll(spec)).map((c) => c.text)).toEqual(expected.map((c) => c.text));
  });

  it('unticks only checkpoints, keeping every other byte (CRLF too)', () => {
    const spec = '* [x] a\r\n```\r\n- [x] code\r\n```\r\n<!-- - [x] hidden -->\r\n3) [X] b\r\ntext - [x] prose\r\n';
    expect(untickAll(spec)).toBe(
      '* [ ] a\r\n```\r\n- [x] code\r\n```\r\n<!-- - [x] hidden -->\r\n3) [ ] b\r\ntext - [x] prose\r\n',
    );
  });

  it('takes no title from a fence or a comment', () => {
    expect(specTitle('```\n# not this\n```\n<!--\n# nor this\n-->\n# T-1: this')).toBe('T-1: this');
  });

  it('reports line numbers of the spec, fences and comments included', () => {
    expect(checkpoints('# T\n```\n- [ ] x\n```\n<!--\n-->\n1. [ ] y').map((c) => c.line)).toEqual([7]);
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
