# The container's main process, run as root (its only capabilities: KILL,
# SETUID, SETGID), so nothing the agent, the setup or the rubric starts can
# signal, trace or rewrite it. It holds the container open and serves the
# host's requests on its stdin (the container's, attached by the host alone):
# the harness's own scripts, each run as the sandbox user, and the reaping. A
# request costs a process or two instead of an engine exec each.
#
# Reaping ends every other process but the init in one kill(-1): the kernel
# signals them all at once, so no fork can outrun it, and the keeper needs no
# new process for it (builtins only), so it works when a fork bomb holds every
# pid. It then waits, reading /proc with builtins, until nothing but the init,
# itself and zombies is left. After round N its name (comm, what `docker top`
# shows) is `reaped-N`; gVisor lets no process rename itself, so the same sign
# is also in /chalk/.keeper-round (root's, like /chalk), `PID reaped-N`. The
# host's signal SIGUSR1 (through the engine; the init passes it on) reaps too:
# that is how a request that outlives its time is ended.
#
# The channel. A request: a line `ID VERB N`, then N fields, each a line with
# its length in bytes and that many bytes. VERBs: `hi` (answers `PID ROUND`),
# `reap` (answers the count of processes left), `def NAME TEXT` (keeps a
# script), and `run USER CWD MODE CAP REAP STDIN NAME NENV ENV... ARGS...`:
# the script kept as NAME, as `bash -c SCRIPT NAME ARGS...` in CWD with the ENV
# entries (KEY=value) added, as USER (uid:gid, through setpriv; 0:0 stays root),
# STDIN as its input, its stdout and stderr kept in files only root can open.
# With REAP=1 every process left is ended once it exits, before its output is
# read, so nothing it left behind can change that output. MODE t: the outputs
# are read back as text (the keeper's builtin read: no NUL bytes), at most CAP
# bytes each (stderr at most 1 MiB); MODE b: stdout is sent as it is (a bundle, a file), nothing when
# it is over CAP bytes. The answer: a line `ID EXIT OUTLEN ERRLEN FLAGS`, then
# the bytes of stdout and of stderr. FLAGS: `-`, or `c` when stdout was over
# CAP. Nothing a command runs can write into the channel: its stdin, stdout and
# stderr are files, the keeper's descriptors are closed in it, and it runs as
# another user. A file the keeper writes is its own: /chalk/.k is root's, 0700.
mkfifo -m 0600 /chalk/.keeper && exec 3<>/chalk/.keeper && rm -f /chalk/.keeper || exec sleep infinity
mkdir -m 0700 /chalk/.k || exec sleep infinity
# Lengths and reads count bytes.
LC_ALL=C
n=0
trapped=0
left=0
kept=0
declare -A scripts=()
mark() {
  printf reaped-%s "$n" >/proc/$$/comm 2>/dev/null
  printf "%s reaped-%s" "$$" "$n" >/chalk/.keeper-round
}
# How many processes are left but the init, the keeper and zombies, into `left` (no subshell:
# a fork would fail under a fork bomb, and a child's kill(-1) would end the keeper too).
count_left() {
  local d p s
  left=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = 1 ] || [ "$p" = "$$" ] && continue
    { read -r s <"$d/stat"; } 2>/dev/null || continue
    s=${s##*) }
    case $s in Z* | X*) ;; *) left=$((left + 1)) ;; esac
  done
}
# Ends every other process and waits (at most about 20 s) until none is left; `left` says how many are.
reap() {
  local i
  kill -KILL -1 2>/dev/null
  n=$((n + 1))
  for ((i = 0; i < 20000; i++)); do
    count_left
    [ "$left" = 0 ] && break
    kill -KILL -1 2>/dev/null
    read -r -t 0.001 -u 3 _
  done
  mark
}
trap 'kill -KILL -1 2>/dev/null; n=$((n + 1)); trapped=1; mark' USR1
mark
answer() { # ID EXIT OUT ERR FLAGS
  printf '%s %s %s %s %s\n%s%s' "$1" "$2" "${#3}" "${#4}" "$5" "$3" "$4"
}
field() { # the next field into f
  local len
  read -r len || return 1
  f=
  [ "$len" = 0 ] || read -r -N "$len" f || return 1
}
run() { # the fields of a `run` request, in F
  local user=${F[0]} cwd=${F[1]} mode=${F[2]} cap=${F[3]} reapafter=${F[4]} name=${F[6]} nenv=${F[7]}
  local text=${scripts[$name]-} o=/chalk/.k/o.$id e=/chalk/.k/e.$id i=/dev/null c rc out err size=0 flags=-
  local -a env=("${F[@]:8:nenv}") args=("${F[@]:8+nenv}")
  if [ -n "${F[5]}" ]; then
    i=/chalk/.k/i.$id
    printf '%s' "${F[5]}" >"$i"
  fi
  (
    exec 3>&-
    cd -- "$cwd" || exit 126
    for c in "${env[@]}"; do export -- "$c"; done
    if [ "$user" = 0:0 ]; then exec bash -c "$text" "$name" "${args[@]}"; fi
    exec setpriv --reuid="${user%%:*}" --regid="${user#*:}" --clear-groups -- bash -c "$text" "$name" "${args[@]}"
  ) <"$i" >"$o" 2>"$e" &
  c=$!
  trapped=0
  wait "$c"
  rc=$?
  # The host's SIGUSR1 ended the wait (and the command): its status is the command's.
  if [ "$trapped" = 1 ]; then
    wait "$c"
    rc=$?
  fi
  [ "$reapafter" = 1 ] && reap
  err=
  # stderr is text, read a byte at a time: at most 1 MiB of it.
  { read -r -N "$((cap < 1048576 ? cap : 1048576))" err <"$e"; } 2>/dev/null
  if [ "$mode" = b ]; then
    size=$(find "$o" -maxdepth 0 -printf '%s')
    if [ "${size:-0}" -gt "$cap" ]; then
      answer "$id" "$rc" "" "$err" c
    else
      printf '%s %s %s %s -\n' "$id" "$rc" "$size" "${#err}"
      cat -- "$o"
      printf '%s' "$err"
    fi
  else
    out=
    { read -r -N "$cap" out <"$o"; } 2>/dev/null
    [ "${#out}" -lt "$cap" ] || flags=c
    answer "$id" "$rc" "$out" "$err" "$flags"
  fi
  # The request's files go now and then, in one process (an output over 1 MiB at once).
  kept=$((kept + 1))
  if [ "${size:-0}" -gt 1048576 ] || [ "$kept" -ge 32 ]; then
    rm -f /chalk/.k/[oei].*
    kept=0
  fi
}
# No host on the channel (no stdin): wait, reaping on the host's signal only.
serve() {
  local id verb nf k rc
  while :; do
    read -r id verb nf
    rc=$?
    # A signal ended the read: it is read again. The end of the input: no host will ask.
    if [ "$rc" -gt 128 ]; then continue; fi
    if [ "$rc" != 0 ]; then
      while :; do read -r -t 86400 -u 3 _ || :; done
    fi
    F=()
    for ((k = 0; k < nf; k++)); do
      field || break
      F+=("$f")
    done
    case $verb in
      hi) answer "$id" 0 "$$ $n" "" - ;;
      reap)
        reap
        answer "$id" 0 "$left" "" -
        ;;
      def)
        scripts[${F[0]}]=${F[1]}
        answer "$id" 0 "" "" -
        ;;
      run) run ;;
      *) answer "$id" 2 "" "unknown request $verb" - ;;
    esac
  done
}
serve
