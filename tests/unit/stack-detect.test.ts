import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectStack, type RepoFacts } from '../../core/stack/detect.js';
import { testCommandIn } from '../../core/stack/markdown-commands.js';
import { readStackFacts } from '../../core/stack/read.js';
import { programsOf, toolchainProviding } from '../../core/stack/toolchains.js';
import { tempDir } from '../helpers/cli.js';

/** Facts of a repository holding `files` (a name ending in `/` is a directory). */
function repo(files: Record<string, string>, src: string[] = []): RepoFacts {
  const root = [...new Set(Object.keys(files).map((p) => (p.includes('/') ? `${p.split('/')[0]}/` : p)))];
  const texts = Object.fromEntries(Object.entries(files).filter(([p]) => !p.endsWith('/') && !p.includes('/')));
  return { root, src, texts };
}

const summary = (facts: RepoFacts) => {
  const f = detectStack(facts);
  return {
    test: f.test && `${f.test.value} <- ${f.test.from}`,
    setup: f.setup && `${f.setup.value} <- ${f.setup.from}`,
    toolchains: f.toolchains.map((t) => t.value),
  };
};

describe('detectStack: which commands and toolchain a repository needs, from its own files', () => {
  it('Go: go test ./..., the go toolchain; go mod download only when there are requirements and no vendor/', () => {
    expect(summary(repo({ 'go.mod': 'module example.com/x\n\ngo 1.19\n' }))).toEqual({
      test: 'go test ./... <- go.mod',
      setup: null,
      toolchains: ['go'],
    });
    const deps = 'module x\n\nrequire (\n\tgithub.com/a/b v1.0.0\n)\n';
    expect(summary(repo({ 'go.mod': deps })).setup).toBe('go mod download <- go.mod require');
    expect(summary(repo({ 'go.mod': deps, 'vendor/': '' })).setup).toBeNull();
  });

  it('Rust: cargo test; cargo fetch only with dependencies', () => {
    expect(summary(repo({ 'Cargo.toml': '[package]\nname = "fnv"\n\n[features]\nstd = []\n' }))).toEqual({
      test: 'cargo test <- Cargo.toml',
      setup: null,
      toolchains: ['rust'],
    });
    expect(summary(repo({ 'Cargo.toml': '[package]\nname = "x"\n[dependencies]\nserde = "1"\n' })).setup).toBe(
      'cargo fetch <- Cargo.toml dependencies',
    );
  });

  it('Python: pytest through python3 -m; src/ put on the path; a venv only for dependencies beyond pytest', () => {
    const pyproject =
      '[project]\nname = "MarkupSafe"\n\n[dependency-groups]\ndev = ["ruff", "tox"]\ntests = ["pytest"]\n';
    expect(summary(repo({ 'pyproject.toml': pyproject, 'src/': '' }, ['markupsafe/']))).toEqual({
      test: 'PYTHONPATH=src python3 -m pytest -q <- pyproject.toml, src/ layout',
      setup: null,
      toolchains: ['python'],
    });
    expect(summary(repo({ 'setup.py': '' })).test).toBe('python3 -m pytest -q <- setup.py');
    const req = summary(
      repo({ 'pyproject.toml': '[project]\nname = "x"\n', 'requirements-dev.txt': 'pytest\nhypothesis\n' }),
    );
    expect(req.setup).toBe(
      'python3 -m venv --system-site-packages .venv && .venv/bin/python -m pip install -q -r requirements-dev.txt <- requirements-dev.txt',
    );
    expect(req.test).toBe('.venv/bin/python -m pytest -q <- pyproject.toml');
    const extra = summary(
      repo(
        {
          'pyproject.toml':
            '[project]\nname = "x"\ndependencies = ["attrs"]\n[project.optional-dependencies]\ntest = ["pytest"]\n',
          'src/': '',
        },
        ['x/'],
      ),
    );
    // An editable install puts src/ on the path itself.
    expect(extra.setup).toMatch(/pip install -q -e '\.\[test\]' <- pyproject.toml optional-dependencies.test$/);
    expect(extra.test).toBe('.venv/bin/python -m pytest -q <- pyproject.toml');
    const group = summary(repo({ 'pyproject.toml': '[dependency-groups]\ntests = ["pytest", "freezegun>=1"]\n' }));
    expect(group.setup).toMatch(/pip install -q freezegun <- pyproject.toml dependency-groups.tests$/);
  });

  it('Node: the lockfile picks the package manager, packageManager its version; npm test unless it is the placeholder', () => {
    const pkg = (extra: object) => JSON.stringify({ name: 'x', scripts: { test: 'vitest' }, ...extra });
    expect(summary(repo({ 'package.json': pkg({}), 'package-lock.json': '' }))).toEqual({
      test: 'npm test <- package.json scripts.test',
      setup: 'npm ci <- package-lock.json',
      toolchains: [],
    });
    expect(summary(repo({ 'package.json': pkg({}) })).setup).toBe('npm install <- package.json');
    expect(summary(repo({ 'package.json': pkg({}), 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" }))).toMatchObject({
      test: 'npx --yes pnpm@9 test <- package.json scripts.test',
      setup: 'npx --yes pnpm@9 install --frozen-lockfile <- pnpm-lock.yaml',
    });
    expect(summary(repo({ 'package.json': pkg({}), 'pnpm-lock.yaml': "lockfileVersion: '6.0'\n" })).setup).toMatch(
      /^npx --yes pnpm@8 /,
    );
    expect(
      summary(repo({ 'package.json': pkg({ packageManager: 'pnpm@10.8.1+sha512.abc' }), 'pnpm-lock.yaml': '' })).setup,
    ).toBe('npx --yes pnpm@10.8.1 install --frozen-lockfile <- package.json packageManager');
    expect(summary(repo({ 'package.json': pkg({}), 'yarn.lock': '# yarn lockfile v1\n' })).setup).toBe(
      'npx --yes yarn@1 install --frozen-lockfile <- yarn.lock',
    );
    expect(summary(repo({ 'package.json': pkg({}), 'yarn.lock': '__metadata:\n  version: 8\n' })).setup).toBe(
      'npx --yes -p @yarnpkg/cli-dist@4 yarn install --immutable <- yarn.lock',
    );
    expect(summary(repo({ 'package.json': pkg({}), 'bun.lock': '' })).setup).toBe(
      'npx --yes bun@1 install --frozen-lockfile <- bun.lock',
    );
    const placeholder = JSON.stringify({
      scripts: { test: 'echo "Error: no test specified" && exit 1' },
      devDependencies: { vitest: '^3' },
    });
    expect(summary(repo({ 'package.json': placeholder })).test).toBe(
      'npx vitest run <- package.json devDependencies.vitest',
    );
  });

  it('the JVM, Ruby, PHP, .NET and CMake', () => {
    expect(summary(repo({ 'pom.xml': '' }))).toMatchObject({
      test: 'mvn -q -B test <- pom.xml',
      toolchains: ['maven'],
    });
    expect(summary(repo({ 'pom.xml': '', mvnw: '' }))).toMatchObject({
      test: './mvnw -q -B test <- mvnw',
      toolchains: ['java'],
    });
    expect(summary(repo({ 'build.gradle.kts': '', gradlew: '' }))).toMatchObject({
      test: './gradlew test <- gradlew',
      toolchains: ['java'],
    });
    expect(summary(repo({ 'build.gradle': '' }))).toMatchObject({
      test: 'gradle test <- build.gradle',
      toolchains: ['gradle'],
    });
    expect(summary(repo({ Gemfile: '', '.rspec': '' }))).toEqual({
      test: 'bundle exec rspec <- .rspec',
      setup: 'bundle install <- Gemfile',
      toolchains: ['ruby'],
    });
    expect(summary(repo({ Gemfile: '', Rakefile: '' })).test).toBe('bundle exec rake test <- Rakefile');
    expect(summary(repo({ 'composer.json': JSON.stringify({ 'require-dev': { 'phpunit/phpunit': '^10' } }) }))).toEqual(
      {
        test: 'vendor/bin/phpunit <- composer.json require-dev',
        setup: 'composer install --no-interaction <- composer.json',
        toolchains: ['php'],
      },
    );
    expect(summary(repo({ 'App.sln': '' }))).toMatchObject({ test: 'dotnet test <- App.sln', toolchains: ['dotnet'] });
    expect(summary(repo({ 'CMakeLists.txt': '' }))).toEqual({
      test: 'cmake --build build && ctest --test-dir build --output-on-failure <- CMakeLists.txt',
      setup: 'cmake -S . -B build <- CMakeLists.txt',
      toolchains: ['cpp'],
    });
  });

  it("AGENTS.md's test section wins over the manifests; a README's only fills in when they give none", () => {
    const agents =
      '# Agents\n\n## Testing\n\nInstall first, then run the suite:\n\n```sh\n$ npm ci\n$ make test\n```\n';
    const withAgents = summary(repo({ 'go.mod': 'module x\n', 'AGENTS.md': agents }));
    expect(withAgents.test).toBe('make test <- AGENTS.md (Testing)');
    // The toolchain the manifest needs, and the one that provides make.
    expect(withAgents.toolchains).toEqual(['go', 'cpp']);
    const readme = 'Title\n=====\n\nRunning the tests\n-----------------\n\nRun `tox -e py` from the root.\n';
    expect(summary(repo({ 'go.mod': 'module x\n', 'README.md': readme })).test).toBe('go test ./... <- go.mod');
    expect(summary(repo({ 'README.md': readme })).test).toBe('tox -e py <- README.md (Running the tests)');
  });

  it('a second stack is noted, never mixed into the commands; nothing known finds nothing', () => {
    const f = detectStack(repo({ 'go.mod': 'module x\n', 'package.json': '{"scripts":{"test":"jest"}}' }));
    expect(f.test?.value).toBe('go test ./...');
    expect(f.notes).toEqual([
      'also found a Node.js package (npm) (package.json); its commands are not in .chalk/config',
    ]);
    expect(detectStack(repo({ 'notes.txt': '' }))).toEqual({
      stacks: [],
      test: null,
      setup: null,
      toolchains: [],
      singleTest: null,
      notes: [],
    });
    // Broken manifests are read as what they are, never thrown on.
    expect(summary(repo({ 'package.json': '{not json', 'Cargo.toml': '[[[' })).test).toBe('cargo test <- Cargo.toml');
  });
});

describe('the test section of a Markdown file', () => {
  it('takes a test line from its code block, else an inline command, ignoring fences elsewhere', () => {
    const md =
      '# X\n\n```\n## Testing\n```\n\n### Running tests ###\n\n```console\n$ pip install -e .\n$ pytest -q\n```\n\n## Next\n\n```\nnpm test\n```\n';
    expect(testCommandIn(md)).toEqual({ command: 'pytest -q', section: 'Running tests' });
    expect(testCommandIn('## Tests\n\nUse `cargo test --all` before pushing.\n')).toEqual({
      command: 'cargo test --all',
      section: 'Tests',
    });
    expect(testCommandIn('## Tests\n\nWe have tests.\n')).toBeNull();
    expect(testCommandIn('## Usage\n\n```\nnpm test\n```\n')).toBeNull();
  });
});

describe('programs a command line runs', () => {
  it('skips assignments, prefixes, builtins and paths', () => {
    expect(programsOf('PYTHONPATH=src python3 -m pytest -q')).toEqual(['python3']);
    expect(programsOf('cd sub && go test ./... | tee out.txt')).toEqual(['go', 'tee']);
    expect(programsOf('./gradlew test')).toEqual([]);
    expect(programsOf('env CI=1 npx --yes pnpm@9 test; "$X" run')).toEqual(['npx']);
    expect(toolchainProviding('cargo')).toBe('rust');
    expect(toolchainProviding('npx')).toBeNull();
  });
});

describe('reading the facts as hostile input', () => {
  it('skips a symlinked or special file with its line and reads the rest', () => {
    const root = tempDir('chalk-stack-');
    writeFileSync(join(root, 'go.mod'), 'module x\n');
    symlinkSync('/etc/passwd', join(root, 'README.md'));
    execFileSync('mkfifo', [join(root, 'AGENTS.md')]);
    const { facts, skipped } = readStackFacts(root);
    expect(Object.keys(facts.texts)).toEqual(['go.mod']);
    expect(skipped).toEqual([
      'AGENTS.md is a FIFO; replace it with a regular file in the repository',
      'README.md is a symbolic link, which Chalk does not follow; replace it with a regular file in the repository',
    ]);
    expect(detectStack(facts).test?.value).toBe('go test ./...');
  });
});
