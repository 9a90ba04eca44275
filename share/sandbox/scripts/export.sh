# Writes the commits since BASE as a git bundle to /tmp/.chalk-out/out.bundle,
# which the host then reads back through read-file.sh and verifies; with
# TO_STDOUT=1, prints HEAD on a line and then the bundle, for the keeper to
# send as it is (keeper.sh, mode b).
# env: BASE, TO_STDOUT. Prints HEAD when a bundle was written; nothing when HEAD is BASE.
set -euo pipefail
cd /work/repo
{ read -r head; read -r base; } < <(git rev-parse HEAD "$BASE^{commit}")
[ -n "${base:-}" ] || { echo "export: $BASE is not a commit in the sandbox" >&2; exit 1; }
if [ "${TO_STDOUT:-}" = 1 ]; then
  [ "$head" = "$base" ] && exit 0
  echo "$head"
  exec git bundle create --quiet - "$BASE..HEAD"
fi
out=/tmp/.chalk-out
rm -rf "$out"
mkdir -m 700 "$out"
[ "$head" = "$base" ] && exit 0
git bundle create --quiet "$out/out.bundle" "$BASE..HEAD"
echo "$head"
