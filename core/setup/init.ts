import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyTable } from '../config/table.js';
import { configTemplate } from '../config/template.js';
import { readRepoFile, writeRepoFile } from '../fs/repo-file.js';
import { SHARE_DIR } from '../paths.js';
import type { GateFile } from '../ports/forge.js';
import { baseBranchOf } from '../repo/git.js';
import { detectStack, type StackFinding } from '../stack/detect.js';
import { readStackFacts } from '../stack/read.js';
import { appendSection, sectionAsFile } from './markdown-section.js';

export type InitAction = 'found' | 'created' | 'kept' | 'updated' | 'action';
export interface InitLine {
  action: InitAction;
  path: string;
  note?: string;
}

/** What init learnt from the repository before writing anything. */
export interface RepoFindings {
  stack: StackFinding;
  base: { branch: string; from: string } | null;
  /** Files the stack rule could not read (a symlink, too big), one line each. */
  skipped: string[];
  /** Whether `.devcontainer/devcontainer.json` is there (the sandbox image may come from it). */
  devcontainer: boolean;
}

const RULES_MARKER = 'Chalk agent rules';
const RULES_FILE_MAX = 1024 * 1024;

const template = (name: string) => readFileSync(join(SHARE_DIR, 'templates', name), 'utf8');

/** Reads the repository's own files (as hostile input) and its git facts. */
export async function findRepoFacts(root: string): Promise<RepoFindings> {
  const { facts, skipped } = readStackFacts(root);
  return {
    stack: detectStack(facts),
    base: await baseBranchOf(root),
    skipped,
    devcontainer:
      existsSync(join(root, '.devcontainer', 'devcontainer.json')) || existsSync(join(root, '.devcontainer.json')),
  };
}

/** The keys init writes set, each with where it was found. */
export function foundKeys(f: RepoFindings): Record<string, { value: string; from: string }> {
  const keys: Record<string, { value: string; from: string }> = {};
  if (f.stack.test) keys.CHALK_TEST_CMD = f.stack.test;
  if (f.stack.setup) keys.CHALK_SETUP_CMD = f.stack.setup;
  if (f.stack.toolchains.length > 0) {
    keys.CHALK_TOOLCHAIN = {
      value: f.stack.toolchains.map((t) => t.value).join(','),
      from: [...new Set(f.stack.toolchains.map((t) => t.from))].join(', '),
    };
  }
  if (f.base) keys.CHALK_BASE_BRANCH = { value: f.base.branch, from: f.base.from };
  return keys;
}

/** The `found` lines init prints: what the repository is and each setting, with its source. */
export function foundLines(f: RepoFindings): InitLine[] {
  const lines: InitLine[] = f.stack.stacks.map((s) => ({ action: 'found', path: '', note: `${s.value} (${s.from})` }));
  const say = (what: string, v: { value: string; from: string } | undefined) => {
    if (v) lines.push({ action: 'found', path: '', note: `${what}: ${v.value} (${v.from})` });
  };
  const keys = foundKeys(f);
  say('test command', keys.CHALK_TEST_CMD);
  say('setup command', keys.CHALK_SETUP_CMD);
  say('toolchain', keys.CHALK_TOOLCHAIN);
  say('base branch', keys.CHALK_BASE_BRANCH);
  if (!f.stack.test) {
    lines.push({ action: 'action', path: '', note: 'no test command found: set CHALK_TEST_CMD in .chalk/config' });
  }
  for (const note of [...f.stack.notes, ...f.skipped]) lines.push({ action: 'found', path: '', note });
  if (f.devcontainer) {
    lines.push({
      action: 'found',
      path: '',
      note: 'a dev container (.devcontainer/): the sandbox image comes from it once you review it and run: chalk sandbox trust',
    });
  }
  return lines;
}

// --- writing -------------------------------------------------------------------------------

/**
 * The one place init writes a file into the repository: core/fs/repo-file.ts's safe path, so a
 * linked file or directory on the way (a committed `CLAUDE.md -> ~/.bashrc`) is refused with one
 * line, never written through.
 */
function writeInRepo(root: string, rel: string, content: string): void {
  writeRepoFile(root, rel, content, { ifExists: 'replace' });
}

