# Discards uncommitted changes and untracked files (ignored ones, e.g. installed
# dependencies, stay).
set -euo pipefail
cd /work/repo
git reset --quiet --hard HEAD
git clean --quiet -fd
