#!/usr/bin/env bash
# A machine with vaultctl-gate installed, in a mount namespace of its own (nothing on the host changes):
#
#   scripts/gate-namespace.sh start DIR VAULTCTL GATE   # root only; prints nothing, writes DIR/pid
#   scripts/gate-namespace.sh stop DIR
#
# Inside: /etc and /var/lib are overlays (their changes live in a tmpfs under DIR), with the group
# `vaultctl`, the users alice (password alice-pw) and bob (bob-pw) with homes under DIR/home,
# /var/lib/vaultctl root:vaultctl 0770, and /etc/pam.d/vaultctl a real stack: pam_unix (through the real
# set-group-ID unix_chkpwd, which checks only the caller's own password) without its failure delay.
# VAULTCTL is copied to DIR/prefix/bin/vaultctl and GATE installed 2755 root:vaultctl at
# DIR/prefix/libexec/vaultctl/vaultctl-gate, where vaultctl looks for it. Run commands in it with
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
  cli=$3 gate=$4
  mount -t tmpfs -o mode=0755 tmpfs "$dir/overlay"
  mkdir -p "$dir/overlay"/{etc,etc.work,varlib,varlib.work}
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/overlay/etc,workdir=$dir/overlay/etc.work" /etc
  mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$dir/overlay/varlib,workdir=$dir/overlay/varlib.work" /var/lib
  getent group vaultctl >/dev/null || groupadd --system vaultctl
  for user in alice bob; do
    getent passwd "$user" >/dev/null && userdel "$user" 2>/dev/null || true
    useradd --no-create-home --home-dir "$dir/home/$user" --shell /bin/bash "$user"
    echo "$user:$user-pw" | chpasswd
    mkdir -p "$dir/home/$user"
    chown "$user:$user" "$dir/home/$user"
    chmod 700 "$dir/home/$user"
  done
  rm -rf /var/lib/vaultctl
  mkdir -m 0770 /var/lib/vaultctl
  chown root:vaultctl /var/lib/vaultctl
  mkdir -p /etc/pam.d
  printf 'auth required pam_unix.so nodelay\naccount required pam_unix.so\n' > /etc/pam.d/vaultctl
  rm -rf /etc/vaultctl
  install -d -m 0755 "$dir/prefix" "$dir/prefix/bin" "$dir/prefix/libexec" "$dir/prefix/libexec/vaultctl"
  install -m 0755 "$cli" "$dir/prefix/bin/vaultctl"
  install -m 2755 -o root -g vaultctl "$gate" "$dir/prefix/libexec/vaultctl/vaultctl-gate"
  touch "$dir/ready"
  exec sleep infinity
fi

[ "$cmd" = start ] || { echo "gate-namespace.sh: unknown command '$cmd'" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "gate-namespace.sh: needs root (a mount namespace, users, a set-group-ID file)" >&2; exit 77; }
cli=${3:?usage: gate-namespace.sh start DIR VAULTCTL GATE}
gate=${4:?usage: gate-namespace.sh start DIR VAULTCTL GATE}
mkdir -p "$dir/overlay" "$dir/home"
chmod 755 "$dir" "$dir/home"
dir=$(cd "$dir" && pwd)
rm -f "$dir/ready" "$dir/pid"
setsid unshare --mount --propagation private "$0" inside "$dir" "$cli" "$gate" </dev/null >"$dir/setup.log" 2>&1 &
echo $! > "$dir/pid"
for _ in $(seq 200); do
  [ -f "$dir/ready" ] && exit 0
  kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
  sleep 0.05
done
echo "gate-namespace.sh: the namespace did not come up (see $dir/setup.log): $(tail -n 3 "$dir/setup.log" 2>/dev/null)" >&2
kill "$(cat "$dir/pid")" 2>/dev/null || true
exit 69
