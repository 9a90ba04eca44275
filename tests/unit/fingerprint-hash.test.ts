import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  fingerprintFailure,
  fingerprintPass,
  retryFeedback,
  treeIdCommand,
  validTreeId,
} from '../../core/fingerprint/index.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const JUNIT =
  '<testsuite><testcase classname="demo" name="no_marker"><failure message="AssertionError: BROKEN exists"/></testcase></testsuite>';

describe('the fingerprint hashes', () => {
  it('matches the e2e: sha256 of "T\\n\\nE\\n"', () => {
    const fp = fingerprintFailure({ log: 'AssertionError: BROKEN exists\n', report: JUNIT, treeId: 'f'.repeat(40) });
    expect(fp.tests).toEqual(['demo::no_marker']);
    expect(fp.firstError).toBe('AssertionError: BROKEN exists');
    expect(fp.hash).toBe(sha('demo::no_marker\n\nAssertionError: BROKEN exists\n'));
    expect(fp.testsHash).toBe(sha('demo::no_marker\n'));
    expect(fp.failing).toBe(1);
    expect(fp.generic).toBe(false);
  });

  it.each([
    ['T known, E empty', '--- FAIL: A\n--- FAIL: B\n', sha('A\nB\n\n--- FAIL: A\n'), sha('A\nB\n'), 2],
    ['T unknown, E specific: UNKNOWN is hashed', 'panic: boom\n', sha('UNKNOWN\n\npanic: boom\n'), null, null],
    ['T unknown, E generic: no fingerprint', 'FAIL\n', null, null, null],
    ['T unknown, E empty: no fingerprint', 'nothing to see\n', null, null, null],
  ])('%s', (_name, log, hash, testsHash, failing) => {
    const fp = fingerprintFailure({ log, report: null, treeId: '' });
    expect(fp.hash).toBe(hash);
    expect(fp.testsHash).toBe(testsHash);
    expect(fp.failing).toBe(failing);
  });

  it('hashes T of many IDs as its whole text, each named twice in the log', () => {
    // More IDs than are hashed together (a thousand), and a count that is no multiple of it.
    for (const n of [999, 1000, 1001, 2345]) {
      const ids = Array.from({ length: n }, (_, i) => `tests/t.py::test_${i}`);
      const log = `${ids.map((id) => `${id} FAILED`).join('\n')}\n${ids.map((id) => `FAILED ${id} - x`).join('\n')}\n`;
      const fp = fingerprintFailure({ log, report: null, treeId: '' });
      const t = [...ids].sort().join('\n');
      expect(fp.failing, `${n}`).toBe(n);
      expect(fp.testsHash, `${n}`).toBe(sha(`${t}\n`));
      expect(fp.hash, `${n}`).toBe(sha(`${t}\n\n${fp.firstError}\n`));
    }
  });

  it('flags a generic first error', () => {
    expect(fingerprintFailure({ log: 'FAIL\n', report: null, treeId: '' }).generic).toBe(true);
  });

  it('keeps only a well-formed tree ID', () => {
    expect(validTreeId(`${'a'.repeat(40)}\n`)).toBe('a'.repeat(40));
    expect(validTreeId('b'.repeat(64))).toBe('b'.repeat(64));
    expect(validTreeId('fatal: not a git repository')).toBe('');
    expect(validTreeId('A'.repeat(40))).toBe('');
    expect(fingerprintPass('garbage').treeId).toBe('');
  });
});

