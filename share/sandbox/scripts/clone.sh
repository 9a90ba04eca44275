# Clones the ticket branch from the read-only git store onto the RAM disk.
# --shared borrows the store's objects instead of copying them.
# env: BRANCH, AUTHOR_NAME, AUTHOR_EMAIL. Prints HEAD.
set -euo pipefail
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 2))); then
  echo "bash ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}" >&2
  exit 97
fi
command -v git >/dev/null || { echo "no git" >&2; exit 98; }
git config --global --add safe.directory '*'
git config --global user.name "$AUTHOR_NAME"
git config --global user.email "$AUTHOR_EMAIL"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
rm -rf /work/repo
git clone --quiet --shared --branch "$BRANCH" /src.git /work/repo
git -C /work/repo rev-parse HEAD
