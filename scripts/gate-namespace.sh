#!/usr/bin/env bash
# A machine with vaultctl-gate installed, in a mount namespace of its own (nothing on the host changes):
#
#   scripts/gate-namespace.sh start DIR VAULTCTL GATE [PID]  # root only; writes DIR/pid; lasts while PID
#                                                           # (default: the caller) runs
#   scripts/gate-namespace.sh stop DIR
#
# Inside: /etc and /var/lib are overlays (their changes live in a tmpfs at DIR/m that only the namespace
# sees), with the group `vaultctl`, the users alice (password alice-pw) and bob (bob-pw) with homes under
# DIR/m/home,
# /var/lib/vaultctl root:vaultctl 0770, and /etc/pam.d/vaultctl a real stack: pam_unix (through the real
# set-group-ID unix_chkpwd, which checks only the caller's own password) without its failure delay.
# VAULTCTL is copied to DIR/m/prefix/bin/vaultctl and GATE installed 2755 root:vaultctl at
# DIR/m/prefix/libexec/vaultctl/vaultctl-gate, where vaultctl looks for it (and to DIR/m/plain/bin/vaultctl,
# with no gate beside it). The namespace ends when the process that ran `start` does. Run commands in it with
#   nsenter --mount=/proc/$(cat DIR/pid)/ns/mnt -- setpriv --reuid=alice --regid=alice --clear-groups -- ...
set -euo pipefail

cmd=${1:?usage: gate-namespace.sh start DIR VAULTCTL GATE | stop DIR}
dir=${2:?usage: gate-namespace.sh start DIR VAULTCTL GATE | stop DIR}

if [ "$cmd" = stop ]; then
  [ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null || true
  rm -f "$dir/pid"
  exit 0
fi

if [ "$cmd" = inside ]; then
  cli=$3 gate=$4 watch=$5
  # Everything made here lives in a tmpfs that only this namespace sees, and goes with it: the set-group-ID
  # copy of the gate never appears on the host.
  mount -t tmpfs -o mode=0755 tmpfs "$dir/m"
  mkdir -p "$dir/m"/{etc,etc.work,varlib,varlib.work,home}
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/m/etc,workdir=$dir/m/etc.work" /etc
  mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$dir/m/varlib,workdir=$dir/m/varlib.work" /var/lib
  getent group vaultctl >/dev/null || groupadd --system vaultctl
  for user in alice bob; do
    getent passwd "$user" >/dev/null && userdel "$user" 2>/dev/null || true
    useradd --no-create-home --home-dir "$dir/m/home/$user" --shell /bin/bash "$user"
    echo "$user:$user-pw" | chpasswd
    mkdir -p "$dir/m/home/$user"
    chown "$user:$user" "$dir/m/home/$user"
    chmod 700 "$dir/m/home/$user"
  done
  rm -rf /var/lib/vaultctl
  mkdir -m 0770 /var/lib/vaultctl
  chown root:vaultctl /var/lib/vaultctl
  mkdir -p /etc/pam.d
  printf 'auth required pam_unix.so nodelay\naccount required pam_unix.so\n' > /etc/pam.d/vaultctl
  rm -rf /etc/vaultctl
  install -d -m 0755 "$dir/m/prefix" "$dir/m/prefix/bin" "$dir/m/prefix/libexec" "$dir/m/prefix/libexec/vaultctl"
  install -m 0755 "$cli" "$dir/m/prefix/bin/vaultctl"
  install -m 2755 -o root -g vaultctl "$gate" "$dir/m/prefix/libexec/vaultctl/vaultctl-gate"
  # The TPM helper beside the gate, which runs it with the TPM root chose in /etc/vaultctl/gate.conf.
  [ -x "$(dirname "$gate")/vaultctl-tpm" ] && install -m 0755 "$(dirname "$gate")/vaultctl-tpm" "$dir/m/prefix/libexec/vaultctl/vaultctl-tpm"
  # The same vaultctl with no gate beside it: the unprotected mode, for comparisons.
  install -d -m 0755 "$dir/m/plain" "$dir/m/plain/bin"
  install -m 0755 "$cli" "$dir/m/plain/bin/vaultctl"
  touch "$dir/ready"
  # The namespace lasts as long as the process that started it (the test run), and no longer: so does
  # every process still in it (a fingerprint reader's daemons, scripts/fprintd-virtual.sh), whose folders the
  # test run may have removed already.
  end() {
    me=$(readlink /proc/$$/ns/mnt)
    for p in /proc/[0-9]*; do
      [ "${p#/proc/}" = $$ ] && continue
      [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$me" ] && kill "${p#/proc/}" 2>/dev/null
    done
    exit 0
  }
  trap end TERM INT
  while kill -0 "$watch" 2>/dev/null; do sleep 1; done
  end
fi

[ "$cmd" = start ] || { echo "gate-namespace.sh: unknown command '$cmd'" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "gate-namespace.sh: needs root (a mount namespace, users, a set-group-ID file)" >&2; exit 77; }
cli=${3:?usage: gate-namespace.sh start DIR VAULTCTL GATE}
gate=${4:?usage: gate-namespace.sh start DIR VAULTCTL GATE}
mkdir -p "$dir/m"
chmod 755 "$dir" "$dir/m"
dir=$(cd "$dir" && pwd)
rm -f "$dir/ready" "$dir/pid"
setsid unshare --mount --propagation private "$0" inside "$dir" "$cli" "$gate" "${5:-$PPID}" </dev/null >"$dir/setup.log" 2>&1 &
echo $! > "$dir/pid"
for _ in $(seq 200); do
  [ -f "$dir/ready" ] && exit 0
  kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
  sleep 0.05
done
echo "gate-namespace.sh: the namespace did not come up (see $dir/setup.log): $(tail -n 3 "$dir/setup.log" 2>/dev/null)" >&2
kill "$(cat "$dir/pid")" 2>/dev/null || true
exit 69
