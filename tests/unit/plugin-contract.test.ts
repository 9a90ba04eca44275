import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandClass } from 'clipanion';
import { beforeEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { isLightWord, LIGHT_COMMANDS, lightForm } from '../../cli/light-words.cjs';
import { COMMANDS, findCommand, pluginCommands, usageText } from '../../cli/registry.js';
import { type Config, ConfigError, loadConfig, resetConfigWarnings } from '../../core/config/config.js';
import { KEYS } from '../../core/config/keys.js';
import { got, machineKey, repoKey } from '../../core/config/schemas.js';
import { keyTable, pluginKeyTable } from '../../core/config/table.js';
import { configTemplate } from '../../core/config/template.js';
import { selectDecider } from '../../core/decision/select.js';
import { bootKernel } from '../../core/kernel/boot.js';
import type { Offer, OfferDeclaration, Plugin, PluginCommand, PluginCommandContext } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import type { Forge } from '../../core/ports/forge.js';
import type { Log } from '../../core/ports/log.js';
import { DEFAULT_LIMIT } from '../../core/protocol/entry.js';
import { BUILTIN_PLUGINS, BUILTINS } from '../../plugins/builtin.js';
import { tempDir } from '../helpers/cli.js';

const quietLog = (): Log => {
  const log: Log = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, child: () => log };
  return log;
};

/** A third party's plugin as an object: a region key (repo), a token (machine, secret), a forge. */
const acme: Plugin = {
  name: 'acme',
  configuration: [
    repoKey(
      'ACME_REGION',
      'eu',
      'Where acme opens requests',
      z.string().refine((v) => ['eu', 'us'].includes(v), {
        error: (i) => `ACME_REGION must be 'eu' or 'us' ${got(i.input)}`,
      }),
    ),
    machineKey('ACME_TOKEN', '', 'Token for the acme forge', z.string(), { secret: true }),
  ],
  register(kernel) {
    const forge: Forge = {
      name: 'acme',
      opensRequests: true,
      status: async () => ({ cli: `acme ${kernel.config.str('ACME_REGION')}`, loggedIn: true }),
      openRequest: async () => ({ url: 'https://acme.test/1' }),
    };
    kernel.offer('Forge', 'acme', { useValue: forge });
  },
};

const TABLE = pluginKeyTable([...BUILTINS, acme]);

function repoWith(file: string): string {
  const root = tempDir();
  mkdirSync(join(root, '.chalk'));
  writeFileSync(join(root, '.chalk', 'config'), file);
  return root;
}

beforeEach(() => resetConfigWarnings());

