import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import {
  ConfigError,
  type LoadOptions,
  loadConfig as loadWith,
  parseConfigFile,
  resetConfigWarnings,
} from '../../core/config/config.js';
import { MAX_TIMER_MS } from '../../core/config/keys.js';
import { chosenBy, describeSetting, proposedLine } from '../../core/config/limits.js';
import { positiveInt, repoKey } from '../../core/config/schemas.js';
import { keyTable, pluginKeyTable } from '../../core/config/table.js';
import { configTemplate } from '../../core/config/template.js';
import { BUILTINS } from '../../plugins/builtin.js';
import { tempDir } from '../helpers/cli.js';

/** The table the CLI reads before any CHALK_PLUGINS plugin loads: core's keys and the built-in plugins'. */
const KEYS = pluginKeyTable(BUILTINS);
const loadConfig = (opts: LoadOptions) => loadWith({ keys: KEYS, ...opts });

function repoWith(file: string | null): string {
  const root = tempDir();
  if (file !== null) {
    mkdirSync(join(root, '.chalk'));
    writeFileSync(join(root, '.chalk', 'config'), file);
  }
  return root;
}

beforeEach(() => resetConfigWarnings());

describe('precedence: environment > file > default', () => {
  const cases: Array<{ name: string; env?: string; file?: string; want: string; source: string }> = [
    { name: 'default only', want: 'main', source: 'default' },
    { name: 'file over default', file: 'trunk', want: 'trunk', source: 'file' },
    { name: 'env over file', env: 'develop', file: 'trunk', want: 'develop', source: 'env' },
    { name: 'env over default', env: 'develop', want: 'develop', source: 'env' },
    { name: 'empty env means the default, not the file', env: '', file: 'trunk', want: 'main', source: 'default' },
    { name: 'empty file value means the default', file: '', want: 'main', source: 'default' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const root = repoWith(c.file === undefined ? null : `CHALK_BASE_BRANCH=${c.file}\n`);
      const env = c.env === undefined ? {} : { CHALK_BASE_BRANCH: c.env };
      const config = loadConfig({ root, env, warn: () => {} });
      expect(config.str('CHALK_BASE_BRANCH')).toBe(c.want);
      expect(config.entry('CHALK_BASE_BRANCH').source).toBe(c.source);
    });
  }
});

describe('the file format', () => {
  test('comments and blank lines are skipped; the value is everything after the first =', () => {
    const parsed = parseConfigFile('# a comment\n\n  # indented comment\nCHALK_TEST_CMD=npm test -- --grep=a=b\n');
    expect(parsed.values.get('CHALK_TEST_CMD')).toBe('npm test -- --grep=a=b');
  });
  test('no quotes are removed and nothing is expanded or executed', () => {
    const parsed = parseConfigFile('CHALK_SETUP_CMD="$(touch /tmp/chalk-pwned)" $HOME\n');
    expect(parsed.values.get('CHALK_SETUP_CMD')).toBe('"$(touch /tmp/chalk-pwned)" $HOME');
  });
  test('a malformed line names the line and what to write', () => {
    expect(() => parseConfigFile('CHALK_TEST_CMD=ok\nlowercase=1\n')).toThrow(
      /\.chalk\/config line 2: expected KEY=value/,
    );
    expect(() => parseConfigFile('JUSTAWORD\n')).toThrow(ConfigError);
  });
});

