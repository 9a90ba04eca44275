import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintFailure } from '../../core/fingerprint/index.js';
import type { ExecOptions, ExecResult, SandboxSession } from '../../core/ports/sandbox.js';
import { KEPT_OUTPUT_BYTES } from '../../core/ports/sandbox.js';
import { KeptOutput, WholeChars, wholeUpTo } from '../../core/process/kept-output.js';
import { runLogged } from '../../core/run/base/logged-exec.js';
import { pytestLog } from '../../core/testing/pytest-log.js';

/**
 * A command's output is kept as the bytes it wrote (the exec port hands them over undecoded):
 * read as UTF-8 once, at the end. Two streams put into one log never cut a character in two.
 */
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('kept output', () => {
  it('keeps everything under the cap, as bytes and as text', () => {
    const kept = new KeptOutput();
    const euro = Buffer.from('€');
    kept.add(Buffer.from('a'));
    kept.add(euro.subarray(0, 1));
    kept.add(euro.subarray(1));
    kept.add('b');
    expect(kept.bytes()).toEqual(Buffer.from('a€b'));
    expect(kept.text()).toBe('a€b');
  });

  it('keeps the head and the tail past the cap, with a marker between', () => {
    const kept = new KeptOutput();
    const chunk = Buffer.alloc(64 * 1024, 'x');
    for (let i = 0; i < (2 * KEPT_OUTPUT_BYTES) / chunk.length; i++) kept.add(chunk);
    kept.add(Buffer.from('the end\n'));
    const text = kept.text();
    expect(text).toMatch(/^x+\n\[chalk: [0-9]+ bytes of output not kept\]\nx+the end\n$/);
    expect(kept.bytes().length).toBeLessThanOrEqual(KEPT_OUTPUT_BYTES + 100);
  });

  it('reads a log at the host output cap (head, marker, tail) as its text', () => {
    const kept = new KeptOutput();
    const { text } = pytestLog(KEPT_OUTPUT_BYTES / (1024 * 1024) + 1);
    for (let at = 0; at < text.length; at += 65_536) kept.add(Buffer.from(text.slice(at, at + 65_536)));
    const bytes = kept.bytes();
    expect(bytes.toString('utf8')).toMatch(/\n\[chalk: [0-9]+ bytes of output not kept\]\n/);
    const fp = fingerprintFailure({ log: bytes, report: null, treeId: 'a'.repeat(40) });
    expect(fp.failing).toBeGreaterThan(0);
    expect(fp).toEqual(fingerprintFailure({ log: kept.text(), report: null, treeId: 'a'.repeat(40) }));
  });
});

describe('whole characters', () => {
  it('finds where an incomplete last character starts', () => {
    const cases: [number[], number][] = [
      [[], 0],
      [[0x61], 1],
      [[0x61, 0xe2], 1],
      [[0x61, 0xe2, 0x82], 1],
      [[0x61, 0xe2, 0x82, 0xac], 4],
      [[0xf0, 0x9f, 0x98], 0],
      [[0xf0, 0x9f, 0x98, 0x80], 4],
      [[0xc3], 0],
      [[0xc3, 0xa9], 2],
      [[0x80, 0x80, 0x80, 0x80], 4], // stray continuation bytes: nothing to wait for
      [[0xff], 1],
      [[0x61, 0xf8, 0x80], 3], // no UTF-8 lead byte: nothing to wait for
    ];
    for (const [bytes, at] of cases) expect(wholeUpTo(Uint8Array.from(bytes)), JSON.stringify(bytes)).toBe(at);
  });

  it("holds a stream's cut character until its next chunk, and gives what is left at the end", () => {
    const w = new WholeChars();
    const euro = Buffer.from('€');
    expect(w.take(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))).toEqual(Buffer.from('a'));
    expect(w.take(euro.subarray(2))).toEqual(euro);
    expect(w.take(euro.subarray(0, 1))).toEqual(Buffer.alloc(0));
    expect(w.end()).toEqual(euro.subarray(0, 1));
    expect(w.end()).toEqual(Buffer.alloc(0));
  });

  it('puts stdout and stderr into one log without cutting a character where they meet', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chalk-kept-'));
    made.push(dir);
    const euro = Buffer.from('€');
    const session = {
      async exec(_command: string, opts?: ExecOptions): Promise<ExecResult> {
        opts?.onOutput?.(Buffer.concat([Buffer.from('out '), euro.subarray(0, 1)]), 'stdout');
        opts?.onOutput?.(Buffer.from('[err]'), 'stderr');
        opts?.onOutput?.(euro.subarray(1), 'stdout');
        opts?.onOutput?.(Buffer.from([0xe2]), 'stderr'); // a character the stream never finishes
        return { exitCode: 1, stdout: '', stderr: '', timedOut: false };
      },
      async reapStrays() {},
    } as unknown as SandboxSession;
    const logPath = join(dir, 'rubric.log');
    const r = await runLogged(session, 'true', { logPath, capMb: 1 });
    expect(r.output.toString('utf8')).toBe('out [err]€\uFFFD');
    expect(readFileSync(logPath)).toEqual(r.output);
  });
});
