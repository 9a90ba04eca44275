# The tree id of the working tree as it is (untracked, non-ignored files count),
# computed in a scratch index so the real one is untouched.
# env: EXCLUDE, newline-separated pathspecs to leave out; UNLESS_IGNORED, paths left out
# as well unless git ignores them (git refuses a pathspec naming an ignored file, and an
# ignored file is outside the tree anyway); WHOLE=1 also prints, on a second line, the id
# of the whole tree, nothing left out (one exec for both: the loop needs both before its
# rubric). Prints the tree id.
set -euo pipefail
cd /work/repo
# The clone is a plain repository: its git dir is .git.
idx=.git/chalk-fp-index
# The copy keeps the index's time, so git still re-reads a file rewritten in the second it last
# recorded (a copy made now would make that stat look clean: same size, same second).
cp -p .git/index "$idx" 2>/dev/null || rm -f "$idx"
excludes=()
while IFS= read -r p; do [ -n "$p" ] && excludes+=(":(exclude)$p"); done <<<"${EXCLUDE:-}"
while IFS= read -r p; do
  [ -n "$p" ] && ! git check-ignore -q -- "$p" && excludes+=(":(exclude)$p")
done <<<"${UNLESS_IGNORED:-}"
GIT_INDEX_FILE="$idx" git add -A -- . "${excludes[@]}"
GIT_INDEX_FILE="$idx" git write-tree
if [ "${WHOLE:-}" = 1 ]; then
  GIT_INDEX_FILE="$idx" git add -A -- .
  GIT_INDEX_FILE="$idx" git write-tree
fi
