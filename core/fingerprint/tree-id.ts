/**
 * D, the tree ID: run inside the sandbox's repository, it stages everything in
 * the working tree (untracked, non-ignored files included) into a copy of the
 * index and writes that tree. The real index is untouched; the copy lives
 * under `.git`, so it is never part of a tree. Left out: the notes file, which
 * the agent rewrites every loop, and the test report, which the rubric
 * rewrites every run.
 *
 * The script reads the report path as `$1` (empty when there is none), so no
 * path is ever spliced into shell text.
 */
export const TREE_ID_SCRIPT = [
  'set -e',
  'cp .git/index .git/chalk-fp-index',
  'export GIT_INDEX_FILE=.git/chalk-fp-index',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, expanded by bash in the sandbox.
  'git add -A -- . ":(exclude)specs/*.notes.md" ${1:+":(exclude)$1"}',
  'git write-tree',
].join('\n');

/** `bash -c SCRIPT chalk-fp REPORT`: the argv to run in the sandbox's repository. */
export function treeIdCommand(reportPath: string): string[] {
  return ['bash', '-c', TREE_ID_SCRIPT, 'chalk-fp', reportPath];
}

/** The script that removes an old test report before a rubric run, so a stale one is never read. */
export function clearReportCommand(reportPath: string): string[] {
  return ['bash', '-c', 'rm -f -- "$1"', 'chalk-fp', reportPath];
}
