# Unpacks, from stdin, a tar state-save.sh made: only members under work/repo/ and
# home/chalk/, as the sandbox user (no owners from the archive), never over a file
# the fresh clone already has (its tracked files win).
set -euo pipefail
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
top=$(cd /work/.. && pwd -P)
exec tar -x -C "$top" --no-same-owner --skip-old-files --delay-directory-restore -f - work/repo home/chalk