describe("a plugin's configuration keys", () => {
  test('are validated with their schema, the bad value one line naming where it came from', () => {
    expect(() => loadConfig({ root: null, env: { ACME_REGION: 'mars' }, keys: TABLE })).toThrow(
      new ConfigError("ACME_REGION must be 'eu' or 'us' (got 'mars') [from the environment]"),
    );
    const root = repoWith('ACME_REGION=moon\n');
    expect(() => loadConfig({ root, env: {}, keys: TABLE, warn: () => {} })).toThrow(
      "ACME_REGION must be 'eu' or 'us' (got 'moon') [from .chalk/config]",
    );
  });

  test('are listed with their source and the plugin that declared them', () => {
    const config = loadConfig({ root: null, env: { ACME_REGION: 'us' }, keys: TABLE });
    const rows = config.display();
    expect(rows.find((r) => r.key === 'ACME_REGION')).toEqual({
      key: 'ACME_REGION',
      value: 'us',
      source: 'env',
      scope: 'repo',
      plugin: 'acme',
    });
    expect(rows.find((r) => r.key === 'CHALK_IMAGE')).toMatchObject({ source: 'default', plugin: 'sandbox-docker' });
    expect(rows.find((r) => r.key === 'CHALK_DECIDER_TOKEN')).toMatchObject({ plugin: 'decider-http' });
    expect(rows.find((r) => r.key === 'CHALK_BASE_BRANCH')).toMatchObject({ plugin: 'core' });
  });

  test('a repository key of a plugin is allowed in .chalk/config; its machine key is not', () => {
    const root = repoWith('ACME_REGION=us\nACME_TOKEN=from-the-repo\n');
    const warnings: string[] = [];
    const config = loadConfig({ root, env: {}, keys: TABLE, warn: (l) => warnings.push(l) });
    expect(config.entry('ACME_REGION')).toMatchObject({ raw: 'us', source: 'file' });
    expect(config.entry('ACME_TOKEN')).toMatchObject({ raw: '', source: 'default' });
    expect(warnings).toEqual(["ignoring ACME_TOKEN in .chalk/config: only this machine's environment sets it"]);
  });

  test('a secret one is masked', () => {
    const config = loadConfig({ root: null, env: { ACME_TOKEN: 'tok-9f8e7d' }, keys: TABLE });
    expect(config.display().find((r) => r.key === 'ACME_TOKEN')?.value).toBe('********');
    expect(JSON.stringify(config.display())).not.toContain('tok-9f8e7d');
  });

  test('a repository key is in the init template, under its plugin; a machine key is not', () => {
    const text = configTemplate(TABLE);
    expect(text).toContain('# --- plugin acme ---\n\n# Where acme opens requests\n# ACME_REGION=eu\n');
    expect(text).toContain('# CHALK_SANDBOX_MEM_MB=2048');
    // The image is this machine's choice: not in a repository's template.
    expect(text).not.toContain('CHALK_IMAGE');
    expect(text).not.toContain('ACME_TOKEN');
    const root = repoWith(text);
    const warnings: string[] = [];
    loadConfig({ root, env: {}, keys: TABLE, warn: (l) => warnings.push(l) });
    expect(warnings).toEqual([]);
  });

  test('while CHALK_PLUGINS plugins have not loaded, their keys in the file are not warned about; then they are known', () => {
    const root = repoWith('CHALK_PLUGINS=./acme.js\nACME_REGION=us\nACME_TYPO=1\n');
    const warnings: string[] = [];
    const early = loadConfig({ root, env: {}, keys: pluginKeyTable(BUILTINS), warn: (l) => warnings.push(l) });
    expect(warnings).toEqual([]);
    expect(early.entries.has('ACME_REGION')).toBe(false);
    const full = early.withKeys(TABLE);
    expect(full.entry('ACME_REGION')).toMatchObject({ raw: 'us', source: 'file', plugin: 'acme' });
    expect(warnings).toEqual(['ignoring unknown key in .chalk/config: ACME_TYPO']);
    expect(() => early.withKeys(pluginKeyTable([acme, { name: 'x', configuration: [] }]))).not.toThrow();
  });

  test('a key declared twice is refused with one line naming both declarers', () => {
    const twin: Plugin = { name: 'twin', configuration: [repoKey('ACME_REGION', 'us', 'mine')], register() {} };
    expect(() => pluginKeyTable([acme, twin])).toThrow(
      new ConfigError(
        'configuration key ACME_REGION is declared twice, by plugin acme and by plugin twin; remove one of the plugins from CHALK_PLUGINS',
      ),
    );
    const squatter: Plugin = { name: 'squat', configuration: [repoKey('CHALK_TEST_CMD', 'true', 'x')], register() {} };
    expect(() => pluginKeyTable([squatter])).toThrow(
      'configuration key CHALK_TEST_CMD is declared twice, by core and by plugin squat',
    );
    expect(() => keyTable([{ plugin: 'core', keys: KEYS }])).not.toThrow();
  });

  test('bootKernel refuses a key declared twice before any plugin registers', async () => {
    let registered = false;
    const squatter: Plugin = {
      name: 'squat',
      configuration: [machineKey('CHALK_IMAGE', 'evil:latest', 'mine')],
      register() {
        registered = true;
      },
    };
    const config = loadConfig({ root: null, env: {}, keys: pluginKeyTable(BUILTINS) });
    await expect(
      bootKernel({ config, log: quietLog(), builtins: [...BUILTIN_PLUGINS, async () => squatter] }),
    ).rejects.toThrow('configuration key CHALK_IMAGE is declared twice, by plugin sandbox-docker and by plugin squat');
    expect(registered).toBe(false);
  });
});

