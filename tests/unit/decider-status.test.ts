import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { calibrationLines, deciderStatus, readParts } from '../../core/decision/status.js';
import { trust } from '../../core/decision/trust.js';
import type { StuckAnswerFacts } from '../../core/ports/store.js';

const facts = (n: number, url: string): StuckAnswerFacts[] =>
  Array.from({ length: n }, (_, i) => ({
    url,
    model: 'm@7',
    run: `R-${i}`,
    mode: 'shadow',
    answer: 'yes',
    confidence: 0.95,
    laterProgress: false,
    detained: true,
  }));

const store = (list: StuckAnswerFacts[] | Error) => ({
  decisions: {
    record: async () => 0,
    stuckAnswers: async () => {
      if (list instanceof Error) throw list;
      return list;
    },
  },
});

describe("the decider's status (what status and doctor show)", () => {
  const env = () => ({ XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'chalk-status-')) });

  it('never shows the URL with its credentials, and says what an untrusted address would receive', async () => {
    const e = env();
    const config = loadConfig({
      root: null,
      env: { ...e, CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: 'https://u:secretpw@decider.example.com/base/?k=v' },
    });
    const s = await deciderStatus({
      config,
      provider: 'hosted',
      decider: null,
      store: store(facts(20, 'https://decider.example.com/base/')),
      env: e,
    });
    expect(s).toMatchObject({ url: 'https://decider.example.com/base', trust: 'untrusted', health: null });
    expect(JSON.stringify(s)).not.toContain('secretpw');
    expect(s.receives?.join('\n')).toContain('POST /v1/systemone');
    expect(s.calibration).toMatchObject({ known: true, calibrated: true });
    expect(calibrationLines(s)).toEqual([
      'm@7 at https://decider.example.com/base: 20 judged shadow answers at 0.9 (20 right, 0 false stops, 100% right; 0 waiting), suggested threshold 0.95; calibrated: CHALK_DECIDER=on acts',
    ]);
    trust('https://decider.example.com/base', e);
    expect((await deciderStatus({ config, provider: 'hosted', decider: null, store: store([]), env: e })).trust).toBe(
      'trusted',
    );
  });

  it('reads no store with the decider off, and says unknown when the store cannot be read', async () => {
    const e = env();
    const off = await deciderStatus({
      config: loadConfig({ root: null, env: e }),
      provider: 'hosted',
      decider: null,
      store: store(new Error('must not be read')),
      env: e,
    });
    expect(off.trust).toBe('local');
    expect(calibrationLines(off)[0]).toMatch(/^not read \(CHALK_DECIDER=off/);
    const broken = await deciderStatus({
      config: loadConfig({ root: null, env: { ...e, CHALK_DECIDER: 'on' } }),
      provider: 'hosted',
      decider: null,
      store: store(new Error('connection refused')),
      env: e,
    });
    expect(broken.calibration).toMatchObject({ known: false, calibrated: false });
    expect(calibrationLines(broken)[0]).toMatch(/^unknown: the database could not be read/);
  });

  it("shows plugins' parts in order, skips one with nothing to say, and shows one that throws as its error", async () => {
    const r = await readParts([
      { id: 'none', read: async () => null },
      { id: 'local', read: async () => ({ json: { medianMs: 240 }, lines: ['local install', '  median 240 ms'] }) },
      {
        id: 'broken',
        read: async () => {
          throw new Error('unreadable');
        },
      },
    ]);
    expect(r.parts).toEqual({ local: { medianMs: 240 }, broken: { error: 'unreadable' } });
    expect(r.partLines).toEqual(['local install', '  median 240 ms', 'broken: could not be read: unreadable']);
    const e = env();
    const s = await deciderStatus({
      config: loadConfig({ root: null, env: e }),
      provider: 'hosted',
      decider: null,
      store: store([]),
      env: e,
      parts: [{ id: 'local', read: async () => ({ json: { used: true }, lines: ['x'] }) }],
    });
    expect(s.parts).toEqual({ local: { used: true } });
    expect(s.partLines).toEqual(['x']);
  });
});
