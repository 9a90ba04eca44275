import { parse as parseToml } from 'smol-toml';
import { testCommandIn } from './markdown-commands.js';
import { programsOf, type ToolchainName, toolchainProviding } from './toolchains.js';

/**
 * What `chalk init` can tell about a repository from its own files, as a pure rule: the test
 * command, the setup command, the toolchains they need, and where each came from. The I/O
 * (read.ts) gathers the facts; nothing here touches the disk.
 */

/** What read.ts hands the rule. */
export interface RepoFacts {
  /** Names at the repository root; directories end with `/`. */
  root: readonly string[];
  /** Names under `src/` (same convention), for a Python src layout. */
  src: readonly string[];
  /** Texts of the files in STACK_FILES (and requirements files) that exist as regular files. */
  texts: Readonly<Record<string, string>>;
}

/** The files the rule reads, when they exist at the root (requirements*.txt are added by name). */
export const STACK_FILES = [
  'package.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'pyproject.toml',
  'setup.cfg',
  'tox.ini',
  'go.mod',
  'Cargo.toml',
  'composer.json',
  'AGENTS.md',
  'README.md',
] as const;

export interface Found<T = string> {
  value: T;
  /** The file (and part of it) it came from: `go.mod`, `package.json scripts.test`, `AGENTS.md (Testing)`. */
  from: string;
}

export interface StackFinding {
  /** What the repository is, in words, each with its file: `Go module` from go.mod. */
  stacks: Found[];
  test: Found | null;
  setup: Found | null;
  toolchains: Found<ToolchainName>[];
  /** How to run one test, for the agent rules (null when the runner has no simple form). */
  singleTest: string | null;
  /** Lines worth saying that are not settings (a toolchain Debian lacks, a second stack). */
  notes: string[];
}

interface Stack {
  label: string;
  from: string;
  test: Found | null;
  setup: Found | null;
  toolchain: ToolchainName | null;
  singleTest: string | null;
  notes?: string[];
}

const has = (facts: RepoFacts, name: string) => facts.root.includes(name);
const found = (value: string, from: string): Found => ({ value, from });

