#!/usr/bin/env bash
# A receiving machine and two sending machines, each its own network namespace, for the send/receive tests:
#
#   scripts/sshd-netns.sh start DIR VAULTCTL_FOLDER   # makes the namespaces and starts sshd in the receiver's
#   scripts/sshd-netns.sh stop-sshd DIR               # ends sshd and every process left in the receiver
#   scripts/sshd-netns.sh start-sshd DIR              # starts it again (after stop-sshd)
#   scripts/sshd-netns.sh stop DIR                    # ends every process in them and deletes them
#
# The receiver (namespace in DIR/ns-receiver) has 192.168.77.1 on a veth pair to the LAN sender (DIR/ns-lan,
# 192.168.77.2: a nearby address) and 100.100.77.1 on another to the Tailscale sender (DIR/ns-tailscale,
# 100.100.77.2, inside 100.64.0.0/10: remote), and on IPv6 fd00:77::1/::2 (LAN) and fd7a:115c:a1e0::1/::2
# (Tailscale). A real OpenSSH sshd listens on port 22 there, with its own
# host key, config and log in DIR; AuthorizedKeysFile is DIR/authorized_keys (the test writes it) and
# SetEnv gives every session the receiver's own HOME/XDG folders (DIR/receiver) and a PATH that starts with
# VAULTCTL_FOLDER. DIR/ssh_config is the senders' client config (user root, DIR/known_hosts pinned); the
# keys DIR/sender_key and DIR/other_key are made for the test to use. Processes end by PID: sshd's from
# its pid file, then whatever `ip netns pids` lists in each namespace (sessions sshd started).
set -euo pipefail

cmd=${1:?usage: sshd-netns.sh start|stop|stop-sshd|start-sshd DIR [VAULTCTL_FOLDER]}
dir=${2:?usage: sshd-netns.sh start|stop|stop-sshd|start-sshd DIR [VAULTCTL_FOLDER]}

kill_namespace_processes() {
  local ns=$1 pids
  ip netns list 2>/dev/null | grep -q "^$ns\b" || return 0
  for signal in TERM KILL; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    for pid in $pids; do kill -s "$signal" "$pid" 2>/dev/null || true; done
    for _ in $(seq 40); do
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] || return 0
      sleep 0.05
    done
  done
}

stop_sshd() {
  if [ -f "$dir/sshd.pid" ]; then
    pid=$(cat "$dir/sshd.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/sshd.pid"
  fi
  [ -f "$dir/ns-receiver" ] && kill_namespace_processes "$(cat "$dir/ns-receiver")"
  return 0
}

start_sshd() {
  local r
  r=$(cat "$dir/ns-receiver")
  mkdir -p /run/sshd
  chmod 755 /run/sshd
  ip netns exec "$r" /usr/sbin/sshd -D -f "$dir/sshd_config" -E "$dir/sshd.log" &
  echo $! > "$dir/sshd.pid"
  # Bounded wait until it accepts connections on the LAN address.
  for _ in $(seq 100); do
    if ip netns exec "$r" bash -c 'exec 3<>/dev/tcp/192.168.77.1/22' 2>/dev/null; then return 0; fi
    kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null || { echo "sshd-netns.sh: sshd exited; see $dir/sshd.log" >&2; cat "$dir/sshd.log" >&2; return 69; }
    sleep 0.05
  done
  echo "sshd-netns.sh: sshd did not listen within 5 s" >&2
  return 69
}

case "$cmd" in
  stop)
    stop_sshd
    for f in ns-lan ns-tailscale ns-receiver; do
      [ -f "$dir/$f" ] || continue
      ns=$(cat "$dir/$f")
      kill_namespace_processes "$ns"
      ip netns del "$ns" 2>/dev/null || true
      rm -f "$dir/$f"
    done
    exit 0 ;;
  stop-sshd) stop_sshd; exit 0 ;;
  start-sshd) start_sshd; exit $? ;;
  start) ;;
  *) echo "sshd-netns.sh: unknown command '$cmd'" >&2; exit 64 ;;
esac

bin=${3:?usage: sshd-netns.sh start DIR VAULTCTL_FOLDER}
[ -x /usr/sbin/sshd ] || { echo "sshd-netns.sh: /usr/sbin/sshd is missing; run 'make deps' (openssh-server)" >&2; exit 69; }
command -v ip >/dev/null || { echo "sshd-netns.sh: ip is missing (iproute2)" >&2; exit 69; }
mkdir -p "$dir"
chmod 700 "$dir"
dir=$(cd "$dir" && pwd)
tag=$(basename "$dir" | tr -c 'A-Za-z0-9\n' x | tail -c 9)
r="vctl-$tag-r"; l="vctl-$tag-l"; t="vctl-$tag-t"
echo "$r" > "$dir/ns-receiver"; echo "$l" > "$dir/ns-lan"; echo "$t" > "$dir/ns-tailscale"
for ns in "$r" "$l" "$t"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n "$r" link add lan type veth peer name eth0 netns "$l"
ip -n "$r" link add ts type veth peer name eth0 netns "$t"
ip -n "$r" addr add 192.168.77.1/24 dev lan
ip -n "$r" addr add 100.100.77.1/24 dev ts
ip -n "$l" addr add 192.168.77.2/24 dev eth0
ip -n "$t" addr add 100.100.77.2/24 dev eth0
# IPv6 too: a unique-local LAN (fd00:77::/64, nearby) and the Tailscale range (fd7a:115c:a1e0::/48, remote);
# nodad, so the addresses are usable at once.
ip -n "$r" addr add fd00:77::1/64 dev lan nodad
ip -n "$l" addr add fd00:77::2/64 dev eth0 nodad
ip -n "$r" addr add fd7a:115c:a1e0::1/64 dev ts nodad
ip -n "$t" addr add fd7a:115c:a1e0::2/64 dev eth0 nodad
for link in lan ts; do ip -n "$r" link set "$link" up; done
for ns in "$l" "$t"; do ip -n "$ns" link set eth0 up; done

mkdir -p "$dir/receiver/home" "$dir/receiver/config" "$dir/receiver/state"
chmod 700 "$dir/receiver" "$dir/receiver/home" "$dir/receiver/config" "$dir/receiver/state"
ssh-keygen -q -t ed25519 -N '' -C receiver-host -f "$dir/host_key"
ssh-keygen -q -t ed25519 -N '' -C sender -f "$dir/sender_key"
ssh-keygen -q -t ed25519 -N '' -C other -f "$dir/other_key"
: > "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
cat > "$dir/sshd_config" <<CONFIG
ListenAddress 0.0.0.0:22
ListenAddress [::]:22
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PrintMotd no
LogLevel VERBOSE
SetEnv HOME=$dir/receiver/home XDG_CONFIG_HOME=$dir/receiver/config XDG_STATE_HOME=$dir/receiver/state PATH=$bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
CONFIG
echo "192.168.77.1,100.100.77.1,fd00:77::1,fd7a:115c:a1e0::1 $(cut -d' ' -f1,2 "$dir/host_key.pub")" > "$dir/known_hosts"
cat > "$dir/ssh_config" <<CONFIG
Host *
  User root
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  IdentitiesOnly yes
  LogLevel ERROR
CONFIG
start_sshd