describe('the built-in plugins declare their own keys', () => {
  test("each built-in's declaration in plugins/builtin.ts is the plugin's own", async () => {
    for (const entry of BUILTINS) {
      const plugin = await entry.load();
      expect(plugin.name).toBe(entry.name);
      expect((plugin.configuration ?? []).map((k) => k.name)).toEqual((entry.configuration ?? []).map((k) => k.name));
      expect(plugin.commands ?? []).toEqual(entry.commands ?? []);
    }
  });

  test("core's table no longer holds the sandbox's, OTEL's or the hosted decider's keys", () => {
    const core = KEYS.map((k) => k.name);
    for (const moved of ['CHALK_IMAGE', 'CHALK_SANDBOX_MEM_MB', 'CHALK_OTEL_ENDPOINT', 'CHALK_DECIDER_TOKEN']) {
      expect(core).not.toContain(moved);
    }
    // What core itself reads stays core's.
    expect(core).toEqual(expect.arrayContaining(['CHALK_OUTPUT_CAP_MB', 'CHALK_DECIDER_URL', 'CHALK_FORGE']));
  });

  test('a kernel booted with the built-ins reads every one of their keys', async () => {
    const config = loadConfig({ root: null, env: { CHALK_SANDBOX_MEM_MB: '1024' } });
    expect(config.entries.has('CHALK_SANDBOX_MEM_MB')).toBe(false);
    const kernel = await bootKernel({ config, log: quietLog(), builtins: BUILTIN_PLUGINS });
    expect(kernel.config.entry('CHALK_SANDBOX_MEM_MB')).toMatchObject({ value: 1024, plugin: 'sandbox-docker' });
  });
});

describe('selection by name', () => {
  const boot = (env: Record<string, string>, extra: Plugin[] = [acme]) =>
    bootKernel({
      config: loadConfig({ root: null, env, keys: pluginKeyTable(BUILTINS) }),
      log: quietLog(),
      builtins: [...BUILTIN_PLUGINS, ...extra.map((p) => async () => p)],
    });

  test('CHALK_FORGE names any forge a plugin offered', async () => {
    const kernel = await boot({ CHALK_FORGE: 'acme' });
    expect(kernel.selected.get('Forge')).toBe('acme');
    const forge = kernel.resolve(Tokens.Forge);
    expect(forge.name).toBe('acme');
    expect(await forge.status('/')).toEqual({ cli: 'acme eu', loggedIn: true });
    expect((await boot({ CHALK_FORGE: 'github' })).resolve(Tokens.Forge).name).toBe('github');
  });

  test('a name nothing offered fails the boot with one line listing what was offered', async () => {
    await expect(boot({ CHALK_FORGE: 'bitbucket' })).rejects.toThrow(
      "CHALK_FORGE=bitbucket: no plugin offers a Forge named 'bitbucket' (offered: none, github, gitlab, acme)",
    );
  });

  test('whether a forge opens requests is its capability, not its name', async () => {
    const none = (await boot({ CHALK_FORGE: 'none' })).resolve(Tokens.Forge);
    expect(none.opensRequests).toBe(false);
    expect((await boot({ CHALK_FORGE: 'gitlab' })).resolve(Tokens.Forge).opensRequests).toBe(true);
  });
});

