# Clones the ticket branch from the git bundle the host streams in on stdin
# (the sandbox never sees the host's git dir) onto the RAM disk.
# env: BRANCH, AUTHOR_NAME, AUTHOR_EMAIL; BASE_NAME and BASE_COMMIT (optional):
# origin/BASE_NAME is made to point at BASE_COMMIT; SHALLOW (optional): the
# boundary commits of a shallow history (object ids, space-separated), whose
# parents the bundle does not hold; MIRROR (optional): the image's mirror
# repository (root's, read-only), whose objects the clone borrows (alternates):
# the bundle is then thin, holding only what the ticket has beyond them.
# Prints HEAD.
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
# A repository with no remote: the bundle path means nothing after the fetch.
# Its HEAD is the ticket branch from the start (the fetch fills it: --update-head-ok).
git init --quiet --initial-branch="$BRANCH" /work/repo
if [ -n "${MIRROR:-}" ]; then
  [ -d "$MIRROR/objects/pack" ] || { echo "no mirror repository at $MIRROR in the image" >&2; exit 1; }
  printf '%s\n' "$MIRROR/objects" >/work/repo/.git/objects/info/alternates
fi
for id in ${SHALLOW:-}; do
  [[ "$id" =~ ^([0-9a-f]{40}|[0-9a-f]{64})$ ]] || { echo "not an object id: $id" >&2; exit 1; }
  echo "$id" >>/work/repo/.git/shallow
done
git -C /work/repo fetch --quiet --no-tags --update-head-ok "$in" "refs/heads/$BRANCH:refs/heads/$BRANCH"
rm -f "$in"
git -C /work/repo reset --quiet --hard
if [ -n "${BASE_NAME:-}" ] && [ -n "${BASE_COMMIT:-}" ]; then
  git -C /work/repo update-ref "refs/remotes/origin/$BASE_NAME" "$BASE_COMMIT"
fi
git -C /work/repo rev-parse HEAD
