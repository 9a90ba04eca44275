# Writes to stdout a tar of what the setup command left for later sandboxes of the
# repository: the dependency directories it made in the clone and the home directory.
# env: DIRS, the directory names to keep (one a line), found at any depth of the clone
# when git tracks nothing in them, the outermost only; the home directory is kept whole
# but for the git identity clone.sh wrote. Members are work/repo/... and home/chalk/...,
# symlinks and FIFOs as themselves (nothing is followed or read through). The host caps
# what it takes; a file changed while read (tar's exit 1) keeps nothing.
set -euo pipefail
# The image's own tools, whatever the setup put on a PATH it can write.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export GIT_LITERAL_PATHSPECS=1
top=$(cd /work/.. && pwd -P)
list=$(mktemp /tmp/.chalk-state.XXXXXX)
trap 'rm -f "$list"' EXIT
names=()
while IFS= read -r n; do [ -n "$n" ] && names+=(-o -name "$n"); done <<<"${DIRS:-}"
cd /work/repo
if [ ${#names[@]} -gt 0 ]; then
  while IFS= read -r -d '' d; do
    d=${d#./}
    if [ -z "$(git ls-files -- "$d" | head -c 1)" ]; then printf 'work/repo/%s\0' "$d"; fi
  done < <(find . -path ./.git -prune -o -type d \( "${names[@]:1}" \) -prune -print0) >>"$list"
fi
cd /home/chalk
shopt -s dotglob nullglob
for e in *; do
  if [ "$e" != .gitconfig ]; then printf 'home/chalk/%s\0' "$e"; fi
done >>"$list"
# The two roots themselves, without their contents, so the archive always holds both.
tar -c -C "$top" --no-recursion work/repo home/chalk --recursion --null -T "$list"
