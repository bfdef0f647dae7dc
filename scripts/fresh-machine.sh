#!/usr/bin/env bash
# Runs a command as on a fresh machine, where vaultctl was never installed: in a mount namespace of its own
# in which every vaultctl installed earlier (by hand, `make install` or the package) is hidden, so that a
# test passing only because one is there fails here as it would on a fresh clone (CI runs `make test` so).
# Nothing on the host changes.
#
#   scripts/fresh-machine.sh COMMAND [ARG...]    # root only; exits with COMMAND's status
#
# Hidden, each only when present: every vaultctl* (and git-credential-vaultctl) executable in a folder of
# PATH or of the tests' PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) and under
# /usr/local; the completion files `make install` writes (bash and zsh under PREFIX/share for PREFIX
# /usr/local or /usr, fish in /etc/fish/completions or /usr/share/fish/vendor_completions.d, zsh also in
# Debian's /usr/share/zsh/vendor-completions); /etc/pam.d/vaultctl. Each is covered by an empty, read-only,
# non-executable file (a mount can cover a name, not remove it: bash's `command -v` may still name the empty
# file, but nothing can run it, and lookups that need an executable, execvp's, access(X_OK), fish's, pass
# it by; libpam treats a service file with no lines as it treats none, and uses `other`). The folders
# /usr/local/libexec/vaultctl, /usr/libexec/vaultctl (the gate's), /etc/vaultctl and /var/lib/vaultctl are
# covered by an empty tmpfs (the tests that need them make their own: an overlay made later on /etc or
# /var/lib shows what is under these mounts again, and scripts/gate-namespace.sh replaces it). Nothing
# else: not the Swift toolchain, and nothing in the repository (a PATH folder in it is skipped). One line on
# stderr says what was hidden, or that there was nothing to hide.
set -euo pipefail

me=fresh-machine.sh
[ "$(id -u)" = 0 ] || { echo "$me: needs root (a mount namespace)" >&2; exit 77; }

if [ "${1-}" != --inside-namespace ]; then
  [ $# -gt 0 ] || { echo "usage: scripts/$me COMMAND [ARG...]" >&2; exit 64; }
  # The empty file's folder: a tmpfs is mounted on it inside the namespace only; here it stays empty.
  hold=$(mktemp -d /tmp/vaultctl-fresh.XXXXXX)
  trap 'rmdir "$hold" 2>/dev/null || true' EXIT
  status=0
  unshare --mount --propagation private "$0" --inside-namespace "$hold" "$@" || status=$?
  exit "$status"
fi

hold=$2
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd -P)
mount -t tmpfs -o mode=0755,size=64k tmpfs "$hold"
: > "$hold/empty"
chmod 0444 "$hold/empty"
mount -o remount,ro "$hold"

hidden=()
declare -A seen=() covered=()
# cover PATH KIND: KIND file (an empty file over it) or folder (an empty tmpfs with the folder's mode and
# owner). Symbolic links are followed (as mount does); what resolves into the repository stays visible.
cover() {
  local path=$1 kind=$2 real
  [ -z "${seen[$path]-}" ] || return 0
  seen[$path]=1
  real=$(realpath -e -- "$path" 2>/dev/null) || return 0
  case "$real/" in "$repo"/*) echo "$me: left $path visible: it is $real, in the repository" >&2; return 0 ;; esac
  hidden+=("$path")
  [ -z "${covered[$real]-}" ] || return 0
  covered[$real]=1
  if [ "$kind" = folder ]; then
    mount -t tmpfs -o "mode=$(stat -c %a "$real"),uid=$(stat -c %u "$real"),gid=$(stat -c %g "$real"),size=1m" tmpfs "$real"
  else
    mount --bind "$hold/empty" "$real"
  fi
}

# Folders first: what is under them is gone before the files are looked for.
for d in /usr/local/libexec/vaultctl /usr/libexec/vaultctl /etc/vaultctl /var/lib/vaultctl; do
  if [ -d "$d" ]; then cover "$d" folder; fi
done

# The executables are all found before any is covered (a link to one covered is no longer executable).
executables=()
shopt -s nullglob
declare -A searched=()
IFS=: read -r -a dirs <<< "${PATH-}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
for d in "${dirs[@]}"; do
  case "$d" in /*) ;; *) continue ;; esac   # "", "." and relative folders: the working directory
  real=$(realpath -e -- "$d" 2>/dev/null) || continue
  [ -d "$real" ] && [ -z "${searched[$real]-}" ] || continue
  searched[$real]=1
  case "$real/" in "$repo"/*) continue ;; esac
  executables+=("$d"/vaultctl* "$d"/git-credential-vaultctl)
done
if [ -d /usr/local ]; then
  while IFS= read -r -d '' f; do executables+=("$f"); done \
    < <(find /usr/local \( -name 'vaultctl*' -o -name git-credential-vaultctl \) \( -type f -o -type l \) -print0 2>/dev/null)
fi
found=()
for f in "${executables[@]}"; do
  if [ -f "$f" ] && [ -x "$f" ]; then found+=("$f"); fi
done
for f in "${found[@]}"; do cover "$f" file; done

for f in /etc/pam.d/vaultctl /etc/fish/completions/vaultctl.fish \
         /usr/local/share/bash-completion/completions/vaultctl /usr/local/share/zsh/site-functions/_vaultctl \
         /usr/local/share/fish/vendor_completions.d/vaultctl.fish \
         /usr/share/bash-completion/completions/vaultctl /usr/share/zsh/site-functions/_vaultctl \
         /usr/share/zsh/vendor-completions/_vaultctl /usr/share/fish/vendor_completions.d/vaultctl.fish; do
  if [ -f "$f" ]; then cover "$f" file; fi
done

if [ ${#hidden[@]} -eq 0 ]; then
  echo "$me: nothing to hide" >&2
else
  echo "$me: hid ${hidden[*]}" >&2
fi
exec "$@"