describe('the decider rule (core/decision/select.ts): what the offers declare', () => {
  // The declarations decider-http and decider-local make; core names neither.
  const hosted: Offer = { name: 'hosted', auto: () => true };
  const local: Offer = { name: 'local', auto: (c) => c.str('CHALK_DECIDER_URL').startsWith('http://localhost') };
  const rule = (env: Record<string, string>, offers: Offer[]) => selectDecider(loadConfig({ root: null, env }), offers);

  test('auto binds the last-offered decider whose declaration fits', () => {
    expect(rule({ CHALK_DECIDER_URL: 'http://localhost:9000' }, [hosted, local])).toBe('local');
    expect(rule({ CHALK_DECIDER_URL: 'https://decider.example.com' }, [hosted, local])).toBe('hosted');
    expect(rule({ CHALK_DECIDER_URL: 'http://localhost:9000' }, [local, hosted])).toBe('hosted');
  });
  test('an offer that declares nothing is never chosen by auto, only by name', () => {
    expect(rule({}, [hosted, { name: 'acme' }])).toBe('hosted');
    expect(rule({}, [{ name: 'acme' }])).toBeNull();
    expect(rule({ CHALK_DECIDER_PROVIDER: 'acme' }, [hosted, local, { name: 'acme' }])).toBe('acme');
  });
  test('auto with nothing offered binds nothing', () => {
    expect(rule({}, [])).toBeNull();
  });
  test('through the kernel: a loopback URL picks local only once decider-local offers it', async () => {
    const config = loadConfig({ root: null, env: {}, keys: pluginKeyTable(BUILTINS) });
    const kernel = await bootKernel({ config, log: quietLog(), builtins: BUILTIN_PLUGINS });
    // The default URL is on this machine, but nothing is installed here: decider-local offers nothing.
    expect(kernel.offered('Decider')).toEqual(['hosted']);
    expect(kernel.selected.get('Decider')).toBe('hosted');
  });
  test('through the kernel: the hosted decider is bound by core, a named one missing fails the boot', async () => {
    const config = (env: Record<string, string>) => loadConfig({ root: null, env, keys: pluginKeyTable(BUILTINS) });
    const kernel = await bootKernel({ config: config({}), log: quietLog(), builtins: BUILTIN_PLUGINS });
    expect(kernel.selected.get('Decider')).toBe('hosted');
    await expect(
      bootKernel({ config: config({ CHALK_DECIDER_PROVIDER: 'acme' }), log: quietLog(), builtins: BUILTIN_PLUGINS }),
    ).rejects.toThrow("CHALK_DECIDER_PROVIDER=acme: no plugin offers a Decider named 'acme' (offered: hosted)");
  });
});

describe('the decider rule, through the kernel with test plugins offering deciders', () => {
  const fakeDecider = (name: string) => ({
    name,
    entry: { id: name, url: 'http://127.0.0.1:1', maxContextTokens: 4096, limit: DEFAULT_LIMIT },
    unavailable: () => null,
    health: async () => ({ healthy: true, status: 'ok', via: 'health' as const }),
    decide: async () => {
      throw new Error('not asked');
    },
  });
  const offering = (name: string, offer: string, auto?: OfferDeclaration['auto']): Plugin => ({
    name,
    register(kernel) {
      kernel.offer('Decider', offer, { useValue: fakeDecider(name) }, auto ? { auto } : {});
    },
  });
  const onThisMachine = (c: Config) => c.str('CHALK_DECIDER_URL').startsWith('http://127.0.0.1');
  const boot = (env: Record<string, string>) =>
    bootKernel({
      config: loadConfig({ root: null, env, keys: pluginKeyTable(BUILTINS) }),
      log: quietLog(),
      builtins: [
        ...BUILTIN_PLUGINS,
        async () => offering('local-test', 'local', onThisMachine),
        async () => offering('acme-test', 'acme'),
      ],
    });

  test('auto binds the offer that declares it fits (a loopback URL: local); else the hosted one', async () => {
    const local = await boot({ CHALK_DECIDER_URL: 'http://127.0.0.1:8471' });
    expect(local.selected.get('Decider')).toBe('local');
    expect(local.resolve(Tokens.Decider).name).toBe('local-test');
    const remote = await boot({ CHALK_DECIDER_URL: 'https://decider.example.com' });
    expect(remote.selected.get('Decider')).toBe('hosted');
    expect(remote.resolve(Tokens.Decider).name).toBe('http');
  });

  test("a third party's decider is chosen by name with CHALK_DECIDER_PROVIDER, whatever the URL", async () => {
    const k = await boot({ CHALK_DECIDER_PROVIDER: 'acme', CHALK_DECIDER_URL: 'http://127.0.0.1:8471' });
    expect(k.selected.get('Decider')).toBe('acme');
    expect(k.resolve(Tokens.Decider).name).toBe('acme-test');
  });
});

