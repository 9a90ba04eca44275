import type { Log } from '../../ports/log.js';
import { type CommitRequest, OBJECT_ID, type SandboxSession } from '../../ports/sandbox.js';

/** How many harness runs' added paths are remembered (the base's rubric and the latest loops'). */
const HARNESS_RUNS_KEPT = 6;
/** Most paths the base's rubric added that the host keeps. */
export const MADE_KEPT = 200;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * Only the agent's work is committed. The sandbox's working tree also holds
 * what the setup and the rubric made (reports, coverage, a tidied go.mod, a
 * rewritten lockfile); so the run keeps, beside it, the tree the next commit
 * holds: the commit the sandbox started from, with every path the agent
 * changed during a call taking the agent's version (`adopt`, between the
 * trees before and after the call). What the harness's own runs change is
 * put back once they end (`harness`): the rubric's report is read, then gone;
 * a file the rubric rewrites is the agent's version again, so an agent that
 * edits it commits its edit and not the rubric's. A path a harness run added
 * is never taken from the agent either (the agent running the tests itself
 * writes the same report), nor is the configured test report.
 * The trees are git objects in the sandbox, named by ids only.
 */
export class AgentWork {
  /** The tree the next commit holds (a commit id at the start: git takes its tree). */
  private tree: string;
  private readonly added: [string, string][] = [];
  /** Paths the base's rubric added where it ran (from the host's cache when it did not run here). */
  private made: string[] = [];
  /**
   * The working tree's id as the last harness run left it (put back, or untouched), until the
   * next snapshot takes it: nothing runs in the sandbox between the end of a loop and the next
   * agent call but the harness's own commit and export, which leave the working tree alone.
   */
  private settled: string | null = null;

  constructor(
    private readonly session: SandboxSession,
    private readonly o: {
      /** The commit the sandbox's work starts from (HEAD at the clone). */
      start: string;
      /** Paths never taken from the agent (`CHALK_TEST_REPORT`). */
      exclude: readonly string[];
      log: Log;
    },
  ) {
    this.tree = o.start;
  }

  /** The working tree's id now, or null when git could not say; the tree the last harness run left, when it is known. */
  snapshot(): Promise<string | null> {
    const settled = this.settled;
    this.settled = null;
    return settled !== null ? Promise.resolve(settled) : this.session.treeId();
  }

  /**
   * After an agent call: what it changed since `before` joins the tree the next commit holds.
   * `after`: the working tree's id, when the caller took it already (with the fingerprint's).
   */
  async adopt(before: string | null, after: string | null | undefined = undefined): Promise<void> {
    this.settled = null;
    if (after === undefined) after = await this.session.treeId();
    if (before === null || after === null || before === after) return;
    // Nothing to leave out, on top of the tree the call started from: the graft would make `after` itself.
    if (this.tree === before && this.o.exclude.length === 0 && this.made.length === 0 && this.added.length === 0) {
      this.tree = after;
      return;
    }
    try {
      this.tree = await this.session.graftTree({
        onto: this.tree,
        from: before,
        to: after,
        exclude: this.o.exclude,
        made: this.made,
        harness: this.added,
      });
    } catch (err) {
      this.o.log.warn(`could not take the agent's changes apart from the harness's: ${describe(err)}`);
    }
  }

  /**
   * Runs one of the harness's own commands (a rubric run) and puts back what
   * it changed in the working tree, once `fn` has read what it needs. With
   * `at`, the working tree is first made that tree (given the one it has):
   * the base's rubric runs on the base commit with the setup's changes. With `before`, that is
   * the tree now, taken by the caller just before (in the same call as the fingerprint's).
   */
  async harness<T>(
    fn: () => Promise<T>,
    o: { at?: (now: string) => Promise<string>; before?: string | null } = {},
  ): Promise<T> {
    const before = o.before === undefined ? await this.snapshot() : o.before;
    this.settled = null;
    let start = before;
    if (o.at && before !== null) {
      try {
        await this.session.restoreTree(await o.at(before));
        start = await this.session.treeId();
      } catch (err) {
        this.o.log.warn(
          `could not check the base out in the sandbox, so the rubric runs where the ticket starts: ${describe(err)}`,
        );
      }
    }
    try {
      return await fn();
    } finally {
      // One call finds what the run changed and puts it back.
      if (before !== null) {
        try {
          const after = await this.session.restoreTree(before);
          if (after !== before && start !== null && after !== null) this.remember([start, after]);
          this.settled = before;
        } catch (err) {
          this.o.log.warn(`could not put back what the rubric changed in the sandbox: ${describe(err)}`);
        }
      }
    }
  }

  /** The trees before and after the last harness run that changed the tree; null when none did. */
  lastRun(): readonly [string, string] | null {
    return this.added.at(-1) ?? null;
  }

  /** What the base's rubric adds (the host's cache keeps it): never taken from the agent either. */
  madeByBase(paths: readonly string[]): void {
    this.made = [...paths];
  }

  /**
   * The paths a harness run added, as the sandbox's git lists them: hostile text, so at most
   * MADE_KEPT plain one-line paths of at most 1,000 characters; [] when git cannot say.
   */
  async addedIn(run: readonly [string, string]): Promise<string[]> {
    const [before, after] = run;
    if (!OBJECT_ID.test(before) || !OBJECT_ID.test(after)) return [];
    const r = await this.session.exec(
      `git diff-tree -r -z --no-renames --name-only --diff-filter=A ${before} ${after}`,
      { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 },
    );
    if (r.exitCode !== 0 || r.outputCapped) return [];
    const paths = r.stdout.split('\0').filter((p) => p !== '' && p.length <= 1000 && !CONTROL.test(p));
    return paths.slice(0, MADE_KEPT);
  }

  private remember(run: [string, string]): void {
    if (run[0] === run[1]) return;
    this.added.push(run);
    // The first (the base's run) stays; of the rest, the latest.
    if (this.added.length > HARNESS_RUNS_KEPT) this.added.splice(1, 1);
  }

  /** The working tree was reset to `start` (a commit): what the next commit holds starts over from it. */
  startOver(start: string): void {
    this.tree = start;
  }

  /** Commits the agent's work on top of `parent` (the host's HEAD); the new HEAD, or null when it changed nothing. */
  commit(message: string, parent: string, o: { allowEmpty?: boolean } = {}): Promise<string | null> {
    const { message: m, ...opts } = this.commitRequest(message, parent, o);
    return this.session.commitAll(m, opts);
  }

  /** The commit of the agent's work on top of `parent`, for a call that makes it (`exportBundle`). */
  commitRequest(message: string, parent: string, o: { allowEmpty?: boolean } = {}): CommitRequest {
    return { message, tree: this.tree, parent, ...o };
  }
}
