import { describe, expect, it } from 'vitest';
import { TAIL_MAX_CHARS, tailLines } from '../../core/fingerprint/log.js';

describe('tailLines', () => {
  it('gives the last n lines', () => {
    expect(tailLines('a\nb\nc\n', 2)).toBe('b\nc');
    expect(tailLines('a\nb', 5)).toBe('a\nb');
    expect(tailLines('', 3)).toBe('');
    expect(tailLines('a\nb', 0)).toBe('');
  });

  it('never more than the last TAIL_MAX_CHARS characters, even of one endless line', () => {
    const line = 'x'.repeat(10 * 1024 * 1024);
    const tail = tailLines(`first\n${line}\nFAIL: the end\n`, 40);
    expect(tail.length).toBeLessThanOrEqual(TAIL_MAX_CHARS);
    expect(tail.endsWith('FAIL: the end')).toBe(true);
  });
});
