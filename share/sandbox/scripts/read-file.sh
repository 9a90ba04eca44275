# Prints the file $1 when it is a regular file (not a symlink, FIFO, device or
# directory) of at most $2 bytes. Exit 4: missing; 3: not a regular file;
# 6: too big. The host caps what it takes as well: this only says why early.
set -uo pipefail
p=$1
max=$2
if [ -L "$p" ]; then echo "is a symbolic link" >&2; exit 3; fi
[ -e "$p" ] || exit 4
if [ ! -f "$p" ]; then echo "is not a regular file" >&2; exit 3; fi
exec 3<"$p" || exit 3
# File metadata through find (fstatat), not stat(1): coreutils' statx is refused by some
# kernels, gVisor's among them. A relative path gets ./ so find never reads it as an option.
case $p in /*) q=$p ;; *) q=./$p ;; esac
named=$(find "$q" -maxdepth 0 -printf '%D:%i' 2>/dev/null)
read -r opened kind size < <(find -L /dev/fd/3 -maxdepth 0 -printf '%D:%i %y %s\n' 2>/dev/null)
# The file opened must be the one checked (not swapped for a link in between).
[ -n "$named" ] && [ "$named" = "${opened:-}" ] || { echo "changed while read" >&2; exit 3; }
[ "${kind:-}" = f ] || { echo "is not a regular file" >&2; exit 3; }
if [ "$size" -gt "$max" ]; then echo "is $size bytes, over $max" >&2; exit 6; fi
exec cat <&3
