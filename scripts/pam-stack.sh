#!/usr/bin/env bash
# Writes a PAM service folder for pam_wrapper with pam_matrix, for tests, the demo and the benchmark.
#
#   scripts/pam-stack.sh DIR USER PASSWORD
#
# Creates DIR/pam.d/vaultctl (auth and account through pam_matrix), DIR/pam.d/other, DIR/passdb, and
# DIR/env: the variables that make a process use this stack (LD_PRELOAD=libpam_wrapper.so, PAM_WRAPPER=1,
# PAM_WRAPPER_SERVICE_DIR). Source DIR/env only for the vaultctl process under test.
set -euo pipefail
dir=${1:?usage: pam-stack.sh DIR USER PASSWORD}
user=${2:?usage: pam-stack.sh DIR USER PASSWORD}
password=${3:?usage: pam-stack.sh DIR USER PASSWORD}

wrapper=$(ls /usr/lib/*/libpam_wrapper.so /usr/lib/libpam_wrapper.so 2>/dev/null | head -n1 || true)
matrix=$(ls /usr/lib/*/pam_wrapper/pam_matrix.so /usr/lib/pam_wrapper/pam_matrix.so 2>/dev/null | head -n1 || true)
if [ -z "$wrapper" ] || [ -z "$matrix" ]; then
  echo "pam-stack.sh: pam_wrapper is missing; run 'make deps' (Debian package libpam-wrapper)" >&2
  exit 69
fi
mkdir -p "$dir/pam.d"
dir=$(cd "$dir" && pwd)
printf '%s:%s:vaultctl\n' "$user" "$password" > "$dir/passdb"
chmod 600 "$dir/passdb"
cat > "$dir/pam.d/vaultctl" <<STACK
auth     required  $matrix passdb=$dir/passdb
account  required  $matrix passdb=$dir/passdb
STACK
# An 'other' service beside ours keeps pam_wrapper from complaining; it lets nobody in.
cat > "$dir/pam.d/other" <<STACK
auth     required  $matrix passdb=/nonexistent
account  required  $matrix passdb=/nonexistent
STACK
cat > "$dir/env" <<ENV
export LD_PRELOAD='$wrapper'
export PAM_WRAPPER=1
export PAM_WRAPPER_SERVICE_DIR='$dir/pam.d'
ENV
