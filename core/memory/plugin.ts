import { sessionFor } from '../decision/session.js';
import type { PromptContext } from '../kernel/hooks.js';
import type { Kernel, Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import type { Embedder } from '../ports/embedder.js';
import { RECALL_LIMIT } from '../ports/lesson-memory.js';
import { deciderRungs } from './decider-rungs.js';
import { LadderMemory } from './memory.js';
import { promptLesson } from './prompt-lesson.js';
import { storeLadder } from './rungs.js';

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Asks the bound LessonMemory for the loop's lessons and puts them first in the prompt's.
 * Best effort: when recall fails the loop gets no lessons, and the run is warned once.
 */
export function recallTap(kernel: Pick<Kernel, 'resolve' | 'log'>) {
  const warned = new Set<string>();
  return async (ctx: PromptContext): Promise<PromptContext> => {
    try {
      const found = await kernel.resolve(Tokens.LessonMemory).recall(ctx.recall, {
        runId: ctx.runId,
        ticket: ctx.ticket,
        loop: ctx.loop,
        budget: ctx.budget,
        decisionsFile: ctx.decisionsFile,
      });
      return { ...ctx, lessons: [...found.slice(0, RECALL_LIMIT).map(promptLesson), ...ctx.lessons] };
    } catch (err) {
      if (!warned.has(ctx.runId)) {
        warned.add(ctx.runId);
        kernel.log
          .child(`[${ctx.ticket}] `)
          .warn(`lesson recall failed, so this run's loops get no lessons: ${reason(err)}`);
      }
      return ctx;
    }
  };
}

/**
 * The LessonMemory port's default: the recall ladder (exact fingerprint, pg_trgm, then with a
 * decider the semantic candidates and the decider's rerank) over the store, and the
 * `beforePrompt` tap that asks whichever LessonMemory is bound for every loop prompt. A later
 * plugin that binds Tokens.LessonMemory replaces the ladder; the tap stays.
 */
export const lessonMemoryPlugin: Plugin = {
  name: 'lesson-memory',
  register(kernel) {
    // One embedder per kernel (a client keeps its connections); the decider is the session's.
    let embedder: Embedder | null | undefined;
    const embedderOf = () => {
      embedder ??= kernel.has(Tokens.Embedder) ? kernel.resolve(Tokens.Embedder) : null;
      return embedder;
    };
    kernel.bind(Tokens.LessonMemory, {
      useFactory: () => {
        const store = kernel.resolve(Tokens.Store);
        return new LadderMemory([
          ...storeLadder(store),
          ...deciderRungs({
            store,
            config: kernel.config,
            embedder: embedderOf,
            session: sessionFor(kernel),
            log: kernel.log,
          }),
        ]);
      },
    });
    kernel.hooks.beforePrompt.tapPromise('lesson-memory', recallTap(kernel));
  },
};
