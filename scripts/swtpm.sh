#!/usr/bin/env bash
# Starts or stops a software TPM 2.0 (swtpm) on private Unix sockets, with its own state folder.
#
#   scripts/swtpm.sh start DIR     # DIR/state holds the TPM's state (its seeds: one DIR, one "machine")
#   scripts/swtpm.sh stop DIR
#
# start writes DIR/env (VAULTCTL_TPM2_TCTI=swtpm:path=DIR/sock, a tpm2-tss TCTI string; tpm2-tools read
# the same string from TPM2TOOLS_TCTI) and DIR/pids. stop ends the process by its PID (TERM, then KILL
# after a bounded wait). Starting again on the same DIR brings the same TPM back (its state is kept).
set -euo pipefail

cmd=${1:?usage: swtpm.sh start|stop DIR}
dir=${2:?usage: swtpm.sh start|stop DIR}

. "$(dirname "$0")/pids.sh"
stop() {
  [ -f "$dir/pids" ] || return 0
  stop_pids "$dir"
  rm -f "$dir/sock" "$dir/sock.ctrl"
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "swtpm.sh: unknown command '$cmd'" >&2; exit 64; }
command -v swtpm >/dev/null || { echo "swtpm.sh: swtpm is missing; run 'make deps'" >&2; exit 69; }

mkdir -p "$dir/state"
chmod 700 "$dir" "$dir/state"
dir=$(cd "$dir" && pwd)
rm -f "$dir/sock" "$dir/sock.ctrl" "$dir/swtpm.pid"
swtpm socket --tpm2 --server type=unixio,path="$dir/sock" --ctrl type=unixio,path="$dir/sock.ctrl" \
  --flags startup-clear --tpmstate dir="$dir/state" --pid file="$dir/swtpm.pid" \
  --log file="$dir/swtpm.log" --daemon
# Wait (bounded) for the pid file and the socket.
for _ in $(seq 100); do
  [ -s "$dir/swtpm.pid" ] && [ -S "$dir/sock" ] && break
  sleep 0.05
done
[ -s "$dir/swtpm.pid" ] && [ -S "$dir/sock" ] || { echo "swtpm.sh: swtpm did not start (see $dir/swtpm.log)" >&2; exit 69; }
echo "$(cat "$dir/swtpm.pid")" > "$dir/pids"
echo "export VAULTCTL_TPM2_TCTI='swtpm:path=$dir/sock'" > "$dir/env"
