#!/usr/bin/env bash
# Starts or stops a private D-Bus session bus, optionally with a real gnome-keyring Secret Service on it.
#
#   scripts/secret-service.sh start DIR [unlocked|no-default|bus-only|keepassxc|keepassxc-confirm|keepassxc-no-copies|scripted:SCENARIO] [PASSWORD]
#   scripts/secret-service.sh stop DIR
#
# start writes DIR/env (shell lines to source: DBUS_SESSION_BUS_ADDRESS and the keyring's HOME) and
# DIR/pids. The bus configuration lists no service folders, so nothing is started on demand: a bus
# without gnome-keyring really has no Secret Service. 'unlocked' unlocks a login collection with PASSWORD
# (the default alias points at it); 'no-default' starts gnome-keyring without --unlock on an empty keyring
# folder, so the provider has no default collection. 'scripted:SCENARIO' puts the test provider
# scripts/fake-secret-service.py on the bus instead of gnome-keyring (its scenarios are listed there).
# 'keepassxc' runs KeePassXC headless (QT_QPA_PLATFORM=offscreen) with its Secret Service integration on a
# new database (password PASSWORD, the root group exposed: collection /org/freedesktop/secrets/collection/db,
# label 'vaultctl test'), access confirmation off;
# 'keepassxc-confirm' the same with KeePassXC's default, confirmation on. Both databases keep KeePassXC's
# defaults for what it keeps: a deleted item goes to its Recycle Bin, a replaced value into the item's History
# (10 items); 'keepassxc-no-copies' makes the database with both turned off, as vaultctl recommends (Database
# Settings → General: "Use recycle bin" unticked, "Max. history items" 0). With KEEPASSXC_DISPLAY set (an X
# display), KeePassXC shows its dialogs there instead of running with no screen.
set -euo pipefail

cmd=${1:?usage: secret-service.sh start|stop DIR [unlocked|no-default|bus-only] [PASSWORD]}
dir=${2:?usage: secret-service.sh start|stop DIR}

. "$(dirname "$0")/pids.sh"
stop() {
  stop_pids "$dir"
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "secret-service.sh: unknown command '$cmd'" >&2; exit 64; }

kind=${3:-unlocked}
password=${4:-vaultctl-test-keyring}
for tool in dbus-daemon gnome-keyring-daemon gdbus; do
  command -v "$tool" >/dev/null || { echo "secret-service.sh: $tool is missing; run 'make deps'" >&2; exit 69; }
done

mkdir -p "$dir/home/.local/share" "$dir/run"
chmod 700 "$dir" "$dir/run"
dir=$(cd "$dir" && pwd)
: > "$dir/pids"
cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$dir/run</listen>
  <auth>EXTERNAL</auth>
  <!-- the stock session bus's limit (dbus-daemon's built-in 128 fails secret-tool search at 1000 items) -->
  <limit name="max_replies_per_connection">50000</limit>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$dir/bus.conf" --fork --print-address=3 --print-pid=4 3>"$dir/address" 4>"$dir/bus.pid"
cat "$dir/bus.pid" >> "$dir/pids"
address=$(head -n1 "$dir/address")
{
  echo "export DBUS_SESSION_BUS_ADDRESS='$address'"
} > "$dir/env"

