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
# The file opened must be the one checked (not swapped for a link in between).
[ "$(stat -c '%d:%i' -- "$p" 2>/dev/null)" = "$(stat -L -c '%d:%i' /dev/fd/3 2>/dev/null)" ] || { echo "changed while read" >&2; exit 3; }
[ "$(stat -L -c '%F' /dev/fd/3)" = "regular file" ] || { echo "is not a regular file" >&2; exit 3; }
size=$(stat -L -c '%s' /dev/fd/3)
if [ "$size" -gt "$max" ]; then echo "is $size bytes, over $max" >&2; exit 6; fi
exec cat <&3
