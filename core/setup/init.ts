import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KeyTable } from '../config/table.js';
import { configTemplate } from '../config/template.js';
import { SHARE_DIR } from '../paths.js';
import { GITHUB_WORKFLOW, GITLAB_CI, GITLAB_INCLUDE } from './gate-files.js';

export type InitAction = 'created' | 'kept' | 'updated' | 'action';
export interface InitLine {
  action: InitAction;
  path: string;
  note?: string;
}

const CLAUDE_MARKER = 'Chalk agent rules';

const template = (name: string) => readFileSync(join(SHARE_DIR, 'templates', name), 'utf8');

function writeIfAbsent(root: string, rel: string, content: string): InitLine {
  const p = join(root, rel);
  if (existsSync(p)) return { action: 'kept', path: rel };
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, content);
  return { action: 'created', path: rel };
}

/**
 * Adds Chalk's files to a repository. Existing files are never overwritten;
 * running it twice changes nothing the second time.
 */
export function initRepository(root: string, forge: 'github' | 'gitlab' | 'none', keys?: KeyTable): InitLine[] {
  const lines: InitLine[] = [];
  lines.push(writeIfAbsent(root, '.chalk/config', configTemplate(keys)));
  lines.push(writeIfAbsent(root, '.chalk/textbook.md', template('textbook.md')));
  lines.push(writeIfAbsent(root, 'specs/.gitkeep', ''));

  const claude = join(root, 'CLAUDE.md');
  if (!existsSync(claude)) {
    writeFileSync(claude, template('CLAUDE.section.md').trimStart());
    lines.push({ action: 'created', path: 'CLAUDE.md' });
  } else if (readFileSync(claude, 'utf8').includes(CLAUDE_MARKER)) {
    lines.push({ action: 'kept', path: 'CLAUDE.md' });
  } else {
    appendFileSync(claude, template('CLAUDE.section.md'));
    lines.push({ action: 'updated', path: 'CLAUDE.md' });
  }

  if (forge === 'github') {
    lines.push(writeIfAbsent(root, GITHUB_WORKFLOW, template('github/chalk.yml')));
  } else if (forge === 'gitlab') {
    lines.push(writeIfAbsent(root, GITLAB_INCLUDE, template('gitlab/chalk.gitlab-ci.yml')));
    const ci = join(root, GITLAB_CI);
    if (!existsSync(ci)) {
      writeFileSync(ci, `include:\n  - local: ${GITLAB_INCLUDE}\n`);
      lines.push({ action: 'created', path: GITLAB_CI });
    } else if (readFileSync(ci, 'utf8').includes('chalk.gitlab-ci.yml')) {
      lines.push({ action: 'kept', path: GITLAB_CI });
    } else {
      lines.push({
        action: 'action',
        path: GITLAB_CI,
        note: `add "include: [{local: ${GITLAB_INCLUDE}}]" to .gitlab-ci.yml so merge requests run Chalk's gate`,
      });
    }
  }
  if (forge === 'none') {
    lines.push({
      action: 'action',
      path: '',
      note: 'no forge chosen (no origin remote, or CHALK_FORGE=none): add an origin or set CHALK_FORGE, then run chalk init again for the CI gate',
    });
  }
  return lines;
}
