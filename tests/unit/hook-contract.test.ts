import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { bootKernel, refuseDuplicateNames } from '../../core/kernel/boot.js';
import { createHooks, HOOK_KINDS, type HookName, type SandboxStartEvent } from '../../core/kernel/hooks.js';
import { Kernel, type Plugin } from '../../core/kernel/kernel.js';
import { CollectingLog } from '../../core/testing/index.js';

/** The hook contract's kernel rules (core/kernel/hooks.ts); the run's side is tests/inprocess/hooks-inprocess.test.ts. */

const sandboxEvent = (): SandboxStartEvent => ({
  ticket: 'T-1',
  repo: 'shop',
  image: 'img',
  purpose: 'run',
  env: {},
});

describe('the hooks object', () => {
  test('is frozen: a plugin taps a hook, it cannot replace or add one', () => {
    const hooks = createHooks(new CollectingLog());
    expect(Object.isFrozen(hooks)).toBe(true);
    expect(() => {
      (hooks as unknown as Record<string, unknown>).onVerdict = null;
    }).toThrow(TypeError);
    expect(() => {
      (hooks as unknown as Record<string, unknown>).mine = 1;
    }).toThrow(TypeError);
  });

  test('has exactly the hooks HOOK_KINDS classifies, each of the kind its tapable class is', () => {
    const hooks = createHooks(new CollectingLog());
    expect(Object.keys(hooks).sort()).toEqual(Object.keys(HOOK_KINDS).sort());
    const classOf: Record<string, string> = {
      observe: 'AsyncSeriesHook',
      transform: 'AsyncSeriesWaterfallHook',
      decide: 'AsyncSeriesBailHook',
    };
    for (const name of Object.keys(hooks) as HookName[]) {
      expect([name, hooks[name].constructor.name]).toEqual([name, classOf[HOOK_KINDS[name]]]);
    }
  });

  test('every hook is documented where it is declared: kind, when, how often', () => {
    const source = readFileSync(new URL('../../core/kernel/hooks.ts', import.meta.url), 'utf8');
    const body = source.slice(source.indexOf('export interface LoopHooks'));
    for (const name of Object.keys(HOOK_KINDS) as HookName[]) {
      const doc = body.match(new RegExp(`/\\*\\*([^]*?)\\*/\\s*readonly ${name}:`))?.[1] ?? '';
      expect([name, doc]).toEqual([name, expect.stringContaining(`${HOOK_KINDS[name]}. When:`)]);
      expect([name, doc]).toEqual([name, expect.stringContaining('How often:')]);
    }
  });
});

describe('beforeSandboxStart is a transform', () => {
  test('taps return the event with more env; a failing one is skipped and its input passes on', async () => {
    const log = new CollectingLog();
    const hooks = createHooks(log);
    hooks.beforeSandboxStart.tapPromise('one', async (e) => ({ ...e, env: { ...e.env, ONE: '1' } }));
    hooks.beforeSandboxStart.tapPromise('broken', async () => {
      throw new Error('no env today');
    });
    hooks.beforeSandboxStart.tap('two', (e) => ({ ...e, env: { ...e.env, TWO: '2' } }));
    const out = await hooks.beforeSandboxStart.promise(sandboxEvent());
    expect(out.env).toEqual({ ONE: '1', TWO: '2' });
    expect(log.text()).toContain('plugin broken: beforeSandboxStart tap failed and was skipped: no env today');
  });
});

describe('runStart and runEnd are observers', () => {
  test('a failing tap is skipped; the others run', async () => {
    const log = new CollectingLog();
    const hooks = createHooks(log);
    const seen: string[] = [];
    hooks.runEnd.tap('broken', () => {
      throw new Error('gone');
    });
    hooks.runEnd.tap('after', (e) => {
      seen.push(e.ending);
    });
    await hooks.runEnd.promise({ ticket: 'T-1', repo: 'shop', runId: 'T-1-1', resumed: false, ending: 'detained' });
    expect(seen).toEqual(['detained']);
    expect(log.text()).toContain('plugin broken: runEnd tap failed and was skipped: gone');
  });
});

describe('plugin names are unique', () => {
  const plugin = (name: string): Plugin => ({ name, register() {} });

  test('the kernel refuses a second plugin of a name it registered', async () => {
    const kernel = new Kernel(loadConfig({ root: null, env: {} }), new CollectingLog());
    await kernel.use(plugin('acme'));
    await expect(kernel.use(plugin('acme'))).rejects.toThrow("two plugins are named 'acme': rename one");
    expect(kernel.plugins).toEqual(['acme']);
  });

  test('boot refuses a duplicate before any plugin registers, naming both', async () => {
    let registered = 0;
    const counted = (name: string): Plugin => ({
      name,
      register() {
        registered++;
      },
    });
    const boot = bootKernel({
      config: loadConfig({ root: null, env: {} }),
      log: new CollectingLog(),
      builtins: [async () => counted('forge-github'), async () => counted('forge-github')],
    });
    await expect(boot).rejects.toThrow(
      "two plugins are named 'forge-github': a built-in plugin and a built-in plugin; rename one, or take one out of CHALK_PLUGINS",
    );
    expect(registered).toBe(0);
  });

  test('the line names where each came from', () => {
    const a = plugin('acme');
    const b = plugin('acme');
    const where = new Map([
      [a, "CHALK_PLUGINS entry './a.mjs'"],
      [b, "CHALK_PLUGINS entry './b.mjs'"],
    ]);
    expect(() => refuseDuplicateNames([plugin('x'), a, b], (p) => where.get(p) ?? 'a built-in plugin')).toThrow(
      "two plugins are named 'acme': CHALK_PLUGINS entry './a.mjs' and CHALK_PLUGINS entry './b.mjs'; rename one, or take one out of CHALK_PLUGINS",
    );
    expect(() => refuseDuplicateNames([plugin('x'), a], () => '')).not.toThrow();
  });
});