function writeIfAbsent(root: string, rel: string, content: string): InitLine {
  const done = writeRepoFile(root, rel, content, { ifExists: 'keep' });
  return { action: done === 'kept' ? 'kept' : 'created', path: rel };
}

/** An inline code span of `cmd` when it fits the template's 80 columns, else `fallback`. */
function codeOrElse(cmd: string | null | undefined, room: number, fallback: string): string {
  if (!cmd || cmd.includes('`') || cmd.length + 2 > room) return fallback;
  return `\`${cmd}\``;
}

/** The agent rules, filled in with what was found (each line within 80 columns). */
export function rulesSection(stack: StackFinding | null): string {
  const label = stack?.stacks[0] ? `${stack.stacks[0].value}` : '(describe them here)';
  return template('CLAUDE.section.md')
    .replace('{{STACK}}', () => (label.length <= 60 ? label : '(describe them here)'))
    .replace('{{TEST}}', () => codeOrElse(stack?.test?.value, 57, 'the rubric above'))
    .replace('{{SINGLE_TEST}}', () => codeOrElse(stack?.singleTest, 53, '(fill in)'));
}

/**
 * Chalk's rules in a Markdown file: created when `create` and missing, appended in the file's
 * style when it has none, kept when it has them.
 */
function addRules(root: string, rel: string, section: string, create: boolean): InitLine | null {
  const existing = readRepoFile(root, rel, { maxBytes: RULES_FILE_MAX, what: rel });
  if (existing === null) {
    if (!create) return null;
    writeIfAbsent(root, rel, sectionAsFile(section));
    return { action: 'created', path: rel };
  }
  if (existing.includes(RULES_MARKER)) return { action: 'kept', path: rel };
  writeInRepo(root, rel, appendSection(existing, section));
  return { action: 'updated', path: rel };
}

/** The chosen forge's CI gate, as the Forge port declares it (Forge.gateFiles). */
export interface ForgeGate {
  /** The forge's name (CHALK_FORGE, or what `auto` chose). */
  name: string;
  files: readonly GateFile[];
}

/** A gate file the repository may already have: kept when it runs Chalk's gate, else one action line. */
function gateFile(root: string, f: GateFile): InitLine {
  if (!f.existing) return writeIfAbsent(root, f.path, f.content);
  const text = readRepoFile(root, f.path, { maxBytes: RULES_FILE_MAX, what: f.path });
  if (text === null) return writeIfAbsent(root, f.path, f.content);
  if (text.includes(f.existing.contains)) return { action: 'kept', path: f.path };
  return { action: 'action', path: f.path, note: f.existing.otherwise };
}

function gateFiles(root: string, forge: ForgeGate): InitLine[] {
  if (forge.files.length > 0) return forge.files.map((f) => gateFile(root, f));
  return [
    {
      action: 'action',
      path: '',
      note: `no CI gate to write for CHALK_FORGE=${forge.name} (auto is none without an origin remote): add an origin or set CHALK_FORGE to a forge with one, then run chalk init again for the CI gate`,
    },
  ];
}

/**
 * Adds Chalk's files to a repository. Existing files are never overwritten;
 * running it twice changes nothing the second time. With `found`, the config has the
 * settings init found set and the agent rules name the stack's commands; the rules go into
 * AGENTS.md too when the repository has one.
 */
export function initRepository(root: string, forge: ForgeGate, keys?: KeyTable, found?: RepoFindings): InitLine[] {
  const lines: InitLine[] = found ? foundLines(found) : [];
  lines.push(writeIfAbsent(root, '.chalk/config', configTemplate(keys, found ? foundKeys(found) : {})));
  lines.push(writeIfAbsent(root, '.chalk/textbook.md', template('textbook.md')));
  lines.push(writeIfAbsent(root, 'specs/.gitkeep', ''));
  const section = rulesSection(found?.stack ?? null);
  for (const [rel, create] of [
    ['CLAUDE.md', true],
    ['AGENTS.md', false],
  ] as const) {
    const line = addRules(root, rel, section, create);
    if (line) lines.push(line);
  }
  lines.push(...gateFiles(root, forge));
  return lines;
}
