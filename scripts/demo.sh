#!/usr/bin/env bash
# An unattended tour of vaultctl on a private Secret Service and a demo PAM stack; touches none of your
# real keyrings, files or PAM configuration.
#
#   scripts/demo.sh [PATH/TO/vaultctl]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/.build/release/vaultctl}")
work=$(mktemp -d /tmp/vaultctl-demo.XXXXXX)
chmod 700 "$work"
cleanup() { "$root/scripts/secret-service.sh" stop "$work/bus"; rm -rf "$work"; }
trap cleanup EXIT

user=$(id -un)
"$root/scripts/secret-service.sh" start "$work/bus" unlocked demo-keyring-password
"$root/scripts/pam-stack.sh" "$work/pam" "$user" demo-password
printf '#!/bin/sh\nprintf "demo-password\\n"\n' > "$work/askpass"
printf '#!/bin/sh\nprintf "not-the-password\\n"\n' > "$work/wrong-askpass"
chmod 700 "$work/askpass" "$work/wrong-askpass"

export XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
# shellcheck disable=SC1091
source "$work/bus/env"
# step RC 'what the reader sees' COMMAND...: prints the command, runs it (stderr inline) and its exit code;
# the demo stops with an error when the exit code is not RC, or when WANT is set and the output lacks it.
failures=0
step() {
  local want_rc=$1 shown=$2
  shift 2
  echo "\$ $shown"
  set +e
  local out
  out=$("$@" 2>&1)
  local rc=$?
  set -e
  [ -z "$out" ] || printf '%s\n' "$out"
  echo "  (exit $rc)"
  if [ "$rc" != "$want_rc" ] || { [ -n "${WANT:-}" ] && [[ "$out" != *"$WANT"* ]]; }; then
    echo "  !! the demo expected exit $want_rc${WANT:+ and '$WANT'} here" >&2
    failures=$((failures + 1))
  fi
}
vaultctl() { "$bin" "$@"; }
# A command that may ask PAM: through the demo's stack, with the given askpass program.
gated() { (source "$work/pam/env"; VAULT_ASKPASS="$1" "$bin" "${@:2}"); }
store() { printf '%s' "$2" | "$bin" store "$1" "${@:3}"; }

echo "== vaultctl demo: a private Secret Service and a demo PAM stack for '$user'"
echo
step 0 "printf 'correct horse' | vaultctl store wifi              # device slot: sealed to this machine" store wifi 'correct horse'
step 0 "printf 'ghp_demo_token' | vaultctl store github --mode sync  # an item in the Secret Service" store github ghp_demo_token --mode sync
WANT=$'github\tsync' step 0 "vaultctl list" vaultctl list
WANT="on-this-device" step 0 "vaultctl status wifi     # only what vaultctl can know; never prompts" vaultctl status wifi
WANT="in-slot" step 0 "vaultctl status github" vaultctl status github
echo
WANT="correct horse" step 0 "VAULT_ASKPASS=./askpass vaultctl read wifi     # a fresh PAM authentication, then the secret" gated "$work/askpass" read wifi
WANT="ghp_demo_token" step 0 "VAULT_ASKPASS=./askpass vaultctl read github" gated "$work/askpass" read github
WANT="ghp_demo_token" step 0 "secret-tool lookup xdg:schema org.vaultctl.Slot slot github   # the same item, seen by libsecret" \
  secret-tool lookup xdg:schema org.vaultctl.Slot slot github
WANT="Authentication failed" step 77 "VAULT_ASKPASS=./wrong-askpass vaultctl read wifi   # wrong password: nothing on stdout" gated "$work/wrong-askpass" read wifi
WANT="correct horse" step 0 "./askpass | vaultctl read wifi --password-stdin   # the password as a line on stdin (scripts, managers)" \
  bash -c '"$1" | { source "$2/pam/env"; "$3" read wifi --password-stdin; }' _ "$work/askpass" "$work" "$bin"
echo
step 0 "VAULT_ASKPASS=./askpass vaultctl delete wifi     # a delete loses a value: PAM first" gated "$work/askpass" delete wifi
step 0 "VAULT_ASKPASS=./askpass vaultctl delete github" gated "$work/askpass" delete github
WANT="is empty" step 66 "VAULT_ASKPASS=./askpass vaultctl read wifi     # gone: 66, nothing asked" gated "$work/askpass" read wifi
echo
if [ "$failures" != 0 ]; then
  echo "== the demo went wrong in $failures step(s) (marked !! above)" >&2
  exit 1
fi
echo "== done: every read and delete above asked PAM; the demo's keyring, files and PAM stack are removed."
