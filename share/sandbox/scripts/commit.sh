# Commits everything in the tree: tracked changes and untracked, non-ignored files.
# env: MESSAGE, ALLOW_EMPTY (1 or empty). Prints the new HEAD, or nothing when
# there was nothing to commit.
set -euo pipefail
cd /work/repo
git add -A
if [ "${ALLOW_EMPTY:-}" != 1 ] && git diff --cached --quiet; then
  exit 0
fi
git commit --quiet --no-verify ${ALLOW_EMPTY:+--allow-empty} -m "$MESSAGE"
git rev-parse HEAD
