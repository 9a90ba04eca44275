import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { pluginKeyTable } from '../../core/config/table.js';
import { TOOLCHAIN_NAMES } from '../../core/stack/toolchains.js';
import { BUILTINS } from '../../plugins/builtin.js';
import { missingHint } from '../../plugins/sandbox-docker/checks.js';
import { type Devcontainer, parseDevcontainer } from '../../plugins/sandbox-docker/devcontainer.js';
import {
  devcontainerBuildName,
  layeredName,
  type PlanInput,
  planImage,
} from '../../plugins/sandbox-docker/image-plan.js';
import { TOOLCHAIN_PACKAGES } from '../../plugins/sandbox-docker/toolchain-packages.js';
import { tempDir } from '../helpers/cli.js';

const imageDc: Devcontainer = { file: '.devcontainer/devcontainer.json', text: '{}', kind: 'image', image: 'python:3' };
const base: PlanInput = {
  configured: null,
  devcontainerSetting: 'auto',
  devcontainer: null,
  toolchains: [],
  extraPackages: [],
  toolchainFrom: 'from .chalk/config',
};
const kindOf = (i: Partial<PlanInput>) => {
  const p = planImage({ ...base, ...i });
  return [p.source.kind, p.source.why, ...p.notes];
};

describe('which image a repository gets (a pure rule)', () => {
  it('CHALK_IMAGE, else a trusted dev container, else the toolchain, else the default', () => {
    const dc = { d: imageDc, trust: 'trusted' as const, imagePresent: true };
    expect(kindOf({ configured: { image: 'mine:1', from: 'from the environment' }, devcontainer: dc })).toEqual([
      'configured',
      'CHALK_IMAGE from the environment',
    ]);
    expect(kindOf({ devcontainer: dc, toolchains: ['go'] })).toEqual([
      'devcontainer',
      '.devcontainer/devcontainer.json: image python:3, trusted here',
    ]);
    expect(kindOf({ toolchains: ['go'], extraPackages: ['protobuf-compiler'] })).toEqual([
      'toolchain',
      'toolchain go and packages protobuf-compiler from .chalk/config',
    ]);
    expect(kindOf({})[0]).toBe('default');
  });

  it('a dev container not trusted here, changed since, off, broken, or naming an image not present is not used, and says so', () => {
    const notes = (dc: PlanInput['devcontainer'], setting: 'auto' | 'off' = 'auto') =>
      kindOf({ devcontainer: dc, devcontainerSetting: setting, toolchains: ['python'] });
    expect(notes({ d: imageDc, trust: 'untrusted', imagePresent: true })).toEqual([
      'toolchain',
      'toolchain python from .chalk/config',
      '.devcontainer/devcontainer.json proposes the sandbox image (image python:3) and is not trusted on this machine, so it is not used; review it, then run: chalk sandbox trust (CHALK_DEVCONTAINER=off ignores it)',
    ]);
    expect(notes({ d: imageDc, trust: 'changed', imagePresent: true })[2]).toContain(
      'changed since it was trusted on this machine',
    );
    expect(notes({ d: imageDc, trust: 'trusted', imagePresent: false })[2]).toBe(
      '.devcontainer/devcontainer.json names image python:3, which is not present locally (Chalk pulls from no registry), so it is not used; pull or build it, then run again',
    );
    expect(notes({ d: imageDc, trust: 'trusted', imagePresent: true }, 'off')).toEqual([
      'toolchain',
      'toolchain python from .chalk/config',
    ]);
    expect(notes({ error: '.devcontainer.json is not valid JSON' })[2]).toBe(
      '.devcontainer.json is not valid JSON; the dev container is not used',
    );
  });

  it('a toolchain Debian lacks is one line naming what to do instead', () => {
    expect(() => planImage({ ...base, toolchains: ['dotnet'] })).toThrow(
      /^CHALK_TOOLCHAIN=dotnet: Debian bookworm has no \.NET SDK package; .*devcontainer/,
    );
  });

  it('every toolchain core names has its Debian packages (or why not), and packages are sorted and once', () => {
    expect(Object.keys(TOOLCHAIN_PACKAGES).sort()).toEqual([...TOOLCHAIN_NAMES].sort());
    const p = planImage({ ...base, toolchains: ['maven', 'gradle'], extraPackages: ['maven'] }).source;
    expect(p.kind === 'toolchain' && p.packages).toEqual(['default-jdk-headless', 'gradle', 'maven']);
  });

  it('names change with every input', () => {
    const a = layeredName('tc', ['recipe', 'sha256:1', 'golang-go', '']);
    expect(a.tag).toMatch(/^chalk-sandbox:tc-[0-9a-f]{12}$/);
    expect(layeredName('tc', ['recipe', 'sha256:2', 'golang-go', '']).tag).not.toBe(a.tag);
    expect(layeredName('tc', ['recipe', 'sha256:1', 'golang-go', 'CA']).tag).not.toBe(a.tag);
    expect(layeredName('dc', ['recipe', 'sha256:1', 'golang-go', '']).tag).toMatch(/^chalk-sandbox:dc-/);
  });
});

