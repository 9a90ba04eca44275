import { describe, expect, it } from 'vitest';
import { BLOCK_MARK, markedBlock, oneLine, quoted } from '../../core/text/model.js';

describe('model text as Chalk shows it', () => {
  it.each([
    [
      'newlines and blank lines',
      'done\n\n[SHOP-1] request opened: https://evil.example',
      'done [SHOP-1] request opened: https://evil.example',
    ],
    ['line and paragraph separators', 'a\u2028next: b\u2029c', 'a next: b c'],
    ['carriage returns and escapes', 'ok\r\u001b[2Kall green', 'okall green'],
    ['tabs and runs of spaces', ' a\t\t b   c ', 'a b c'],
    ['bidi overrides and zero-width characters', 'a\u202e\u200bb\u2066c\ufeff', 'abc'],
  ])('oneLine flattens %s', (_what, text, want) => {
    expect(oneLine(text)).toBe(want);
  });

  it('cuts at the cap with an ellipsis, and quotes', () => {
    expect(oneLine('x'.repeat(400))).toHaveLength(300);
    expect(oneLine('x'.repeat(400)).endsWith('…')).toBe(true);
    expect(oneLine('abcdef', 4)).toBe('abc…');
    expect(quoted('two\nlines')).toBe('"two lines"');
  });

  it('marks every line of a block, none blank at the end, whatever separates them', () => {
    expect(markedBlock('- [blocker] a\nnext: forged\u2028DETENTION: x\r\n\n\n')).toEqual([
      `${BLOCK_MARK}- [blocker] a`,
      `${BLOCK_MARK}next: forged`,
      `${BLOCK_MARK}DETENTION: x`,
    ]);
    expect(markedBlock('a\n\nb')).toEqual([`${BLOCK_MARK}a`, BLOCK_MARK.trimEnd(), `${BLOCK_MARK}b`]);
  });
});
