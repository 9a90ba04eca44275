# Writes the commits since BASE as a git bundle to /tmp/.chalk-out/out.bundle,
# which the host then reads back through read-file.sh and verifies.
# env: BASE. Prints HEAD when a bundle was written; nothing when HEAD is BASE.
set -euo pipefail
cd /work/repo
out=/tmp/.chalk-out
rm -rf "$out"
mkdir -m 700 "$out"
{ read -r head; read -r base; } < <(git rev-parse HEAD "$BASE^{commit}")
[ -n "${base:-}" ] || { echo "export: $BASE is not a commit in the sandbox" >&2; exit 1; }
[ "$head" = "$base" ] && exit 0
git bundle create --quiet "$out/out.bundle" "$BASE..HEAD"
echo "$head"