describe('devcontainer.json, read as JSON with comments', () => {
  const root = tempDir('chalk-dc-');
  mkdirSync(join(root, '.devcontainer'));
  writeFileSync(join(root, '.devcontainer', 'Dockerfile'), 'FROM debian\n');
  const file = '.devcontainer/devcontainer.json';

  it('an image, or a build with its context, args and target relative to the file', () => {
    expect(
      parseDevcontainer(root, file, '// editor settings\n{ "image": "python:3", /* x */ "features": {}, }'),
    ).toMatchObject({ kind: 'image', image: 'python:3' });
    const b = parseDevcontainer(
      root,
      file,
      '{"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"V": "1"}, "target": "dev"}}',
    );
    expect(b).toMatchObject({
      kind: 'build',
      dockerfile: '.devcontainer/Dockerfile',
      context: '',
      args: { V: '1' },
      target: 'dev',
      dockerfileText: 'FROM debian\n',
    });
    expect(parseDevcontainer(root, file, '{"dockerFile": "Dockerfile"}')).toMatchObject({
      kind: 'build',
      context: '.devcontainer',
    });
    if (b.kind !== 'build') throw new Error('a build');
    expect(devcontainerBuildName(b)).toMatch(/^chalk-devcontainer:[0-9a-f]{12}$/);
    expect(devcontainerBuildName({ ...b, args: { V: '2' } })).not.toBe(devcontainerBuildName(b));
  });

  it('refuses, in one line, paths out of the repository, a Dockerfile outside its context, compose and junk', () => {
    expect(() => parseDevcontainer(root, file, '{"build": {"dockerfile": "../../etc/Dockerfile"}}')).toThrow(
      /is outside the repository/,
    );
    expect(() => parseDevcontainer(root, file, '{"build": {"dockerfile": "/etc/Dockerfile"}}')).toThrow(
      /must be a path relative/,
    );
    expect(() => parseDevcontainer(root, file, '{"build": {"dockerfile": "../Dockerfile", "context": "."}}')).toThrow(
      /outside build.context/,
    );
    expect(() => parseDevcontainer(root, file, '{"dockerComposeFile": "compose.yml"}')).toThrow(
      /dockerComposeFile, which Chalk does not build/,
    );
    expect(() => parseDevcontainer(root, file, '{"image": 3}')).toThrow(/^\.devcontainer\/devcontainer\.json: image /);
    expect(() => parseDevcontainer(root, file, '{"image": ')).toThrow(/is not valid JSON with comments/);
  });
});

describe("doctor's hint for a program the image lacks", () => {
  const config = (toolchain: string) => loadConfig({ root: null, env: { CHALK_TOOLCHAIN: toolchain } });
  const plan = (i: Partial<PlanInput>) => planImage({ ...base, ...i });
  it('names the toolchain line that adds it', () => {
    expect(missingHint('go', config(''), plan({}))).toBe('add CHALK_TOOLCHAIN=go to .chalk/config');
    expect(missingHint('cargo', config('python'), plan({ toolchains: ['python'] }))).toBe(
      'set CHALK_TOOLCHAIN=python,rust in .chalk/config',
    );
    expect(missingHint('protoc', config(''), plan({}))).toMatch(
      /^add the Debian package that has it to CHALK_SANDBOX_PACKAGES/,
    );
    expect(missingHint('go', config(''), plan({ configured: { image: 'x', from: 'from the environment' } }))).toBe(
      'the image comes from CHALK_IMAGE from the environment: add it there, or unset that and add CHALK_TOOLCHAIN=go to .chalk/config',
    );
  });
});

describe('CHALK_SANDBOX_PACKAGES', () => {
  const keys = pluginKeyTable(BUILTINS);
  it('takes Debian package names only, each one word to apt', () => {
    expect(
      loadConfig({ root: null, env: { CHALK_SANDBOX_PACKAGES: 'libpq-dev, g++ protobuf-compiler' }, keys }).str(
        'CHALK_SANDBOX_PACKAGES',
      ),
    ).toBe('libpq-dev, g++ protobuf-compiler');
    for (const bad of ['curl;id', '$(id)', 'Foo', '-o', 'a/b']) {
      expect(() => loadConfig({ root: null, env: { CHALK_SANDBOX_PACKAGES: bad }, keys })).toThrow(
        /^CHALK_SANDBOX_PACKAGES must be Debian package names/,
      );
    }
  });
});