describe('unknown and machine keys', () => {
  test('an unknown key warns once, naming it', () => {
    const root = repoWith('CHALK_NOPE=1\nCHALK_NOPE=2\n');
    const warnings: string[] = [];
    loadConfig({ root, env: {}, warn: (l) => warnings.push(l) });
    loadConfig({ root, env: {}, warn: (l) => warnings.push(l) });
    expect(warnings).toEqual(['ignoring unknown key in .chalk/config: CHALK_NOPE']);
  });
  test('a machine key in the file has no effect, and the warning says only the environment sets it', () => {
    const machineKeys = KEYS.filter((k) => k.scope === 'machine').map((k) => k.name);
    expect(machineKeys).toEqual(
      expect.arrayContaining([
        'CHALK_DATABASE_URL',
        'CHALK_DECIDER_URL',
        'CHALK_DECIDER_TOKEN',
        'CHALK_EMBED_URL',
        'CHALK_OTEL_ENDPOINT',
        'CHALK_DB_TIMEOUT',
        'CHALK_DECIDER_IDLE_MINUTES',
        'CHALK_DECIDER_TIMEOUT',
        'CHALK_DECIDER_LIMIT',
        'CHALK_DECIDER_CONTEXT_TOKENS',
      ]),
    );
    const root = repoWith('CHALK_DECIDER_URL=https://evil.example.com\nCHALK_DATABASE_URL=postgres://x@evil/db\n');
    const warnings: string[] = [];
    const config = loadConfig({ root, env: {}, warn: (l) => warnings.push(l) });
    expect(config.str('CHALK_DECIDER_URL')).toBe('http://127.0.0.1:8471');
    expect(config.str('CHALK_DATABASE_URL')).toBe('');
    expect(warnings).toEqual([
      "ignoring CHALK_DECIDER_URL in .chalk/config: only this machine's environment sets it",
      "ignoring CHALK_DATABASE_URL in .chalk/config: only this machine's environment sets it",
    ]);
  });
  test('machine keys are read from the environment', () => {
    const config = loadConfig({ root: null, env: { CHALK_DECIDER_URL: 'https://d.example.com' } });
    expect(config.entry('CHALK_DECIDER_URL')).toMatchObject({ raw: 'https://d.example.com', source: 'env' });
  });
});