describe("a plugin's commands (cli/registry.ts)", () => {
  const clipanion = () => import('clipanion');
  const hello: PluginCommand = {
    path: ['acme', 'hello'],
    usage: 'chalk acme hello [NAME]',
    load: async () => (await COMMANDS[0]!.load()) as CommandClass<PluginCommandContext>,
  };

  test('are found by their words after no built-in matched, and shown in help under their plugin', () => {
    const entries = pluginCommands([{ name: 'acme', commands: [hello] }], clipanion);
    expect(findCommand(['acme', 'hello'])).toBeUndefined();
    expect(findCommand(['acme', 'hello', 'bob'], entries)).toMatchObject({ plugin: 'acme', group: 'Plugins' });
    expect(usageText('1.0.0', entries)).toContain('Plugins\n  chalk acme hello [NAME]  (plugin acme)\n');
  });

  test("may not take a built-in command's word, nor another plugin's words", () => {
    const shadow = { ...hello, path: ['db', 'nuke'], usage: 'chalk db nuke' };
    expect(() => pluginCommands([{ name: 'acme', commands: [shadow] }], clipanion)).toThrow(
      "plugin acme's command 'chalk db nuke' starts with 'db', a built-in command's word; rename it",
    );
    expect(() =>
      pluginCommands(
        [
          { name: 'acme', commands: [hello] },
          { name: 'other', commands: [hello] },
        ],
        clipanion,
      ),
    ).toThrow("plugins acme and other both add the command 'chalk acme hello'");
  });

  test('a word the status bundle serves (cli/light-words.cts) selects that one command whatever follows, and no plugin may take it', () => {
    // The binary hands every such word to the bundle before main.js could look for another command.
    for (const [word, usage] of Object.entries(LIGHT_COMMANDS)) {
      expect(COMMANDS.filter((c) => c.path[0] === word)).toEqual([
        expect.objectContaining({ path: [word], usage, group: 'Work' }),
      ]);
      expect(findCommand([word, 'sub', '--flag'])?.path).toEqual([word]);
      expect(() =>
        pluginCommands([{ name: 'acme', commands: [{ ...hello, path: [word, 'more'], usage: 'x' }] }], clipanion),
      ).toThrow(`starts with '${word}', a built-in command's word`);
    }
    expect(isLightWord('status')).toBe(true);
    expect(isLightWord('config')).toBe(false);
    expect(isLightWord('toString')).toBe(false);
  });

  test("the bundle takes its command lines exactly as written; every other spelling is main.js's to parse", () => {
    expect(lightForm(['status'])).toEqual({ word: 'status', json: false });
    expect(lightForm(['status', '--json'])).toEqual({ word: 'status', json: true });
    for (const argv of [
      [],
      ['config'],
      ['toString'],
      ['status', '--help'],
      ['status', '-h'],
      ['status', '--json', '--json'],
      ['status', '--json=true'],
      ['status', '--jsn'],
      ['status', 'PROJ-1'],
      ['--json', 'status'],
    ])
      expect(lightForm(argv), argv.join(' ')).toBeNull();
  });
});
