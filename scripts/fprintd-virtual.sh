#!/usr/bin/env bash
# A fingerprint reader for tests: the real fprintd with libfprint's virtual device, on a system bus of its
# own. Run it inside a mount namespace (it mounts a tmpfs over /run/dbus, where pam_fprintd looks for the
# system bus: a set-group-ID program ignores DBUS_SYSTEM_BUS_ADDRESS).
#
#   scripts/fprintd-virtual.sh start DIR           # DIR/dev.sock is the reader; DIR/pids what to stop
#   scripts/fprintd-virtual.sh scan DIR FINGER-ID  # a finger on the reader (waits, bounded, for a reader
#                                                  # that is listening: fprintd opens it only to verify or enrol)
#   scripts/fprintd-virtual.sh stop DIR
#
# Inside: dbus-daemon with a permissive system-bus configuration, polkit answered by python-dbusmock's
# polkitd template (every action allowed, as a desktop's agent would after asking), and
# `FP_VIRTUAL_DEVICE=DIR/dev.sock /usr/libexec/fprintd --no-timeout` keeping its prints in DIR/prints.
# Enrol with `fprintd-enroll -f right-index-finger USER` while scanning the same FINGER-ID five times.
set -euo pipefail

cmd=${1:?usage: fprintd-virtual.sh start|scan|stop DIR}
dir=${2:?usage: fprintd-virtual.sh start|scan|stop DIR}
python=/usr/bin/python3

. "$(dirname "$0")/pids.sh"
stop() {
  [ -f "$dir/pids" ] || return 0
  stop_pids "$dir"
  umount /run/dbus 2>/dev/null || true
}

case "$cmd" in
  stop) stop; exit 0 ;;
  scan)
    finger=${3:?usage: fprintd-virtual.sh scan DIR FINGER-ID}
    # The virtual device takes one command per connection, and listens only while it is open.
    exec "$python" - "$dir/dev.sock" "SCAN $finger" <<'PY'
import socket, sys, time
path, command = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 10
while True:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("fprintd-virtual.sh: no reader listening at " + path)
        time.sleep(0.05)
s.sendall(command.encode() + b"\n")
s.close()
PY
    ;;
  start) ;;
  *) echo "fprintd-virtual.sh: unknown command '$cmd'" >&2; exit 64 ;;
esac

[ "$(id -u)" = 0 ] || { echo "fprintd-virtual.sh: needs root (a mount over /run/dbus)" >&2; exit 77; }
[ -x /usr/libexec/fprintd ] && "$python" -c 'import dbusmock' 2>/dev/null \
  || { echo "fprintd-virtual.sh: fprintd or python3-dbusmock is missing; run 'make deps'" >&2; exit 69; }
mkdir -p "$dir/prints"
chmod 700 "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p /run/dbus
mount -t tmpfs -o mode=0755 vaultctl-test-dbus /run/dbus
cat > "$dir/bus.conf" <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
CONF
: > "$dir/pids"
dbus-daemon --config-file="$dir/bus.conf" --fork --print-pid > "$dir/bus.pid"
cat "$dir/bus.pid" >> "$dir/pids"
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/dbus/system_bus_socket
"$python" -m dbusmock --system --template polkitd > "$dir/polkit.log" 2>&1 &
echo $! >> "$dir/pids"
for _ in $(seq 100); do
  gdbus call --system --dest org.freedesktop.PolicyKit1 --object-path /org/freedesktop/PolicyKit1/Authority \
    --method org.freedesktop.DBus.Mock.AllowUnknown true >/dev/null 2>&1 && break
  sleep 0.05
done
FP_VIRTUAL_DEVICE="$dir/dev.sock" FP_DRIVERS_WHITELIST=virtual_device STATE_DIRECTORY="$dir/prints" \
  /usr/libexec/fprintd --no-timeout > "$dir/fprintd.log" 2>&1 &
echo $! >> "$dir/pids"
for _ in $(seq 100); do
  gdbus call --system --dest net.reactivated.Fprint --object-path /net/reactivated/Fprint/Manager \
    --method net.reactivated.Fprint.Manager.GetDevices 2>/dev/null | grep -q Device && exit 0
  sleep 0.05
done
echo "fprintd-virtual.sh: fprintd did not show its virtual reader (see $dir/fprintd.log): $(tail -n 3 "$dir/fprintd.log")" >&2
stop
exit 69
