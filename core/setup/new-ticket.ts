import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { writeRepoFile } from '../fs/repo-file.js';
import { HostGitError, oneLine } from '../git/host-git.js';
import { hostGitPort } from '../git/port.js';
import { SHARE_DIR } from '../paths.js';
import type { HostGit } from '../ports/host-git.js';
import { mainRoot, TICKET_RE } from '../repo/git.js';
import { hasControlCharacter } from '../text/terminal.js';

export interface NewTicket {
  ticket: string;
  title: string;
  branch: string;
  worktree: string;
  spec: string;
}

/** Fills the shipped spec template: `{{TICKET}}` and `{{TITLE}}`. */
export function specFromTemplate(ticket: string, title: string, template?: string): string {
  const t = template ?? readFileSync(join(SHARE_DIR, 'templates', 'spec.md'), 'utf8');
  return t.replaceAll('{{TICKET}}', ticket).replaceAll('{{TITLE}}', title);
}

/**
 * Creates the ticket's worktree `../<repo>.worktrees/TICKET` on branch `chalk/TICKET`
 * from the base branch, with `specs/TICKET.md` from the template (not committed).
 */
export async function newTicket(opts: {
  cwd: string;
  ticket: string;
  title?: string;
  base: string;
  /** Host git (default: core/git). */
  git?: HostGit;
}): Promise<NewTicket> {
  const { ticket, base } = opts;
  const git = opts.git ?? hostGitPort;
  if (!TICKET_RE.test(ticket)) {
    throw new UserError(`'${ticket}' is not a ticket key; use one like PROJ-123 (chalk new TICKET [title])`, 2);
  }
  // The title becomes the spec's first line and the request's title: one line of plain text.
  if (opts.title !== undefined && hasControlCharacter(opts.title)) {
    throw new UserError('the title must be one line without control characters (no newline or tab); retype it');
  }
  const title = opts.title?.trim() || 'Describe the change';
  const root = await mainRoot(opts.cwd);
  const branch = `chalk/${ticket}`;
  if (await git.refExists(root, `refs/heads/${branch}`)) {
    throw new UserError(`branch ${branch} already exists; pick another ticket or remove it (chalk cleanup)`);
  }
  if ((await git.resolveCommit(root, base)) === null) {
    throw new UserError(`base branch '${base}' does not exist; set CHALK_BASE_BRANCH in .chalk/config`);
  }
  const worktree = join(`${root}.worktrees`, ticket);
  if (existsSync(worktree)) throw new UserError(`${worktree} already exists; remove it or pick another ticket`);
  mkdirSync(`${root}.worktrees`, { recursive: true });
  await git.worktreeAdd(root, { path: worktree, branch, base }).catch((err: unknown) => {
    const why = err instanceof HostGitError ? oneLine(err.stderr) : String(err);
    throw new UserError(`git could not create the worktree: ${why}`);
  });
  const spec = `specs/${ticket}.md`;
  try {
    // The base's tree is the repository's: a `specs` link in it is refused, never written through.
    writeRepoFile(worktree, spec, specFromTemplate(ticket, title), { ifExists: 'keep' });
  } catch (err) {
    await git.worktreeRemove(root, { path: worktree, force: true }).catch(() => undefined);
    await git.deleteBranch(root, { name: branch, force: true }).catch(() => undefined);
    throw err;
  }
  return { ticket, title, branch, worktree, spec };
}