if [ "$kind" != bus-only ]; then
  export DBUS_SESSION_BUS_ADDRESS="$address" HOME="$dir/home" XDG_DATA_HOME="$dir/home/.local/share" \
         XDG_RUNTIME_DIR="$dir/run"
  unset DISPLAY WAYLAND_DISPLAY
  case "$kind" in
    scripted:*)
      /usr/bin/python3 "$(dirname "$0")/fake-secret-service.py" "${kind#scripted:}" </dev/null >"$dir/keyring.log" 2>&1 & ;;
    unlocked)
      printf '%s' "$password" | gnome-keyring-daemon --foreground --unlock --components=secrets \
        >"$dir/keyring.log" 2>&1 & ;;
    keepassxc|keepassxc-confirm|keepassxc-no-copies)
      command -v keepassxc >/dev/null || { echo "secret-service.sh: keepassxc is missing; run 'make deps'" >&2; stop; exit 69; }
      # The exposed group is the database's custom data FDO_SECRETS_EXPOSED_GROUP (what Database Settings →
      # Secret Service Integration writes); keepassxc-cli makes the database from this XML.
      keeps=''
      [ "$kind" = keepassxc-no-copies ] && keeps='<RecycleBinEnabled>False</RecycleBinEnabled><HistoryMaxItems>0</HistoryMaxItems>'
      cat > "$dir/db.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<KeePassFile><Meta><DatabaseName>vaultctl test</DatabaseName>$keeps<CustomData><Item>
<Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>{00000000-0000-0000-0000-000000000001}</Value>
</Item></CustomData></Meta><Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAQ==</UUID><Name>vaultctl test</Name></Group></Root></KeePassFile>
XML
      printf '%s\n%s\n' "$password" "$password" | keepassxc-cli import -q -t 100 -p "$dir/db.xml" "$dir/db.kdbx" >/dev/null 2>&1 \
        || { echo "secret-service.sh: keepassxc-cli could not make the database" >&2; stop; exit 69; }
      confirm=false; [ "$kind" = keepassxc-confirm ] && confirm=true
      cat > "$dir/keepassxc.ini" <<INI
[General]
ConfigVersion=2
SingleInstance=false
RememberLastDatabases=false
OpenPreviousDatabasesOnStartup=false
AutoSaveAfterEveryChange=true
CheckForUpdates=false
[GUI]
ShowTrayIcon=false
[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmAccessItem=$confirm
ConfirmDeleteItem=false
INI
      # KEEPASSXC_DISPLAY (an X display, such as a test's Xvfb): KeePassXC shows its dialogs there, where a
      # test can answer them (xdotool); otherwise it runs with no screen at all.
      platform=offscreen; [ -n "${KEEPASSXC_DISPLAY:-}" ] && platform=xcb
      printf '%s\n' "$password" | DISPLAY="${KEEPASSXC_DISPLAY:-}" QT_QPA_PLATFORM=$platform keepassxc --config "$dir/keepassxc.ini" \
        --localconfig "$dir/keepassxc-local.ini" --pw-stdin "$dir/db.kdbx" >"$dir/keyring.log" 2>&1 & ;;
    *)
      gnome-keyring-daemon --foreground --components=secrets </dev/null >"$dir/keyring.log" 2>&1 & ;;
  esac
  echo $! >> "$dir/pids"
  # Wait (at most 30 s: KeePassXC derives its database key first) until the provider owns its name on the bus.
  SECONDS=0
  while [ "$SECONDS" -lt 30 ]; do
    if gdbus call --session --timeout 1 --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
         --method org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true; then
      if { [ "$kind" != unlocked ] && [ "${kind#keepassxc}" = "$kind" ]; } || gdbus call --session --timeout 1 --dest org.freedesktop.secrets \
           --object-path /org/freedesktop/secrets --method org.freedesktop.Secret.Service.ReadAlias default \
           2>/dev/null | grep -q collection/; then
        # KeePassXC shows its collection locked until it has opened the database.
        case "$kind" in keepassxc*)
          gdbus call --session --timeout 1 --dest org.freedesktop.secrets \
            --object-path /org/freedesktop/secrets/collection/db --method org.freedesktop.DBus.Properties.Get \
            org.freedesktop.Secret.Collection Locked 2>/dev/null | grep -q false || { sleep 0.05; continue; } ;;
        esac
        exit 0
      fi
    fi
    sleep 0.05
  done
  echo "secret-service.sh: the provider ($kind) did not come up; see $dir/keyring.log" >&2
  stop
  exit 69
fi
