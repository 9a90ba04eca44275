# Ends every process in the sandbox but PID 1 (the init), $1 (the container's
# main process) and this shell: what the agent left running in the background.
# Stopped first, then killed, in rounds, so a process that forks meanwhile
# cannot outrun it.
main=$1
for sig in STOP STOP KILL KILL KILL; do
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = 1 ] || [ "$p" = "$main" ] || [ "$p" = $$ ] || kill "-$sig" "$p" 2>/dev/null
  done
done
exit 0
