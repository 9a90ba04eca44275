# Clones the ticket branch from the git bundle the host streams in on stdin
# (the sandbox never sees the host's git dir) onto the RAM disk.
# env: BRANCH, AUTHOR_NAME, AUTHOR_EMAIL; BASE_NAME and BASE_COMMIT (optional):
# origin/BASE_NAME is made to point at BASE_COMMIT. Prints HEAD.
set -euo pipefail
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 2))); then
  echo "bash ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}" >&2
  exit 97
fi
command -v git >/dev/null || { echo "no git" >&2; exit 98; }
git config --global user.name "$AUTHOR_NAME"
git config --global user.email "$AUTHOR_EMAIL"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
in=/tmp/.chalk-in.bundle
rm -rf /work/repo "$in"
cat >"$in"
git clone --quiet --branch "$BRANCH" "$in" /work/repo
rm -f "$in"
# The bundle path means nothing after the clone: no remote is left behind.
git -C /work/repo remote remove origin
if [ -n "${BASE_NAME:-}" ] && [ -n "${BASE_COMMIT:-}" ]; then
  git -C /work/repo update-ref "refs/remotes/origin/$BASE_NAME" "$BASE_COMMIT"
fi
git -C /work/repo rev-parse HEAD