describe("a repository's limits: lower freely, higher only up to this machine's ceiling", () => {
  const greedy = [
    'CHALK_SANDBOX_MEM_MB=12000',
    'CHALK_TMPFS_SIZE=12g',
    'CHALK_SANDBOX_CPUS=2',
    'CHALK_RUBRIC_TIMEOUT=86400',
    'CHALK_SETUP_TIMEOUT=86400',
    'CHALK_AGENT_TIMEOUT=86400',
    'CHALK_OUTPUT_CAP_MB=4096',
    'CHALK_BUDGET_USD=500',
    'CHALK_MAX_LOOPS=1000',
    'CHALK_MAX_RETRIES=100',
    'CHALK_REVIEW_ROUNDS=50',
  ].join('\n');

  test('over the default ceilings, each is held to its ceiling, and says what it asked', () => {
    const config = loadConfig({ root: repoWith(greedy), env: {} });
    const held = Object.fromEntries(
      [...config.entries.values()].filter((e) => e.heldFrom !== undefined).map((e) => [e.key, [e.heldFrom, e.raw]]),
    );
    expect(held).toEqual({
      CHALK_SANDBOX_MEM_MB: ['12000', '4096'],
      CHALK_TMPFS_SIZE: ['12g', '8g'],
      CHALK_RUBRIC_TIMEOUT: ['86400', '3600'],
      CHALK_SETUP_TIMEOUT: ['86400', '3600'],
      CHALK_AGENT_TIMEOUT: ['86400', '7200'],
      CHALK_OUTPUT_CAP_MB: ['4096', '256'],
      CHALK_BUDGET_USD: ['500', '1.00'],
      CHALK_MAX_LOOPS: ['1000', '20'],
      CHALK_MAX_RETRIES: ['100', '5'],
      CHALK_REVIEW_ROUNDS: ['50', '3'],
    });
    expect(config.num('CHALK_SANDBOX_MEM_MB')).toBe(4096);
    // `auto` CPUs cannot be measured here: the sandbox holds them to the ceiling itself.
    expect(config.entry('CHALK_SANDBOX_CPUS')).toMatchObject({ raw: '2', source: 'file' });
    expect(describeSetting(config, 'CHALK_SANDBOX_MEM_MB')).toBe(
      'memory 4096 MiB (the repository asked 12000 MiB, held to CHALK_CEILING_SANDBOX_MEM_MB (default))',
    );
    expect(describeSetting(config, 'CHALK_BUDGET_USD')).toBe(
      'budget $1.00 a call (the repository asked $500.00 a call, held to CHALK_CEILING_BUDGET_USD (default))',
    );
    expect(config.display().find((r) => r.key === 'CHALK_MAX_LOOPS')?.source).toBe('file (asked 1000)');
  });

  test('under the ceiling the repository chooses; the environment chooses anything', () => {
    const root = repoWith('CHALK_SANDBOX_MEM_MB=1024\nCHALK_RUBRIC_TIMEOUT=600\nCHALK_TMPFS_SIZE=512m\n');
    const config = loadConfig({ root, env: { CHALK_MAX_LOOPS: '500', CHALK_BUDGET_USD: '9' } });
    expect(describeSetting(config, 'CHALK_SANDBOX_MEM_MB')).toBe('memory 1024 MiB (repository)');
    expect(describeSetting(config, 'CHALK_RUBRIC_TIMEOUT')).toBe('rubric timeout 600 s (repository)');
    expect(describeSetting(config, 'CHALK_TMPFS_SIZE')).toBe('RAM disk 512m (repository)');
    expect(describeSetting(config, 'CHALK_MAX_LOOPS')).toBe('loops 500 (environment)');
    expect(chosenBy(config, 'CHALK_BUDGET_USD')).toBe('environment');
    expect(chosenBy(config, 'CHALK_OUTPUT_CAP_MB')).toBe('default');
  });

  test("a ceiling is the environment's alone: set there it raises what the repository may ask; in the file it is ignored", () => {
    const root = repoWith(`${greedy}\nCHALK_CEILING_SANDBOX_MEM_MB=99999\n`);
    const warnings: string[] = [];
    const config = loadConfig({ root, env: { CHALK_CEILING_BUDGET_USD: '3.50' }, warn: (l) => warnings.push(l) });
    expect(config.num('CHALK_SANDBOX_MEM_MB')).toBe(4096);
    expect(config.str('CHALK_BUDGET_USD')).toBe('3.50');
    expect(chosenBy(config, 'CHALK_BUDGET_USD')).toBe(
      'the repository asked $500.00 a call, held to CHALK_CEILING_BUDGET_USD (environment)',
    );
    expect(warnings).toEqual([
      "ignoring CHALK_CEILING_SANDBOX_MEM_MB in .chalk/config: only this machine's environment sets it",
    ]);
  });

  test('a bad value is refused as it is, never held; a bad ceiling names the ceiling', () => {
    expect(() => loadConfig({ root: repoWith('CHALK_SANDBOX_MEM_MB=lots\n'), env: {}, warn: () => {} })).toThrow(
      "CHALK_SANDBOX_MEM_MB must be a positive whole number of MiB (got 'lots') [from .chalk/config]",
    );
    expect(() => loadConfig({ root: null, env: { CHALK_CEILING_RUBRIC_TIMEOUT: '0' } })).toThrow(
      "CHALK_CEILING_RUBRIC_TIMEOUT must be a positive whole number of seconds (got '0') [from the environment]",
    );
  });

  test("the repository's image is never used: said once, at the start", () => {
    const warnings: string[] = [];
    const root = repoWith('CHALK_IMAGE=attacker/image:latest\n');
    const config = loadConfig({ root, env: {}, warn: (l) => warnings.push(l) });
    expect(config.str('CHALK_IMAGE')).toBe('chalk-sandbox:local');
    expect(warnings).toEqual(["ignoring CHALK_IMAGE in .chalk/config: only this machine's environment sets it"]);
    expect(proposedLine(config, 'CHALK_IMAGE')).toBe(
      "the repository's .chalk/config asks for CHALK_IMAGE=attacker/image:latest, which only this machine's environment sets: not used",
    );
    expect(proposedLine(loadConfig({ root: null, env: { CHALK_IMAGE: 'mine:1' } }), 'CHALK_IMAGE')).toBeNull();
  });
});

