# Writes the commits since BASE as a git bundle to /chalk/out.bundle.
# env: BASE. Prints HEAD when a bundle was written; nothing when HEAD is BASE.
set -euo pipefail
cd /work/repo
rm -f /chalk/out.bundle
head="$(git rev-parse HEAD)"
[ "$head" = "$(git rev-parse "$BASE^{commit}")" ] && exit 0
git bundle create --quiet /chalk/out.bundle "$BASE..HEAD"
echo "$head"