function json(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function toml(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

// --- Node -------------------------------------------------------------------------------

/** npm's placeholder `test` script, which only fails. */
const NPM_PLACEHOLDER = /no test specified/;

interface PackageManager {
  /** How to call it: `npm`, `npx --yes pnpm@9`. */
  run: string;
  install: string;
  from: string;
}

function packageManager(facts: RepoFacts, pkg: Record<string, unknown>): PackageManager {
  const declared = /^(npm|pnpm|yarn|bun)@([0-9][^+\s]*)/.exec(str(pkg.packageManager) ?? '');
  const lock = (name: string) => has(facts, name);
  const kind =
    declared?.[1] ??
    (lock('pnpm-lock.yaml')
      ? 'pnpm'
      : lock('yarn.lock')
        ? 'yarn'
        : lock('bun.lockb') || lock('bun.lock')
          ? 'bun'
          : 'npm');
  const from = declared
    ? 'package.json packageManager'
    : ((
        { pnpm: 'pnpm-lock.yaml', yarn: 'yarn.lock', bun: has(facts, 'bun.lock') ? 'bun.lock' : 'bun.lockb' } as Record<
          string,
          string
        >
      )[kind] ?? (lock('package-lock.json') ? 'package-lock.json' : 'package.json'));
  const version = declared?.[2];
  if (kind === 'pnpm') {
    const v = version ?? pnpmFromLockfile(facts.texts['pnpm-lock.yaml']);
    return { run: `npx --yes pnpm@${v}`, install: 'install --frozen-lockfile', from };
  }
  if (kind === 'yarn') {
    const berry = version ? !version.startsWith('1.') : !/^# yarn lockfile v1/m.test(facts.texts['yarn.lock'] ?? '');
    if (berry)
      return { run: `npx --yes -p @yarnpkg/cli-dist@${version ?? '4'} yarn`, install: 'install --immutable', from };
    return { run: `npx --yes yarn@${version ?? '1'}`, install: 'install --frozen-lockfile', from };
  }
  if (kind === 'bun') return { run: `npx --yes bun@${version ?? '1'}`, install: 'install --frozen-lockfile', from };
  const locked = lock('package-lock.json') || lock('npm-shrinkwrap.json');
  return { run: 'npm', install: locked ? 'ci' : 'install', from };
}

/** The pnpm major that writes a lockfile version: 9.0 is pnpm 9 and 10, 6.0 pnpm 8, 5.x pnpm 7. */
function pnpmFromLockfile(text: string | undefined): string {
  const v = /^lockfileVersion:\s*'?([0-9.]+)/m.exec(text ?? '')?.[1] ?? '9.0';
  const major = Number(v.split('.')[0]);
  return major >= 9 ? '9' : major >= 6 ? '8' : '7';
}

const RUNNER_SINGLE: Record<string, string> = {
  vitest: 'npx vitest run FILE -t "NAME"',
  jest: 'npx jest FILE -t "NAME"',
  mocha: 'npx mocha FILE --grep "NAME"',
};

function node(facts: RepoFacts): Stack | null {
  const pkg = json(facts.texts['package.json']);
  if (!pkg) return null;
  const pm = packageManager(facts, pkg);
  const scripts = obj(pkg.scripts);
  const deps = { ...obj(pkg.dependencies), ...obj(pkg.devDependencies) };
  const runner = ['vitest', 'jest', 'mocha'].find((r) => r in deps) ?? null;
  const script = str(scripts.test);
  let test: Found | null = null;
  if (script && !NPM_PLACEHOLDER.test(script)) {
    test = found(`${pm.run} test`, 'package.json scripts.test');
  } else if (runner) {
    test = found(runner === 'vitest' ? 'npx vitest run' : `npx ${runner}`, `package.json devDependencies.${runner}`);
  }
  return {
    label: `Node.js package (${pm.run === 'npm' ? 'npm' : pm.run.replace(/^npx --yes (-p )?/, '')})`,
    from: 'package.json',
    test,
    setup: found(`${pm.run} ${pm.install}`, pm.from),
    toolchain: null,
    singleTest: runner ? (RUNNER_SINGLE[runner] ?? null) : null,
  };
}

// --- Python -----------------------------------------------------------------------------

const REQUIREMENTS = [
  'requirements-dev.txt',
  'requirements-test.txt',
  'requirements_dev.txt',
  'requirements_test.txt',
  'dev-requirements.txt',
  'test-requirements.txt',
  'requirements.txt',
];
const TEST_EXTRAS = ['test', 'tests', 'testing', 'dev'];

/** Requirement names other than pytest itself (which the toolchain has). */
const beyondPytest = (reqs: unknown[]) =>
  reqs
    .map((r) =>
      typeof r === 'string'
        ? r
            .trim()
            .split(/[\s<>=!~;[]/)[0]
            ?.toLowerCase()
        : null,
    )
    .filter((n): n is string => !!n && n !== 'pytest');

function python(facts: RepoFacts): Stack | null {
  const markers = ['pyproject.toml', 'setup.cfg', 'setup.py', 'tox.ini', 'pytest.ini', 'Pipfile', ...REQUIREMENTS];
  const marker = markers.find((m) => has(facts, m));
  if (!marker) return null;
  const py = toml(facts.texts['pyproject.toml']);
  const project = obj(py?.project);
  const extras = obj(project['optional-dependencies']);
  const groups = obj(py?.['dependency-groups']);
  // The first test extra or group there is says what the tests need (a `tests` group of only
  // pytest needs nothing beyond the toolchain, whatever a `dev` group holds).
  const extra = TEST_EXTRAS.find((e) => e in extras && list(extras[e]).length > 0);
  const groupName = TEST_EXTRAS.find((g) => g in groups);
  const group = groupName && beyondPytest(list(groups[groupName])).length > 0 ? groupName : undefined;
  const reqFile = REQUIREMENTS.find((r) => has(facts, r));
  const srcLayout = has(facts, 'src/') && facts.src.some((n) => n.endsWith('/') && !n.endsWith('.egg-info/'));
  const venv = 'python3 -m venv --system-site-packages .venv && .venv/bin/python -m pip install -q';
  let setup: Found | null = null;
  if (reqFile) {
    setup = found(`${venv} -r ${reqFile}`, reqFile);
  } else if (list(project.dependencies).length > 0 || extra) {
    setup = found(
      `${venv} -e '.${extra ? `[${extra}]` : ''}'`,
      `pyproject.toml ${extra ? `optional-dependencies.${extra}` : 'dependencies'}`,
    );
  } else if (group) {
    const names = beyondPytest(list(groups[group]));
    setup = found(`${venv} ${names.join(' ')}`, `pyproject.toml dependency-groups.${group}`);
  }
  // An editable install puts src/ on the path; otherwise the tests need it there.
  const installed = setup?.value.includes(' -e ') ?? false;
  const pathPrefix = srcLayout && !installed ? 'PYTHONPATH=src ' : '';
  const interpreter = setup ? '.venv/bin/python' : 'python3';
  const why = srcLayout && !installed ? `${marker}, src/ layout` : marker;
  return {
    label: 'Python project (pytest)',
    from: marker,
    test: found(`${pathPrefix}${interpreter} -m pytest -q`, why),
    setup,
    toolchain: 'python',
    singleTest: `${pathPrefix}${interpreter} -m pytest -q FILE::NAME`,
  };
}

// --- the others -------------------------------------------------------------------------

function go(facts: RepoFacts): Stack | null {
  const mod = facts.texts['go.mod'];
  if (mod === undefined) return null;
  const requires = /^\s*require\b/m.test(mod);
  return {
    label: 'Go module',
    from: 'go.mod',
    test: found('go test ./...', 'go.mod'),
    setup: requires && !has(facts, 'vendor/') ? found('go mod download', 'go.mod require') : null,
    toolchain: 'go',
    singleTest: "go test -run '^NAME$' ./PACKAGE",
  };
}

function rust(facts: RepoFacts): Stack | null {
  const text = facts.texts['Cargo.toml'];
  if (text === undefined) return null;
  const cargo = toml(text) ?? {};
  const depKeys = ['dependencies', 'dev-dependencies', 'build-dependencies'];
  const deps = depKeys.some((k) => Object.keys(obj(cargo[k])).length > 0) || 'workspace' in cargo;
  return {
    label: 'Rust crate',
    from: 'Cargo.toml',
    test: found('cargo test', 'Cargo.toml'),
    setup: deps ? found('cargo fetch', 'Cargo.toml dependencies') : null,
    toolchain: 'rust',
    singleTest: 'cargo test NAME',
  };
}

function ruby(facts: RepoFacts): Stack | null {
  if (!has(facts, 'Gemfile')) return null;
  const rspec = has(facts, '.rspec') || has(facts, 'spec/');
  return {
    label: 'Ruby project (Bundler)',
    from: 'Gemfile',
    test: rspec
      ? found('bundle exec rspec', has(facts, '.rspec') ? '.rspec' : 'spec/')
      : has(facts, 'Rakefile')
        ? found('bundle exec rake test', 'Rakefile')
        : null,
    setup: found('bundle install', 'Gemfile'),
    toolchain: 'ruby',
    singleTest: rspec ? 'bundle exec rspec FILE:LINE' : 'bundle exec ruby -Itest FILE -n NAME',
  };
}

function java(facts: RepoFacts): Stack | null {
  if (has(facts, 'pom.xml')) {
    const wrapper = has(facts, 'mvnw');
    return {
      label: 'Java project (Maven)',
      from: 'pom.xml',
      test: found(`${wrapper ? './mvnw' : 'mvn'} -q -B test`, wrapper ? 'mvnw' : 'pom.xml'),
      setup: null,
      toolchain: wrapper ? 'java' : 'maven',
      singleTest: `${wrapper ? './mvnw' : 'mvn'} -q -B test -Dtest='CLASS#NAME'`,
    };
  }
  const build = ['build.gradle.kts', 'build.gradle'].find((f) => has(facts, f));
  if (!build) return null;
  const wrapper = has(facts, 'gradlew');
  return {
    label: 'Java project (Gradle)',
    from: build,
    test: found(`${wrapper ? './gradlew' : 'gradle'} test`, wrapper ? 'gradlew' : build),
    setup: null,
    toolchain: wrapper ? 'java' : 'gradle',
    singleTest: `${wrapper ? './gradlew' : 'gradle'} test --tests 'CLASS.NAME'`,
  };
}

function php(facts: RepoFacts): Stack | null {
  const composer = json(facts.texts['composer.json']);
  if (!composer) return null;
  const script = 'test' in obj(composer.scripts);
  const phpunit =
    'phpunit/phpunit' in obj(composer['require-dev']) || has(facts, 'phpunit.xml.dist') || has(facts, 'phpunit.xml');
  return {
    label: 'PHP project (Composer)',
    from: 'composer.json',
    test: script
      ? found('composer test', 'composer.json scripts.test')
      : phpunit
        ? found('vendor/bin/phpunit', 'composer.json require-dev')
        : null,
    setup: found('composer install --no-interaction', 'composer.json'),
    toolchain: 'php',
    singleTest: phpunit ? 'vendor/bin/phpunit --filter NAME' : null,
  };
}

function dotnet(facts: RepoFacts): Stack | null {
  const project = facts.root.find((n) => /\.(sln|csproj|fsproj|vbproj)$/.test(n));
  if (!project) return null;
  return {
    label: '.NET project',
    from: project,
    test: found('dotnet test', project),
    setup: null,
    toolchain: 'dotnet',
    singleTest: 'dotnet test --filter NAME',
  };
}

function cpp(facts: RepoFacts): Stack | null {
  if (!has(facts, 'CMakeLists.txt')) return null;
  return {
    label: 'C/C++ project (CMake)',
    from: 'CMakeLists.txt',
    test: found('cmake --build build && ctest --test-dir build --output-on-failure', 'CMakeLists.txt'),
    setup: found('cmake -S . -B build', 'CMakeLists.txt'),
    toolchain: 'cpp',
    singleTest: 'ctest --test-dir build -R NAME',
  };
}

/** Most specific first: a package.json beside go.mod is usually tooling, a CMakeLists.txt beside package.json an addon. */
const DETECTORS = [go, rust, python, java, dotnet, ruby, php, node, cpp];

// --- the rule ---------------------------------------------------------------------------

/**
 * The finding: the first stack (in DETECTORS order) with a test command gives the test and the
 * setup; a test section of AGENTS.md wins over it (the cross-agent convention, written for
 * agents), and the README's is used only when no stack gives one. The toolchains are the chosen
 * stack's and whatever the two commands run that a toolchain provides.
 */
export function detectStack(facts: RepoFacts): StackFinding {
  const stacks = DETECTORS.map((d) => d(facts)).filter((s): s is Stack => s !== null);
  const primary = stacks.find((s) => s.test) ?? stacks[0] ?? null;
  const agents = facts.texts['AGENTS.md'] === undefined ? null : testCommandIn(facts.texts['AGENTS.md']);
  const readme = facts.texts['README.md'] === undefined ? null : testCommandIn(facts.texts['README.md']);
  const test = agents
    ? found(agents.command, `AGENTS.md (${agents.section})`)
    : (primary?.test ?? (readme ? found(readme.command, `README.md (${readme.section})`) : null));
  const setup = primary?.setup ?? null;

  const toolchains: Found<ToolchainName>[] = [];
  const add = (name: ToolchainName | null, from: string) => {
    if (name && !toolchains.some((t) => t.value === name)) toolchains.push({ value: name, from });
  };
  if (primary) add(primary.toolchain, primary.from);
  for (const cmd of [test, setup]) {
    for (const program of cmd ? programsOf(cmd.value) : []) add(toolchainProviding(program), cmd?.from ?? '');
  }
  const notes = stacks
    .filter((s) => s !== primary)
    .map((s) => `also found a ${s.label} (${s.from}); its commands are not in .chalk/config`);
  return {
    stacks: stacks.map((s) => found(s.label, s.from)),
    test,
    setup,
    toolchains,
    singleTest: test === primary?.test ? (primary?.singleTest ?? null) : null,
    notes,
  };
}