describe('delays Node timers cannot hold (2^31-1 ms) are refused', () => {
  // [key, the largest value accepted, its unit]: one more unit is past 2147483647 ms.
  const delays: Array<[string, number, string]> = [
    ['CHALK_RUBRIC_TIMEOUT', 2_147_483, 'seconds'],
    ['CHALK_DB_TIMEOUT', 2_147_483, 'seconds'],
    ['CHALK_DECIDER_TIMEOUT', 2_147_483, 'seconds'],
    ['CHALK_DECIDER_IDLE_MINUTES', 35_791, 'minutes'],
  ];
  test.each(delays)('%s: %i %s is the most', (key, max, unit) => {
    const unitMs = unit === 'seconds' ? 1000 : 60_000;
    expect(max * unitMs).toBeLessThanOrEqual(MAX_TIMER_MS);
    expect((max + 1) * unitMs).toBeGreaterThan(MAX_TIMER_MS);
    expect(loadConfig({ root: null, env: { [key]: String(max) } }).str(key)).toBe(String(max));
    for (const over of [String(max + 1), '99999999999999999999999']) {
      expect(() => loadConfig({ root: null, env: { [key]: over } })).toThrow(
        `${key} must be at most ${max} ${unit} (the longest wait Node's timers hold) (got '${over}') [from the environment]`,
      );
    }
  });
  test('the rubric timeout still reads as a number, and bad forms keep their own message', () => {
    expect(loadConfig({ root: null, env: { CHALK_RUBRIC_TIMEOUT: '2147483' } }).num('CHALK_RUBRIC_TIMEOUT')).toBe(
      2_147_483,
    );
    expect(() => loadConfig({ root: null, env: { CHALK_RUBRIC_TIMEOUT: '0' } })).toThrow(
      "CHALK_RUBRIC_TIMEOUT must be a positive whole number of seconds (got '0')",
    );
    expect(loadConfig({ root: null, env: { CHALK_DB_TIMEOUT: 'auto' } }).str('CHALK_DB_TIMEOUT')).toBe('auto');
  });
  test('from .chalk/config too', () => {
    const root = repoWith('CHALK_RUBRIC_TIMEOUT=3000000\n');
    expect(() => loadConfig({ root, env: {}, warn: () => {} })).toThrow(
      "CHALK_RUBRIC_TIMEOUT must be at most 2147483 seconds (the longest wait Node's timers hold) (got '3000000') [from .chalk/config]",
    );
  });
});

