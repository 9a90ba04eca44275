import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { pluginKeyTable } from '../../core/config/table.js';
import { bootKernel } from '../../core/kernel/boot.js';
import { Tokens } from '../../core/kernel/tokens.js';
import type { Log } from '../../core/ports/log.js';
import { BUILTIN_PLUGINS, BUILTINS } from '../../plugins/builtin.js';
import { localDeciderCheck, localIsBound } from '../../plugins/decider-local/index.js';
import { localDeciderPaths } from '../../plugins/decider-local/paths.js';
import { describeRunning, localStatusPart } from '../../plugins/decider-local/status.js';
import { tempDir } from '../helpers/cli.js';

const quiet: Log = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, child: () => quiet };

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

async function boot(env: Record<string, string>) {
  const config = loadConfig({ root: null, env, keys: pluginKeyTable(BUILTINS) });
  return bootKernel({ config, log: quiet, builtins: BUILTIN_PLUGINS });
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the local decider plugin', () => {
  it('offers `local` only once chalk decider up installed it; then a loopback URL selects it', async () => {
    vi.stubEnv('XDG_STATE_HOME', tempDir());
    expect((await boot({})).selected.get('Decider')).toBe('hosted');
    const file = localDeciderPaths().installed;
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(installed));
    const kernel = await boot({});
    expect(kernel.selected.get('Decider')).toBe('local');
    expect(localIsBound(kernel)).toBe(true);
    expect(localIsBound(await boot({ CHALK_DECIDER_PROVIDER: 'hosted' }))).toBe(false);
    const d = kernel.resolve(Tokens.Decider);
    expect(d.name).toBe('local');
    await d.close?.();
    expect((await boot({ CHALK_DECIDER_URL: 'https://decider.example.com' })).selected.get('Decider')).toBe('hosted');
    expect((await boot({})).resolve(Tokens.Embedder).dimensions).toBe(384);
  });

  it("doctor's line names the revisions and the median, and says when the machine is too slow for on", async () => {
    const env = { XDG_STATE_HOME: tempDir() };
    const config = loadConfig({ root: null, env: {}, keys: pluginKeyTable(BUILTINS) });
    expect(await localDeciderCheck(config, env).run()).toEqual({
      status: '--',
      label: 'local decider',
      detail: 'not installed (chalk decider up installs it)',
    });
    const file = localDeciderPaths(env).installed;
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(installed));
    expect(await localDeciderCheck(config, env).run()).toEqual({
      status: 'ok',
      label: 'local decider',
      detail:
        'strands-decider-2B-hobson-v19@aaaaaaa, bge-small-en-v1.5@bbbbbbb, median 240 ms, stopped (a run starts it)',
    });
    writeFileSync(file, JSON.stringify({ ...installed, benchMs: 1400 }));
    expect(((await localDeciderCheck(config, env).run()) as { detail?: string }).detail).toMatch(
      /median 1400 ms \(over 1 s: CHALK_DECIDER=on records as shadow\)/,
    );
  });

  it("decider status's local part: nothing when not installed; then the revisions, device, median, what runs and whether it is used", async () => {
    const env = { XDG_STATE_HOME: tempDir() };
    const config = loadConfig({ root: null, env: {}, keys: pluginKeyTable(BUILTINS) });
    expect(await localStatusPart(config, env).read()).toBeNull();
    const file = localDeciderPaths(env).installed;
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify({ ...installed, device: 'cuda' }));
    const part = await localStatusPart(config, env).read();
    expect(part?.json).toMatchObject({
      device: 'cuda',
      decider: { model: 'StrandsAgents/strands-decider-2B-hobson-v19', revision: 'a'.repeat(40) },
      embed: { model: 'BAAI/bge-small-en-v1.5', revision: 'b'.repeat(40) },
      medianMs: 240,
      slow: false,
      running: { decider: false, embed: false, watcher: false },
      used: true,
    });
    expect(part?.lines.join('\n')).toMatch(
      /decider +strands-decider-2B-hobson-v19@aaaaaaa \(strands-decider 0\.1\.0, --device cuda\)/,
    );
    expect(part?.lines.join('\n')).toMatch(/services +stopped \(a run starts it\)/);
    expect(((await localDeciderCheck(config, env).run()) as { detail?: string }).detail).toContain('--device cuda');
    const remote = loadConfig({
      root: null,
      env: { CHALK_DECIDER_URL: 'https://decider.example.com' },
      keys: pluginKeyTable(BUILTINS),
    });
    const away = await localStatusPart(remote, env).read();
    expect(away?.json).toMatchObject({ used: false });
    expect(away?.lines.join('\n')).toMatch(/used +no: CHALK_DECIDER_URL is on another machine/);
    writeFileSync(file, JSON.stringify({ ...installed, benchMs: null }));
    expect((await localStatusPart(config, env).read())?.json).toMatchObject({ medianMs: null, slow: true });
  });

  it('at the start of a run (runStart) with too few lessons for rerank, a run says the first failing loop starts it', async () => {
    vi.stubEnv('XDG_STATE_HOME', tempDir());
    const file = localDeciderPaths().installed;
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(installed));
    const said: string[] = [];
    const log: Log = { ...quiet, info: (l) => said.push(l), warn: (l) => said.push(l), child: () => log };
    // CHALK_DECIDER=on: the memory rule does not apply, so the line does not depend on this machine's free memory.
    const config = loadConfig({ root: null, env: { CHALK_DECIDER: 'on' }, keys: pluginKeyTable(BUILTINS) });
    const kernel = await bootKernel({ config, log, builtins: BUILTIN_PLUGINS });
    const asked: Array<string | null | undefined> = [];
    kernel.bind(Tokens.Store, {
      useValue: {
        lessons: {
          list: async (q: { repo?: string | null }) => {
            asked.push(q.repo);
            return [{}, {}];
          },
        },
      } as never,
    });
    await kernel.hooks.runStart.promise({ ticket: 'T-1', repo: 'acme-1234', runId: 'T-1-1700000000', resumed: false });
    expect(asked).toEqual(['acme-1234']);
    expect(said).toContain(
      "the local decider will start once a loop fails its rubric (rerank needs CHALK_DECIDER_MIN_LESSONS=30 resolved lessons; this repository's loops can be given 2)",
    );
  });

  it('says which service runs', () => {
    expect(describeRunning({ decider: true, embed: true, watcher: true })).toBe('running');
    expect(describeRunning({ decider: true, embed: true, watcher: false })).toBe('running (no idle watcher)');
    expect(describeRunning({ decider: true, embed: false, watcher: true })).toMatch(/^embedding service stopped/);
    expect(describeRunning({ decider: false, embed: true, watcher: true })).toMatch(/^decider stopped/);
  });

  it('a record that is not one counts as not installed', async () => {
    vi.stubEnv('XDG_STATE_HOME', tempDir());
    const file = localDeciderPaths().installed;
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '{"package": 1}');
    expect((await boot({})).selected.get('Decider')).toBe('hosted');
  });
});
