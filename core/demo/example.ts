import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UserError } from '../errors.js';
import { configGet, hostGitOk } from '../git/host-git.js';

/**
 * The demo's example project: a tiny Node.js library with one tested module,
 * a real rubric (`node --test`), a local bare origin to push to, and the
 * ticket DEMO-1 on its branch with a two-checkpoint spec, committed, as
 * `chalk new` + an edited spec + a commit would leave it.
 */

export const DEMO_TICKET = 'DEMO-1';
export const DEMO_BRANCH = `chalk/${DEMO_TICKET}`;
export const DEMO_RUBRIC = 'node --test';

export const DEMO_SPEC = `# ${DEMO_TICKET}: Add slugify for readable URLs

## Context
Blog posts need readable URLs. Add \`slugify(title)\` in \`src/slugify.js\`, exported
the way \`greet\` is in \`src/greet.js\`, with its tests in \`test/slugify.test.js\`
(the rubric is \`node --test\`).

## Checkpoints
- [ ] slugify lowercases the title and joins its words with single dashes ("Hello World" gives "hello-world"), tested in test/slugify.test.js
- [ ] slugify drops every character other than letters, digits and dashes, and never starts or ends with a dash ("  Ship it! (v2) " gives "ship-it-v2"), tested in test/slugify.test.js
`;

const FILES: Record<string, string> = {
  'README.md': '# chalk-demo\n\nA tiny Node.js library, made by `chalk demo`. The ticket DEMO-1 adds `slugify`.\n',
  'package.json': `${JSON.stringify({ name: 'chalk-demo', version: '1.0.0', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
  '.gitignore': 'node_modules/\n',
  'src/greet.js': `'use strict';

/** Greets someone by name. */
function greet(name) {
  return \`Hello, \${name}!\`;
}

module.exports = { greet };
`,
  'test/greet.test.js':
    "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert/strict');\nconst { greet } = require('../src/greet.js');\n\ntest('greet says hello by name', () => {\n  assert.equal(greet('Ada'), 'Hello, Ada!');\n});\n",
  '.chalk/config': [
    '# Made by chalk demo: the rubric, and a local origin with no forge (the branch is pushed, no request opened).',
    `CHALK_TEST_CMD=${DEMO_RUBRIC}`,
    'CHALK_FORGE=none',
    'CHALK_BASE_BRANCH=main',
    '',
  ].join('\n'),
};

export interface DemoRepo {
  /** The repository's worktree, on the ticket branch. */
  root: string;
  /** The bare repository that plays origin. */
  origin: string;
}

const git = (cwd: string, ...args: string[]) => hostGitOk(args, { cwd });

/** Makes the example in `dir` (which must be missing or empty): `<dir>/chalk-demo` and `<dir>/origin.git`. */
export async function createDemoRepo(dir: string): Promise<DemoRepo> {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new UserError(`${dir} is not empty; give chalk demo an empty or new directory`);
  }
  const root = join(dir, 'chalk-demo');
  const origin = join(dir, 'origin.git');
  mkdirSync(root, { recursive: true });
  await git(dir, 'init', '-q', '--bare', '-b', 'main', origin);
  await git(root, 'init', '-q', '-b', 'main');
  // A local identity, so the demo works on a machine where git has none yet.
  const name = await configGet(root, 'user.name');
  const email = await configGet(root, 'user.email');
  if (!name) await git(root, 'config', 'user.name', 'Chalk Demo');
  if (!email) await git(root, 'config', 'user.email', 'demo@chalk.invalid');
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'A tiny library with a greeting');
  await git(root, 'remote', 'add', 'origin', origin);
  await git(root, 'push', '-q', '-u', 'origin', 'main');
  await git(root, 'checkout', '-q', '-b', DEMO_BRANCH);
  mkdirSync(join(root, 'specs'), { recursive: true });
  writeFileSync(join(root, 'specs', `${DEMO_TICKET}.md`), DEMO_SPEC);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', `chalk(${DEMO_TICKET}): spec`);
  return { root, origin };
}
