import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { chalk, e2eAvailable, explain, makeScenario, type Rig, startRig } from './harness.js';

/**
 * The agent as an attacker on the person's terminal: its blocker and summary
 * carry escape sequences that would set the window title, clear the screen,
 * move up and erase the line above, and a carriage return that would print
 * "all green" over the real words. What `chalk run`, `chalk status` and
 * `chalk why` print holds none of it; the words themselves still show.
 */
const available = await e2eAvailable();

const ESC = '\u001b';
const HOSTILE = `${ESC}]0;owned${'\u0007'}${ESC}[2J${ESC}[1A${ESC}[2Kthe key is missing\rall green\u009b8m`;

/** Characters a terminal acts on: C0 controls but tab and newline, DEL, C1 controls. */
const controls = (text: string) =>
  [...text].filter((c) => {
    const cp = c.codePointAt(0) ?? 0;
    return (cp < 0x20 && c !== '\t' && c !== '\n') || (cp >= 0x7f && cp <= 0x9f);
  });

describe.skipIf(!available)('hostile text from the sandbox', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('reaches the terminal of chalk run, status and why with no control character', async () => {
    const sc = makeScenario();
    rig.script({ loops: [[s.loopBlocked(HOSTILE)]] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    expect(r.code, explain(r)).toBe(3);
    expect(controls(r.stdout)).toEqual([]);
    expect(controls(r.stderr)).toEqual([]);
    // The blocker's words are still shown, the overwrite undone.
    expect(`${r.stdout}${r.stderr}`).toContain('the key is missingall green');

    for (const args of [['status'], ['status', '--json'], ['why', sc.ticket]]) {
      const after = await chalk(rig, sc, args);
      expect(controls(after.stdout), explain(after)).toEqual([]);
      expect(controls(after.stderr), explain(after)).toEqual([]);
    }
    sc.dispose();
  });
});