describe('validation: one line naming the key, the allowed values and what was given', () => {
  const cases: Array<[string, string, string]> = [
    ['CHALK_PERMISSION_MODE', 'yolo', "CHALK_PERMISSION_MODE must be 'auto' or 'bypass' (got 'yolo')"],
    [
      'CHALK_FORGE',
      'Bit Bucket',
      "CHALK_FORGE must be 'auto' or a forge's name, like 'github', 'gitlab' or 'none' (got 'Bit Bucket')",
    ],
    [
      'CHALK_DECIDER_PROVIDER',
      '../x',
      "CHALK_DECIDER_PROVIDER must be 'auto' or a decider's name, like 'hosted' (got '../x')",
    ],
    ['CHALK_FP_FEEDBACK', 'yes', "CHALK_FP_FEEDBACK must be 'true' or 'false' (got 'yes')"],
    ['CHALK_FP_RULES', 'strict', "CHALK_FP_RULES must be 'off', 'shadow' or 'on' (got 'strict')"],
    ['CHALK_MAX_PARALLEL', '0', "CHALK_MAX_PARALLEL must be 'auto' or a positive whole number (got '0')"],
    ['CHALK_SANDBOX_MEM_MB', '1.5', "CHALK_SANDBOX_MEM_MB must be a positive whole number of MiB (got '1.5')"],
    ['CHALK_DB_TIMEOUT', 'soon', "CHALK_DB_TIMEOUT must be 'auto' or a positive number of seconds (got 'soon')"],
    ['CHALK_DECIDER', 'maybe', "CHALK_DECIDER must be 'off', 'shadow' or 'on' (got 'maybe')"],
    [
      'CHALK_DECIDER_THRESHOLD',
      '0.4',
      "CHALK_DECIDER_THRESHOLD must be a confidence from 0.5 to 1, to at most three places (got '0.4')",
    ],
    [
      'CHALK_DECIDER_THRESHOLD',
      '0.9999',
      "CHALK_DECIDER_THRESHOLD must be a confidence from 0.5 to 1, to at most three places (got '0.9999')",
    ],
    ['CHALK_DECIDER_MIN_LESSONS', '-1', "CHALK_DECIDER_MIN_LESSONS must be a whole number (got '-1')"],
    ['CHALK_DECIDER_IDLE_MINUTES', '0', "CHALK_DECIDER_IDLE_MINUTES must be a positive whole number (got '0')"],
    ['CHALK_DECIDER_TIMEOUT', '-5', "CHALK_DECIDER_TIMEOUT must be 'auto' or a positive number of seconds (got '-5')"],
    ['CHALK_DECIDER_URL', 'ftp://x', "CHALK_DECIDER_URL must be an http:// or https:// URL (got 'ftp://x')"],
    ['CHALK_EMBED_URL', 'localhost:8472', "CHALK_EMBED_URL must be an http:// or https:// URL (got 'localhost:8472')"],
    ['CHALK_MAX_LOOPS', 'many', "CHALK_MAX_LOOPS must be a positive whole number (got 'many')"],
    ['CHALK_MAX_RETRIES', 'x', "CHALK_MAX_RETRIES must be a whole number (got 'x')"],
    ['CHALK_RUBRIC_TIMEOUT', '0', "CHALK_RUBRIC_TIMEOUT must be a positive whole number of seconds (got '0')"],
    ['CHALK_BUDGET_USD', '$5', "CHALK_BUDGET_USD must be a positive amount of US dollars, like 1.00 (got '$5')"],
    ['CHALK_AUTO_MR', 'TRUE', "CHALK_AUTO_MR must be 'true' or 'false' (got 'TRUE')"],
    ['CHALK_TMPFS_SIZE', 'lots', "CHALK_TMPFS_SIZE must be a size like 512m or 4g (got 'lots')"],
    ['CHALK_REVIEW_ROUNDS', '1.0', "CHALK_REVIEW_ROUNDS must be a whole number (got '1.0')"],
    ['CHALK_DECIDER_LIMIT', 'lots', "CHALK_DECIDER_LIMIT must look like max_concurrent=4 or tpm=15000 (got 'lots')"],
    [
      'CHALK_DECIDER_LIMIT',
      'max_concurrent=4,tpm=9',
      "CHALK_DECIDER_LIMIT must be either max_concurrent=N or tpm=N[,burst=N] (got 'max_concurrent=4,tpm=9')",
    ],
    ['CHALK_DECIDER_CONTEXT_TOKENS', '0', "CHALK_DECIDER_CONTEXT_TOKENS must be a positive whole number (got '0')"],
  ];
  for (const [key, value, message] of cases) {
    test(`${key}=${value}`, () => {
      expect(() => loadConfig({ root: null, env: { [key]: value } })).toThrow(`${message} [from the environment]`);
    });
  }
  test('a bad value in the file says it came from .chalk/config', () => {
    const root = repoWith('CHALK_FP_RULES=loud\n');
    expect(() => loadConfig({ root, env: {}, warn: () => {} })).toThrow(
      "CHALK_FP_RULES must be 'off', 'shadow' or 'on' (got 'loud') [from .chalk/config]",
    );
  });
  test('a database URL with a password is never echoed', () => {
    let message = '';
    try {
      loadConfig({ root: null, env: { CHALK_DATABASE_URL: 'mysql://u:hunter2@db/x' } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('CHALK_DATABASE_URL must be a postgres://');
    expect(message).not.toContain('hunter2');
  });
  test('auto permission mode with a Haiku loop model is refused', () => {
    expect(() => loadConfig({ root: null, env: { CHALK_MODEL: 'claude-haiku-4-5' } })).toThrow(
      /does not support Haiku/,
    );
    expect(() =>
      loadConfig({ root: null, env: { CHALK_MODEL: 'claude-haiku-4-5', CHALK_PERMISSION_MODE: 'bypass' } }),
    ).not.toThrow();
  });
  test('parsed values are typed', () => {
    const config = loadConfig({ root: null, env: { CHALK_MAX_LOOPS: '7', CHALK_AUTO_MR: 'false' } });
    expect(config.num('CHALK_MAX_LOOPS')).toBe(7);
    expect(config.bool('CHALK_AUTO_MR')).toBe(false);
    expect(config.num('CHALK_BUDGET_USD')).toBe(1);
  });
});

describe('display and template', () => {
  test('secret values are masked for display', () => {
    const config = loadConfig({ root: null, env: { CHALK_DECIDER_TOKEN: 's3cret-token' } });
    const row = config.display().find((r) => r.key === 'CHALK_DECIDER_TOKEN');
    expect(row).toMatchObject({ value: '********', source: 'env' });
    expect(JSON.stringify(config.display())).not.toContain('s3cret-token');
  });
  test('the template holds every repository key with its default and parses back to the defaults', () => {
    const text = configTemplate(KEYS);
    for (const k of KEYS.filter((k) => k.scope === 'repo')) expect(text).toContain(`${k.name}=${k.default}`);
    for (const k of KEYS.filter((k) => k.scope === 'machine')) expect(text).not.toContain(`${k.name}=`);
    const root = repoWith(text);
    const warnings: string[] = [];
    const config = loadConfig({ root, env: {}, warn: (l) => warnings.push(l) });
    expect(warnings).toEqual([]);
    expect(config.display().every((r) => r.source === 'default')).toBe(true);
  });
});

describe('schemas are made when a command reads the key (SchemaOf)', () => {
  test("a key's schema is made on first read, once, and the key table does not read it", () => {
    let made = 0;
    const spec = repoKey('CHALK_LAZY_PROBE', '3', 'probe', () => {
      made++;
      return positiveInt('CHALK_LAZY_PROBE');
    });
    const [declared] = keyTable([{ plugin: 'probe', keys: [spec] }]);
    expect(made).toBe(0);
    expect(declared).toMatchObject({ name: 'CHALK_LAZY_PROBE', plugin: 'probe', scope: 'repo', default: '3' });
    expect(declared?.schema.parse('4')).toBe(4);
    expect(spec.schema.parse('5')).toBe(5);
    expect(made).toBe(1);
  });

  test('before the plugins are known, a default is parsed when read; a value that was set, at once', () => {
    let made = 0;
    const table = pluginKeyTable([
      {
        name: 'probe',
        configuration: [
          repoKey('CHALK_LAZY_A', '2', 'a', () => {
            made++;
            return positiveInt('CHALK_LAZY_A');
          }),
          // A default its own schema refuses (a plugin's mistake) is found when it is read.
          repoKey('CHALK_LAZY_B', 'zero', 'b', () => positiveInt('CHALK_LAZY_B')),
        ],
      },
    ]);
    const config = loadWith({ root: null, env: {}, keys: table });
    expect(made).toBe(0);
    expect(config.num('CHALK_LAZY_A')).toBe(2);
    expect(config.num('CHALK_LAZY_A')).toBe(2);
    expect(made).toBe(1);
    expect(() => config.num('CHALK_LAZY_B')).toThrow(ConfigError);
    expect(() => config.num('CHALK_LAZY_B')).toThrow("CHALK_LAZY_B must be a positive whole number (got 'zero')");
    // Set in the environment, a bad value is refused while the configuration is read.
    expect(() => loadWith({ root: null, env: { CHALK_LAZY_A: '0' }, keys: table })).toThrow(
      "CHALK_LAZY_A must be a positive whole number (got '0') [from the environment]",
    );
    // Once every plugin's keys are known (the kernel's table), every default is checked at once.
    expect(() => config.withKeys(table)).toThrow("CHALK_LAZY_B must be a positive whole number (got 'zero')");
  });

  test("every built-in key's default is one its schema takes", () => {
    for (const k of KEYS) expect(k.schema.safeParse(k.default).success, k.name).toBe(true);
    const config = loadConfig({ root: null, env: {} });
    expect(
      JSON.parse(JSON.stringify([...config.entries.values()])).every((e: { value?: unknown }) => 'value' in e),
    ).toBe(true);
  });
});
