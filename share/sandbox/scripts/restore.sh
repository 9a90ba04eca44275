# Puts the working tree back as TREE has it (tracked and untracked files, not
# ignored ones): a path TREE lacks is removed, a path that differs is written
# from TREE. The real index is not touched. Only the paths that differ are
# touched, so a rubric's report, coverage and go.mod tidying go, and the
# dependency folders (ignored) stay.
# env: TREE (tree-ish). Prints the id of the working tree it found (TREE's when nothing differed).
set -euo pipefail
cd /work/repo
now_idx=.git/chalk-restore-now
want_idx=.git/chalk-restore-want
# The scratch indexes stay between calls (each is made anew before it is read): no rm on the way.
# The copy keeps the index's time: git still re-reads a file rewritten in the second it last recorded.
cp -p .git/index "$now_idx" 2>/dev/null || rm -f "$now_idx"
GIT_INDEX_FILE="$now_idx" git add -A -- .
now=$(GIT_INDEX_FILE="$now_idx" git write-tree)
echo "$now"
# TREE is a tree id the host took (or a commit): the same id needs no look-up.
[ "$now" != "$TREE" ] || exit 0
want=$(git rev-parse "$TREE^{tree}")
[ "$now" != "$want" ] || exit 0
# What the working tree has that TREE lacks goes first (a directory may stand where TREE has a file).
while IFS= read -r -d '' p; do
  rm -f -- "$p"
  d=$(dirname -- "$p")
  [ "$d" = . ] || rmdir -p --ignore-fail-on-non-empty -- "$d" 2>/dev/null || true
done < <(git diff-tree -r -z --no-renames --name-only --diff-filter=A "$want" "$now")
GIT_INDEX_FILE="$want_idx" git read-tree "$want"
git diff-tree -r -z --no-renames --name-only --diff-filter=MDT "$want" "$now" |
  GIT_INDEX_FILE="$want_idx" git checkout-index -f -z --stdin
