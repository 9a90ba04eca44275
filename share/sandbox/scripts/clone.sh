# Clones the ticket branch from the read-only git store onto the RAM disk.
# --shared borrows the store's objects instead of copying them.
# env: BRANCH, AUTHOR_NAME, AUTHOR_EMAIL. Prints HEAD.
set -euo pipefail
git config --global --add safe.directory '*'
git config --global user.name "$AUTHOR_NAME"
git config --global user.email "$AUTHOR_EMAIL"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
rm -rf /work/repo
git clone --quiet --shared --branch "$BRANCH" /src.git /work/repo
git -C /work/repo rev-parse HEAD
