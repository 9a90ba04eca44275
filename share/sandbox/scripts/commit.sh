# Commits on top of PARENT. With TREE: exactly that tree (the agent's work, as
# the harness gathered it; nothing a setup or rubric run made); without it,
# everything in the working tree (tracked changes and untracked, non-ignored
# files) on top of HEAD. The index is then HEAD's, so what the commit left out
# shows as a change.
# env: MESSAGE, ALLOW_EMPTY (1 or empty), TREE and PARENT (optional). Prints the
# new HEAD, or nothing when there was nothing to commit.
set -euo pipefail
cd /work/repo
if [ -z "${TREE:-}" ]; then
  git add -A
  if [ "${ALLOW_EMPTY:-}" != 1 ] && git diff --cached --quiet; then
    exit 0
  fi
  git commit --quiet --no-verify ${ALLOW_EMPTY:+--allow-empty} -m "$MESSAGE"
  git rev-parse HEAD
  exit 0
fi
# One rev-parse for the parent, the tree and the parent's tree (each must name an object).
{ read -r parent; read -r tree; read -r ptree; } < <(git rev-parse "${PARENT:-HEAD}^{commit}" "$TREE^{tree}" "${PARENT:-HEAD}^{tree}")
[ -n "${ptree:-}" ] || { echo "commit: $TREE or ${PARENT:-HEAD} is not in the sandbox" >&2; exit 1; }
if [ "${ALLOW_EMPTY:-}" != 1 ] && [ "$tree" = "$ptree" ]; then
  exit 0
fi
commit=$(git commit-tree "$tree" -p "$parent" -m "$MESSAGE")
# One process moves HEAD's branch to the commit and makes the index its tree.
git reset --quiet "$commit"
echo "$commit"
