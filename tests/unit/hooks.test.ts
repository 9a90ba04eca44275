import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { createHooks, type PromptContext, type VerdictEvent } from '../../core/kernel/hooks.js';
import { Kernel } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import type { Log } from '../../core/ports/log.js';

function memoryLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const log = {
    lines,
    info: (m: string) => lines.push(`info ${m}`),
    warn: (m: string) => lines.push(`warn ${m}`),
    error: (m: string) => lines.push(`error ${m}`),
    debug: () => {},
    child: () => log,
  };
  return log;
}

const prompt = (): PromptContext => ({
  ticket: 'T-1',
  loop: 1,
  mode: 'continue',
  repo: 'shop',
  runId: 'T-1-1700000000',
  recall: { repo: 'shop', mode: 'spec', query: '# T-1', fingerprint: null, firstError: null },
  prompt: 'base',
  lessons: [],
  sections: [],
});

describe('observer hooks never fail a run', () => {
  test('a throwing onDetain tap is logged with its plugin name and the others still run', async () => {
    const log = memoryLog();
    const hooks = createHooks(log);
    const seen: string[] = [];
    hooks.onDetain.tapPromise('first', async () => {
      seen.push('first');
    });
    hooks.onDetain.tap('broken', () => {
      throw new Error('disk full');
    });
    hooks.onDetain.tapAsync('callback-style', (_e, cb) => cb(new Error('late failure')));
    hooks.onDetain.tapPromise('last', async () => {
      seen.push('last');
    });
    await hooks.onDetain.promise({
      ticket: 'T-1',
      kind: 'failed',
      reason: 'r',
      branch: 'detention/T-1-1',
      lessonId: null,
      next: 'n',
    });
    expect(seen).toEqual(['first', 'last']);
    expect(log.lines).toEqual([
      'warn plugin broken: onDetain tap failed and was skipped: disk full',
      'warn plugin callback-style: onDetain tap failed and was skipped: late failure',
    ]);
  });

  test('a throwing beforePrompt tap passes its input through unchanged', async () => {
    const log = memoryLog();
    const hooks = createHooks(log);
    hooks.beforePrompt.tapPromise('lessons', async (c) => ({
      ...c,
      lessons: [...c.lessons, { seenBefore: 'E', fix: 'use the fixture' }],
    }));
    hooks.beforePrompt.tapPromise('broken', async () => {
      throw new Error('boom');
    });
    hooks.beforePrompt.tap('suffix', (c) => ({ ...c, prompt: `${c.prompt}!` }));
    const out = await hooks.beforePrompt.promise(prompt());
    expect(out.lessons).toEqual([{ seenBefore: 'E', fix: 'use the fixture' }]);
    expect(out.prompt).toBe('base!');
    expect(log.lines).toEqual(['warn plugin broken: beforePrompt tap failed and was skipped: boom']);
  });
});

describe('deciding hooks fail closed', () => {
  const verdict: VerdictEvent = {
    ticket: 'T-1',
    loop: 2,
    verdict: 'spinning',
    rulesMode: 'shadow',
    ended: 'failed',
    reason: 'rubric failed (exit 1)',
    repo: 'shop',
    runId: 'T-1-1700000000',
    callId: null,
    mode: 'retry',
    budget: { deadline: () => 0, left: () => 0, minCallMs: 0 },
    diffstat: async () => null,
    decisionsFile: '/dev/null',
  };

  test('a tap asking to stop is attributed to its plugin', async () => {
    const hooks = createHooks(memoryLog());
    hooks.onVerdict.tapPromise('quiet', async () => undefined);
    hooks.onVerdict.tapPromise('decider', async () => ({ stop: true as const, reason: 'stuck at 0.97' }));
    expect(await hooks.onVerdict.promise(verdict)).toEqual({ stop: true, reason: 'stuck at 0.97', by: 'decider' });
  });

  test('a throwing onVerdict tap stops the run', async () => {
    const log = memoryLog();
    const hooks = createHooks(log);
    hooks.onVerdict.tap('flaky', () => {
      throw new Error('cannot tell');
    });
    const answer = await hooks.onVerdict.promise(verdict);
    expect(answer).toMatchObject({ stop: true, by: 'flaky' });
    expect(answer?.reason).toContain('cannot tell');
    expect(log.lines[0]).toContain('plugin flaky: onVerdict tap failed, stopping the run to be safe');
  });

  test('with no tap asking, the run goes on', async () => {
    const hooks = createHooks(memoryLog());
    hooks.onVerdict.tap('observer', () => undefined);
    expect(await hooks.onVerdict.promise(verdict)).toBeUndefined();
  });
});

describe('the kernel', () => {
  const config = () => loadConfig({ root: null, env: {} });

  test('the last binding of a port wins and is attributed to its plugin', async () => {
    const kernel = new Kernel(config(), memoryLog());
    const forge = (name: string) => ({
      name,
      opensRequests: true,
      status: async () => ({ cli: null, loggedIn: false }),
      openRequest: async () => ({ url: null }),
    });
    await kernel.use({ name: 'one', register: (k) => k.bind(Tokens.Forge, { useValue: forge('one') }) });
    await kernel.use({ name: 'two', register: (k) => k.bind(Tokens.Forge, { useValue: forge('two') }) });
    expect(kernel.resolve(Tokens.Forge).name).toBe('two');
    expect(kernel.boundByPlugin(Tokens.Forge)).toBe('two');
    expect(kernel.plugins).toEqual(['one', 'two']);
  });

  test('selection binds the offer the rule names, unless a plugin bound the port itself', async () => {
    const kernel = new Kernel(config(), memoryLog());
    const forge = (name: string) => ({
      name,
      opensRequests: true,
      status: async () => ({ cli: null, loggedIn: false }),
      openRequest: async () => ({ url: null }),
    });
    kernel.offer('Forge', 'a', { useFactory: () => forge('a') });
    kernel.offer('Forge', 'b', { useFactory: () => forge('b') });
    kernel.select('Forge', () => 'b');
    await kernel.settle();
    expect(kernel.resolve(Tokens.Forge).name).toBe('b');

    const other = new Kernel(config(), memoryLog());
    other.offer('Forge', 'a', { useFactory: () => forge('a') });
    other.select('Forge', () => 'a');
    await other.use({ name: 'third-party', register: (k) => k.bind(Tokens.Forge, { useValue: forge('mine') }) });
    await other.settle();
    expect(other.resolve(Tokens.Forge).name).toBe('mine');
  });

  test('a selection naming nothing offered is one clear error', async () => {
    const kernel = new Kernel(config(), memoryLog());
    kernel.offer('Forge', 'a', { useValue: {} as never });
    kernel.select('Forge', () => 'zzz');
    await expect(kernel.settle()).rejects.toThrow("no Forge implementation named 'zzz' (offered: a)");
  });

  test('resolving an unbound port names it', () => {
    const kernel = new Kernel(config(), memoryLog());
    expect(() => kernel.resolve(Tokens.Embedder)).toThrow('nothing provides Embedder');
    expect(kernel.resolve(Tokens.Clock).now()).toBeInstanceOf(Date);
  });
});
