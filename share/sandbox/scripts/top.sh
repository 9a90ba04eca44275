# The sandbox's processes as it sees them, one a line: pid, parent, state, name
# (the host's `docker top` where the engine cannot see inside: gVisor). Run as
# root by a bare exec, with bash builtins alone, so it has no child to list; it
# leaves itself out. The keeper's name is what its round file says (keeper.sh).
read -r k n </chalk/.keeper-round 2>/dev/null
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$$" ] && continue
  read -r s <"$d/stat" 2>/dev/null || continue
  c=${s#*(} c=${c%)*} r=${s##*) }
  # shellcheck disable=SC2086 # the fields after the name, split on purpose
  set -- $r
  [ "$p" = "$k" ] && c=$n
  echo "$p $2 $1 $c"
done
