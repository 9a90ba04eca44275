# The container's main process, run as root (its only capabilities: KILL,
# SETUID, SETGID), so nothing the agent, the setup or the rubric starts can
# signal, trace or rewrite it. It holds the container open and, on SIGUSR1 (the
# host sends it through the engine; the init passes it on), ends every other
# process but the init in one kill(-1): the kernel signals them all at once, so
# no fork can outrun it, and the keeper itself needs no new process, so it
# works when a fork bomb holds every pid. Ready, its name (comm, what `docker
# top` shows) is `reaped-0`; after round N it is `reaped-N`: the host's sign
# that the round is done. It waits on a FIFO only it has open, with builtins only.
# gVisor lets no process rename itself, and its engine's `docker top` cannot see
# inside: there the host reads the same sign from /chalk/.keeper-round (root's,
# like /chalk), `PID reaped-N`, written after the name.
mkfifo -m 0600 /chalk/.keeper && exec 3<>/chalk/.keeper && rm -f /chalk/.keeper || exec sleep infinity
n=0
trap 'kill -KILL -1 2>/dev/null; n=$((n + 1)); printf reaped-%s "$n" >/proc/$$/comm 2>/dev/null; printf "%s reaped-%s" "$$" "$n" >/chalk/.keeper-round' USR1
printf reaped-0 >/proc/$$/comm 2>/dev/null
printf "%s reaped-0" "$$" >/chalk/.keeper-round
while :; do read -r -t 86400 -u 3 _ || :; done
