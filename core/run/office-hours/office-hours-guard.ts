import type { DetentionFacts } from '../../layout.js';
import type { HostGit } from '../../ports/host-git.js';
import type { Log } from '../../ports/log.js';
import type { RunContext } from '../base/context.js';
import { showPaths } from '../base/guard.js';
import { judge } from '../base/home.js';
import { DETENTION_SEARCH_DEPTH, findDetentionCommit, gradingToRestore } from './office-hours-rules.js';

/**
 * Where the parked attempt starts and ends: the green commit the run had reached and the
 * detention branch's tip as the run left it (io/detention.json, written by the host), or, when
 * the record is gone, the newest detention commit and its parent. Null when neither is known.
 */
async function parkedSpan(git: HostGit, root: string, facts: DetentionFacts | null) {
  const head = await git.revParse(root, 'HEAD');
  const green = facts?.green ? await git.resolveCommit(root, facts.green) : null;
  const parked = facts?.parked ? await git.resolveCommit(root, facts.parked) : null;
  if (green && parked && (await git.isAncestor(root, { ancestor: green, descendant: parked }))) {
    if (await git.isAncestor(root, { ancestor: parked, descendant: head })) return { green, parked, head };
  }
  const found = findDetentionCommit(await git.recentCommits(root, { rev: head, max: DETENTION_SEARCH_DEPTH }));
  const parent = found ? await git.resolveCommit(root, `${found.sha}^`) : null;
  return found && parent ? { green: parent, parked: found.sha, head } : null;
}

/**
 * Office hours resumes from the person's fix under the same guard as any loop: on the tutoring
 * branch, every grading file the parked attempt changed (`.chalk/`, hook directories, the CI gate
 * files, a textbook outside `.chalk/`, and the spec, ticks included) goes back to the green
 * commit's version in one commit, unless the person changed it after the detention. The failed
 * attempt's other changes stay, for the rubric and the review to judge.
 */
export async function restoreGrading(
  ctx: RunContext,
  git: HostGit,
  log: Log,
  o: { facts: DetentionFacts | null; textbook: string; forgeGuarded: readonly string[] },
): Promise<void> {
  const span = await parkedSpan(git, ctx.root, o.facts);
  if (!span) {
    log.warn(`could not tell where the parked attempt starts; check .chalk/ and ${ctx.spec} before it runs`);
    return;
  }
  const verdict = await judge(ctx, git, {
    base: span.green,
    tip: span.parked,
    textbook: o.textbook,
    forgeGuarded: o.forgeGuarded,
  });
  const [before, after] = await Promise.all([
    git.fileAt(ctx.root, { rev: span.green, path: ctx.spec }),
    git.fileAt(ctx.root, { rev: span.parked, path: ctx.spec }),
  ]);
  const spec = before?.text !== after?.text || before?.mode !== after?.mode ? [ctx.spec] : [];
  const { restore, kept } = gradingToRestore({
    attempt: [...(verdict.ok ? [] : verdict.files), ...spec],
    person: await git.changedPaths(ctx.root, { from: span.parked, to: span.head }),
  });
  if (kept.length > 0) log.info(`kept as you changed them since the detention: ${showPaths(kept)}`);
  const done = await git.commitRestored(ctx.root, {
    from: span.green,
    paths: restore,
    message: `chalk(${ctx.ticket}): grading files back as the run had them`,
  });
  if (done) log.info(`the parked attempt changed what grades it; put back as the run had them: ${showPaths(restore)}`);
}
