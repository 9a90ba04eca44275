# Composes a tree without touching the working tree or the real index: ONTO,
# with every path that changed from FROM to TO taking TO's entry (or gone when
# TO has none). Left out: the literal paths in EXCLUDE (one per line), and a
# path TO adds that a harness run added too (the agent running the tests itself
# writes the same report and coverage): one in MADE (literal paths, one per
# line), or one a pair in HARNESS adds (lines "PRE POST" of tree ids: the tree
# before and after a setup or rubric run in this sandbox).
# env: ONTO, FROM, TO (tree-ish), EXCLUDE, MADE, HARNESS. Prints the new tree id.
set -euo pipefail
cd /work/repo
idx=.git/chalk-graft-index
rm -f "$idx"
trap 'rm -f "$idx"' EXIT
GIT_INDEX_FILE="$idx" git read-tree "$ONTO^{tree}"
declare -A skip=() made=()
while IFS= read -r p; do [ -n "$p" ] && skip["$p"]=1; done <<<"${EXCLUDE:-}"
while IFS= read -r p; do [ -n "$p" ] && made["$p"]=1; done <<<"${MADE:-}"
while read -r pre post; do
  [ -n "${post:-}" ] || continue
  while IFS= read -r -d '' p; do made["$p"]=1; done < <(git diff-tree -r -z --no-renames --name-only --diff-filter=A "$pre^{tree}" "$post^{tree}")
done <<<"${HARNESS:-}"
# The null id, as long as the repository's ids (ONTO is one).
zero=${ONTO//[0-9a-f]/0}
# git diff-tree -z --raw: ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS\0PATH\0" per path.
emit() {
  local meta path mode sha status
  while IFS= read -r -d '' meta && IFS= read -r -d '' path; do
    read -r _ mode _ sha status <<<"$meta"
    [ -z "${skip[$path]:-}" ] || continue
    if [ "$status" = A ] && [ -n "${made[$path]:-}" ]; then continue; fi
    if [ "$status" = D ]; then printf '0 %s\t%s\0' "$zero" "$path"; else printf '%s %s\t%s\0' "$mode" "$sha" "$path"; fi
  done
}
git diff-tree -r -z --no-renames --raw "$FROM^{tree}" "$TO^{tree}" | emit | GIT_INDEX_FILE="$idx" git update-index -z --index-info
GIT_INDEX_FILE="$idx" git write-tree
