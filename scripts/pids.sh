# Sourced by the scripts that start test daemons (secret-service.sh, swtpm.sh, fprintd-virtual.sh):
# stop_pids DIR ends the processes listed in DIR/pids, TERM first, then KILL after a bounded wait (2.5 s),
# and removes the list.
stop_pids() {
  local dir=$1 pid alive
  [ -f "$dir/pids" ] || return 0
  while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$dir/pids"
  for _ in $(seq 50); do
    alive=0
    while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done < "$dir/pids"
    [ "$alive" = 0 ] && break
    sleep 0.05
  done
  while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done < "$dir/pids"
  rm -f "$dir/pids"
}
