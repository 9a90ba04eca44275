import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { bootKernel } from '../../core/kernel/boot.js';
import type { PromptContext } from '../../core/kernel/hooks.js';
import type { Plugin } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import { LadderMemory } from '../../core/memory/memory.js';
import { recallTap } from '../../core/memory/plugin.js';
import type { LessonMemory } from '../../core/ports/lesson-memory.js';
import { CollectingLog } from '../../core/testing/log.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';

const ctx = (runId: string): PromptContext => ({
  ticket: 'T-1',
  loop: 1,
  mode: 'continue',
  repo: 'shop',
  runId,
  recall: { repo: 'shop', mode: 'spec', query: '# T-1', fingerprint: null, firstError: null },
  prompt: 'p',
  lessons: [{ seenBefore: 'from an earlier tap', fix: 'kept' }],
  sections: [],
});

describe('the lesson-memory plugin', () => {
  it('binds the ladder as the built-in LessonMemory, and a later plugin replaces it', async () => {
    const config = loadConfig({ root: null, env: {} });
    const builtin = await bootKernel({ config, log: new CollectingLog(), builtins: BUILTIN_PLUGINS });
    expect(builtin.boundByPlugin(Tokens.LessonMemory)).toBe('lesson-memory');
    expect(builtin.resolve(Tokens.LessonMemory)).toBeInstanceOf(LadderMemory);
    const mine: LessonMemory = { recall: async () => [] };
    const theirs: Plugin = { name: 'theirs', register: (k) => k.bind(Tokens.LessonMemory, { useValue: mine }) };
    const replaced = await bootKernel({
      config,
      log: new CollectingLog(),
      builtins: [...BUILTIN_PLUGINS, async () => theirs],
    });
    expect(replaced.boundByPlugin(Tokens.LessonMemory)).toBe('theirs');
    expect(replaced.resolve(Tokens.LessonMemory)).toBe(mine);
  });

  it('puts the recalled lessons first, and warns once per run when recall fails', async () => {
    const log = new CollectingLog();
    let fail = true;
    const memory: LessonMemory = {
      recall: async () => {
        if (fail) throw new Error('store down');
        return [
          {
            id: 9,
            repo: 'shop',
            ticket: 'OLD-1',
            signature: 'rubric failed',
            resolution: 'the note',
            lesson: 'the lesson',
            resolvedBy: 'me',
            createdAt: new Date(0),
            resolvedAt: new Date(0),
            runId: null,
            fingerprint: 'f',
            firstError: null,
            scope: 'repo',
            forgottenAt: null,
            similarity: 1,
            cosine: null,
            how: 'exact',
          },
        ];
      },
    };
    const tap = recallTap({ resolve: (() => memory) as never, log });
    for (const runId of ['T-1-1', 'T-1-1', 'T-1-2']) expect((await tap(ctx(runId))).lessons).toHaveLength(1);
    expect(log.lines.map((l) => l.text)).toEqual([
      "[T-1] lesson recall failed, so this run's loops get no lessons: store down",
      "[T-1] lesson recall failed, so this run's loops get no lessons: store down",
    ]);
    fail = false;
    expect((await tap(ctx('T-1-3'))).lessons).toEqual([
      { id: 9, seenBefore: 'rubric failed', fix: 'the lesson', how: 'exact' },
      { seenBefore: 'from an earlier tap', fix: 'kept' },
    ]);
  });
});
