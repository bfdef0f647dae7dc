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
# step 'what the reader sees' COMMAND...: prints the command, runs it (stderr inline), prints its exit code.
step() {
  echo "\$ $1"
  set +e
  "${@:2}" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 0 ] || true
  echo "  (exit $rc)"
}
vaultctl() { "$bin" "$@"; }
gated() { (source "$work/pam/env"; VAULT_ASKPASS="$1" "$bin" "${@:2}"; rc=$?; [ "$rc" != 0 ] || echo; exit $rc); }
store() { printf '%s' "$2" | "$bin" store "$1" "${@:3}"; }

echo "== vaultctl demo: a private Secret Service and a demo PAM stack for '$user'"
echo
step "printf 'correct horse' | vaultctl store wifi              # device slot: sealed to this machine" store wifi 'correct horse'
step "printf 'ghp_demo_token' | vaultctl store github --mode sync  # an item in the Secret Service" store github ghp_demo_token --mode sync
step "vaultctl list" vaultctl list
step "vaultctl status wifi     # only what vaultctl can know; never prompts" vaultctl status wifi
step "vaultctl status github" vaultctl status github
echo
step "VAULT_ASKPASS=./askpass vaultctl read wifi     # a fresh PAM authentication, then the secret" gated "$work/askpass" read wifi
step "VAULT_ASKPASS=./askpass vaultctl read github" gated "$work/askpass" read github
step "secret-tool lookup xdg:schema org.vaultctl.Slot slot github   # the same item, seen by libsecret" \
  bash -c 'secret-tool lookup xdg:schema org.vaultctl.Slot slot github; echo'
step "VAULT_ASKPASS=./wrong-askpass vaultctl read wifi   # wrong password: nothing on stdout" gated "$work/wrong-askpass" read wifi
step "./askpass | vaultctl read wifi --password-stdin   # the password as a line on stdin (scripts, managers)" \
  bash -c '"$1" | { source "$2/pam/env"; "$3" read wifi --password-stdin; }; rc=$?; [ "$rc" != 0 ] || echo; exit $rc' _ "$work/askpass" "$work" "$bin"
echo
step "vaultctl delete wifi" vaultctl delete wifi
step "vaultctl delete github" vaultctl delete github
step "VAULT_ASKPASS=./askpass vaultctl read wifi" gated "$work/askpass" read wifi
echo
echo "== done: every read above asked PAM; the demo's keyring, files and PAM stack are removed."
