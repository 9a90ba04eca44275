import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openCappedLog } from '../../core/fs/host-file.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
const logPath = () => {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-capped-'));
  made.push(dir);
  return join(dir, 'rubric.log');
};

describe('a capped log', () => {
  const note = '\n[chalk: the command printed more than the cap and was stopped]\n';

  it('holds at most the cap with its closing note, however much came before it', () => {
    for (const before of [1000 - 10, 1000, 1000 + 5000]) {
      const path = logPath();
      const log = openCappedLog(path, 1000);
      log.write('a'.repeat(before));
      log.close(note);
      const text = readFileSync(path, 'utf8');
      expect(statSync(path).size).toBeLessThanOrEqual(1000);
      expect(text.endsWith(note)).toBe(true);
      expect(text.startsWith('aaa')).toBe(true);
    }
  });

  it('keeps everything when it fits, the note after it', () => {
    const path = logPath();
    const log = openCappedLog(path, 1000);
    log.write('ok\n');
    log.close(note);
    expect(readFileSync(path, 'utf8')).toBe(`ok\n${note}`);
    expect(log.dropped).toBe(0);
  });
});