describe('retry feedback', () => {
  const log = `${Array.from({ length: 70 }, (_, i) => `line-${i + 1}`).join('\n')}\nAssertionError: BROKEN exists at 0x7f3a2b\n`;
  const fp = fingerprintFailure({ log, report: JUNIT, treeId: '' });

  it('is the reason and the last 60 lines by default', () => {
    const text = retryFeedback({
      reason: 'rubric failed (exit 1)',
      rubricLog: log,
      fingerprint: fp,
      fpFeedback: false,
    });
    const lines = text.split('\n');
    expect(lines[0]).toBe('rubric failed (exit 1)');
    expect(lines).toHaveLength(61);
    expect(lines[1]).toBe('line-12');
    expect(lines[60]).toBe('AssertionError: BROKEN exists at 0x7f3a2b');
  });

  it('names the failing tests and the first error with CHALK_FP_FEEDBACK=true', () => {
    const text = retryFeedback({ reason: 'rubric failed (exit 1)', rubricLog: log, fingerprint: fp, fpFeedback: true });
    expect(text.split('\n').slice(0, 5)).toEqual([
      'rubric failed (exit 1)',
      'failing test:',
      '- demo::no_marker',
      'first error: AssertionError: BROKEN exists at 0x?',
      'last 20 lines of output:',
    ]);
    expect(text.split('\n')).toHaveLength(25);
    expect(text.endsWith('line-70\nAssertionError: BROKEN exists at 0x7f3a2b')).toBe(true);
  });

  it('counts several tests and says when none are known', () => {
    const two = fingerprintFailure({ log: '--- FAIL: A\n--- FAIL: B\n', report: null, treeId: '' });
    expect(retryFeedback({ reason: 'r', rubricLog: 'x', fingerprint: two, fpFeedback: true })).toContain(
      '2 failing tests:\n- A\n- B\n',
    );
    const none = fingerprintFailure({ log: 'quiet', report: null, treeId: '' });
    const text = retryFeedback({ reason: 'r', rubricLog: 'quiet', fingerprint: none, fpFeedback: true });
    expect(text).toContain('failing tests: not known');
    expect(text).toContain('first error: (none found)');
  });

  it('uses the structured form for a silent rubric even without CHALK_FP_FEEDBACK', () => {
    const report = '{"Action":"fail","Package":"demo","Test":"TestMarker"}\n';
    const silent = fingerprintFailure({ log: '', report, treeId: '' });
    const text = retryFeedback({
      reason: 'rubric failed (exit 1)',
      rubricLog: ' \n',
      fingerprint: silent,
      fpFeedback: false,
    });
    expect(text).toBe(
      'rubric failed (exit 1)\nfailing test:\n- demo::TestMarker\nfirst error: (none found)\nthe rubric printed nothing',
    );
  });

  it('says a silent rubric printed nothing when there is no fingerprint (rules off, or a green loop)', () => {
    expect(
      retryFeedback({ reason: 'rubric failed (exit 2)', rubricLog: '', fingerprint: null, fpFeedback: true }),
    ).toBe('rubric failed (exit 2)\nthe rubric printed nothing');
    const green = fingerprintPass('a'.repeat(40));
    expect(retryFeedback({ reason: 'no tick', rubricLog: 'ok\n', fingerprint: green, fpFeedback: true })).toBe(
      'no tick\nok',
    );
  });
});

describe('the tree ID script', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-fp-tree-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  const tree = (report = '') => {
    const [cmd, ...args] = treeIdCommand(report);
    return validTreeId(execFileSync(cmd!, args, { cwd: dir, encoding: 'utf8' }));
  };

  it('sees untracked files but not the notes file, the report or ignored files, and leaves the index alone', () => {
    git('init', '-q');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 't');
    mkdirSync(join(dir, 'specs'));
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    writeFileSync(join(dir, '.gitignore'), 'build/\n');
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    const base = tree('out/report.xml');
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    expect(base).toBe(git('rev-parse', 'HEAD^{tree}').trim());

    writeFileSync(join(dir, 'specs', 'T-1.notes.md'), 'notes\n');
    mkdirSync(join(dir, 'out'));
    writeFileSync(join(dir, 'out', 'report.xml'), '<x/>');
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build', 'artifact'), 'x');
    expect(tree('out/report.xml')).toBe(base);
    expect(tree('')).not.toBe(base);

    writeFileSync(join(dir, 'new.txt'), 'untracked\n');
    const changed = tree('out/report.xml');
    expect(changed).not.toBe(base);
    expect(git('status', '--porcelain')).toContain('?? new.txt');
    expect(git('diff', '--cached', '--name-only')).toBe('');
  });
});
