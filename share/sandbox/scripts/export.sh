# Writes the commits since BASE as a git bundle to /chalk/out.bundle.
# env: BASE. Prints HEAD when a bundle was written; nothing when HEAD is BASE.
set -euo pipefail
cd /work/repo
rm -f /chalk/out.bundle
{ read -r head; read -r base; } < <(git rev-parse HEAD "$BASE^{commit}")
[ -n "${base:-}" ] || { echo "export: $BASE is not a commit in the sandbox" >&2; exit 1; }
[ "$head" = "$base" ] && exit 0
git bundle create --quiet /chalk/out.bundle "$BASE..HEAD"
echo "$head"
