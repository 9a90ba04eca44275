import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../core/config/config.js';
import { RunStarts } from '../../plugins/decider-local/background.js';
import { localDeciderPaths } from '../../plugins/decider-local/paths.js';
import { MIN_FREE_MIB, startRule } from '../../plugins/decider-local/start-rule.js';
import { tempDir } from '../helpers/cli.js';

const facts = { mode: 'shadow', moment: 'run-start', freeMiB: 16_000, resolvedLessons: 30, minLessons: 30 } as const;

describe("the local decider's background start rule", () => {
  it('starts at run start only when rerank is possible (resolved lessons >= CHALK_DECIDER_MIN_LESSONS)', () => {
    expect(startRule(facts)).toEqual({ start: true });
    const early = startRule({ ...facts, resolvedLessons: 29 });
    expect(early).toMatchObject({ start: false, why: 'later' });
    expect(early.start === false && early.message).toBe(
      "the local decider will start once a loop fails its rubric (rerank needs CHALK_DECIDER_MIN_LESSONS=30 resolved lessons; this repository's loops can be given 29)",
    );
    expect(startRule({ ...facts, resolvedLessons: null })).toMatchObject({ start: false, why: 'later' });
    expect(startRule({ ...facts, resolvedLessons: 0, minLessons: 0 })).toEqual({ start: true });
  });

  it('a failed loop or a question with no answer starts it whatever the lessons', () => {
    expect(startRule({ ...facts, moment: 'failed-rubric', resolvedLessons: null })).toEqual({ start: true });
    expect(startRule({ ...facts, moment: 'no-answer', resolvedLessons: 0 })).toEqual({ start: true });
  });

  it(`needs ${MIN_FREE_MIB} MiB free at every moment, unless CHALK_DECIDER=on`, () => {
    for (const moment of ['run-start', 'failed-rubric', 'no-answer'] as const) {
      const low = startRule({ ...facts, moment, freeMiB: MIN_FREE_MIB - 0.5 });
      expect(low).toMatchObject({ start: false, why: 'memory' });
      expect(low.start === false && low.message).toBe(
        'not starting the local decider: 6143 MiB of memory free, under the 6144 MiB it needs; going on without it (CHALK_DECIDER=on starts it anyway)',
      );
      expect(startRule({ ...facts, moment, freeMiB: MIN_FREE_MIB })).toEqual({ start: true });
      expect(startRule({ ...facts, moment, mode: 'on', freeMiB: 512 })).toEqual({ start: true });
    }
  });
});

const installed = {
  installedAt: '2026-12-01T00:00:00Z',
  package: 'strands-decider',
  packageVersion: '0.1.0',
  bin: '/nowhere/strands-decider',
  device: null,
  decider: { model: 'StrandsAgents/strands-decider-2B-hobson-v19', revision: 'a'.repeat(40), path: '/m' },
  base: null,
  embed: { model: 'BAAI/bge-small-en-v1.5', revision: 'b'.repeat(40), path: '/e', runtime: '/r' },
  benchMs: 240,
  benchedAt: '2026-12-01T00:00:00Z',
};

function setup(o: { mode?: string; free?: number; lessons?: number | Error; install?: boolean } = {}) {
  const env = { XDG_STATE_HOME: tempDir() };
  if (o.install !== false) {
    const file = localDeciderPaths(env).installed;
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(installed));
  }
  const values: Record<string, string> = {
    CHALK_DECIDER: o.mode ?? 'shadow',
    CHALK_DECIDER_URL: 'http://127.0.0.1:8471',
    CHALK_EMBED_URL: 'http://127.0.0.1:8472',
    CHALK_DECIDER_MIN_LESSONS: '30',
  };
  const config = { str: (k: string) => values[k] ?? '', num: (k: string) => Number(values[k]) } as unknown as Config;
  const lines: string[] = [];
  const launches: string[] = [];
  const counted: string[] = [];
  const starts = new RunStarts({
    config,
    env,
    log: { info: (l) => lines.push(`info ${l}`), warn: (l) => lines.push(`warn ${l}`) },
    freeMiB: () => o.free ?? 16_000,
    resolvedLessons: async (repo) => {
      counted.push(repo);
      if (o.lessons instanceof Error) throw o.lessons;
      return o.lessons ?? 30;
    },
    start: () => {
      launches.push('start');
      return true;
    },
  });
  return { starts, lines, launches, counted };
}

describe("a run's background starts (RunStarts)", () => {
  it('starts at run start with enough lessons, counted for the run repository, and launches once', async () => {
    const s = setup();
    expect(await s.starts.atRunStart('acme')).toBe(true);
    expect(s.counted).toEqual(['acme']);
    expect(s.starts.afterFailedLoop()).toBe(false);
    expect(s.starts.noAnswer()).toBe(false);
    expect(s.launches).toEqual(['start']);
    expect(s.lines).toEqual([]);
  });

  it('with too few lessons says once that the first failing loop starts it, then it does', async () => {
    const s = setup({ lessons: 3 });
    expect(await s.starts.atRunStart('acme')).toBe(false);
    expect(await s.starts.atRunStart('acme')).toBe(false);
    expect(s.lines).toEqual([
      "info the local decider will start once a loop fails its rubric (rerank needs CHALK_DECIDER_MIN_LESSONS=30 resolved lessons; this repository's loops can be given 3)",
    ]);
    expect(s.launches).toEqual([]);
    expect(s.starts.afterFailedLoop()).toBe(true);
    expect(s.launches).toEqual(['start']);
  });

  it('lessons that cannot be counted wait for a failing loop too', async () => {
    const s = setup({ lessons: new Error('store down') });
    expect(await s.starts.atRunStart('acme')).toBe(false);
    expect(s.lines[0]).toMatch(/will start once a loop fails its rubric .*they could not be counted\)$/);
    expect(s.starts.noAnswer()).toBe(true);
  });

  it('with too little memory warns once and never starts it, unless CHALK_DECIDER=on', async () => {
    const s = setup({ free: 4_096 });
    expect(await s.starts.atRunStart('acme')).toBe(false);
    expect(s.starts.afterFailedLoop()).toBe(false);
    expect(s.starts.noAnswer()).toBe(false);
    expect(s.launches).toEqual([]);
    expect(s.lines).toEqual([
      'warn not starting the local decider: 4096 MiB of memory free, under the 6144 MiB it needs; going on without it (CHALK_DECIDER=on starts it anyway)',
    ]);
    const on = setup({ free: 4_096, mode: 'on' });
    expect(await on.starts.atRunStart('acme')).toBe(true);
    expect(on.lines).toEqual([]);
  });

  it('says nothing and counts nothing when there is nothing to start (not installed, or off)', async () => {
    for (const s of [setup({ install: false, lessons: 0 }), setup({ mode: 'off', free: 10, lessons: 0 })]) {
      expect(await s.starts.atRunStart('acme')).toBe(false);
      expect(s.starts.afterFailedLoop()).toBe(false);
      expect(s.counted).toEqual([]);
      expect(s.lines).toEqual([]);
      expect(s.launches).toEqual([]);
    }
  });
});
