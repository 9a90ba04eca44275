import type { HostGit } from '../../ports/host-git.js';
import type { RunContext } from './context.js';

/** A file as git stores it in a commit (HostGit.fileAt): its mode and text; null when absent. */
export type CommittedFile = { mode: string; text: string } | null;

const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The ticket's spec as git stores it, by commit. A commit's content never changes, so one
 * read of each commit's spec serves the run: the loop counts the checkpoints at the host's
 * HEAD, and the next loop's guard judges against the same commit, which the homecoming read
 * as the tip it brought. Only full commit ids are remembered; anything else is read each time.
 */
export class CommittedSpecs {
  private readonly known = new Map<string, Promise<CommittedFile>>();

  constructor(
    private readonly git: HostGit,
    private readonly ctx: Pick<RunContext, 'root' | 'spec'>,
  ) {}

  /** The spec at `commit`, as HostGit.fileAt reads it. */
  at(commit: string): Promise<CommittedFile> {
    if (!COMMIT_ID.test(commit)) return this.git.fileAt(this.ctx.root, { rev: commit, path: this.ctx.spec });
    let file = this.known.get(commit);
    if (!file) {
      file = this.git.fileAt(this.ctx.root, { rev: commit, path: this.ctx.spec });
      // A failed read is not remembered.
      file.catch(() => this.known.delete(commit));
      this.known.set(commit, file);
    }
    return file;
  }

  /** The spec's text at `commit` when it is a regular file; '' otherwise (what the host counts). */
  async text(commit: string): Promise<string> {
    const f = await this.at(commit);
    return f && f.mode === '100644' ? f.text : '';
  }

  /** What a homecoming read of the tip it brought (a regular file's text, or null: not one). */
  remember(commit: string, text: string | null): void {
    if (COMMIT_ID.test(commit) && text !== null) this.known.set(commit, Promise.resolve({ mode: '100644', text }));
  }
}
