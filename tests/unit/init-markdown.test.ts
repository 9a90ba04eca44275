import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lint } from 'markdownlint/promise';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { SHARE_DIR } from '../../core/paths.js';
import { initRepository, type RepoFindings, rulesSection } from '../../core/setup/init.js';
import { appendSection, sectionAsFile, styleOf } from '../../core/setup/markdown-section.js';
import { specFromTemplate } from '../../core/setup/new-ticket.js';
import { detectStack } from '../../core/stack/detect.js';
import { tempDir } from '../helpers/cli.js';

/**
 * The Markdown `chalk init` and `chalk new` write, judged by the real tools with their default
 * options: prettier 3 (`prettier --check`) and markdownlint (every default rule, MD013's 80
 * columns included). A repository that checks its Markdown must not fail because of Chalk.
 */

async function lintErrors(text: string): Promise<string[]> {
  const results = await lint({ strings: { doc: text } });
  return (results.doc ?? []).map((e) => `${e.lineNumber}: ${e.ruleNames.join('/')} ${e.ruleDescription}`);
}
const prettierOk = (text: string) => prettier.check(text, { parser: 'markdown' });

const goFinding = detectStack({ root: ['go.mod'], src: [], texts: { 'go.mod': 'module x\n' } });
const longFinding = detectStack({
  root: ['package.json', 'pnpm-lock.yaml'],
  src: [],
  texts: {
    'package.json': JSON.stringify({
      scripts: { test: 'vitest' },
      packageManager: 'pnpm@10.8.1+sha512.0123456789abcdef',
    }),
  },
});

const shipped: Array<[string, string]> = [
  ['textbook', readFileSync(join(SHARE_DIR, 'templates', 'textbook.md'), 'utf8')],
  ['spec', specFromTemplate('SHOP-12', 'Add a basket total')],
  ['new CLAUDE.md, nothing found', sectionAsFile(rulesSection(null))],
  ['new CLAUDE.md, a Go module', sectionAsFile(rulesSection(goFinding))],
  ['new CLAUDE.md, a long pnpm command', sectionAsFile(rulesSection(longFinding))],
];

/** Existing agent files in styles people use; each passes markdownlint as it is. */
const existing: Array<[string, string, { prettier: boolean }]> = [
  ['prettier-formatted', '# Shop\n\nNotes for agents.\n\n- Use `make`.\n- Keep it small.\n', { prettier: true }],
  ['star lists, setext headings', 'Shop\n====\n\nNotes\n-----\n\n* one\n* two\n', { prettier: false }],
  ['plus lists, closed ATX, CRLF', '# Shop #\r\n\r\n+ one\r\n+ two\r\n', { prettier: false }],
  ['no trailing newline, trailing blanks', '# Shop\n\nText.\n\n\n', { prettier: false }],
  ['a fence with other markers inside', '# Shop\n\n```text\n* not a list\n```\n\n- real\n', { prettier: true }],
];

describe('the Markdown init and new write passes prettier --check and markdownlint', () => {
  it.each(shipped)('%s', async (_name, text) => {
    expect(await lintErrors(text)).toEqual([]);
    expect(await prettierOk(text)).toBe(true);
  });

  it('the agent rules name the commands found, and fall back when a command is too long for a line', () => {
    expect(rulesSection(goFinding)).toContain(
      "- Run the tests with: `go test ./...`\n- Run a single test with: `go test -run '^NAME$' ./PACKAGE`",
    );
    expect(rulesSection(longFinding)).toContain('- Run the tests with: `npx --yes pnpm@10.8.1 test`');
    expect(rulesSection(null)).toContain('- Run the tests with: the rubric above');
  });

  it.each(existing)('appended to a file in its own style: %s', async (_name, before, opts) => {
    expect(await lintErrors(before.replace(/\s*$/, '\n'))).toEqual([]);
    if (opts.prettier) expect(await prettierOk(before)).toBe(true);
    const after = appendSection(before, rulesSection(goFinding));
    expect(after.startsWith(before.replace(/\s*$/, ''))).toBe(true);
    expect(await lintErrors(after)).toEqual([]);
    if (opts.prettier) expect(await prettierOk(after)).toBe(true);
    const style = styleOf(before);
    expect(styleOf(after)).toEqual(style);
    // Only the file's line ending, one at the very end.
    if (style.eol === '\r\n') expect(after.replace(/\r\n/g, '')).not.toContain('\n');
    expect(after.endsWith(style.eol)).toBe(true);
    expect(after.endsWith(`${style.eol}${style.eol}`)).toBe(false);
  });
});

describe('chalk init puts the agent rules in AGENTS.md too', () => {
  const findings = (stack = goFinding): RepoFindings => ({ stack, base: null, skipped: [], devcontainer: false });

  it('appends them to an existing AGENTS.md in its style, creates CLAUDE.md, and changes nothing the second time', async () => {
    const root = tempDir('chalk-init-md-');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'AGENTS.md'), 'Agents\n======\n\n* Be brief.\n');
    const first = initRepository(root, { name: 'none', files: [] }, undefined, findings());
    expect(first.filter((l) => l.path.endsWith('.md')).map((l) => `${l.action} ${l.path}`)).toEqual([
      'created .chalk/textbook.md',
      'created CLAUDE.md',
      'updated AGENTS.md',
    ]);
    const agents = readFileSync(join(root, 'AGENTS.md'), 'utf8');
    expect(agents).toMatch(/^Agents\n======\n\n\* Be brief\.\n\nChalk agent rules\n-{17}\n/);
    expect(agents).not.toMatch(/^- /m);
    expect(await lintErrors(agents)).toEqual([]);
    const claude = readFileSync(join(root, 'CLAUDE.md'), 'utf8');
    expect(claude.startsWith('# Chalk agent rules\n')).toBe(true);
    expect(await prettierOk(claude)).toBe(true);
    const config = readFileSync(join(root, '.chalk', 'config'), 'utf8');
    expect(config).toContain('# (chalk init found this in go.mod)\nCHALK_TEST_CMD=go test ./...\n');
    expect(config).toContain('CHALK_TOOLCHAIN=go\n');

    const second = initRepository(root, { name: 'none', files: [] }, undefined, findings());
    expect(second.filter((l) => l.path !== '').map((l) => l.action)).toEqual(['kept', 'kept', 'kept', 'kept', 'kept']);
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe(agents);
  });

  it('never creates an AGENTS.md the repository does not have', () => {
    const root = tempDir('chalk-init-md-');
    const lines = initRepository(root, { name: 'none', files: [] }, undefined, findings());
    expect(lines.some((l) => l.path === 'AGENTS.md')).toBe(false);
  });
});
